#include "dpointnet/app/train_checks.hpp"

#include <filesystem>

namespace fs = std::filesystem;

namespace dpointnet {

CheckpointState read_resume(const std::string& path, const std::string& nhash, const std::string& chash,
                            const std::string& precision, const TrainConfig& tc, const SampleSchedule& schedule) {
  if (!fs::exists(path)) throw InputError(path, "", "--resume", "checkpoint file does not exist");
  CheckpointState ck = read_checkpoint_file(path);
  if (ck.network_hash != nhash)
    throw InputError(
        path, "", "network_hash",
        "the checkpoint was written for another network (hash " + ck.network_hash + ", this network " + nhash + ")");
  // elastic resume: another replica count is fine when the global batch is kept
  if (ck.global_batch > 0 && ck.global_batch != schedule.global_batch())
    throw InputError(path, "", "global_batch",
                     "the checkpoint was written with a global batch of " + std::to_string(ck.global_batch) + " (" +
                         std::to_string(ck.replicas) + " replica(s) x batch_size " + std::to_string(ck.batch_size) +
                         " x accumulate x conditions); this run's is " + std::to_string(schedule.global_batch()) +
                         " (" + std::to_string(schedule.replicas) + " x " + std::to_string(schedule.batch) +
                         "): a resume may change the replicas and run.batch_size, not their product");
  // the precision, the optimizer and the approach by name, before the config hash that covers them
  if (ck.precision != precision)
    throw InputError(path, "", "precision",
                     "the checkpoint was written by a run.precision \"" + ck.precision + "\" run; this run's is \"" +
                         precision + "\" (a resume continues the same arithmetic)");
  if (ck.optimizer != optimizer_name(tc.optimizer))
    throw InputError(path, "", "optimizer",
                     "the checkpoint was written by optimizer \"" + ck.optimizer +
                         "\"; this run's train.optimizer.type is \"" + optimizer_name(tc.optimizer) +
                         "\" (the optimizer state does not carry over)");
  if (ck.approach != approach_name(tc.approach))
    throw InputError(path, "", "approach",
                     "the checkpoint was written with train.approach \"" + ck.approach + "\"; this run's is \"" +
                         approach_name(tc.approach) + "\" (the optimizer's step count depends on it)");
  if (ck.config_hash != chash)
    throw InputError(path, "", "config_hash",
                     "the checkpoint was written with another config (hash " + ck.config_hash + ", this config " +
                         chash + "); only train.steps/epochs and the save/log intervals may change on resume");
  if (tc.carry_state && ck.step > 0 && ck.carried.empty())
    throw InputError(path, "", "carried_state",
                     "is missing: train.carry_state is on and the checkpoint is from update " +
                         std::to_string(ck.step) + " (the run would restart its samples from rest)");
  return ck;
}

}  // namespace dpointnet
