// Dynamic loss scaling of float16 runs (train/loss_scale.hpp): the scale's rule against the one Keras'
// LossScaleOptimizer documents (halve on a non-finite gradient, not below 1; double after dynamic_growth_steps
// finite steps in a row); and in a trainer: a loss small enough that its drive adjoints underflow float16 keeps its
// gradient (against the float32 run's) with the default scale and loses it without scaling; a step whose scaled
// adjoints overflow float16 is skipped (weights, Adam state and iteration count unchanged) and halves the scale.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/train/detail/trainer_test_access.hpp"
#include "dpointnet/train/loss_scale.hpp"
#include "dpointnet/train/trainer.hpp"
#include "test_execspace.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

using Exec = TEST_EXECSPACE;
using T = Trainer<float, Exec>;

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    d += (a[k] - b[k]) * (a[k] - b[k]);
    n += b[k] * b[k];
  }
  return std::sqrt(d / n);
}

// Every trainable gradient of one compute_gradient, concatenated.
std::vector<double> gradient(T& tr) {
  tr.compute_gradient(0);
  std::vector<double> g;
  for (int q = 0; q < tr.weights().size(); ++q)
    if (tr.weights()[q].trainable) {
      const auto v = tr.weights().get(q, T::Field::Gradient);
      g.insert(g.end(), v.begin(), v.end());
    }
  return g;
}

// A trainer and the prepared run it refers to (which must outlive it).
struct Made {
  std::unique_ptr<PreparedRun> run;
  std::unique_ptr<T> tr;
  T& operator*() { return *tr; }
  T* operator->() { return tr.get(); }
};
Made trainer(TrainSetup& s, Precision p, double initial_scale, std::int64_t growth = 2000) {
  s.cfg.precision = p;
  s.tc.loss_scale_initial = initial_scale;
  s.tc.loss_scale_growth_steps = growth;
  Made m;
  m.run = std::make_unique<PreparedRun>(prepare_run(s.cfg, s.net, s.tc, 1, s.cfg.batch_size));
  m.tr = detail::TrainerTestAccess::make<float>(Exec(), *m.run, device::KernelShape::Auto);
  return m;
}

}  // namespace

TEST(LossScale, FollowsKerasDynamicRule) {
  LossScale ls;
  ls.on = true;
  ls.scale = 8;
  ls.growth_steps = 3;
  // Keras: non-finite -> scale / 2 (not below 1), counter 0; finite -> counter + 1, at growth_steps scale x 2
  const bool finite[] = {false, true, true, true, true, false, false, false, false, false, true};
  const double scale_after[] = {4, 4, 4, 8, 8, 4, 2, 1, 1, 1, 1};
  const bool applied[] = {false, true, true, true, true, false, false, false, false, false, true};
  for (std::size_t k = 0; k < std::size(finite); ++k) {
    EXPECT_EQ(ls.step(finite[k]), applied[k]) << "step " << k;
    EXPECT_EQ(ls.scale, scale_after[k]) << "step " << k;
  }
  EXPECT_EQ(ls.skipped_total, 6);
  EXPECT_EQ(ls.skipped_run, 0);
  EXPECT_EQ(ls.good_steps, 1);
  LossScale off;
  EXPECT_TRUE(off.step(false)) << "without loss scaling every step runs (the run's own checks stop it)";
  EXPECT_EQ(off.factor(), 1.0);
}

// A loss 2^-16 of the usual size: many of its drive adjoints are below float16's smallest subnormal step (6e-8)
// unscaled, and normal numbers at the default scale 2^15.
TEST(LossScale, SmallLossKeepsItsGradientInFloat16) {
  const int B = 3;
  TrainSetup s(300, 40.0, B, train_section(1e-3, 7, 2.0));
  for (auto& l : s.tc.losses) l.cost *= std::ldexp(1.0, -16);
  const std::vector<double> g32 = gradient(*trainer(s, Precision::Float32, 1));
  const std::vector<double> scaled = gradient(*trainer(s, Precision::Float16, 32768));
  const std::vector<double> unscaled = gradient(*trainer(s, Precision::Float16, 1));
  double norm = 0;
  for (double x : g32) norm += x * x;
  ASSERT_GT(norm, 0.0);
  const double e_scaled = rel_l2(scaled, g32), e_unscaled = rel_l2(unscaled, g32);
  std::printf("[ loss scale ] float16 gradient against float32: scale 2^15 %.3g, scale 1 %.3g (relative L2)\n",
              e_scaled, e_unscaled);
  EXPECT_LT(e_scaled, 5e-4);
  EXPECT_GT(e_unscaled, 0.03) << "without scaling the small adjoints should underflow float16";
  EXPECT_GT(e_unscaled, 100 * e_scaled);
}

// 2^40 times adjoints of about 1e-3 exceed float16's largest value: the step is skipped and the scale halved; at
// 2^8 the step runs, and with dynamic_growth_steps 2 the second finite step doubles the scale.
TEST(LossScale, OverflowSkipsTheStepAndHalvesTheScale) {
  const int B = 3;
  TrainSetup s(300, 40.0, B, train_section(1e-2, 7, 2.0));
  auto tr = trainer(s, Precision::Float16, std::ldexp(1.0, 40), 2);
  const auto w0 = tr->weights().get(0, T::Field::Weight);
  const auto m0 = tr->weights().get(0, T::Field::AdamM);
  const StepMetrics m = tr->compute_gradient(0);
  EXPECT_EQ(m.loss_scale, std::ldexp(1.0, 40));
  EXPECT_FALSE(std::isfinite(tr->last_grad_norm()));
  tr->apply_update();
  EXPECT_EQ(tr->loss_scale().scale, std::ldexp(1.0, 39));
  EXPECT_EQ(tr->loss_scale().skipped_total, 1);
  EXPECT_EQ(tr->optimizer_iterations(), 0);
  EXPECT_EQ(tr->updates_done(), 1) << "a skipped step still ends its update (its samples are used)";
  EXPECT_EQ(tr->weights().get(0, T::Field::Weight), w0);
  EXPECT_EQ(tr->weights().get(0, T::Field::AdamM), m0);
  LossScale ls = tr->loss_scale();
  ls.scale = 256;
  tr->set_loss_scale(ls);
  for (int k = 0; k < 2; ++k) {
    tr->compute_gradient(tr->updates_done() * B);
    ASSERT_TRUE(std::isfinite(tr->last_grad_norm()));
    tr->apply_update();
  }
  EXPECT_EQ(tr->optimizer_iterations(), 2);
  EXPECT_NE(tr->weights().get(0, T::Field::Weight), w0);
  EXPECT_EQ(tr->loss_scale().scale, 512.0);
  EXPECT_EQ(tr->loss_scale().good_steps, 0);
  EXPECT_EQ(tr->loss_scale().skipped_run, 0);
}
