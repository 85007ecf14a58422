#include "dpointnet/app/prepare_run.hpp"

#include <string>

#include "dpointnet/sim/step_window.hpp"

namespace dpointnet {

PreparedRun prepare_run(const SimulationConfig& cfg, const Network& net, const TrainConfig& tc, int replicas,
                        int batch) {
  PreparedRun run;
  run.cfg = &cfg;
  run.net = &net;
  run.tc = &tc;
  const std::int64_t steps = tc.total_steps(cfg);         // warm-up + window
  for (std::size_t c = 0; c < tc.conditions.size(); ++c)  // (no overrides: a condition of the base inputs)
    run.conditions.push_back(
        prepare_inputs(tc.conditions[c].empty()
                           ? cfg
                           : cfg.with_input_overrides(tc.conditions[c], "train.conditions[" + std::to_string(c) + "]"),
                       net, steps));
  run.inputs = prepare_inputs(cfg, net, steps);
  if (tc.from_input)
    run.initial_inputs =
        prepare_inputs(cfg.with_input_overrides(tc.from_input_inputs, "train.initial_state.inputs"), net, steps);
  run.clamps = prepare_current_clamps(cfg, net);
  run.max_window = step_window_from_environment();
  run.schedule = SampleSchedule{batch > 0 ? batch : cfg.batch_size, replicas, tc.accumulate, tc.n_conditions()};
  return run;
}

}  // namespace dpointnet
