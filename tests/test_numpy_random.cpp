// numpy's default_rng in C++ (src/util/numpy_random) and the synchronization loss's sampling plan
// (src/train/sync_plan). Every expected value is a literal produced by numpy 1.24.2 (Python 3.11) with the Python
// line given above it; doubles are compared bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "dpointnet/train/sync_plan.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/numpy_random.hpp"

using namespace dpointnet;

namespace {

using I64 = std::vector<std::int64_t>;

// The plan computed the way DPointNet's fano_sampling_plan computes it, in numpy (the Python used for the literals
// of the plan tests):
//   def plan(n_pool, n_samples, n_trials, seed=42):
//       per_trial = -(-n_samples // n_trials); n_eff = n_trials * per_trial
//       c = np.clip(np.random.default_rng(seed).normal(70, 30, n_eff).astype(np.int64), 15, n_pool)
//       off, copy, nxt = [], 0, 0
//       for x in c:
//           if nxt + x > n_pool: copy, nxt = copy + 1, 0
//           off.append(copy * n_pool + nxt); nxt += x
//       return per_trial, n_eff, c.tolist(), off, copy + 1, int(c.max())

}  // namespace

TEST(NumpyRandom, SeedSequenceAndPcg64State) {
  // ss = np.random.SeedSequence(42); ss.pool; ss.generate_state(4, np.uint64)
  NumpySeedSequence ss(42);
  EXPECT_EQ(ss.pool()[0], 0x631d3606u);
  EXPECT_EQ(ss.pool()[1], 0x07ae90aeu);
  EXPECT_EQ(ss.pool()[2], 0x6fc4be28u);
  EXPECT_EQ(ss.pool()[3], 0x2ced5c75u);
  const std::vector<std::uint64_t> gs{0x9f1e2e6dcd540ab7ULL, 0xd57873dc79fb94b6ULL, 0x7d282a1b64d420b7ULL,
                                      0x336579714692d5ffULL};
  EXPECT_EQ(ss.generate_state64(4), gs);
  // s = np.random.PCG64(42).state['state']; '%x %x' % (s['state'], s['inc'])
  NumpyPcg64 pcg(42);
  EXPECT_EQ(pcg.state_high(), 0xcea44f6798798f2aULL);
  EXPECT_EQ(pcg.state_low(), 0xacbc7c9d68860ac8ULL);
  EXPECT_EQ(pcg.inc_high(), 0xfa505436c9a8416eULL);
  EXPECT_EQ(pcg.inc_low(), 0x66caf2e28d25abffULL);
  // np.random.default_rng(seed).bit_generator.random_raw(2)
  EXPECT_EQ(pcg.next_uint64(), 0xc621fbcd16d92688ULL);
  EXPECT_EQ(pcg.next_uint64(), 0x705a5661a791ffc1ULL);
  NumpyPcg64 other(12345);
  EXPECT_EQ(other.next_uint64(), 0x3a32b18db2ffc19dULL);
  EXPECT_EQ(other.next_uint64(), 0x51171315c9e4c4deULL);
}

TEST(NumpyRandom, RandomAndUniform) {
  // np.random.default_rng(seed).random(4)
  const std::vector<double> r42{0.7739560485559633, 0.4388784397520523, 0.8585979199113825, 0.6973680290593639};
  const std::vector<double> r12345{0.22733602246716966, 0.31675833970975287, 0.7973654573327341, 0.6762546707509746};
  NumpyGenerator a = numpy_default_rng(42), b = numpy_default_rng(12345);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.random(), r42[i]) << i;
    EXPECT_EQ(b.random(), r12345[i]) << i;
  }
  // np.random.default_rng(2**32 + 7).random(2): a seed of two 32-bit words
  NumpyGenerator c(4294967303ULL);
  EXPECT_EQ(c.random(), 0.7701409510034741);
  EXPECT_EQ(c.random(), 0.1119272443176843);
  // np.random.default_rng(seed).uniform(-2.5, 7.0, 3)
  NumpyGenerator d(42), e(12345);
  EXPECT_EQ(d.uniform(-2.5, 7.0), 4.852582461281652);
  EXPECT_EQ(d.uniform(-2.5, 7.0), 1.6693451776444972);
  EXPECT_EQ(d.uniform(-2.5, 7.0), 5.656680239158133);
  EXPECT_EQ(e.uniform(-2.5, 7.0), -0.3403077865618882);
  EXPECT_EQ(e.uniform(-2.5, 7.0), 0.5092042272426522);
  EXPECT_EQ(e.uniform(-2.5, 7.0), 5.074971844660974);
}

