// Single neurons: every expected value below comes from a closed-form solution of
// the continuous or discrete model written from docs/model.md, not from the simulator.
#include <gtest/gtest.h>

#include "dpointnet/sim/simulator.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"
#include "test_trace.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

CurrentPulse pulse(const Network& net, std::int64_t neuron, double amp_pA, std::int64_t first, std::int64_t end) {
  CurrentPulse p;
  p.neurons = {neuron};
  p.amp = {amp_pA / net.neurons[static_cast<std::size_t>(neuron)].vs};
  p.first_step = first;
  p.end_step = end;
  return p;
}

}  // namespace

// Subthreshold response to a constant current I from rest: the exact solution of C dV/dt = -g (V - E_L) + I
// sampled on the grid, V(n dt) - E_L = (I/g)(1 - exp(-n dt g / C)).
TEST(SingleNeuron, SubthresholdConstantCurrentMatchesClosedForm) {
  const double C = 100, g = 5, EL = -70, Vth = -50, dt = 0.5, I = 60;  // V_inf - E_L = 12 mV < 20 mV
  NetBuilder nb(dt, {glif(C, g, EL, Vth, EL, 2.0)});
  Network net = nb.finish();
  const int T = 400;
  Trace tr = run(net, {}, {pulse(net, 0, I, 0, T)}, T);
  double worst = 0;
  for (int n = 1; n <= T; ++n) {
    const double expected_mV = (I / g) * (1 - std::exp(-n * dt * g / C));
    const double got_mV = tr.v[static_cast<std::size_t>(n - 1)][0] * (Vth - EL);
    worst = std::max(worst, std::fabs(got_mV - expected_mV));
  }
  EXPECT_LT(worst, 1e-10) << "worst |V - V_exact| over " << T << " steps (mV)";
  EXPECT_EQ(spike_steps(tr, 0).size(), 0u);
}

// Alpha PSC: one input event of weight w on receptor port r peaks at exactly w (pA) tau_syn[r] after the
// kick: psc_k = k dt q^k (e/tau) w with q = exp(-dt/tau); k dt = tau gives w.
TEST(SingleNeuron, PscPeakEqualsWeightAtTauSyn) {
  const double dt = 0.5, w = 50.0, EL = -70, Vth = -50;
  for (int port = 0; port < 4; ++port) {
    const std::vector<double> taus = {5.5, 8.5, 3.0, 6.0};
    NetBuilder nb(dt, {glif(100, 5, EL, Vth, EL, 2.0, taus)});
    const int proj = nb.add_virtual("lgn", 1);
    nb.edge(proj, 0, 0, port, 1, w);
    Network net = nb.finish();
    const std::int64_t T = 60;
    SimOptions o;
    o.batch_size = 1;
    o.n_steps = T;
    Simulator<double, TEST_EXECSPACE> sim(TEST_EXECSPACE(), net, {stamped_input(proj, T, {{0, 0}})}, o);
    sim.reset();
    std::vector<double> psc;
    auto h = Kokkos::create_mirror_view(sim.state().psc);
    for (std::int64_t t = 0; t < T; ++t) {
      sim.run(1, nullptr);
      Kokkos::deep_copy(h, sim.state().psc);
      psc.push_back(h(0, port, 0) * (Vth - EL));  // pA
    }
    // input spike in step 0, delay 1: u at step 1 kicks psc_rise, psc follows from step 2
    const int kick = 1;
    const int k_peak = static_cast<int>(std::lround(taus[static_cast<std::size_t>(port)] / dt));
    const auto peak_it = std::max_element(psc.begin(), psc.end());
    EXPECT_NEAR(*peak_it, w, 1e-9) << "port " << port + 1;
    EXPECT_EQ(static_cast<int>(peak_it - psc.begin()), kick + k_peak) << "port " << port + 1;
    EXPECT_EQ(psc[static_cast<std::size_t>(kick)], 0.0);
  }
}

// A spike in step s crossing an edge of delay d first moves the target's v in step s + d + 2.
TEST(SingleNeuron, SpikeToVoltageLatencyIsDelayPlusTwo) {
  const double dt = 1.0, C = 100, g = 5, EL = -70, Vth = -50;
  for (int d : {1, 2, 5}) {
    NetBuilder nb(dt, {glif(C, g, EL, Vth, EL, 2.0), glif(C, g, EL, Vth, EL, 2.0)});
    nb.edge(0, 0, 1, 0, d, 10.0);
    Network net = nb.finish();
    const int T = 40;
    // neuron 0: constant 150 pA; first crossing where (I/g/vs)(1 - exp(-n dt g/C)) > 1
    const double I = 150;
    int n_cross = 1;
    while ((I / g / (Vth - EL)) * (1 - std::exp(-n_cross * dt * g / C)) <= 1) ++n_cross;
    Trace tr = run(net, {}, {pulse(net, 0, I, 0, T)}, T);
    auto s0 = spike_steps(tr, 0);
    ASSERT_FALSE(s0.empty());
    EXPECT_EQ(s0[0], n_cross - 1) << "first spike step from the closed form";
    std::int64_t first_move = -1;
    for (std::size_t k = 0; k < tr.v.size(); ++k)
      if (tr.v[k][1] != 0.0) {
        first_move = static_cast<std::int64_t>(k);
        break;
      }
    EXPECT_EQ(first_move, s0[0] + d + 2) << "delay " << d;
  }
}

