#include "dpointnet/train/sync_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dpointnet/util/error.hpp"
#include "dpointnet/util/numpy_random.hpp"

namespace dpointnet {

std::vector<std::int64_t> sync_sample_counts(std::int64_t n, std::int64_t pool_size, std::uint64_t seed) {
  NumpyGenerator rng(seed);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(n > 0 ? n : 0));
  for (std::int64_t& c : counts) {
    // numpy's astype(int64) truncates toward zero; a normal(70, 30) draw is far inside the int64 range.
    const auto drawn = static_cast<std::int64_t>(std::trunc(rng.normal(kSyncSampleMean, kSyncSampleStddev)));
    c = std::min(std::max(drawn, kSyncSampleMin), pool_size);
  }
  return counts;
}

SyncSamplingPlan make_sync_sampling_plan(std::int64_t n_samples, std::int64_t batch, std::int64_t pool_size,
                                         std::uint64_t seed) {
  if (pool_size < kSyncSampleMin)
    throw InputError("", "SynchronizationLoss", "",
                     "the sampling pool needs at least " + std::to_string(kSyncSampleMin) + " neurons, got " +
                         std::to_string(pool_size));
  if (n_samples < 1 || batch < 1)
    throw InputError("", "SynchronizationLoss", "",
                     "n_samples (" + std::to_string(n_samples) + ") and the batch size (" + std::to_string(batch) +
                         ") must be at least 1");
  SyncSamplingPlan p;
  p.n_samples = n_samples;
  p.batch = batch;
  p.pool_size = pool_size;
  p.per_trial = (n_samples + batch - 1) / batch;
  p.n_effective = batch * p.per_trial;
  p.counts = sync_sample_counts(p.n_effective, pool_size, seed);
  p.offsets.resize(p.counts.size());
  p.trials.resize(p.counts.size());
  std::int64_t copy = 0, next = 0;  // current copy of P and the first unused position in it
  for (std::size_t k = 0; k < p.counts.size(); ++k) {
    if (next + p.counts[k] > pool_size) {
      ++copy;
      next = 0;
    }
    p.offsets[k] = copy * pool_size + next;
    next += p.counts[k];
    p.trials[k] = static_cast<std::int64_t>(k) / p.per_trial;
    p.max_count = std::max(p.max_count, p.counts[k]);
  }
  p.n_copies = copy + 1;
  return p;
}

}  // namespace dpointnet
