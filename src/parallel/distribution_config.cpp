#include "dpointnet/parallel/distribution_config.hpp"

#include "dpointnet/util/error.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet {

DistributionConfig DistributionConfig::parse(const SimulationConfig& cfg, const TrainConfig* tc, Launcher launcher,
                                             int world_size, bool training) {
  const std::string& f = cfg.path;
  DistributionConfig d;
  static_cast<DistributionSpec&>(d) = cfg.distribution;
  // launcher and mode must agree
  if (launcher == Launcher::Mpi && d.mode != DistributionMode::Mpi)
    throw InputError(f, "run.distribution", "mode",
                     "dpointnet-mpi needs run.distribution.mode \"mpi\" (use the serial dpointnet otherwise)");
  if (launcher == Launcher::Serial && d.mode == DistributionMode::Mpi)
    throw InputError(f, "run.distribution", "mode",
                     "\"mpi\" needs the MPI driver: mpirun -n N dpointnet-mpi train ... (or srun)");
  if (d.mode == DistributionMode::Mpi && d.replicas_requested > 0 && d.replicas_requested != world_size)
    throw InputError(f, "run.distribution", "replicas",
                     "asks for " + std::to_string(d.replicas_requested) + " replicas but the job has " +
                         std::to_string(world_size) + " rank(s)");
  if (d.mode == DistributionMode::Mirrored) {
    if (d.devices.empty())
      throw InputError(f, "run.distribution", "devices", "is required for mode \"mirrored\" (one entry per replica)");
    if (d.replicas_requested > 0 && d.replicas_requested != static_cast<int>(d.devices.size()))
      throw InputError(f, "run.distribution", "replicas", "differs from the number of devices listed");
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
    for (const auto& dev : d.devices)
      if (dev != d.devices[0])
        throw InputError(f, "run.distribution", "devices",
                         "mirrored replicas on different GPUs in one process are not supported by this Kokkos "
                         "build (one device per process); use mode \"mpi\" with one rank per GPU");
#else
    for (const auto& dev : d.devices)
      if (dev != "cpu" && dev != "0")
        throw InputError(f, "run.distribution", "devices",
                         "entry \"" + dev + "\": this is a host (" +
                             std::string(Kokkos::DefaultExecutionSpace::name()) +
                             ") build, replicas share the CPU: list \"cpu\" once per replica");
#endif
  }
  const int replicas = d.mode == DistributionMode::Mpi ? world_size * d.local_replicas() : d.local_replicas();
  const long long accumulate = tc ? tc->micro_batches() : 1;
  const long long global = static_cast<long long>(cfg.batch_size) * accumulate * replicas;
  if (d.global_batch_size > 0 && d.global_batch_size != global)
    throw InputError(f, "run", "global_batch_size",
                     "is " + std::to_string(d.global_batch_size) +
                         " but run.batch_size x train.accumulate x replicas = " + std::to_string(cfg.batch_size) +
                         " x " + std::to_string(accumulate) + " x " + std::to_string(replicas) + " = " +
                         std::to_string(global));
  if (d.mode != DistributionMode::None) {
    if (!training)
      throw InputError(f, "run", "distribution",
                       "sample-parallel runs train; simulate (inference) is refused under a distribution mode");
    if (cfg.precision == Precision::Float64)
      throw InputError(f, "run", "precision",
                       "distributed training is qualified in float32, bfloat16 and float16 (run.precision "
                       "\"float32\"), not \"float64\"");
    // pooled (not sample-separable) losses are exact too: the replica set reduces their spike counts first
  }
  return d;
}

}  // namespace dpointnet
