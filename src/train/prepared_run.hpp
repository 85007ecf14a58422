// What a training run needs, prepared once by the application (app/prepare_run.hpp) and shared by every replica:
// the network and configs, the typed input schedules of the base stimulus and of each stimulus condition, the
// current clamps and the job's sample schedule. It must outlive the trainers built from it.
#pragma once
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/sample_schedule.hpp"
#include "dpointnet/train/train_config.hpp"

namespace dpointnet {

struct PreparedRun {
  const SimulationConfig* cfg = nullptr;
  const Network* net = nullptr;
  const TrainConfig* tc = nullptr;
  std::vector<PreparedInput> inputs;                   // for the warm-up and the window (tc->total_steps)
  std::vector<std::vector<PreparedInput>> conditions;  // train.conditions, each the inputs with its overrides
  std::vector<PreparedInput> initial_inputs;           // train.initial_state "from_input" (empty without)
  std::vector<CurrentPulse> clamps;                    // current clamps, the same for every sample
  SampleSchedule schedule;                             // the job's (replicas, micro-batches, conditions)
  int max_window = 0;  // steps per min-delay window at most (SimOptions::max_window; DPOINTNET_STEP_WINDOW)
};

}  // namespace dpointnet
