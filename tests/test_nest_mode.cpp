// run.dynamics = "nest" (docs/model-nest.md): NEST 3.8's grid rules and the exact single-neuron solutions. The
// expected values come from NEST's source read by hand (nest_time.{h,cpp}: the rules' outcomes on given numbers)
// and from closed-form solutions of the continuous model, not from the simulator.
#include <gtest/gtest.h>

#include <cmath>

#include "dpointnet/network/nest_time.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"
#include "test_trace.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

// V_m - E_L (mV) of every step (the value after step n, i.e. at time (n+1) dt) and the spike steps of neuron i.
struct NestTrace {
  std::vector<double> u;
  std::vector<std::int64_t> spikes;
};

NestTrace run_nest(const Network& net, const std::vector<PreparedInput>& inputs, std::int64_t steps, int i = 0) {
  const Trace t = run(net, inputs, {}, steps);
  NestTrace tr;
  for (const auto& v : t.v)
    tr.u.push_back(v[static_cast<std::size_t>(i)] * net.neurons[static_cast<std::size_t>(i)].vs);
  tr.spikes = spike_steps(t, static_cast<std::size_t>(i));
  return tr;
}

NeuronParams iaf(double C_m, double tau_m, double E_L, double V_th, double V_reset, double t_ref, double tau_ex,
                 double I_e = 0) {
  NeuronParams p;
  p.kind = ModelKind::IafPscAlpha;
  p.C_m = C_m;
  p.tau_m = tau_m;
  p.g = C_m / tau_m;
  p.E_L = E_L;
  p.V_th = V_th;
  p.V_reset = V_reset;
  p.t_ref = t_ref;
  p.tau_syn = {tau_ex, 2.0};
  p.psc_amp = {1, 1};
  p.n_receptors = 2;
  p.I_e = I_e;
  p.has_V_m = true;
  p.V_m = E_L;
  return p;
}

// V - E_L of a membrane (tau_m, C) at s ms after an alpha current w (s'/tau) e^(1 - s'/tau) started (pA).
double alpha_response(double w, double tau_s, double tau_m, double C, double s) {
  if (s <= 0) return 0;
  const double a = 1 / tau_s - 1 / tau_m;
  return w * std::exp(1.0) / (tau_s * C) * std::exp(-s / tau_m) * (1 - std::exp(-a * s) * (1 + a * s)) / (a * a);
}

}  // namespace

// nest_time.h / nest_time.cpp of NEST 3.8, applied by hand to these numbers.
TEST(NestTime, GridRulesOfNest38) {
  // delays: ld_round(d * STEPS_PER_MS), half up; 1.25 / 0.1 = 12.5 -> 13 (half to even would give 12)
  EXPECT_EQ(nest_time::delay_steps(1.25, 0.1), 13);
  EXPECT_EQ(nest_time::delay_steps(2.5, 1.0), 3);
  EXPECT_EQ(nest_time::delay_steps(1.5, 1.0), 2);
  EXPECT_EQ(nest_time::delay_steps(0.4, 1.0), 0);  // below the resolution: NEST's BadDelay
  EXPECT_EQ(nest_time::delay_steps(0.5, 1.0), 1);
  // refractory counts: tics = (long)(t_ref * 1000 + 0.5), steps = ceil(tics / tics_per_step)
  EXPECT_EQ(nest_time::ms_to_steps_up(2.4000000000000004, 0.1), 24);
  EXPECT_EQ(nest_time::ms_to_steps_up(2.4000000000000004, 1.0), 3);
  EXPECT_EQ(nest_time::ms_to_steps_up(1.45, 1.0), 2);
  EXPECT_EQ(nest_time::ms_to_steps_up(0.0004, 0.1), 0);  // under half a tic
  EXPECT_EQ(nest_time::ms_to_steps_up(0.0006, 0.1), 1);
  // fromstamp: truncate t to tics, down to the grid, up one step if that is before t
  EXPECT_EQ(nest_time::stamp_steps(1.0, 0.1), 10);
  EXPECT_EQ(nest_time::stamp_steps(1.05, 0.1), 11);
  EXPECT_EQ(nest_time::stamp_steps(1.0000000001, 0.1), 11);  // (1000 tics, 1.0 ms < t: the next grid point)
  EXPECT_EQ(nest_time::stamp_steps(0.0001, 1.0), 1);
  EXPECT_EQ(nest_time::stamp_steps(3.0, 1.0), 3);
  EXPECT_EQ(nest_time::tics_per_step(0.1), 100);
  EXPECT_EQ(nest_time::step_ms(0.25), 0.25);
}

