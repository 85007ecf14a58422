// The min-delay window (sim/detail/simulator_window_impl.hpp) against step-by-step execution of the same simulator
// (SimOptions::max_window = 1): spikes, v' and the inputs' counts of every step bitwise the same, and the synaptic
// event counts, for the discrete and the NEST dynamics, float32 and float64, host and device kernel shapes, with
// Poisson and spike-file inputs, a current clamp switching inside a window's reach, record chunks that cut
// windows, and a run continued by a second call. The window's length is the smallest delay of any edge.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "dpointnet/device/nest_step.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

struct WindowNet {
  Network net;
  std::vector<PreparedInput> inputs;
  std::vector<CurrentPulse> pulses;
};

constexpr std::int64_t kSteps = 400;

// 300 GLIF neurons (some with after-spike currents) at dt = 0.1 ms, recurrent edges of delays min_delay to
// min_delay + 4 steps on four channels, a Poisson population and a spike-file population with delays from
// min_delay on, and a clamp of steps 37 to 150 on the first 50 neurons.
WindowNet make_setup(Dynamics dynamics, int min_delay) {
  std::mt19937 gen(11);
  std::vector<NeuronParams> ps;
  for (int i = 0; i < 300; ++i)
    ps.push_back(glif(100 + i % 7, 5, -70, -50, -70, 2.0, {5.5, 8.5, 2.8, 5.8}, i % 3 ? 0 : -10, i % 5 ? 0 : 5));
  NetBuilder nb(0.1, ps, dynamics);
  const int bkg = nb.add_virtual("bkg", 40), lgn = nb.add_virtual("lgn", 20);
  auto pick = [&](int n) { return static_cast<int>(gen() % static_cast<unsigned>(n)); };
  for (int e = 0; e < 6000; ++e)
    nb.edge(0, pick(300), pick(300), pick(4), min_delay + pick(5), (pick(4) ? 1.0 : -1.0) * 40.0);
  for (int e = 0; e < 3000; ++e) nb.edge(bkg, pick(40), pick(300), pick(2), min_delay + pick(3), 70.0);
  for (int e = 0; e < 1000; ++e) nb.edge(lgn, pick(20), pick(300), 0, min_delay + 1 + pick(2), 90.0);
  WindowNet s;
  s.net = nb.finish();
  PreparedInput pb;
  pb.name = "bkg";
  pb.kind = InputKind::Poisson;
  pb.projection = bkg;
  pb.purpose = 7;
  for (int j = 0; j < 40; ++j) {
    const double lam = 0.02 + 0.002 * j;
    pb.p.push_back(lam);
    pb.p0.push_back(std::exp(-lam));
  }
  std::vector<std::pair<std::int64_t, std::int32_t>> spikes;  // a schedule that ends inside a window
  for (std::int64_t k = 0; k < kSteps - 3; ++k)
    if (pick(3) == 0) spikes.push_back({k, pick(20)});
  PreparedInput pl = stamped_input(lgn, kSteps - 3, spikes);
  pl.name = "lgn";
  s.inputs = {pb, pl};
  CurrentPulse cp;
  cp.name = "clamp";
  for (int i = 0; i < 50; ++i) {
    cp.neurons.push_back(i);
    cp.amp.push_back(0.02);
  }
  cp.first_step = 37;
  cp.end_step = 151;
  s.pulses = {cp};
  return s;
}

struct Out {
  std::vector<int> z, x;
  std::vector<double> v;
  double events = 0;
  int window = 0;
};

template <class Real>
Out run(const WindowNet& s, int max_window, device::KernelShape shape) {
  const int B = 3;
  SimOptions o;
  o.batch_size = B;
  o.n_steps = kSteps;
  o.seed = 5;
  o.record_v = true;
  o.record_inputs = true;
  o.record_chunk = 16;
  o.max_window = max_window;
  auto sim = detail::SimulatorAccess::make<Real>(TEST_EXECSPACE(), s.net, s.inputs, o, shape);
  sim->set_current_pulses(s.pulses);
  sim->set_count_events(true);
  sim->reset();
  Out out;
  auto sink = [&](const RecordedChunk& c) {
    for (int k = 0; k < c.n_steps; ++k)
      for (int b = 0; b < B; ++b) {
        for (std::int64_t i = 0; i < s.net.n_neurons; ++i) {
          out.z.push_back(c.z(k, b, i));
          out.v.push_back(c.v(k, b, i));
        }
        for (const auto& in : c.inputs)
          for (std::size_t j = 0; j < in.extent(2); ++j) out.x.push_back(in(k, b, j));
      }
  };
  sim->run(151, sink);  // a second call continues mid-window
  sim->run(kSteps - 151, sink);
  out.events = sim->events();
  out.window = sim->window();
  return out;
}