TEST(NumpyRandom, StandardNormalAndNormal) {
  // np.random.default_rng(seed).standard_normal(4)
  const std::vector<double> s42{0.30471707975443135, -1.0399841062404955, 0.7504511958064572, 0.9405647163912139};
  const std::vector<double> s12345{-1.4238250364546312, 1.2637284581291104, -0.8706617379590857, -0.2591732349343976};
  // np.random.default_rng(seed).normal(70, 30, 4)
  const std::vector<double> n42{79.14151239263293, 38.800476812785135, 92.51353587419372, 98.21694149173642};
  const std::vector<double> n12345{27.285248906361062, 107.91185374387331, 43.88014786122743, 62.22480295196807};
  NumpyGenerator a(42), b(12345);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.standard_normal(), s42[i]) << i;
    EXPECT_EQ(b.standard_normal(), s12345[i]) << i;
  }
  EXPECT_EQ(NumpyGenerator(42).normal(70.0, 30.0, 4), n42);
  EXPECT_EQ(NumpyGenerator(12345).normal(70.0, 30.0, 4), n12345);
}

TEST(NumpyRandom, MillionNormalsIncludingTail) {
  // u = np.random.default_rng(seed).standard_normal(1_000_000).view(np.uint64)
  // hex(int(np.bitwise_xor.reduce(u))), hex(int(u.sum(dtype=np.uint64))), repr(float(u[-1:].view(np.float64)[0]))
  // (the draws pass through the ziggurat's wedges and its tail: 279 and 243 draws beyond r)
  struct Case {
    std::uint64_t seed, bits_xor, bits_sum;
    double last;
  };
  for (const Case& k : {Case{42, 0x0017088cfd6fbc21ULL, 0xfda2c48550a91aedULL, 0.8767899257857655},
                        Case{12345, 0xffc85075efa3f20dULL, 0x73100845f46bbf81ULL, -1.2697472253053648}}) {
    NumpyGenerator g(k.seed);
    std::uint64_t bits_xor = 0, bits_sum = 0;
    double last = 0.0;
    for (int i = 0; i < 1000000; ++i) {
      last = g.standard_normal();
      std::uint64_t u;
      std::memcpy(&u, &last, sizeof u);
      bits_xor ^= u;
      bits_sum += u;
    }
    EXPECT_EQ(bits_xor, k.bits_xor) << k.seed;
    EXPECT_EQ(bits_sum, k.bits_sum) << k.seed;
    EXPECT_EQ(last, k.last) << k.seed;
  }
}

