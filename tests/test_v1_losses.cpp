// The V1 papers' loss pieces (docs/training.md "Losses", "Cell types and core masks"): the pop_name -> cell type
// rule on the V1 model's population names, the sampled rate targets against the fixture of V1-PAPER.md 3.1
// (numpy's RandomState(42)), the Huber-quantile penalty against its closed form, and the EMD regularizer against
// cost |delta| / G for a shifted group.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "dpointnet/network/v1_cell_types.hpp"
#include "dpointnet/train/crowd_selectivity.hpp"
#include "dpointnet/train/fano.hpp"
#include "dpointnet/train/losses.hpp"
#include "dpointnet/train/observed_rates.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using dpointnet::test::network_of_types;

TEST(V1CellTypes, PopNamesOfTheV1ModelMapOntoTheSeventeenTypes) {
  const std::vector<std::pair<std::string, std::string>> merged = {
      {"i1Htr3a", "L1 Htr3a"},  {"e23Cux2", "L2/3 Exc"}, {"i23Pvalb", "L2/3 PV"}, {"i23Sst", "L2/3 SST"},
      {"i23Htr3a", "L2/3 VIP"}, {"i23Vip", "L2/3 VIP"},  {"e4Scnn1a", "L4 Exc"},  {"e4Rorb", "L4 Exc"},
      {"e4other", "L4 Exc"},    {"e4Nr5a1", "L4 Exc"},   {"i4Pvalb", "L4 PV"},    {"i4Sst", "L4 SST"},
      {"i4Vip", "L4 VIP"},      {"e5ET", "L5 Exc"},      {"e5IT", "L5 Exc"},      {"e5NP", "L5 Exc"},
      {"e5Rbp4", "L5 Exc"},     {"i5Pvalb", "L5 PV"},    {"i5Sst", "L5 SST"},     {"i5Vip", "L5 VIP"},
      {"e6Ntsr1", "L6 Exc"},    {"i6Pvalb", "L6 PV"},    {"i6Sst", "L6 SST"},     {"i6Vip", "L6 VIP"}};
  for (const auto& [pop, type] : merged) {
    EXPECT_EQ(v1_cell_type(pop, true).value_or("?"), type) << pop;
    EXPECT_NE(std::find(v1_cell_type_order().begin(), v1_cell_type_order().end(), type), v1_cell_type_order().end());
  }
  EXPECT_EQ(v1_cell_type_order().size(), 17u);
  // the L5 excitatory subclasses kept (the EMD regularizer's 19 types)
  EXPECT_EQ(v1_cell_type("e5ET", false).value_or("?"), "L5 ET");
  EXPECT_EQ(v1_cell_type("e5IT", false).value_or("?"), "L5 IT");
  EXPECT_EQ(v1_cell_type("e5NP", false).value_or("?"), "L5 NP");
  EXPECT_EQ(v1_cell_type("i5Pvalb", false).value_or("?"), "L5 PV");
  EXPECT_EQ(v1_cell_type("e4Rorb", false).value_or("?"), "L4 Exc");
  for (const char* bad : {"", "e", "LIF_exc", "eX", "e2Cux2", "e7Foo", "ab"})
    EXPECT_FALSE(v1_cell_type(bad, true)) << bad;
}

TEST(V1RateTargets, SampledTargetsMatchTheSpecFixture) {
  // V1-PAPER.md 3.1 step 4: R = {0.001, 0.002, 0.005, 0} spikes/ms, n 5, seed 42 (numpy RandomState)
  const std::vector<double> want = {0.00046806, 0.00112362, 0.00179598, 0.00258795, 0.00455643};
  const std::vector<double> got = sampled_targets({0.0, 0.001, 0.002, 0.005}, 5, 42);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 5e-9) << k;
  // numpy's linear quantiles at (k + 0.5) / n: positions 0.75 and 2.25 of [0, 10, 20, 40] for n = 2 -> 7.5, 25
  const std::vector<double> q = quantile_targets({0.0, 10.0, 20.0, 40.0}, 2);
  EXPECT_DOUBLE_EQ(q[0], 7.5);
  EXPECT_DOUBLE_EQ(q[1], 25.0);
}

namespace {
std::unique_ptr<Loss> only(const LossSpec& s, const Network& net) {
  TrainConfig tc;
  tc.losses = {s};
  return std::move(make_losses(tc, net).at(0));
}
}  // namespace

