// Counter-based noise (docs/model.md section 6): known-answer vectors, distribution laws, and replay of a sample's
// draws whatever the batch it runs in.
#include <gtest/gtest.h>

#include "dpointnet/device/rng.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/util/hash.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

TEST(Noise, PhiloxKnownAnswerVectors) {
  // Random123 kat_vectors: philox4x32_10, counter {0,0,0,0}, key {0,0} -> 6627e8d5 e169c58d ... (the other
  // published vectors use a non-zero fourth counter word, which dpointnet's layout keeps at 0).
  EXPECT_EQ(device::uniform01(0, 0, 0, 0, 0), (double(0x6627e8d5u) + 0.5) / 4294967296.0);
}

TEST(Noise, PoissonAndBernoulliDrawsFollowTheirLaws) {
  const double lam = 0.25;  // 250 Hz at dt = 1 ms
  const double p0 = std::exp(-lam);
  const int n = 400000;
  double sum = 0, sum2 = 0, bern = 0;
  const double p = -std::expm1(-0.02);  // 20 Hz
  for (int i = 0; i < n; ++i) {
    const double u =
        device::uniform01(42, 7, static_cast<std::uint32_t>(i % 100), static_cast<std::uint32_t>(i / 100), 3);
    const int k = device::poisson_from_uniform(u, lam, p0);
    sum += k;
    sum2 += double(k) * k;
    const double u2 =
        device::uniform01(42, 8, static_cast<std::uint32_t>(i % 100), static_cast<std::uint32_t>(i / 100), 3);
    bern += u2 < p ? 1 : 0;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, lam, 5 * std::sqrt(lam / n));
  EXPECT_NEAR(var, lam, 0.01);
  EXPECT_NEAR(bern / n, p, 5 * std::sqrt(p * (1 - p) / n));
}

namespace {
// Spikes of every sample: [sample][step][neuron]
std::vector<std::vector<std::vector<std::uint8_t>>> run_batch(const Network& net, const std::vector<PreparedInput>& in,
                                                              int batch, std::int64_t offset, std::int64_t T) {
  SimOptions o;
  o.batch_size = batch;
  o.n_steps = T;
  o.seed = 1234;
  o.sample_offset = offset;
  Simulator<float, TEST_EXECSPACE> sim(TEST_EXECSPACE(), net, in, o);
  sim.reset();
  std::vector<std::vector<std::vector<std::uint8_t>>> z(static_cast<std::size_t>(batch));
  sim.run(T, [&](const RecordedChunk& c) {
    for (int b = 0; b < batch; ++b)
      for (int k = 0; k < c.n_steps; ++k) {
        std::vector<std::uint8_t> row;
        for (std::int64_t i = 0; i < net.n_neurons; ++i) row.push_back(c.z(k, b, i));
        z[static_cast<std::size_t>(b)].push_back(row);
      }
  });
  return z;
}
}  // namespace

TEST(Noise, SameSampleIndexGivesSameDrawsInBatchOf1AndOf16) {
  std::vector<NeuronParams> ps;
  for (int i = 0; i < 30; ++i) ps.push_back(glif(100, 5, -70, -50, -70, 2.0));
  NetBuilder nb(1.0, ps);
  const int bkg = nb.add_virtual("bkg", 40);
  const int lgn = nb.add_virtual("lgn", 20);
  std::mt19937 gen(5);
  for (int i = 0; i < 30; ++i) {
    for (int q = 0; q < 4; ++q)
      nb.edge(bkg, static_cast<std::int64_t>(gen() % 40), i, 0, 1 + static_cast<int>(gen() % 3), 60.0);
    for (int q = 0; q < 5; ++q) nb.edge(lgn, static_cast<std::int64_t>(gen() % 20), i, 1, 2, 80.0);
    nb.edge(0, (i + 1) % 30, i, 2, 1 + i % 4, 30.0);
  }
  Network net = nb.finish();
  PreparedInput pb;
  pb.name = "bkg";
  pb.kind = InputKind::Poisson;
  pb.projection = bkg;
  pb.purpose = fnv1a32("bkg");
  for (int j = 0; j < 40; ++j) {
    pb.p.push_back(0.25);
    pb.p0.push_back(std::exp(-0.25));
  }
  PreparedInput pl;
  pl.name = "lgn";
  pl.kind = InputKind::Rates;
  pl.projection = lgn;
  pl.purpose = fnv1a32("lgn");
  for (int j = 0; j < 20; ++j) pl.p.push_back(-std::expm1(-0.03));
  const std::int64_t T = 200;
  auto big = run_batch(net, {pb, pl}, 16, 0, T);
  std::size_t spikes = 0;
  for (auto& s : big)
    for (auto& r : s)
      for (auto z : r) spikes += z;
  EXPECT_GT(spikes, 100u) << "the test network must be active for the comparison to mean something";
  for (std::int64_t s : {0, 7, 15}) {
    auto one = run_batch(net, {pb, pl}, 1, s, T);
    EXPECT_EQ(one[0], big[static_cast<std::size_t>(s)]) << "sample " << s;
  }
  EXPECT_NE(big[0], big[1]) << "different samples must get different noise";
}