TEST(SyncPlan, SpecCountFixture) {
  // c = np.clip(np.random.default_rng(42).normal(70, 30, 500).astype(np.int64), 15, 10**6)
  // c[:10].tolist(), c.sum(), c.max()  ->  [79, 38, 92, 98, 15, 30, 73, 60, 69, 44] 34681 157
  const I64 first{79, 38, 92, 98, 15, 30, 73, 60, 69, 44};
  const I64 c = sync_sample_counts(500, 1000000, 42);
  ASSERT_EQ(c.size(), 500u);
  EXPECT_EQ(I64(c.begin(), c.begin() + 10), first);
  EXPECT_EQ(std::accumulate(c.begin(), c.end(), std::int64_t{0}), 34681);
  EXPECT_EQ(*std::max_element(c.begin(), c.end()), 157);
  // Any batch size that divides 500 gives the same samples (spec: "any B").
  for (std::int64_t batch : {1, 4, 5, 10, 50}) {
    const SyncSamplingPlan p = make_sync_sampling_plan(500, batch, 1000000);
    EXPECT_EQ(p.n_effective, 500);
    EXPECT_EQ(p.counts, c) << batch;
    EXPECT_EQ(p.max_count, 157);
    EXPECT_EQ(p.n_copies, 1);
  }
  // plan(10**6, 500, 8): per_trial 63, n_eff 504, sum(c) 34959, copies 1, max 157, last offsets below
  const SyncSamplingPlan p8 = make_sync_sampling_plan(500, 8, 1000000);
  EXPECT_EQ(p8.per_trial, 63);
  EXPECT_EQ(p8.n_effective, 504);
  EXPECT_EQ(std::accumulate(p8.counts.begin(), p8.counts.end(), std::int64_t{0}), 34959);
  EXPECT_EQ(I64(p8.offsets.end() - 3, p8.offsets.end()), (I64{34791, 34887, 34935}));
  EXPECT_EQ(p8.trials.back(), 7);
  // plan(4000, 500, 64): per_trial 8, n_eff 512, sum(c) 35472, copies 9, max 157
  const SyncSamplingPlan p64 = make_sync_sampling_plan(500, 64, 4000);
  EXPECT_EQ(p64.n_effective, 512);
  EXPECT_EQ(std::accumulate(p64.counts.begin(), p64.counts.end(), std::int64_t{0}), 35472);
  EXPECT_EQ(p64.n_copies, 9);
  EXPECT_EQ(I64(p64.offsets.end() - 3, p64.offsets.end()), (I64{35614, 35697, 35720}));
}

TEST(SyncPlan, OffsetsCopiesAndTrials) {
  // plan(100, 10, 3, 42)
  const SyncSamplingPlan a = make_sync_sampling_plan(10, 3, 100, 42);
  EXPECT_EQ(a.per_trial, 4);
  EXPECT_EQ(a.n_effective, 12);
  EXPECT_EQ(a.counts, (I64{79, 38, 92, 98, 15, 30, 73, 60, 69, 44, 96, 93}));
  EXPECT_EQ(a.offsets, (I64{0, 100, 200, 300, 400, 415, 500, 600, 700, 800, 900, 1000}));
  EXPECT_EQ(a.n_copies, 11);
  EXPECT_EQ(a.max_count, 98);
  EXPECT_EQ(a.trials, (I64{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(a.copy_of(5), 4);
  EXPECT_EQ(a.start_in_copy(5), 15);
  // plan(150, 9, 4, 2026)
  const SyncSamplingPlan b = make_sync_sampling_plan(9, 4, 150, 2026);
  EXPECT_EQ(b.per_trial, 3);
  EXPECT_EQ(b.n_effective, 12);
  EXPECT_EQ(b.counts, (I64{46, 77, 15, 111, 89, 61, 60, 79, 61, 63, 91, 85}));
  EXPECT_EQ(b.offsets, (I64{0, 46, 123, 150, 300, 389, 450, 510, 600, 661, 750, 900}));
  EXPECT_EQ(b.n_copies, 7);
  EXPECT_EQ(b.max_count, 111);
  EXPECT_EQ(b.trials, (I64{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}));
  // plan(60, 7, 2, 3): counts clipped to |P| = 60 and to 15
  const SyncSamplingPlan c = make_sync_sampling_plan(7, 2, 60, 3);
  EXPECT_EQ(c.counts, (I64{60, 15, 60, 52, 56, 60, 15, 60}));
  EXPECT_EQ(c.offsets, (I64{0, 60, 120, 180, 240, 300, 360, 420}));
  EXPECT_EQ(c.n_copies, 8);
}

TEST(SyncPlan, RefusesBadSizes) {
  EXPECT_THROW(make_sync_sampling_plan(10, 2, 14), InputError);
  EXPECT_THROW(make_sync_sampling_plan(0, 2, 100), InputError);
  EXPECT_THROW(make_sync_sampling_plan(10, 0, 100), InputError);
  EXPECT_NO_THROW(make_sync_sampling_plan(1, 1, 15));
}
