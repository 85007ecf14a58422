// The losses (docs/model.md section 7, docs/training.md "Losses"): values computed by hand from the documented
// formulas, count gradients against finite differences of the loss value, regularizer scales against the
// derivative of the documented value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dpointnet/train/losses.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using dpointnet::test::network_of_types;

namespace {

LossSpec target_rate(double cost, double target) {
  LossSpec s;
  s.kind = LossKind::TargetFiringRate;
  s.name = "TargetFiringRate";
  s.cost = cost;
  s.target = target;
  return s;
}

LossInputs inputs(int B, std::int64_t N, std::int64_t T, double dt, const std::vector<std::int32_t>& counts) {
  LossInputs in;
  in.B = B;
  in.N = N;
  in.T = T;
  in.dt = dt;
  in.counts = counts.data();
  return in;
}

std::unique_ptr<Loss> only_loss(const LossSpec& s, const Network& net) {
  TrainConfig tc;
  tc.losses = {s};
  auto losses = make_losses(tc, net);
  EXPECT_EQ(losses.size(), 1u);
  return std::move(losses.at(0));
}

}  // namespace

TEST(Losses, MakeLossesKeepsConfigOrderAndOnlyRateDistributionPools) {
  const Network net = network_of_types({1, 1});
  TrainConfig tc;
  LossSpec v, w, r;
  v.kind = LossKind::VoltageRegularization;
  w.kind = LossKind::WeightRegularization;
  r.kind = LossKind::RateDistribution;
  r.sample_separable = false;
  r.group_of_type = {{1, "1"}};
  r.observed = {{"1", {2.0}}};
  tc.losses = {target_rate(1, 0), v, w, r};
  const auto losses = make_losses(tc, net);
  ASSERT_EQ(losses.size(), 4u);
  EXPECT_EQ(losses[0]->spec().kind, LossKind::TargetFiringRate);
  EXPECT_EQ(losses[1]->spec().kind, LossKind::VoltageRegularization);
  EXPECT_EQ(losses[2]->spec().kind, LossKind::WeightRegularization);
  EXPECT_EQ(losses[3]->spec().kind, LossKind::RateDistribution);
  for (int k = 0; k < 3; ++k) EXPECT_FALSE(losses[static_cast<std::size_t>(k)]->pooled()) << k;
  EXPECT_TRUE(losses[3]->pooled());
}

TEST(Losses, TargetFiringRateValueInHz) {
  // cost * mean over b, i of (rate - target)^2, rate = count * 1000 / (T dt): T = 10, dt = 0.5 -> 200 Hz per spike.
  // counts [[1, 0, 2], [3, 1, 0]] -> rates [[200, 0, 400], [600, 200, 0]], target 100:
  // diffs 100, -100, 300, 500, 100, -100 -> squares sum 380000, mean 63333.33.., x cost 0.5
  const Network net = network_of_types({1, 1, 1});
  const std::vector<std::int32_t> counts = {1, 0, 2, 3, 1, 0};
  const auto loss = only_loss(target_rate(0.5, 100.0), net);
  EXPECT_NEAR(loss->value(inputs(2, 3, 10, 0.5, counts)), 0.5 * 380000.0 / 6.0, 1e-9);
}

TEST(Losses, TargetFiringRatePerStepUnitAndTargetsByNodeType) {
  // unit spikes_per_step: rate = count / T; T = 4. Types 5, 7, 5; target_by_node_type {7: 0.5}, target 0.25 for
  // the unlisted type 5. counts [[2, 1, 0]] -> rates 0.5, 0.25, 0 -> diffs 0.25, -0.25, -0.25 -> mean 0.0625 / 1
  const Network net = network_of_types({5, 7, 5});
  LossSpec s = target_rate(2.0, 0.25);
  s.per_step = true;
  s.target_by_type = {{7, 0.5}};
  const std::vector<std::int32_t> counts = {2, 1, 0};
  const auto loss = only_loss(s, net);
  EXPECT_NEAR(loss->value(inputs(1, 3, 4, 1.0, counts)), 2.0 * (3 * 0.0625) / 3.0, 1e-15);
}