template <class Real>
void expect_windows_bitwise(Dynamics dynamics, device::KernelShape shape) {
  const WindowNet s = make_setup(dynamics, 4);
  const Out step = run<Real>(s, 1, shape), window = run<Real>(s, 0, shape), short_window = run<Real>(s, 3, shape);
  EXPECT_EQ(step.window, 1);
  EXPECT_EQ(window.window, 4);
  EXPECT_EQ(short_window.window, 3);
  std::int64_t spikes = 0;
  for (int z : step.z) spikes += z;
  EXPECT_GT(spikes, 300);  // the network is active
  EXPECT_LT(spikes, static_cast<std::int64_t>(step.z.size()) / 20);
  for (const Out* o : {&window, &short_window}) {
    EXPECT_EQ(o->z, step.z);
    EXPECT_EQ(o->x, step.x);
    ASSERT_EQ(o->v.size(), step.v.size());
    std::size_t differ = 0;
    for (std::size_t q = 0; q < step.v.size(); ++q) differ += o->v[q] != step.v[q];
    EXPECT_EQ(differ, 0u) << "of " << step.v.size() << " values of v'";
    EXPECT_EQ(o->events, step.events);
  }
}

}  // namespace

TEST(StepWindow, DiscreteDynamicsBitwiseFloat32) {
  expect_windows_bitwise<float>(Dynamics::Discrete, device::KernelShape::Auto);
}
TEST(StepWindow, DiscreteDynamicsBitwiseFloat64) {
  expect_windows_bitwise<double>(Dynamics::Discrete, device::KernelShape::Auto);
}
TEST(StepWindow, NestDynamicsBitwiseFloat64) {
  expect_windows_bitwise<double>(Dynamics::Nest, device::KernelShape::Auto);
}
TEST(StepWindow, DeviceShapesBitwise) {
  expect_windows_bitwise<float>(Dynamics::Discrete, device::KernelShape::Device);
  expect_windows_bitwise<double>(Dynamics::Nest, device::KernelShape::Device);
}

TEST(StepWindow, LengthIsTheSmallestDelay) {
  const WindowNet one = make_setup(Dynamics::Discrete, 1);
  EXPECT_EQ(run<float>(one, 0, device::KernelShape::Auto).window, 1);
  const WindowNet seven = make_setup(Dynamics::Discrete, 7);
  EXPECT_EQ(run<float>(seven, 0, device::KernelShape::Auto).window, 7);
}

// The NEST step's host shape (blocks of neurons, both updates computed and selected) against its device shape (one
// item per neuron) on a network of GLIF and iaf neurons: the same spikes and v' bitwise.
TEST(StepWindow, NestHostBlocksAreTheDeviceShape) {
  if (!compat::host_execution<TEST_EXECSPACE>) GTEST_SKIP() << "device backend: both runs take the device shape";
  WindowNet s = make_setup(Dynamics::Nest, 2);
  std::size_t iaf = 0;
  for (std::size_t i = 0; i < 256; i += 3) {  // every third neuron of the first 256 an iaf_psc_alpha
    NeuronParams p = glif(120, 6, -65, -48, -66, 2.5, {5.5, 8.5, 2.8, 5.8});
    p.kind = ModelKind::IafPscAlpha;
    p.I_e = 40;
    s.net.neurons[i] = derive_neuron(p, s.net.dt, Dynamics::Nest);
    ++iaf;
  }
  ASSERT_EQ(iaf, 86u);  // blocks of mixed models, and neurons 256-299 all GLIF
  static_assert(256 % device::NestStepFunctor<double, TEST_EXECSPACE>::kBlock == 0,
                "blocks of one kind and mixed ones");
  const Out host = run<double>(s, 0, device::KernelShape::Host), dev = run<double>(s, 1, device::KernelShape::Device);
  EXPECT_EQ(host.z, dev.z);
  EXPECT_EQ(host.v, dev.v);
  std::int64_t spikes = 0;
  for (int z : host.z) spikes += z;
  EXPECT_GT(spikes, 300);
}