TEST(V1RateTargets, HuberQuantilePenaltyIsTheClosedForm) {
  // one group of 4 neurons, observed {0, 8} Hz: quantile targets at (k + 0.5)/4 -> 1, 3, 5, 7. Counts 0, 2, 1, 10
  // over S 1 sample, T 1000 steps of 1 ms: rates 0, 2, 1, 10 Hz, sorted 0, 1, 2, 10 -> u = -1, -2, -3, 3 with
  // tau = 1/4, 2/4, 3/4, 1; delta 2.5: rho = |tau - 1[u <= 0]| (u^2 / 5 if |u| <= 2.5 else |u| - 1.25), the
  // weights 3/4, 1/2, 1/4 below the targets and 1 above
  const Network net = network_of_types({1, 1, 1, 1});
  LossSpec s;
  s.kind = LossKind::RateDistribution;
  s.sample_separable = false;
  s.cost = 2.0;
  s.group_of_type = {{1, "g"}};
  s.observed = {{"g", {0.0, 8.0}}};
  s.penalty = RatePenalty::HuberQuantile;
  s.delta = 2.5;
  const std::vector<double> counts = {0, 2, 1, 10};
  PooledCounts pc;
  pc.counts = counts.data();
  pc.samples = 1;
  pc.N = 4;
  pc.T = 1000;
  pc.dt = 1.0;
  const double rho = 0.75 * (1.0 / 5) + 0.5 * (4.0 / 5) + 0.25 * (3.0 - 1.25) + 1.0 * (3.0 - 1.25);
  EXPECT_NEAR(only(s, net)->pooled_value(pc), 2.0 * rho / 4.0, 1e-12);  // per_group: the group's mean
  s.normalize_neurons = true;
  EXPECT_NEAR(only(s, net)->pooled_value(pc), 2.0 * rho / 4.0, 1e-12);  // one group: the same normaliser
  // spikes per step: rates / 1000, observed / 1000 and delta in that unit: every rho / 1000
  s.per_step = true;
  s.delta = 0.0025;
  EXPECT_NEAR(only(s, net)->pooled_value(pc), 2.0 * rho / 4.0 / 1000.0, 1e-14);
}

TEST(V1WeightRegularization, EmdOfAShiftedGroupIsCostDeltaOverGroups) {
  // neurons of types 1 (e4Rorb -> L4 Exc) and 2 (i4Pvalb -> L4 PV); edges 0->1, 1->0, 0->1, 1->1: groups
  // (Exc, PV) = {0, 2}, (PV, Exc) = {1}, (PV, PV) = {3}: G = 3
  Network net = network_of_types({1, 2});
  Projection p;
  p.recurrent = true;
  p.source = {0, 1, 0, 1};
  p.target = {1, 0, 1, 1};
  net.projections.push_back(p);
  LossSpec s;
  s.kind = LossKind::EMDWeightRegularization;
  s.cost = 10;
  s.group_of_type = {{1, "L4 Exc"}, {2, "L4 PV"}};
  const auto loss = only(s, net);
  const std::vector<double> w0 = {1.0, -2.0, 3.0, -0.5};
  std::vector<double> g(4, 0.0);
  loss->set_initial_weights(w0);
  EXPECT_EQ(loss->add_weight_gradient(w0, g), 0.0);
  EXPECT_EQ(g, std::vector<double>(4, 0.0));
  // a permutation inside a group is no distance
  EXPECT_EQ(loss->add_weight_gradient({3.0, -2.0, 1.0, -0.5}, g), 0.0);
  // group (Exc, PV) shifted by delta = 0.25 in the same order: cost |delta| / G, gradient cost / (G n_g)
  std::fill(g.begin(), g.end(), 0.0);
  EXPECT_NEAR(loss->add_weight_gradient({1.25, -2.0, 3.25, -0.5}, g), 10 * 0.25 / 3, 1e-12);
  EXPECT_NEAR(g[0], 10.0 / (3 * 2), 1e-12);
  EXPECT_NEAR(g[2], 10.0 / (3 * 2), 1e-12);
  EXPECT_EQ(g[1], 0.0);
  EXPECT_EQ(g[3], 0.0);
  // a one-edge group moved down: sign -1, cost / G
  std::fill(g.begin(), g.end(), 0.0);
  EXPECT_NEAR(loss->add_weight_gradient({1.0, -2.5, 3.0, -0.5}, g), 10 * 0.5 / 3, 1e-12);
  EXPECT_NEAR(g[1], -10.0 / 3, 1e-12);
}

