// Training's warm-up, forward and recompute passes in min-delay windows (PreparedRun::max_window,
// SimOptions::windows_with_hook) against the same passes step by step (max_window = 1): what a step hook reads of
// every step (v, r, spikes, inputs) bitwise the same, and over updates of a trainer the losses, spike counts,
// gradients and weights bitwise the same, for the discrete and the NEST dynamics, host and device kernel shapes,
// from rest after a warm-up and with carried states.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/train/detail/trainer_test_access.hpp"
#include "dpointnet/train/trainer.hpp"
#include "test_execspace.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

// 200 generated neurons at dt = 0.1 ms (the generator's smallest delay is 1 ms: windows of 10 steps), B = 3.
TrainSetup make_setup(const char* dynamics, bool carry, int updates, double tstop = 30.0) {
  json t = train_section(0.01, 16, 20.0);  // segments of 16 steps: windows cut at segment ends
  t["steps"] = updates;
  if (carry)
    t["carry_state"] = true;
  else
    t["warmup_ms"] = 2.3;
  return TrainSetup(200, tstop, 3, t, 4, json{{"dt", 0.1}, {"dynamics", dynamics}});
}

// What a step hook reads of every step of 290 steps of the trainer's simulator configuration.
template <class Real>
std::vector<double> hook_values(const TrainSetup& s, int max_window, device::KernelShape shape, int* window,
                                double* spikes) {
  SimOptions o;
  o.batch_size = 3;
  o.n_steps = s.tc.total_steps(s.cfg);
  o.seed = 3;
  o.record_chunk = kTrainingRecordChunk;
  o.max_window = max_window;
  o.windows_with_hook = true;
  auto sim = detail::SimulatorAccess::make<Real>(TEST_EXECSPACE(), s.net, s.inputs, o, shape);
  sim->reset();
  *window = sim->window();
  std::vector<double> out;
  sim->set_step_hook([&](std::int64_t t, int slot) {
    const auto v = compat::mirror_view_and_copy(sim->space(), sim->training_v());
    const auto r = compat::mirror_view_and_copy(sim->space(), sim->training_r());
    const auto z = compat::mirror_view_and_copy(sim->space(), sim->z_ring());
    out.push_back(static_cast<double>(t));
    for (std::size_t q = 0; q < v.span(); ++q) out.push_back(static_cast<double>(v.data()[q]));
    for (std::size_t q = 0; q < r.span(); ++q) out.push_back(r.data()[q]);
    for (std::size_t b = 0; b < z.extent(1); ++b)
      for (std::size_t i = 0; i < z.extent(2); ++i) {
        out.push_back(z(slot, b, i));
        *spikes += z(slot, b, i);
      }
    for (int k = 0; k < sim->n_inputs(); ++k) {
      const auto x = compat::mirror_view_and_copy(sim->space(), sim->input_ring(k));
      for (std::size_t b = 0; b < x.extent(1); ++b)
        for (std::size_t j = 0; j < x.extent(2); ++j) out.push_back(x(slot, b, j));
    }
  });
  sim->run(137, nullptr);  // a second call continues mid-window
  sim->run(153, nullptr);
  return out;
}

template <class Real>
void expect_hook_values_bitwise(const char* dynamics, device::KernelShape shape) {
  const TrainSetup s = make_setup(dynamics, false, 1);
  int w_step = 0, w_window = 0, w_short = 0;
  double spikes = 0, unused = 0;
  const auto step = hook_values<Real>(s, 1, shape, &w_step, &spikes);
  const auto window = hook_values<Real>(s, 0, shape, &w_window, &unused);
  const auto short_window = hook_values<Real>(s, 4, shape, &w_short, &unused);
  EXPECT_GT(spikes, 50.0) << "the network must spike";
  EXPECT_EQ(w_step, 1);
  EXPECT_EQ(w_window, 10);
  EXPECT_EQ(w_short, 4);
  ASSERT_EQ(window.size(), step.size());
  EXPECT_TRUE(window == step) << "windows of 10 steps";
  EXPECT_TRUE(short_window == step) << "windows of 4 steps";
}

