// Trainer properties: the segment interval does not change gradients, the sign constraint, frozen surfaces, a
// target rate reached by training, accumulated micro-batches equal one larger batch. Gradients themselves are checked
// against the independent PyTorch oracle in regression/test_gradient_oracle.py.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/train/trainer.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;
using nlohmann::json;

// Time checkpointing: C = 1, 25 and T give bitwise identical gradients (float32, same thread count).
TEST(Trainer, CheckpointIntervalDoesNotChangeGradients) {
  const int T = 60;
  std::vector<std::vector<std::vector<double>>> grads;
  std::vector<double> losses;
  for (int C : {1, 25, T}) {
    TrainSetup s(80, T, 3, train_section(0.01, C, 5.0));
    const PreparedRun tr_run = prepare_run(s.cfg, s.net, s.tc, 1, 3);
    Trainer<float, TEST_EXECSPACE> tr(TEST_EXECSPACE(), tr_run);
    StepMetrics m = tr.compute_gradient(0);
    losses.push_back(m.loss);
    std::vector<std::vector<double>> g;
    for (int q = 0; q < tr.weights().size(); ++q)
      if (tr.weights()[q].trainable) g.push_back(tr.weights().get(q, Trainer<float, TEST_EXECSPACE>::Field::Gradient));
    grads.push_back(g);
  }
  double norm = 0;
  for (auto& v : grads[0])
    for (double x : v) norm += x * x;
  EXPECT_GT(norm, 0.0) << "the gradient must not be trivially zero";
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(losses[0], losses[2]);
  EXPECT_EQ(grads[0], grads[1]) << "C = 1 vs C = 25";
  EXPECT_EQ(grads[0], grads[2]) << "C = 1 vs C = T";
}

// Sign constraints hold after every update; frozen surfaces stay bit-identical.
TEST(Trainer, SignConstraintAndFrozenSurfaces) {
  TrainSetup s(80, 50, 2, train_section(0.05, 25, 1.0));
  const PreparedRun tr_run = prepare_run(s.cfg, s.net, s.tc, 1, 2);
  Trainer<float, TEST_EXECSPACE> tr(TEST_EXECSPACE(), tr_run);
  using F = Trainer<float, TEST_EXECSPACE>::Field;
  std::vector<std::vector<double>> frozen_before;
  for (int q = 0; q < tr.weights().size(); ++q)
    if (!tr.weights()[q].trainable) frozen_before.push_back(tr.weights().get(q, F::Weight));
  ASSERT_EQ(frozen_before.size(), 1u) << "bkg is frozen";
  std::size_t clamped = 0, moved = 0;
  for (int step = 0; step < 4; ++step) {
    tr.train_step();
    for (int q = 0; q < tr.weights().size(); ++q) {
      if (!tr.weights()[q].trainable) continue;
      const auto w = tr.weights().get(q, F::Weight), w0 = tr.weights().get(q, F::InitialWeight);
      for (std::size_t e = 0; e < w.size(); ++e) {
        if (w0[e] >= 0) {
          ASSERT_GE(w[e], 0.0) << tr.weights()[q].name << " edge " << e << " step " << step;
        } else {
          ASSERT_LE(w[e], 0.0) << tr.weights()[q].name << " edge " << e << " step " << step;
        }
        clamped += (w[e] == 0.0 && w0[e] != 0.0);
        moved += (w[e] != w0[e]);
      }
    }
  }
  EXPECT_GT(moved, 0u);
  EXPECT_GT(clamped, 0u) << "with a large learning rate some weights reach zero, so the constraint is exercised";
  std::size_t k = 0;
  for (int q = 0; q < tr.weights().size(); ++q)
    if (!tr.weights()[q].trainable) EXPECT_EQ(tr.weights().get(q, F::Weight), frozen_before[k++]);
}