// One input spike through an alpha PSC: NEST's propagators are the exact solution, so V on the grid equals the
// continuous response to 1e-12 mV, at dt 0.1 and 1, for iaf (tau_m) and GLIF (C/g), and the alpha current starts
// at stamp + delay: a spike in input step k with delay d steps first moves V in step k + d + 1.
TEST(NestMode, AlphaPscVoltageIsTheExactSolution) {
  for (const double dt : {0.1, 1.0}) {
    for (const bool is_iaf : {true, false}) {
      const double w = 120.0, tau_s = 2.0, C = 250, tau_m = 10;
      // V_th - E_L = 128 mV: w / vs = 0.9375 is exact in the fixed-point drive (2^-36 units, docs/model.md)
      NeuronParams p =
          is_iaf ? iaf(C, tau_m, -70, 58, -70, 2.0, tau_s) : glif(C, C / tau_m, -70, 58, -70, 2.0, {tau_s, 5.0});
      if (!is_iaf) {
        p.has_V_m = true;
        p.V_m = -70;
      }
      NetBuilder nb(dt, {p}, Dynamics::Nest);
      const int proj = nb.add_virtual("lgn", 1);
      const int d = 3, k = 4;
      nb.edge(proj, 0, 0, 0, d, w);
      Network net = nb.finish();
      const std::int64_t T = static_cast<std::int64_t>(std::lround(60 / dt));
      const NestTrace tr = run_nest(net, {stamped_input(proj, T, {{k, 0}})}, T);
      const double t_arrival = (k + 1 + d) * dt;  // stamp (k + 1) dt plus the delay
      double worst = 0;
      for (std::int64_t n = 0; n < T; ++n) {
        const double expect = alpha_response(w, tau_s, tau_m, C, (n + 1) * dt - t_arrival);
        worst = std::max(worst, std::abs(tr.u[static_cast<std::size_t>(n)] - expect));
        if (n <= k + d) EXPECT_EQ(tr.u[static_cast<std::size_t>(n)], 0.0) << "step " << n;
      }
      EXPECT_GT(tr.u[static_cast<std::size_t>(k + d + 1)], 0.0);
      EXPECT_LT(worst, 1e-12) << (is_iaf ? "iaf" : "glif") << " dt " << dt;
      EXPECT_TRUE(tr.spikes.empty());
    }
  }
}

// iaf_psc_alpha with a constant I_e from rest: U_n = U_inf (1 - P33^n) on the grid (the exact solution), a spike
// at the first U >= V_th - E_L (non-strict), V held at V_reset for RC = ceil(t_ref / dt) steps (recorded
// V_reset exactly), then U_j = U_inf + (V_reset - U_inf) P33^j: every interval RC + j*.
TEST(NestMode, IafConstantCurrentRefractorinessAndIntervals) {
  const double dt = 0.1, C = 250, tau_m = 10, EL = -70, Vth = -55, Vr = -65, I_e = 600, t_ref = 2.0;
  NetBuilder nb(dt, {iaf(C, tau_m, EL, Vth, Vr, t_ref, 2.0, I_e)}, Dynamics::Nest);
  Network net = nb.finish();
  const std::int64_t T = 3000;
  const NestTrace tr = run_nest(net, {}, T);
  const double P33 = std::exp(-dt / tau_m), U_inf = I_e * tau_m / C, th = Vth - EL, ur = Vr - EL;
  const int RC = 20;
  std::int64_t first = 1;
  while (U_inf * (1 - std::pow(P33, first)) < th) ++first;  // U after step n is U_{n+1}
  int j = 1;
  while (U_inf + (ur - U_inf) * std::pow(P33, j) < th) ++j;
  // margins: no value within 1e-9 mV of the threshold (a tie could go either way in the last bit)
  ASSERT_GT(std::abs(U_inf * (1 - std::pow(P33, first)) - th), 1e-9);
  ASSERT_GT(std::abs(U_inf + (ur - U_inf) * std::pow(P33, j) - th), 1e-9);
  ASSERT_GE(tr.spikes.size(), 5u);
  EXPECT_EQ(tr.spikes[0], first - 1);
  for (std::size_t s = 1; s < tr.spikes.size(); ++s) EXPECT_EQ(tr.spikes[s] - tr.spikes[s - 1], RC + j) << s;
  const std::size_t n0 = static_cast<std::size_t>(tr.spikes[0]);
  for (std::size_t n = n0; n <= n0 + RC; ++n) EXPECT_EQ(tr.u[n], ur) << "step " << n;  // reset, then held
  EXPECT_NE(tr.u[n0 + RC + 1], ur);
  EXPECT_NEAR(tr.u[n0 + RC + 1], U_inf + (ur - U_inf) * P33, 1e-12);
}

