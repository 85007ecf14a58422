// Which global samples an update uses: the one mapping shared by the trainer, the replica set and the
// checkpoint files. Global batches are drawn in order; replica r of R takes the r-th slice of B samples.
#pragma once
#include <cstdint>

namespace dpointnet {

struct SampleSchedule {
  int batch = 1;     // samples per replica
  int replicas = 1;  // replicas in the job (1 for serial training)

  std::int64_t global_batch() const { return static_cast<std::int64_t>(batch) * replicas; }
  // First global sample index of replica `replica` in update `update` (0-based).
  std::int64_t first_sample(std::int64_t update, int replica) const {
    return update * global_batch() + static_cast<std::int64_t>(replica) * batch;
  }
  // The next sample to draw after `updates_done` updates (stored in checkpoint files).
  std::int64_t next_sample(std::int64_t updates_done) const { return updates_done * global_batch(); }
};

}  // namespace dpointnet