// Learning works: TargetFiringRate moves the mean rate from its initial value to within 10 % of a target that
// is less than half of it.
TEST(Trainer, TargetFiringRateTrainingReachesTheTarget) {
  json t = {{"steps", 60},
            {"trainable", {{"recurrent", true}, {"lgn", true}, {"bkg", true}}},
            {"losses", {{{"type", "TargetFiringRate"}, {"cost", 1.0}, {"target", 5.0}}}},
            {"optimizer", {{"lr", 0.01}}}};
  TrainSetup s(100, 200, 4, t);
  const PreparedRun tr_run = prepare_run(s.cfg, s.net, s.tc, 1, 4);
  Trainer<float, TEST_EXECSPACE> tr(TEST_EXECSPACE(), tr_run);
  const double initial = tr.compute_gradient(0).rate_hz;
  ASSERT_GT(initial, 10.0) << "the target must differ from the initial rate by a factor of 2 or more";
  std::vector<double> rates;
  for (int k = 0; k < 60; ++k) rates.push_back(tr.train_step().rate_hz);
  double last = 0;
  for (int k = 50; k < 60; ++k) last += rates[static_cast<std::size_t>(k)] / 10.0;
  EXPECT_NEAR(last, 5.0, 0.5) << "initial " << initial << " Hz; mean of the last 10 updates " << last << " Hz";
}

// Gradient accumulation (train.accumulate): K = 2 micro-batches of 4 samples give the loss, rate and gradients of
// one batch of the same 8 samples (the mean over all samples), in float64 within 1e-12; and an update on them
// moves the weights the same way.
TEST(Trainer, AccumulatedMicroBatchesEqualOneLargerBatch) {
  using Tr = Trainer<double, TEST_EXECSPACE>;
  TrainSetup s(120, 30, 8, train_section(0.01, 7, 5.0));
  TrainConfig tk = s.tc;
  tk.accumulate = 2;
  const PreparedRun big_run = prepare_run(s.cfg, s.net, s.tc, 1, 8);
  Tr big(TEST_EXECSPACE(), big_run);
  const PreparedRun acc_run = prepare_run(s.cfg, s.net, tk, 1, 4);
  Tr acc(TEST_EXECSPACE(), acc_run);
  const StepMetrics mb = big.compute_gradient(16), ma = acc.compute_gradient(16);
  EXPECT_GT(mb.rate_hz, 0.5) << "the network must spike";
  EXPECT_NEAR(ma.loss, mb.loss, 1e-12 * std::fabs(mb.loss));
  EXPECT_NEAR(ma.rate_hz, mb.rate_hz, 1e-12 * mb.rate_hz);
  ASSERT_EQ(ma.loss_terms.size(), mb.loss_terms.size());
  for (std::size_t q = 0; q < mb.loss_terms.size(); ++q)
    EXPECT_NEAR(ma.loss_terms[q], mb.loss_terms[q], 1e-12 * std::fabs(mb.loss_terms[q]) + 1e-300) << "term " << q;
  big.apply_update();
  acc.apply_update();
  for (int q = 0; q < big.weights().size(); ++q) {
    if (!big.weights()[q].trainable) continue;
    for (const auto f : {Tr::Field::Gradient, Tr::Field::Weight}) {
      const auto a = acc.weights().get(q, f), b = big.weights().get(q, f);
      double d2 = 0, n2 = 0;
      for (std::size_t k = 0; k < b.size(); ++k) {
        d2 += (a[k] - b[k]) * (a[k] - b[k]);
        n2 += b[k] * b[k];
      }
      ASSERT_GT(n2, 0.0) << "surface " << q;
      EXPECT_LT(std::sqrt(d2 / n2), 1e-12) << "surface " << q << (f == Tr::Field::Gradient ? " gradient" : " weights");
    }
  }
  // a different split of the same samples is not the same batch: the check can fail
  const PreparedRun other_run = prepare_run(s.cfg, s.net, tk, 1, 4);
  Tr other(TEST_EXECSPACE(), other_run);
  const StepMetrics mo = other.compute_gradient(20);
  EXPECT_GT(std::fabs(mo.loss - mb.loss), 1e-9 * std::fabs(mb.loss)) << "samples 20..27 are another batch";
}
