#include "dpointnet/app/plan_run.hpp"

#include <fmt/format.h>

#include <Kokkos_Core.hpp>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/train/memory_plan.hpp"
#include "dpointnet/train/train_config.hpp"

namespace dpointnet {

int run_plan(const std::string& config, bool simulate) {
  SimulationConfig cfg = SimulationConfig::load(config);
  Network net = build_network(cfg);
  const bool training = !simulate && cfg.resolved.contains("train");
  TrainConfig tc;
  if (training) tc = TrainConfig::parse(cfg, net);
  // training: every input, condition and clamp checked as `train` checks them
  const auto inputs = training ? prepare_run(cfg, net, tc).inputs : prepare_inputs(cfg, net, cfg.n_steps);
  const int replicas =
      cfg.distribution.mode == DistributionMode::Mirrored ? static_cast<int>(cfg.distribution.devices.size()) : 1;
  const MemoryPlan plan = plan_memory(net, inputs, cfg, training ? &tc : nullptr, replicas);
  fmt::print("plan of `{}` for {}: {} neurons, {} edges, T = {} steps, batch {}{}, precision {}\n",
             training ? "train" : "simulate", cfg.path, net.n_neurons, net.n_edges(), cfg.n_steps, cfg.batch_size,
             training ? fmt::format(", checkpoint_interval {}", tc.checkpoint_interval) : std::string(),
             precision_name(cfg.precision));
  fmt::print("{}", describe(plan));
  const double have = available_device_bytes();
  fmt::print("available on {}: {:.3f} MiB -> {}\n", Kokkos::DefaultExecutionSpace::memory_space::name(),
             have / 1048576.0,
             have <= 0              ? "unknown"
             : plan.total() <= have ? "fits"
                                    : "does NOT fit");
  return have > 0 && plan.total() > have ? 3 : 0;
}

}  // namespace dpointnet
