// dpointnet-mpi: sample-parallel training, one process per device (mpirun -n N / srun -n N).
// Device binding happens from the local rank before Kokkos starts. A failure on any rank is reported by that
// rank on stderr without any collective call, then MPI_Abort ends the whole job.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dpointnet/app/thread_check.hpp"
#include "dpointnet/app/train_run.hpp"
#include "dpointnet/device/kernel_shape.hpp"
#include "dpointnet/parallel/mpi/mpi_context.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"
#include "drivers/train_options.hpp"
#include "drivers/version.hpp"

namespace {

// Number of visible devices from the runtime's environment (CUDA/HIP), 0 when unknown or a host build.
int visible_devices() {
  for (const char* v : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}) {
    if (const char* s = std::getenv(v)) {
      std::string x(s);
      if (x.empty()) return 0;
      int n = 1;
      for (char c : x) n += (c == ',');
      return n;
    }
  }
  return 0;
}

[[noreturn]] void die(int rank, const std::string& msg, int code) {
  // no collective here, so the message always appears
  std::fprintf(stderr, "dpointnet-mpi: rank %d: %s\n", rank, msg.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace

// The launcher's rank of this process before MPI_Init (0 when not started by a launcher).
static int launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return 0;
}

int main(int argc, char** argv) {
  // The command line is read before MPI starts: --version and usage errors need no MPI (and print once).
  CLI::App app{"dpointnet-mpi: sample-parallel training (run.distribution.mode \"mpi\")"};
  int threads = 0;
  std::string log_level = "info";
  app.set_version_flag(
      "--version",
      [] {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);                     // (allowed before MPI_Init)
        std::string first(lib, static_cast<std::size_t>(len));  // (len counts the terminating NUL in Open MPI)
        first = first.c_str();
        first = first.substr(0, first.find_first_of("\r\n"));
        int major = 0, minor = 0;
        MPI_Get_version(&major, &minor);
        return dpointnet::cli::version_text() + "\nMPI: " + first + " (MPI standard " + std::to_string(major) + "." +
               std::to_string(minor) + ")";
      },
      "print the version, Kokkos version and backends, precisions, kernel shapes and the MPI library, and exit");
  app.add_option("--threads", threads, "host threads per rank for the OpenMP backend");
  app.add_option("--log-level", log_level)->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  dpointnet::TrainCommand cmd;
  auto* t = app.add_subcommand("train", "train with one replica per rank");
  dpointnet::cli::add_train_options(t, cmd);
  auto* s = app.add_subcommand("simulate", "refused: inference is not run under MPI");
  std::string sim_config;
  s->add_option("config", sim_config);
  app.require_subcommand(1);  // (--version exits before this is checked)
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return launcher_rank() == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : app.exit(e));
  }
  MPI_Init(&argc, &argv);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (s->parsed())
    die(world_rank,
        "error: simulate is not run under MPI (one job must not both train and run inference); use the serial "
        "dpointnet simulate",
        2);

  dpointnet::log::init(log_level);
  {
    std::string src;
    const int lr = dpointnet::local_rank(MPI_COMM_WORLD, &src);
    dpointnet::HostThreads host;
    try {
      host = dpointnet::fit_host_threads(threads);
    } catch (const dpointnet::InputError& e) {
      die(world_rank, std::string("error: ") + e.what(), dpointnet::kExitInput);
    }
    dpointnet::compat::InitOptions init;
    init.num_threads = host.threads > 0 ? host.threads : threads;
    const int nvis = visible_devices();
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
    init.device_id = nvis > 0 ? lr % nvis : lr;
    dpointnet::log::get()->info("rank {}: local rank {} (from {}), {} visible device(s) -> device {}", world_rank, lr,
                                src, nvis, init.device_id);
#else
    dpointnet::log::get()->info("rank {}: local rank {} (from {}); host backend {}, no device to bind", world_rank, lr,
                                src, Kokkos::DefaultExecutionSpace::name());
    (void)nvis;
#endif
    dpointnet::compat::initialize(init);
    dpointnet::log_host_threads(host, "rank " + std::to_string(world_rank) + ": ");
  }
  int rc = 0;
  {
    try {
      (void)dpointnet::device::process_kernel_shape();  // a bad DPOINTNET_KERNEL_SHAPE is an input error
      dpointnet::MpiContext ctx(MPI_COMM_WORLD);
      rc = dpointnet::run_train(cmd, &ctx);
    } catch (const dpointnet::InputError& e) {
      die(world_rank, std::string("error: ") + e.what(), dpointnet::kExitInput);
    } catch (const dpointnet::OutputError& e) {
      die(world_rank, std::string("output error: ") + e.what(), dpointnet::kExitOutput);
    } catch (const dpointnet::TrainingError& e) {
      die(world_rank, std::string("error: ") + e.what(), dpointnet::kExitNumerical);
    } catch (const std::exception& e) {
      die(world_rank, std::string("fatal: ") + e.what(), dpointnet::kExitInternal);
    }
  }
  Kokkos::finalize();
  MPI_Finalize();
  return rc;
}