TEST(V1Synchronization, BinSizesOfA300MsWindowAreTheSpecsList) {
  const std::vector<int> want = {1, 1, 2, 3, 4, 6, 9, 13, 18, 26, 38, 55, 78, 113};  // V1-PAPER.md 3.3
  EXPECT_EQ(fano_bin_sizes_ms(300), want);
  // numpy: [max(1, int(round(v * 1000))) for v in np.logspace(-3, 0, 20) if v < 1.8 / 2]
  const std::vector<int> long_window = {1, 1, 2, 3, 4, 6, 9, 13, 18, 26, 38, 55, 78, 113, 162, 234, 336, 483, 695};
  EXPECT_EQ(fano_bin_sizes_ms(1800), long_window);
}

TEST(V1Synchronization, FanoFactorOfBernoulliSpikesIsOneMinusP) {
  // pools of 50 independent Bernoulli(p) neurons: counts in a bin of d steps are Binomial(50 d, p), so
  // Var / Mean = 1 - p; the mean over 400 pools of T = 3000 steps is within a few percent of it
  const std::int64_t T = 3000, P = 400;
  const double p = 0.02;
  std::mt19937_64 rng(7);
  std::binomial_distribution<int> draw(50, p);
  std::vector<double> y(static_cast<std::size_t>(T * P));
  for (double& v : y) v = draw(rng);
  std::vector<double> F;
  const std::vector<int> bins = {1, 5, 20};
  pool_fano(y, T, P, bins, F);
  for (std::size_t d = 0; d < bins.size(); ++d) {
    double mean = 0;
    for (std::int64_t k = 0; k < P; ++k) mean += F[d * P + static_cast<std::size_t>(k)];
    mean /= static_cast<double>(P);
    EXPECT_NEAR(mean, 1 - p, 0.03) << "bin " << bins[d];
  }
}

TEST(V1Synchronization, FanoGradientMatchesFiniteDifferences) {
  // L = sum over bins and pools of c(d, k) F(d, k) with fixed weights c; y continuous (no ties at the floor)
  const std::int64_t T = 23, P = 3;
  const std::vector<int> bins = {1, 2, 4, 7};
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 3.0);
  std::vector<double> y(static_cast<std::size_t>(T * P)), c(bins.size() * P);
  for (double& v : y) v = u(rng);
  for (double& v : c) v = u(rng) - 1.5;
  auto loss = [&](const std::vector<double>& yy) {
    std::vector<double> F;
    pool_fano(yy, T, P, bins, F);
    double L = 0;
    for (std::size_t q = 0; q < F.size(); ++q) L += c[q] * F[q];
    return L;
  };
  std::vector<double> dy;
  pool_fano_gradient(y, T, P, bins, c, dy);
  for (std::size_t q = 0; q < y.size(); ++q) {
    const double h = 1e-6;
    std::vector<double> up = y, down = y;
    up[q] += h;
    down[q] -= h;
    const double fd = (loss(up) - loss(down)) / (2 * h);
    EXPECT_NEAR(dy[q], fd, 1e-6 * std::max(1.0, std::fabs(fd))) << "step " << q / P << " pool " << q % P;
  }
  // the steps after the last whole bin (t = 21, 22 for bins of 7) do not count
  std::vector<double> F;
  pool_fano(y, T, P, {7}, F);
  std::vector<double> y2 = y;
  y2[static_cast<std::size_t>(22 * P)] += 5;
  std::vector<double> F2;
  pool_fano(y2, T, P, {7}, F2);
  EXPECT_EQ(F, F2);
}

TEST(V1Selectivity, NeuropixelsTargetsAreTheSpecsTable) {
  // V1-PAPER.md 3.5: per-type means after the table's row filters (units, OSI*, DSI*)
  const auto t = read_selectivity_targets(
      std::string(test::configured_source_dir()) + "/input/neuropixels/OSI_DSI_neuropixels_v4.csv", "", "");
  ASSERT_EQ(t.size(), 17u);
  const std::map<std::string, SelectivityTarget> spec = {
      {"L1 Htr3a", {0.1992, 0.1300, 7}}, {"L2/3 Exc", {0.3609, 0.2448, 163}}, {"L2/3 PV", {0.1576, 0.0992, 74}},
      {"L2/3 SST", {0.1112, 0.0626, 3}}, {"L2/3 VIP", {0.1491, 0.1232, 5}},   {"L4 Exc", {0.2671, 0.1911, 297}},
      {"L4 PV", {0.1453, 0.0951, 98}},   {"L4 SST", {0.1042, 0.0443, 2}},     {"L4 VIP", {0.0704, 0.1004, 1}},
      {"L5 Exc", {0.2924, 0.1234, 466}}, {"L5 PV", {0.1527, 0.0732, 99}},     {"L5 SST", {0.1736, 0.0565, 2}},
      {"L5 VIP", {0.1316, 0.0437, 2}},   {"L6 Exc", {0.4853, 0.1136, 182}},   {"L6 PV", {0.1857, 0.0664, 56}},
      {"L6 SST", {0.0358, 0.0573, 1}},   {"L6 VIP", {0.1653, 0.0550, 1}}};
  for (const auto& [type, want] : spec) {
    ASSERT_TRUE(t.count(type)) << type;
    EXPECT_NEAR(t.at(type).osi, want.osi, 5e-5) << type;
    EXPECT_NEAR(t.at(type).dsi, want.dsi, 5e-5) << type;
    EXPECT_EQ(t.at(type).units, want.units) << type;
  }
}