// GLIF3: the after-spike currents jump to asc_amps + asc_r e^{-k t_ref} (e^{-k h} A) in the spike step, stay frozen
// while V is held, then act through their step means sc A (sc = (1/k)/h (1 - e^{-kh})) times P30, decaying by
// e^{-kh} per step. Against a twin without ASC driven by the same input, the difference in V is
// sum_{i<j} P33^{j-1-i} P30 sum_a sc_a amps_a e_a^i, j steps after the refractory period.
TEST(NestMode, GlifAfterSpikeCurrentsFrozenThenMeanPerStep) {
  const double dt = 0.1, C = 60, g = 3, EL = -70, Vth = -50, Vr = -70, t_ref = 2.0;
  const double amps[2] = {-20, 35}, k[2] = {0.05, 0.4};
  NeuronParams with = glif(C, g, EL, Vth, Vr, t_ref, {2.0}, amps[0], amps[1], k[0], k[1]);
  NeuronParams without = glif(C, g, EL, Vth, Vr, t_ref, {2.0});
  for (NeuronParams* p : {&with, &without}) {
    p->has_V_m = true;
    p->V_m = EL;
  }
  NetBuilder nb(dt, {with, without}, Dynamics::Nest);
  const int proj = nb.add_virtual("lgn", 1);
  nb.edge(proj, 0, 0, 0, 1, 400.0);
  nb.edge(proj, 0, 1, 0, 1, 400.0);
  Network net = nb.finish();
  const std::int64_t T = 400;
  const auto in = stamped_input(proj, T, {{0, 0}});
  const NestTrace a = run_nest(net, {in}, T, 0), b = run_nest(net, {in}, T, 1);
  ASSERT_EQ(a.spikes.size(), 1u);
  ASSERT_EQ(b.spikes, a.spikes);
  const double P33 = std::exp(-dt / (C / g)), P30 = 1 / C * (1 - P33) * (C / g);
  const int RC = 20;
  const std::size_t n0 = static_cast<std::size_t>(a.spikes[0]);
  for (std::size_t n = n0; n <= n0 + RC; ++n) EXPECT_EQ(a.u[n], Vr - EL) << "step " << n;
  double diff = 0, worst = 0;
  for (int j = 1; n0 + RC + static_cast<std::size_t>(j) < static_cast<std::size_t>(T); ++j) {
    double drive = 0;
    for (int q = 0; q < 2; ++q) {
      const double e = std::exp(-k[q] * dt), sc = ((1 / k[q]) / dt) * (1 - e);
      drive += sc * amps[q] * std::pow(e, j - 1);  // A after the jump (A_pre = 0): amps, then e per open step
    }
    diff = P33 * diff + P30 * drive;
    const std::size_t n = n0 + RC + static_cast<std::size_t>(j);
    worst = std::max(worst, std::abs((a.u[n] - b.u[n]) - diff));
  }
  EXPECT_LT(worst, 1e-11);
}
