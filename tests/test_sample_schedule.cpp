// SampleSchedule: which global samples an update uses. Expected values come from the documented indexing
// (docs/model.md section 10, "Sample indexing"; docs/multi-gpu.md, "Batch semantics"), written out here
// independently of the class.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "dpointnet/train/sample_schedule.hpp"

using dpointnet::SampleSchedule;

namespace {

SampleSchedule schedule(int batch, int replicas, int accumulate, int conditions) {
  SampleSchedule s;
  s.batch = batch;
  s.replicas = replicas;
  s.accumulate = accumulate;
  s.conditions = conditions;
  return s;
}

// docs/model.md section 10: update k, G = P*K*B (K = A x conditions); replica q takes, for condition c, the A*B
// samples from k*G + c*P*A*B + q*A*B, its micro-batch m = c*A + a the B from there + a*B.
std::int64_t documented_sample(std::int64_t k, int q, int m, int b, int B, int P, int A, int C) {
  const std::int64_t G = static_cast<std::int64_t>(P) * A * C * B;
  const int c = m / A, a = m % A;
  return k * G + static_cast<std::int64_t>(c) * P * A * B + static_cast<std::int64_t>(q) * A * B +
         static_cast<std::int64_t>(a) * B + b;
}

}  // namespace

TEST(SampleSchedule, GlobalBatchIsReplicasTimesMicroBatchesTimesBatch) {
  // docs/multi-gpu.md: the global batch is batch_size x train.accumulate x replicas; with conditions K = A x C.
  EXPECT_EQ(schedule(4, 2, 1, 1).global_batch(), 8);
  EXPECT_EQ(schedule(3, 2, 2, 1).global_batch(), 12);
  EXPECT_EQ(schedule(3, 2, 2, 3).global_batch(), 36);
  EXPECT_EQ(schedule(3, 2, 2, 3).micro_batches(), 6);
  EXPECT_EQ(schedule(1, 1, 1, 1).global_batch(), 1);
}

TEST(SampleSchedule, DocumentedLogLineOfTwoRanksOfBatchFour) {
  // docs/multi-gpu.md: with batch_size 4 on 2 ranks every rank logs "rank 1 replica 0: update 3 samples [20, 24)"
  // (update 3 counted from 1, so k = 2; G = 8: [k*G + r*K*b, k*G + (r+1)*K*b) = [16 + 4, 16 + 8)).
  const SampleSchedule s = schedule(4, 2, 1, 1);
  EXPECT_EQ(s.first_sample(2, 1), 20);
  EXPECT_EQ(s.first_sample(2, 1) + s.batch, 24);
  EXPECT_EQ(s.first_sample(2, 0), 16);
  EXPECT_EQ(s.first_sample(0, 0), 0);
}

TEST(SampleSchedule, EverySampleMatchesTheDocumentedIndexing) {
  for (int B : {1, 3})
    for (int P : {1, 2, 4})
      for (int A : {1, 2})
        for (int C : {1, 3}) {
          const SampleSchedule s = schedule(B, P, A, C);
          for (std::int64_t k : {0, 1, 5})
            for (int q = 0; q < P; ++q)
              for (int m = 0; m < A * C; ++m)
                for (int b = 0; b < B; ++b)
                  ASSERT_EQ(s.first_sample(k, q) + s.micro_offset(m) + b, documented_sample(k, q, m, b, B, P, A, C))
                      << "B " << B << " P " << P << " A " << A << " C " << C << " update " << k << " replica " << q
                      << " micro-batch " << m << " sample " << b;
        }
}

TEST(SampleSchedule, AnUpdateUsesEachOfItsGlobalSamplesExactlyOnce) {
  // docs/model.md: update k uses the global samples k*G .. k*G + G - 1.
  const SampleSchedule s = schedule(2, 3, 2, 2);
  const std::int64_t G = 2 * 3 * 2 * 2;
  for (std::int64_t k : {0, 7}) {
    std::set<std::int64_t> seen;
    for (int q = 0; q < s.replicas; ++q)
      for (int m = 0; m < s.micro_batches(); ++m)
        for (int b = 0; b < s.batch; ++b) seen.insert(s.first_sample(k, q) + s.micro_offset(m) + b);
    ASSERT_EQ(static_cast<std::int64_t>(seen.size()), G);
    EXPECT_EQ(*seen.begin(), k * G);
    EXPECT_EQ(*seen.rbegin(), k * G + G - 1);
  }
}