TEST(V1Selectivity, CrowdIndicesOfCosineTunedNeuronsAreAnalytic) {
  // M neurons with tuning angles spread evenly over the circle, one sample at theta = 30: rates a (1 + cos 2D) give
  // mean a, mean r cos 2D = a / 2, mean r cos D = 0: OSI 1/2, DSI 0; rates a (1 + cos D) give OSI 0, DSI 1/2.
  const int M = 36;
  std::vector<double> phi(M);
  for (int n = 0; n < M; ++n) phi[static_cast<std::size_t>(n)] = n * 10.0;
  const CrowdSelectivity cs(std::vector<int>(M, 0), phi, {{0.2, 0.1, 1}});
  for (int harmonic : {2, 1}) {
    std::vector<double> r(M);
    for (int n = 0; n < M; ++n)
      r[static_cast<std::size_t>(n)] = 0.004 * (1 + std::cos(harmonic * (30.0 - n * 10.0) * M_PI / 180));
    std::vector<double> stats(2, 0.0);
    cs.add_stats(r.data(), 30.0, stats.data());
    EXPECT_NEAR(stats[0], harmonic == 2 ? 0.5 : 0.0, 1e-12);
    EXPECT_NEAR(stats[1], harmonic == 2 ? 0.0 : 0.5, 1e-12);
    const double eo = stats[0] - 0.2, ed = stats[1] - 0.1;
    EXPECT_NEAR(cs.value(stats.data(), 1.0), eo * eo + ed * ed, 1e-12);
  }
}

TEST(V1Selectivity, CrowdGradientMatchesFiniteDifferences) {
  // two types (one below the floor of 0.0005 spikes/ms), a neuron outside the mask, three samples
  const std::vector<int> type = {0, 0, 1, 0, -1, 1, 1};
  const std::vector<double> phi = {10, 100, 200, 290, 45, 0, 135};
  const CrowdSelectivity cs(type, phi, {{0.3, 0.2, 5}, {0.1, 0.05, 3}});
  const std::vector<double> theta = {0, 135, 260};
  std::vector<std::vector<double>> r = {{0.004, 0.001, 0.0002, 0.003, 0.01, 0.0001, 0.0003},
                                        {0.002, 0.005, 0.002, 0.0005, 0.01, 0.0008, 0.001},
                                        {0.001, 0.0015, 0.0001, 0.006, 0.01, 0.0002, 0.0001}};
  auto value = [&](const std::vector<std::vector<double>>& rr) {
    std::vector<double> stats(cs.stats_size(), 0.0);
    for (std::size_t b = 0; b < rr.size(); ++b) cs.add_stats(rr[b].data(), theta[b], stats.data());
    return cs.value(stats.data(), 3.0);
  };
  std::vector<double> stats(cs.stats_size(), 0.0);
  for (std::size_t b = 0; b < r.size(); ++b) cs.add_stats(r[b].data(), theta[b], stats.data());
  for (std::size_t b = 0; b < r.size(); ++b) {
    std::vector<double> dr(type.size(), 0.0);
    cs.add_gradient(r[b].data(), theta[b], stats.data(), 3.0, dr.data());
    for (std::size_t i = 0; i < type.size(); ++i) {
      const double h = 1e-9;
      auto up = r, down = r;
      up[b][i] += h;
      down[b][i] -= h;
      const double fd = (value(up) - value(down)) / (2 * h);
      EXPECT_NEAR(dr[i], fd, 1e-5 * std::max(1.0, std::fabs(fd))) << "sample " << b << " neuron " << i;
    }
    EXPECT_EQ(dr[4], 0.0);  // outside the mask
  }
}
