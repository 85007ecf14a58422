// `run.distribution` (typed by the config layer) checked against the launcher, the world size and the
// admitted scope (docs/multi-gpu.md), before anything is written.
#pragma once
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/train/train_config.hpp"

namespace dpointnet {

enum class Launcher { Serial, Mpi };

// The fields of run.distribution as the config layer read them (DistributionSpec), admitted.
struct DistributionConfig : DistributionSpec {
  // Checks the mode against the launcher and world size, the global batch size, and the admitted
  // scope (FP32, sample-separable losses, ...). Throws InputError naming the setting.
  static DistributionConfig parse(const SimulationConfig& cfg, const TrainConfig* tc, Launcher launcher, int world_size,
                                  bool training);
  int local_replicas() const { return mode == DistributionMode::Mirrored ? static_cast<int>(devices.size()) : 1; }
};

}  // namespace dpointnet
