// The device shapes of the kernels (what a GPU runs: compacted active groups, teams that spread a group's edges,
// one vector lane per sample, flat (neuron, sample) kernels) run on this host backend, through the kernel shapes of
// simulators and trainers built by detail::SimulatorAccess and detail::TrainerTestAccess (Host against Device,
// whatever DPOINTNET_KERNEL_SHAPE says), and are checked against the host shapes of the same backend. The host shapes
// are the ones every other test checks against the oracles, so a device shape that indexes, compacts or sums wrongly
// shows up here, on a CPU, before a GPU runs it. What must agree, and how closely, follows from how each shape sums
// (docs/training-update.md, "Kernel shapes"):
// * the forward pass: bitwise (fixed-point drive: integer sums in any order; the neuron step is the same
//   arithmetic in both shapes);
// * the spike adjoint: bitwise (both add each source's edges in edge order, delays ascending);
// * the weight gradients: to rounding (host shapes sum an edge's products over the samples in a fixed tree of 16
//   lanes, device shapes over the vector lanes in order), and the loss (different reduction orders).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/train/detail/trainer_test_access.hpp"
#include "dpointnet/train/trainer.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "test_execspace.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

template <class Real>
struct Run {
  std::vector<int> z;       // [step][sample][neuron]
  std::vector<double> v;    // the same, normalized v'
  std::int64_t events = 0;  // synaptic events (count_events)
};

template <class Real>
Run<Real> simulate(const TrainSetup& s, int B, std::int64_t steps, device::KernelShape shape) {
  SimOptions o;
  o.batch_size = B;
  o.n_steps = s.tc.total_steps(s.cfg);
  o.seed = s.cfg.seed;
  o.record_v = true;
  o.record_chunk = 16;
  auto simulator = detail::SimulatorAccess::make<Real>(TEST_EXECSPACE(), s.net, s.inputs, o, shape);
  auto& sim = *simulator;
  EXPECT_EQ(sim.kernel_shape(), shape);
  sim.set_count_events(true);
  sim.reset();
  Run<Real> r;
  sim.run(steps, [&](const RecordedChunk& c) {
    for (int k = 0; k < c.n_steps; ++k)
      for (int b = 0; b < B; ++b)
        for (std::int64_t i = 0; i < s.net.n_neurons; ++i) {
          r.z.push_back(c.z(k, b, i));
          r.v.push_back(c.v(k, b, i));
        }
  });
  r.events = sim.events();
  return r;
}

// On a device backend Auto is the device shape already: nothing to compare there (the Serial test binary of such a
// build compares them).
#define DP_HOST_BACKEND_ONLY()                                       \
  if (!compat::host_execution<TEST_EXECSPACE>)                       \
  GTEST_SKIP() << "device backend: both runs would take the device " \
                  "shapes"

template <class Real>
void expect_same_simulation() {
  const int B = 3;
  const std::int64_t steps = 60;
  TrainSetup s(300, static_cast<double>(steps), B, train_section(1e-3, 7, 2.0));
  const auto host = simulate<Real>(s, B, steps, device::KernelShape::Host);
  const auto dev = simulate<Real>(s, B, steps, device::KernelShape::Device);
  ASSERT_EQ(host.z.size(), static_cast<std::size_t>(steps * B * s.net.n_neurons));
  ASSERT_EQ(dev.z.size(), host.z.size());
  long spikes = 0, z_diff = 0, v_diff = 0;
  for (std::size_t q = 0; q < host.z.size(); ++q) {
    spikes += host.z[q];
    z_diff += host.z[q] != dev.z[q];
    v_diff += host.v[q] != dev.v[q];
  }
  EXPECT_GT(spikes, 100) << "the network must spike for the comparison to cover the event-driven kernels";
  EXPECT_EQ(z_diff, 0) << "spikes that differ between the shapes";
  EXPECT_EQ(v_diff, 0) << "v' values that differ between the shapes";
  EXPECT_EQ(host.events, dev.events);
}

struct Gradient {
  StepMetrics m;
  std::vector<std::vector<double>> g;  // per trainable surface
};

// `updates` training steps (gradient, then Adam) from sample 5 on, each step's metrics and gradients.
template <class Real>
std::vector<Gradient> gradients(const TrainSetup& s, int B, device::KernelShape shape, int updates) {
  const PreparedRun tr_run = prepare_run(s.cfg, s.net, s.tc, 1, B);
  auto trainer = detail::TrainerTestAccess::make<Real>(TEST_EXECSPACE(), tr_run, shape);
  auto& tr = *trainer;
  std::vector<Gradient> out;
  for (int u = 0; u < updates; ++u) {
    Gradient g;
    g.m = tr.compute_gradient(5 + std::int64_t(u) * B);
    for (int q = 0; q < tr.weights().size(); ++q)
      if (tr.weights()[q].trainable) {
        const auto v = tr.weights().get(q, Trainer<Real, TEST_EXECSPACE>::Field::Gradient);
        g.g.emplace_back(v.begin(), v.end());
      }
    out.push_back(std::move(g));
    tr.apply_update();
  }
  return out;
}