TEST(SampleSchedule, ASamplesConditionDependsOnItsPlaceNotOnTheReplicaCount) {
  // docs/model.md: "a sample's condition depends on its place in the global batch, not on P": the samples of
  // condition c are the c-th block of G / C in every update, for 1, 2 or 4 replicas.
  const int A = 2, C = 3;
  for (int P : {1, 2, 4}) {
    const int B = 8 / P;  // the same global batch (elastic resume)
    const SampleSchedule s = schedule(B, P, A, C);
    ASSERT_EQ(s.global_batch(), 8 * A * C);
    const std::int64_t block = s.global_batch() / C;
    for (int q = 0; q < P; ++q)
      for (int m = 0; m < A * C; ++m)
        for (int b = 0; b < B; ++b) {
          const std::int64_t pos = s.first_sample(3, q) + s.micro_offset(m) - 3 * s.global_batch() + b;
          EXPECT_EQ(pos / block, m / A) << "P " << P << " replica " << q << " micro-batch " << m;
        }
  }
}

TEST(SampleSchedule, SlotFollowsTheDocumentedFormula) {
  // docs/multi-gpu.md: sample i of repeat k of condition c on replica r of R is slot c*R*K*B + r*K*B + k*B + i
  // (K = train.accumulate), i.e. its position in the update's global batch.
  const int B = 3, R = 2, K = 2, C = 2;
  const SampleSchedule s = schedule(B, R, K, C);
  std::set<std::int64_t> slots;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      for (int k = 0; k < K; ++k)
        for (int i = 0; i < B; ++i) {
          const int m = c * K + k;
          EXPECT_EQ(s.slot(r, m, i), c * R * K * B + r * K * B + k * B + i);
          EXPECT_EQ(s.slot(r, m, i), s.first_sample(4, r) + s.micro_offset(m) + i - 4 * s.global_batch());
          slots.insert(s.slot(r, m, i));
        }
  EXPECT_EQ(static_cast<std::int64_t>(slots.size()), s.global_batch());
}

TEST(SampleSchedule, SlotsOfAnElasticResumeKeepTheirGlobalPosition) {
  // docs/multi-gpu.md, "Elastic resume": 2 x 4 -> 4 x 2 -> 1 x 8; carried states are keyed by the global slot,
  // which is the same sample position whatever the split (here without accumulation or conditions).
  const SampleSchedule a = schedule(4, 2, 1, 1), b = schedule(2, 4, 1, 1), c = schedule(8, 1, 1, 1);
  EXPECT_EQ(a.slot(1, 0, 2), 6);
  EXPECT_EQ(b.slot(3, 0, 0), 6);
  EXPECT_EQ(c.slot(0, 0, 6), 6);
}

TEST(SampleSchedule, NextSampleIsStepsTimesGlobalBatch) {
  // docs/training.md: /rng/next_sample = step x (global) batch; docs/model.md: a resumed run continues at step*G.
  EXPECT_EQ(schedule(4, 2, 1, 1).next_sample(3), 24);
  EXPECT_EQ(schedule(2, 2, 2, 3).next_sample(5), 5 * 24);
  EXPECT_EQ(schedule(4, 2, 1, 1).next_sample(0), 0);
  // after `steps` updates the next sample is the first sample of the next update
  const SampleSchedule s = schedule(3, 2, 2, 1);
  EXPECT_EQ(s.next_sample(6), s.first_sample(6, 0));
}

TEST(SampleSchedule, LargeUpdateCountsDoNotOverflow) {
  // 64-bit indices: 3e9 updates of a global batch of 64 is 1.92e11, beyond 32 bits.
  const SampleSchedule s = schedule(16, 2, 2, 1);
  EXPECT_EQ(s.next_sample(3000000000LL), 192000000000LL);
  EXPECT_EQ(s.first_sample(3000000000LL, 1), 192000000000LL + 32);
}
