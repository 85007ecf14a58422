// Which global samples an update uses: the one mapping shared by the trainer, the replica set and the
// checkpoint files. Global batches are drawn in order; within one, each stimulus condition takes a block, and
// replica r of R the r-th slice of A x B samples of every block (A = train.accumulate micro-batches of B).
#pragma once
#include <cstdint>

namespace dpointnet {

struct SampleSchedule {
  int batch = 1;       // samples per replica and micro-batch
  int replicas = 1;    // replicas in the job (1 for serial training)
  int accumulate = 1;  // micro-batches per replica, update and condition (train.accumulate)
  int conditions = 1;  // stimulus conditions (train.conditions; 1 without)

  int micro_batches() const { return accumulate * conditions; }
  std::int64_t global_batch() const { return static_cast<std::int64_t>(batch) * micro_batches() * replicas; }
  // First global sample index of replica `replica` in update `update` (0-based).
  std::int64_t first_sample(std::int64_t update, int replica) const {
    return update * global_batch() + static_cast<std::int64_t>(replica) * batch * accumulate;
  }
  // Offset of micro-batch m (condition m / accumulate, repeat m % accumulate) from the replica's first sample.
  // Conditions are the outermost blocks of the global batch, so a sample's condition does not depend on the
  // replica count: block c holds samples c x replicas x accumulate x batch ..
  std::int64_t micro_offset(int m) const {
    return static_cast<std::int64_t>(m / accumulate) * replicas * accumulate * batch +
           static_cast<std::int64_t>(m % accumulate) * batch;
  }
  // Position in an update's global batch (0 .. global_batch() - 1) of sample b of micro-batch m of replica
  // `replica`: the sample slot whose state train.carry_state carries to the next update. Independent of the
  // replica count for a given global batch only when replicas x accumulate stays the same.
  std::int64_t slot(int replica, int m, int b) const {
    return static_cast<std::int64_t>(replica) * batch * accumulate + micro_offset(m) + b;
  }
  // The next sample to draw after `updates_done` updates (stored in checkpoint files).
  std::int64_t next_sample(std::int64_t updates_done) const { return updates_done * global_batch(); }
};

}  // namespace dpointnet