// Gradients of both shapes, update by update: the same spikes (rate), the loss and every gradient to `rel` of the
// surface's largest gradient, and non-trivial gradients.
template <class Real>
void expect_same_gradients(const TrainSetup& s, int B, double rel, int updates = 1) {
  const auto hs = gradients<Real>(s, B, device::KernelShape::Host, updates);
  const auto ds = gradients<Real>(s, B, device::KernelShape::Device, updates);
  for (int u = 0; u < updates; ++u) {
    SCOPED_TRACE("update " + std::to_string(u));
    const Gradient& h = hs[static_cast<std::size_t>(u)];
    const Gradient& d = ds[static_cast<std::size_t>(u)];
    EXPECT_GT(h.m.rate_hz, 0.5) << "the network must spike for the comparison to mean something";
    EXPECT_EQ(h.m.rate_hz, d.m.rate_hz) << "the forward passes differ";
    EXPECT_NEAR(h.m.loss, d.m.loss, 1e-12 * std::fabs(h.m.loss));
    ASSERT_EQ(h.g.size(), d.g.size());
    ASSERT_GE(h.g.size(), 2u) << "recurrent and lgn are trainable";
    for (std::size_t q = 0; q < h.g.size(); ++q) {
      ASSERT_EQ(h.g[q].size(), d.g[q].size());
      double scale = 0;
      for (const double x : h.g[q]) scale = std::max(scale, std::fabs(x));
      ASSERT_GT(scale, 0.0) << "surface " << q << " has no gradient";
      double worst = 0;
      for (std::size_t e = 0; e < h.g[q].size(); ++e) worst = std::max(worst, std::fabs(h.g[q][e] - d.g[q][e]) / scale);
      std::printf(
          "[ shapes ] update %d surface %zu: %zu edges, largest difference %.3g of the largest gradient "
          "(bound %.0e)\n",
          u, q, h.g[q].size(), worst, rel);
      long bad = 0;
      for (std::size_t e = 0; e < h.g[q].size(); ++e)
        if (!(std::fabs(h.g[q][e] - d.g[q][e]) <= rel * scale) && bad++ < 5)
          ADD_FAILURE() << "surface " << q << " edge " << e << ": host shape " << h.g[q][e] << ", device shape "
                        << d.g[q][e];
      EXPECT_EQ(bad, 0) << "surface " << q << ": gradients beyond " << rel << " of the largest (" << scale << ")";
    }
  }
}

}  // namespace

TEST(DeviceShapes, SimulationIsBitwiseTheHostShapesFloat64) {
  DP_HOST_BACKEND_ONLY();
  expect_same_simulation<double>();
}
TEST(DeviceShapes, SimulationIsBitwiseTheHostShapesFloat32) {
  DP_HOST_BACKEND_ONLY();
  expect_same_simulation<float>();
}

TEST(DeviceShapes, TrainerGradientsAreTheHostShapesFloat64) {
  DP_HOST_BACKEND_ONLY();
  const int B = 3;
  TrainSetup s(300, 40.0, B, train_section(1e-3, 7, 2.0));
  expect_same_gradients<double>(s, B, 1e-13);
}

// run.dynamics = "nest": its own neuron step and adjoint (one shape), the shared propagation, records and weight
// gradients in their device shapes
TEST(DeviceShapes, NestModeTrainerGradientsAreTheHostShapesFloat64) {
  DP_HOST_BACKEND_ONLY();
  const int B = 3;
  TrainSetup s(300, 40.0, B, train_section(1e-3, 7, 2.0), 4, json{{"dynamics", "nest"}});
  expect_same_gradients<double>(s, B, 1e-13);
}

// train.warmup_ms and train.carry_state: activity from before the window (warm-up: the spike adjoint's fused
// weight-gradient passes of the steps before the first reverse step; carried state: the second update starts from
// the first one's final state, its rings included), two updates
TEST(DeviceShapes, WarmUpAndCarriedStateGradientsAreTheHostShapesFloat64) {
  DP_HOST_BACKEND_ONLY();
  const int B = 3;
  json train = train_section(1e-3, 7, 2.0);
  train["warmup_ms"] = 6.0;
  train["carry_state"] = true;
  TrainSetup s(300, 40.0, B, train);
  ASSERT_GT(s.tc.warmup_steps, 0);
  ASSERT_TRUE(s.tc.carry_state);
  expect_same_gradients<double>(s, B, 1e-13, 2);
}

// float32: the host shapes add the recurrent weight gradient inside the spike adjoint and sum in float32; the
// device shapes run it as its own kernel: the same terms, rounded in other places
TEST(DeviceShapes, TrainerGradientsAreTheHostShapesFloat32) {
  DP_HOST_BACKEND_ONLY();
  const int B = 3;
  TrainSetup s(300, 40.0, B, train_section(1e-3, 7, 2.0));
  expect_same_gradients<float>(s, B, 1e-6);
}

// B = 23: a full 16-sample lane block of the host kernels and a partial one of 7 (register partial sums in pieces
// of 4 + 2 + 1 lanes, compat::HostLanes), against the device shapes' one lane per sample; float32 sums in float32
TEST(DeviceShapes, FullAndPartialLaneBlockGradientsAreTheDeviceShapes) {
  DP_HOST_BACKEND_ONLY();
  const int B = 23;
  TrainSetup s(300, 40.0, B, train_section(1e-3, 7, 2.0));
  expect_same_gradients<double>(s, B, 1e-13);
  expect_same_gradients<float>(s, B, 1e-6);
}

// run.precision "bfloat16" and "float16" (its loss scale 2^15): the neuron adjoint's float32 slot rounded into the
// 16-bit ring (ring_storage.hpp), gathered by the host shapes' fused passes and by the device shapes' spike adjoint
// and weight-gradient teams
TEST(DeviceShapes, SixteenBitRingGradientsAreTheHostShapes) {
  DP_HOST_BACKEND_ONLY();
  const int B = 23;
  for (const char* p : {"bfloat16", "float16"}) {
    SCOPED_TRACE(p);
    TrainSetup s(300, 40.0, B, train_section(1e-3, 7, 2.0), 4, json{{"precision", p}});
    ASSERT_TRUE(sixteen_bit(s.cfg.precision));
    expect_same_gradients<float>(s, B, 1e-6);
  }
}