TEST(Losses, TargetFiringRateGradientMatchesFiniteDifferencesAndTheDocumentedFormula) {
  // The loss is quadratic in each count, so the central difference with a step of one spike is exact.
  const Network net = network_of_types({1, 2, 1, 2});
  LossSpec s = target_rate(0.7, 12.0);
  s.target_by_type = {{2, 30.0}};
  const int B = 2;
  const std::int64_t N = 4, T = 25;
  const double dt = 2.0;
  std::vector<std::int32_t> counts = {1, 3, 0, 2, 4, 1, 2, 0};
  const auto loss = only_loss(s, net);
  std::vector<double> g(static_cast<std::size_t>(B * N), 0.0);
  loss->add_count_gradient(inputs(B, N, T, dt, counts), g);
  const double per = 1000.0 / (static_cast<double>(T) * dt);  // Hz per spike
  for (std::size_t k = 0; k < counts.size(); ++k) {
    auto at = [&](std::int32_t c) {
      std::vector<std::int32_t> x = counts;
      x[k] = c;
      return loss->value(inputs(B, N, T, dt, x));
    };
    const double fd = (at(counts[k] + 1) - at(counts[k] - 1)) / 2.0;
    EXPECT_NEAR(g[k], fd, 1e-9 * std::fabs(fd) + 1e-12) << "entry " << k;
    // docs/model.md: dL/dcount = 2 cost (rate - target) * (rate per spike) / (B N)
    const double target = (k % 2 == 1) ? 30.0 : 12.0;
    EXPECT_NEAR(g[k], 2 * 0.7 * (counts[k] * per - target) * per / (B * N), 1e-9) << "entry " << k;
  }
  // add_ adds: a second call doubles the gradient
  std::vector<double> g2 = g;
  loss->add_count_gradient(inputs(B, N, T, dt, counts), g2);
  for (std::size_t k = 0; k < g.size(); ++k) EXPECT_DOUBLE_EQ(g2[k], 2 * g[k]);
}

TEST(Losses, VoltageRegularizationIsTheMeanOverSamplesStepsAndNeurons) {
  // cost * (sum over b, t, i of the penalty) / (B T N): B 2, T 5, N 3 -> 30 terms
  const Network net = network_of_types({1, 1, 1});
  LossSpec range, threshold;
  range.kind = threshold.kind = LossKind::VoltageRegularization;
  range.cost = 3.0;
  threshold.cost = 0.5;
  threshold.threshold_mode = true;
  LossInputs in = inputs(2, 3, 5, 1.0, {});
  in.vreg_range_sum = 6.0;
  in.vreg_threshold_sum = 12.0;
  EXPECT_NEAR(only_loss(range, net)->value(in), 3.0 * 6.0 / 30.0, 1e-15);
  EXPECT_NEAR(only_loss(threshold, net)->value(in), 0.5 * 12.0 / 30.0, 1e-15);
  std::vector<double> g(6, 0.0);
  only_loss(range, net)->add_count_gradient(in, g);
  for (double x : g) EXPECT_EQ(x, 0.0) << "the voltage regularizer does not read counts";
}

TEST(Losses, WeightRegularizationIsTheMeanOverTrainableEdgesAndZeroWithoutThem) {
  const Network net = network_of_types({1});
  LossSpec w;
  w.kind = LossKind::WeightRegularization;
  w.cost = 4.0;
  LossInputs in = inputs(1, 1, 1, 1.0, {});
  in.weight_sq_sum = 0.3;
  in.n_trainable = 12;
  EXPECT_NEAR(only_loss(w, net)->value(in), 4.0 * 0.3 / 12.0, 1e-15);
  in.n_trainable = 0;
  in.weight_sq_sum = 0;
  EXPECT_EQ(only_loss(w, net)->value(in), 0.0);
}