struct Trained {
  std::vector<double> losses, counts;
  std::vector<std::vector<double>> grads, weights;
  int window = 0;
};

template <class Real>
Trained train(const TrainSetup& s, int max_window, device::KernelShape shape, int updates) {
  PreparedRun run = prepare_run(s.cfg, s.net, s.tc, 1, 3);
  run.max_window = max_window;
  auto tr = detail::TrainerTestAccess::make<Real>(TEST_EXECSPACE(), run, shape);
  using F = typename Trainer<Real, TEST_EXECSPACE>::Field;
  Trained out;
  out.window = tr->step_window();
  for (int u = 0; u < updates; ++u) {
    const StepMetrics m = tr->train_step();
    out.losses.push_back(m.loss);
    out.counts.insert(out.counts.end(), tr->update_spike_counts().begin(), tr->update_spike_counts().end());
    for (int q = 0; q < tr->weights().size(); ++q)
      if (tr->weights()[q].trainable) {
        out.grads.push_back(tr->weights().get(q, F::Gradient));
        out.weights.push_back(tr->weights().get(q, F::Weight));
      }
  }
  return out;
}

// Two updates of 20 ms (the second starts from the first's weights and, carried, its states) step by step, in
// windows of 10 and, in the host shapes, of 3 steps (the device shapes' team kernels are slow on a host backend, and
// under DPOINTNET_KERNEL_SHAPE=device every test takes them).
template <class Real>
void expect_training_bitwise(const char* dynamics, bool carry, device::KernelShape shape) {
  const bool dev = device::device_shape<TEST_EXECSPACE>(shape), short_too = !dev;
  const int updates = 2;
  const TrainSetup s = make_setup(dynamics, carry, updates, 20.0);
  const Trained step = train<Real>(s, 1, shape, updates), window = train<Real>(s, 0, shape, updates),
                short_window = short_too ? train<Real>(s, 3, shape, updates) : window;
  EXPECT_EQ(step.window, 1);
  EXPECT_EQ(window.window, 10);
  if (short_too) EXPECT_EQ(short_window.window, 3);
  double spikes = 0, norm = 0;
  for (double c : step.counts) spikes += c;
  for (const auto& g : step.grads)
    for (double x : g) norm += x * x;
  EXPECT_GT(spikes, 20.0) << "the network must spike";
  EXPECT_GT(norm, 0.0) << "the gradient must not be zero";
  for (const Trained* o : {&window, &short_window}) {
    EXPECT_EQ(o->losses, step.losses);
    EXPECT_EQ(o->counts, step.counts);
    EXPECT_TRUE(o->grads == step.grads) << "gradients, window " << o->window;
    EXPECT_TRUE(o->weights == step.weights) << "weights, window " << o->window;
  }
}

}  // namespace

TEST(TrainingWindow, HookSeesEveryStepDiscrete) {
  expect_hook_values_bitwise<float>("discrete", device::KernelShape::Auto);
  expect_hook_values_bitwise<double>("discrete", device::KernelShape::Device);
}
TEST(TrainingWindow, HookSeesEveryStepNest) {
  expect_hook_values_bitwise<double>("nest", device::KernelShape::Auto);
  expect_hook_values_bitwise<float>("nest", device::KernelShape::Device);
}
TEST(TrainingWindow, UpdatesBitwiseDiscreteWarmup) {
  expect_training_bitwise<float>("discrete", false, device::KernelShape::Auto);
}
TEST(TrainingWindow, UpdatesBitwiseNestCarried) {
  expect_training_bitwise<double>("nest", true, device::KernelShape::Auto);
}
// Under DPOINTNET_KERNEL_SHAPE=device (the sanitizer pass) UpdatesBitwiseNestCarried already runs the NEST half.
TEST(TrainingWindow, UpdatesBitwiseDeviceShapes) {
  expect_training_bitwise<float>("discrete", true, device::KernelShape::Device);
  if (!device::device_shape<TEST_EXECSPACE>(device::KernelShape::Auto))
    expect_training_bitwise<double>("nest", true, device::KernelShape::Device);
}
