// Which global samples an update uses: the one mapping shared by the trainer, the replica set and the
// checkpoint files. Global batches are drawn in order; replica r of R takes the r-th slice of K x B samples
// (K micro-batches of B).
#pragma once
#include <cstdint>

namespace dpointnet {

struct SampleSchedule {
  int batch = 1;       // samples per replica and micro-batch
  int replicas = 1;    // replicas in the job (1 for serial training)
  int accumulate = 1;  // micro-batches per replica and update (train.accumulate)

  std::int64_t global_batch() const { return static_cast<std::int64_t>(batch) * accumulate * replicas; }
  // First global sample index of replica `replica` in update `update` (0-based); its micro-batch k starts at
  // first_sample + k x batch.
  std::int64_t first_sample(std::int64_t update, int replica) const {
    return update * global_batch() + static_cast<std::int64_t>(replica) * batch * accumulate;
  }
  // The next sample to draw after `updates_done` updates (stored in checkpoint files).
  std::int64_t next_sample(std::int64_t updates_done) const { return updates_done * global_batch(); }
};

}  // namespace dpointnet