TEST(Losses, RegularizerScalesAreTheDerivativesOfTheValues) {
  // The trainer applies dL/d(penalty term) = sum of costs / (B T N) per mode and dL/d(sum (w - w0)^2) = sum of
  // costs / trainable edges: checked against the change of the summed loss values with their inputs.
  const Network net = network_of_types({1, 1, 1, 1});
  TrainConfig tc;
  LossSpec r1, r2, t1, w1, w2;
  r1.kind = r2.kind = t1.kind = LossKind::VoltageRegularization;
  w1.kind = w2.kind = LossKind::WeightRegularization;
  r1.cost = 1.5, r2.cost = 0.25, t1.cost = 2.0, w1.cost = 0.1, w2.cost = 0.3;
  t1.threshold_mode = true;
  tc.losses = {r1, target_rate(1.0, 5.0), t1, w1, r2, w2};
  const int B = 3;
  const std::int64_t T = 7, N = 4, E = 9;
  const auto losses = make_losses(tc, net);
  std::vector<std::int32_t> counts(static_cast<std::size_t>(B * N), 1);
  auto total = [&](double range_sum, double threshold_sum, double wsq) {
    LossInputs in = inputs(B, N, T, 1.0, counts);
    in.vreg_range_sum = range_sum, in.vreg_threshold_sum = threshold_sum, in.weight_sq_sum = wsq;
    in.n_trainable = E;
    double v = 0;
    for (const auto& l : losses) v += l->value(in);
    return v;
  };
  const RegularizerScales s = regularizer_scales(losses, B, T, N, E);
  // the values are linear in their sums: a forward difference is exact up to the rounding of the total (about
  // 1e4 here, from the TargetFiringRate term)
  const double h = 0.5;
  EXPECT_NEAR(s.vreg_range, (total(2 + h, 1, 1) - total(2, 1, 1)) / h, 1e-9);
  EXPECT_NEAR(s.vreg_threshold, (total(2, 1 + h, 1) - total(2, 1, 1)) / h, 1e-9);
  EXPECT_NEAR(s.weight, (total(2, 1, 1 + h) - total(2, 1, 1)) / h, 1e-9);
  // by hand: (1.5 + 0.25) / 84, 2 / 84, 0.4 / 9
  EXPECT_NEAR(s.vreg_range, 1.75 / 84.0, 1e-15);
  EXPECT_NEAR(s.vreg_threshold, 2.0 / 84.0, 1e-15);
  EXPECT_NEAR(s.weight, 0.4 / 9.0, 1e-15);
  EXPECT_EQ(regularizer_scales(losses, B, T, N, 0).weight, 0.0) << "no trainable edge";
}

namespace {

// Types 1, 1, 2, 1; group "a" (type 1) observed 0, 10, 20, 40; group "b" (type 2) observed 5.
LossSpec rate_distribution(double cost, bool huber, double delta) {
  LossSpec s;
  s.kind = LossKind::RateDistribution;
  s.cost = cost;
  s.sample_separable = false;
  s.group_of_type = {{1, "a"}, {2, "b"}};
  s.observed = {{"a", {0.0, 10.0, 20.0, 40.0}}, {"b", {5.0}}};
  s.penalty = huber ? RatePenalty::Huber : RatePenalty::Squared;
  s.delta = delta;
  return s;
}

PooledCounts pooled(const std::vector<double>& counts, double samples, std::int64_t T, double dt) {
  PooledCounts pc;
  pc.counts = counts.data();
  pc.samples = samples;
  pc.N = static_cast<std::int64_t>(counts.size());
  pc.T = T;
  pc.dt = dt;
  return pc;
}

}  // namespace

