// train.approach "series" composed from single-condition updates: an update of two condition objects (their own
// inputs and losses) equals condition 0's update on its samples (optimizer step t = 1) followed by condition 1's
// update on its samples at the updated weights and moments (t = 2), each run by a trainer of that one condition.
// Gradients and updates themselves are checked against the PyTorch oracle (regression.gradient_float64_series).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/train/trainer.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;
using nlohmann::json;

TEST(TrainerApproach, SeriesIsOneOptimizerStepPerConditionAtTheUpdatedWeights) {
  using Tr = Trainer<double, TEST_EXECSPACE>;
  using F = Tr::Field;
  json train = train_section(0.02, 7, 5.0);
  train["optimizer"]["type"] = "exp_adam";
  train["approach"] = "series";
  json evoked = {{"input_type", "rates"}, {"node_set", "lgn"}, {"rate", 40.0}};
  json spont = {{"input_type", "rates"}, {"node_set", "lgn"}, {"rate", 4.0}};
  json own = json::array({{{"type", "TargetFiringRate"}, {"cost", 2.0}, {"target", 1.0}},
                          {{"type", "VoltageRegularization"}, {"cost", 0.5}, {"mode", "threshold"}}});
  train["conditions"] = json::array({{{"name", "evoked"}, {"inputs", {{"LGN", evoked}}}},
                                     {{"name", "spont"}, {"inputs", {{"LGN", spont}}}, {"losses", own}}});
  const int B = 2;
  TrainSetup s(100, 30, B, train);
  const PreparedRun run = prepare_run(s.cfg, s.net, s.tc, 1, B);
  Tr series(TEST_EXECSPACE(), run);
  const StepMetrics m = series.train_step();
  EXPECT_EQ(series.updates_done(), 1);
  EXPECT_EQ(series.optimizer_iterations(), 2);

  // one trainer per condition: that condition alone (its inputs and loss set), on the samples series gives it
  auto single = [&](int c) {
    TrainConfig t = s.tc;
    t.conditions = {s.tc.conditions[static_cast<std::size_t>(c)]};
    t.condition_names = {s.tc.condition_names[static_cast<std::size_t>(c)]};
    t.condition_losses = {s.tc.condition_losses[static_cast<std::size_t>(c)]};
    t.approach = Approach::Accumulate;
    return t;
  };
  const TrainConfig t0 = single(0), t1 = single(1);
  const PreparedRun run0 = prepare_run(s.cfg, s.net, t0, 1, B), run1 = prepare_run(s.cfg, s.net, t1, 1, B);
  Tr r0(TEST_EXECSPACE(), run0), r1(TEST_EXECSPACE(), run1);
  const StepMetrics m0 = r0.compute_gradient(0);  // condition 0: samples 0 .. B-1
  r0.apply_update();
  for (int q = 0; q < r0.weights().size(); ++q)
    if (r0.weights()[q].trainable)
      for (const auto f : {F::Weight, F::AdamM, F::AdamV}) r1.weights().set(q, f, r0.weights().get(q, f));
  r1.set_optimizer_iterations(r0.optimizer_iterations());
  const StepMetrics m1 = r1.compute_gradient(B);  // condition 1: samples B .. 2B-1
  r1.apply_update();
  EXPECT_EQ(r1.optimizer_iterations(), 2);

  ASSERT_EQ(m.conditions.size(), 2u);
  EXPECT_NEAR(m.conditions[0].total, m0.loss, 1e-12 * std::fabs(m0.loss));
  EXPECT_NEAR(m.conditions[1].total, m1.loss, 1e-12 * std::fabs(m1.loss));
  EXPECT_EQ(m.conditions[1].terms.size(), 2u) << "spont has its own two losses";
  EXPECT_NEAR(m.loss, 0.5 * (m0.loss + m1.loss), 1e-12 * std::fabs(m.loss));
  bool moved = false;
  for (int q = 0; q < series.weights().size(); ++q) {
    if (!series.weights()[q].trainable) continue;
    const auto a = series.weights().get(q, F::Weight), b = r1.weights().get(q, F::Weight);
    const auto w0 = series.weights().get(q, F::InitialWeight), w1 = r0.weights().get(q, F::Weight);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t e = 0; e < a.size(); ++e) {
      ASSERT_NEAR(a[e], b[e], 1e-12 * std::fabs(b[e]) + 1e-300) << "surface " << q << " edge " << e;
      moved = moved || (b[e] != w1[e] && w1[e] != w0[e]);  // both steps moved this weight
    }
  }
  EXPECT_TRUE(moved) << "the comparison would be vacuous";
}
