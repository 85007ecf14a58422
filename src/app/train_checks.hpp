// The training run's checks: a resume checkpoint against this run, and finite losses and gradients before each
// optimizer step.
#pragma once
#include <cmath>
#include <cstdlib>
#include <string>

#include "dpointnet/parallel/replica_set.hpp"
#include "dpointnet/train/checkpoint_file.hpp"
#include "dpointnet/train/detail/trainer_test_access.hpp"
#include "dpointnet/train/sample_schedule.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

// A resume checkpoint must come from this network, config, precision, optimizer and approach (InputError naming the
// field).
CheckpointState read_resume(const std::string& path, const std::string& nhash, const std::string& chash,
                            const std::string& precision, const TrainConfig& tc, const SampleSchedule& schedule);

// Before the optimizer step of a gradient of update `update`: a non-finite loss term or gradient stops the run (the
// same decision on every rank: losses and gradients are the job's means); in float16 runs a gradient that is not
// finite at a loss scale above 1 skips the step instead. DPOINTNET_FAULT_NAN_STEP=k poisons
// surface 0's gradient before update k (tests).
template <class Real>
void check_finite(ReplicaSet<Real>& rs, const StepMetrics& m, const TrainConfig& tc, std::int64_t update) {
  const char* nan_step = std::getenv("DPOINTNET_FAULT_NAN_STEP");
  if (nan_step && std::atoll(nan_step) == update)
    for (int r = 0; r < rs.n_local(); ++r) detail::poison_gradient(rs.local(r).weights(), 0);
  const std::string where =
      "update " + std::to_string(update) + ": nothing of it was applied" +
      (tc.approach == Approach::Series ? " beyond its earlier conditions' optimizer steps" : "") +
      "; the last checkpoint file is the last good state (lower train.optimizer.lr or add clip_global_norm)";
  for (std::size_t q = 0; q < m.loss_terms.size(); ++q)
    if (!std::isfinite(m.loss_terms[q]))
      throw TrainingError("loss " + tc.losses[q].name + " is " + std::to_string(m.loss_terms[q]) + " at " + where);
  for (const auto& c : m.conditions)
    for (std::size_t q = 0; q < c.terms.size(); ++q)
      if (!std::isfinite(c.terms[q]))
        throw TrainingError("loss " + tc.condition_names[static_cast<std::size_t>(c.condition)] + "." +
                            tc.losses_of(c.condition)[q].name + " is " + std::to_string(c.terms[q]) + " at " + where);
  const std::string s = rs.chief().weights().nonfinite_gradient_surface();
  if (s.empty()) return;
  // float16 runs: the step is skipped and the loss scale halved, down to 1 (train/loss_scale.hpp)
  const LossScale& ls = rs.chief().loss_scale();
  if (ls.on && ls.scale > 1) return;
  throw TrainingError("the gradient of surface '" + s + "' is not finite" +
                      (ls.on ? std::string(" at a loss scale of 1") : std::string()) + " at " + where);
}

}  // namespace dpointnet