// Refractoriness: under a saturating current the inter-spike interval is exactly t_ref_steps =
// max(1, ceil(t_ref/dt - 1e-9)); 2.6000000000000005 ms at dt = 1 ms is 3 steps, 2.0000000000000004 is 2.
TEST(SingleNeuron, RefractoryPeriodSetsTheInterSpikeInterval) {
  struct Case {
    double t_ref, dt;
    int steps;
  };
  for (Case c :
       {Case{2.6000000000000005, 1.0, 3}, Case{2.0000000000000004, 1.0, 2}, Case{0.4, 1.0, 1}, Case{2.6, 0.25, 11}}) {
    NetBuilder nb(c.dt, {glif(100, 5, -70, -50, -70, c.t_ref)});
    Network net = nb.finish();
    const int T = 200;
    Trace tr = run(net, {}, {pulse(net, 0, 1e6, 0, T)}, T);
    auto s = spike_steps(tr, 0);
    ASSERT_GE(s.size(), 5u);
    for (std::size_t q = 1; q < s.size(); ++q) EXPECT_EQ(s[q] - s[q - 1], c.steps) << "t_ref " << c.t_ref;
  }
}

// After-spike currents jump by asc_amps at the step after the spike and decay by exp(-k dt) per step; the
// soft reset subtracts (1 - v_reset) in that step: v' = decay v + cf (sum psc + sum asc_old) - (1 - v_reset).
TEST(SingleNeuron, AfterSpikeCurrentsAndSoftReset) {
  const double C = 80, g = 4, EL = -70, Vth = -50, Vreset = -65, dt = 1.0, I = 200;
  const double a0 = -30, a1 = 45, k0 = 0.1, k1 = 0.02;
  NetBuilder nb(dt, {glif(C, g, EL, Vth, Vreset, 5.0, {5.5}, a0, a1, k0, k1)});
  Network net = nb.finish();
  const double vs = Vth - EL, decay = std::exp(-dt * g / C), cf = (1 - decay) / g;
  int n_cross = 1;
  while ((I / g / vs) * (1 - std::exp(-n_cross * dt * g / C)) <= 1) ++n_cross;
  const std::int64_t s = n_cross - 1;  // spike step
  const int T = static_cast<int>(s) + 30;
  // current only until the spike step, so afterwards the ASCs alone drive v
  Trace tr = run(net, {}, {pulse(net, 0, I, 0, s + 1)}, T);
  auto sp = spike_steps(tr, 0);
  ASSERT_FALSE(sp.empty());
  ASSERT_EQ(sp[0], s);
  const double v_s = (I / g / vs) * (1 - std::exp(-(s + 1) * dt * g / C));
  EXPECT_NEAR(tr.v[static_cast<std::size_t>(s)][0], v_s, 1e-10);
  // step s+1: reset, ASCs (old value 0) do not yet act
  double v = decay * v_s - (1 - (Vreset - EL) / vs);
  EXPECT_NEAR(tr.v[static_cast<std::size_t>(s + 1)][0], v, 1e-10);
  // later steps: ASC_j after m steps past s+1 is a_j exp(-k_j m dt); v follows the linear recursion
  for (int m = 1; m < 25; ++m) {
    const double asc = (a0 * std::exp(-k0 * (m - 1) * dt) + a1 * std::exp(-k1 * (m - 1) * dt)) / vs;
    v = decay * v + cf * asc;
    ASSERT_NEAR(tr.v[static_cast<std::size_t>(s + 1 + m)][0], v, 1e-10) << "m = " << m;
  }
}

// float32 and float64 agree on the subthreshold trajectory to float precision.
TEST(SingleNeuron, Float32TracksFloat64) {
  NetBuilder nb(0.5, {glif(100, 5, -70, -50, -70, 2.0)});
  Network net = nb.finish();
  Trace a = run<double>(net, {}, {pulse(net, 0, 60, 0, 200)}, 200);
  Trace b = run<float>(net, {}, {pulse(net, 0, 60, 0, 200)}, 200);
  for (std::size_t k = 0; k < a.v.size(); ++k) EXPECT_NEAR(a.v[k][0], b.v[k][0], 1e-5);
}
