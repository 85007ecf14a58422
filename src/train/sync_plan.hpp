// The synchronization loss's sampling plan (docs: V1 paper spec section 3.3, "Sampling plan"): which neurons of
// the excitatory pool P each of the loss's samples sums, as DPointNet's fano_sampling_plan builds it. The plan is
// fixed for a batch size: per_trial = ceil(n_samples / B) samples per trial, n_eff = B * per_trial samples, the
// sizes c_k = clip(trunc(x_k), 15, |P|) with x = numpy.random.default_rng(seed).normal(70, 30, size=n_eff),
// sample k on trial floor(k / per_trial), and sample k's neurons the slice [off_k, off_k + c_k) of a
// concatenation of shuffled copies of P: slices are packed in sample order, and a sample that would run past the
// end of the current copy starts at the beginning of the next one. The shuffle of each copy is not part of the
// plan.
#pragma once
#include <cstdint>
#include <vector>

namespace dpointnet {

inline constexpr double kSyncSampleMean = 70.0;     // mean of the drawn sample sizes
inline constexpr double kSyncSampleStddev = 30.0;   // their standard deviation
inline constexpr std::int64_t kSyncSampleMin = 15;  // smallest sample size (and smallest pool)
inline constexpr std::uint64_t kSyncPlanSeed = 42;  // DPointNet's plan seed (the loss's `seed`, default 42)

struct SyncSamplingPlan {
  std::int64_t n_samples = 0;         // samples asked for
  std::int64_t batch = 0;             // trials B the plan spreads them over
  std::int64_t pool_size = 0;         // |P|
  std::int64_t per_trial = 0;         // ceil(n_samples / B)
  std::int64_t n_effective = 0;       // B * per_trial: samples in the plan
  std::int64_t n_copies = 0;          // shuffled copies of P the slices use (1 + the number of wraps)
  std::int64_t max_count = 0;         // max_k c_k
  std::vector<std::int64_t> counts;   // c_k, k < n_effective: neurons summed by sample k
  std::vector<std::int64_t> offsets;  // off_k: first position of sample k in the concatenated copies
  std::vector<std::int64_t> trials;   // floor(k / per_trial): the trial (batch element) of sample k

  // Copy of P that sample k reads, and the position of its first neuron in that copy.
  std::int64_t copy_of(std::int64_t k) const { return offsets[static_cast<std::size_t>(k)] / pool_size; }
  std::int64_t start_in_copy(std::int64_t k) const { return offsets[static_cast<std::size_t>(k)] % pool_size; }
};

// The plan for n_samples samples over `batch` trials from a pool of pool_size neurons. Throws InputError when
// pool_size < kSyncSampleMin, or when n_samples or batch is below 1 (DPointNet refuses the same).
SyncSamplingPlan make_sync_sampling_plan(std::int64_t n_samples, std::int64_t batch, std::int64_t pool_size,
                                         std::uint64_t seed = kSyncPlanSeed);

// The sample sizes alone: clip(trunc(numpy.random.default_rng(seed).normal(70, 30, size=n)), 15, pool_size).
std::vector<std::int64_t> sync_sample_counts(std::int64_t n, std::int64_t pool_size, std::uint64_t seed);

}  // namespace dpointnet