TEST(Losses, RateDistributionValueByHand) {
  // r_i = counts * 1000 / (S T dt) = 50 Hz per spike (S 2, T 10, dt 1). Counts 3, 0, 0, 1: group a holds
  // neurons 0, 1, 3 with rates 150, 0, 50, sorted 0, 50, 150; its quantiles (numpy linear) at (k + 0.5)/3 of
  // [0, 10, 20, 40] are at positions 0.5, 1.5, 2.5: 5, 15, 30 -> d = -5, 35, 120. Group b: rate 0, q 5 -> d = -5.
  const Network net = network_of_types({1, 1, 2, 1});
  const std::vector<double> counts = {3, 0, 0, 1};
  const PooledCounts pc = pooled(counts, 2, 10, 1.0);
  // squared: (25 + 1225 + 14400) / 3 + 25 / 1
  EXPECT_NEAR(only_loss(rate_distribution(0.1, false, 1), net)->pooled_value(pc), 0.1 * (15650.0 / 3.0 + 25.0), 1e-9);
  // Huber delta 10: d^2/2 if |d| <= 10 else 10 (|d| - 5): 12.5, 300, 1150 -> / 3; b: 12.5
  EXPECT_NEAR(only_loss(rate_distribution(2.0, true, 10), net)->pooled_value(pc), 2.0 * (1462.5 / 3.0 + 12.5), 1e-9);
  // the pooled loss is not a per-sample mean
  const std::vector<std::int32_t> ic = {3, 0, 0, 1};
  EXPECT_EQ(only_loss(rate_distribution(0.1, false, 1), net)->value(inputs(1, 4, 10, 1.0, ic)), 0.0);
}

TEST(Losses, RateDistributionGradientMatchesFiniteDifferencesForEverySample) {
  // Distinct rates away from ties and Huber's kinks: the central difference of the pooled value in each neuron's
  // pooled count; every one of the B samples of a micro-batch gets that derivative.
  const Network net = network_of_types({1, 1, 2, 1});
  const std::vector<double> counts = {3.0, 0.5, 0.7, 1.1};
  const int B = 3;
  for (bool huber : {false, true}) {
    const auto loss = only_loss(rate_distribution(0.3, huber, 10), net);
    std::vector<double> g(static_cast<std::size_t>(B) * counts.size(), 0.0);
    loss->add_pooled_gradient(pooled(counts, 4, 20, 0.5), B, g);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      const double h = 1e-5;
      std::vector<double> up = counts, down = counts;
      up[i] += h;
      down[i] -= h;
      const double fd =
          (loss->pooled_value(pooled(up, 4, 20, 0.5)) - loss->pooled_value(pooled(down, 4, 20, 0.5))) / (2 * h);
      ASSERT_GT(std::fabs(fd), 1e-3) << "neuron " << i << " should move the loss";
      for (int b = 0; b < B; ++b)
        EXPECT_NEAR(g[static_cast<std::size_t>(b) * counts.size() + i], fd, 1e-6 * std::fabs(fd))
            << (huber ? "huber" : "squared") << " neuron " << i << " sample " << b;
    }
  }
}

TEST(Losses, RateDistributionPoolsGroupsOfSeveralNodeTypes) {
  // group_by a column: node types 1 and 2 share group "e"; 4 neurons, observed {0, 30} -> quantiles at positions
  // (k + 0.5)/4 * 1 = 0.125, 0.375, 0.625, 0.875 of [0, 30]: 3.75, 11.25, 18.75, 26.25. Rates (50 Hz per spike,
  // S 1, T 20, dt 1): counts 0, 1, 0, 1 -> sorted 0, 0, 50, 50 -> d = -3.75, -11.25, 31.25, 23.75
  const Network net = network_of_types({1, 2, 2, 1});
  LossSpec s = rate_distribution(1.0, false, 1);
  s.group_of_type = {{1, "e"}, {2, "e"}};
  s.observed = {{"e", {0.0, 30.0}}};
  const std::vector<double> counts = {0, 1, 0, 1};
  const double want = (3.75 * 3.75 + 11.25 * 11.25 + 31.25 * 31.25 + 23.75 * 23.75) / 4.0;
  EXPECT_NEAR(only_loss(s, net)->pooled_value(pooled(counts, 1, 20, 1.0)), want, 1e-9);
}
