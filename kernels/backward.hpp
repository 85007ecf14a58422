// Backward pass of MODEL.md section 5 (BPTT with a surrogate gradient), one time step at a time in reverse.
//
// Per sample b and neuron i, with V_t = v' after step t, P_t/Q_t = psc/psc_rise after step t and u_t the drive
// of step t:
//   V_{t+1} = decay damp(V_t) + cf (sum_c P_t + sum A_t) - sg(z_t)(1 - v_reset),  z_t = H(V_t - 1)[r_t = 0]
//   P_{t+1} = sd P_t + dt sd Q_t,   Q_{t+1} = sd Q_t + pi u_{t+1},   u_t = sum_s w_s a_s(t - d_s)
// the adjoints are
//   gz_t = dL/dz_t (losses) + rdamp sum_{s from j} w_s gu_{t+d_s}[post_s, c_s]      (recurrent reads only)
//   gV_t = dL/dV_t (losses) + gz_t surrogate(V_t)[r_t = 0] + (1 - vdamp) decay gV_{t+1}
//   gP_t = sd gP_{t+1} + cf gV_{t+1},   gQ_t = sd gQ_{t+1} + dt sd gP_{t+1},   gu_t = pi gQ_t
//   dL/dw_s += gu_t[post_s, c_s] a_s(t - d_s)
// No gradient flows through the reset, the ASC jump or the refractory counter; inputs carry none.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/neuron_step.hpp"
#include "kernels/propagate.hpp"
#include "util/kokkos_compat.hpp"

namespace dpointnet::kernels {

struct BackwardParams {
  double gamma = 0.1, sigma = 0.28;
  bool gauss = false;
  double vdamp_keep = 0.5;  // 1 - voltage_gradient_dampening
  double rdamp = 0.1;
  double dt = 1.0;
  double vreg_range_scale = 0.0;      // sum of range-mode VoltageRegularization costs / (B T N)
  double vreg_threshold_scale = 0.0;  // sum of threshold-mode costs / (B T N)
};

KOKKOS_INLINE_FUNCTION double surrogate(double v, const BackwardParams& p) {
  const double x = v - 1.0;
  if (p.gauss) return p.gamma * compat::exp(-(x / p.sigma) * (x / p.sigma));
  const double tri = 1.0 - compat::fabs(x);
  return tri > 0 ? p.gamma * tri : 0.0;
}

// dL/dv' of the voltage regularizer (range: relu(|v - 0.5| - 0.5)^2, threshold: (v - 1)^2), times cost/(BTN).
KOKKOS_INLINE_FUNCTION double vreg_grad(double v, const BackwardParams& p) {
  double g = 0.0;
  const double x = compat::fabs(v - 0.5) - 0.5;
  if (x > 0) g += p.vreg_range_scale * 2.0 * x * (v >= 0.5 ? 1.0 : -1.0);
  g += p.vreg_threshold_scale * 2.0 * (v - 1.0);
  return g;
}

// The voltage regularizer's value for one v' (before the cost/(BTN) factor), per mode.
KOKKOS_INLINE_FUNCTION double vreg_range(double v) {
  const double x = compat::fabs(v - 0.5) - 0.5;
  return x > 0 ? x * x : 0.0;
}

template <class Real, class MemSpace>
struct Adjoint {
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> gV;         // [B][N] dL/dV_{t+1} until step t is done
  Kokkos::View<double***, Kokkos::LayoutRight, MemSpace> gP;        // [B][R][N]
  Kokkos::View<double***, Kokkos::LayoutRight, MemSpace> gQ;        // [B][R][N]
  Kokkos::View<double****, Kokkos::LayoutRight, MemSpace> gu;       // ring [D][B][R][N], slot t mod D
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> gz;         // [B][N] for the current step
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> rate_grad;  // [B][N] dL/dz from rate losses
};

// gz_t[b, j] = rate_grad[b, j] + rdamp * sum over recurrent edges from j of w_e gu_{t + d_e}[b, c_e, post_e].
// Source-major gather over all recurrent edges, no atomics.
template <class Real, class ExecSpace>
struct SpikeAdjointFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  GroupedEdges<Real, MemSpace> e;
  Adjoint<Real, MemSpace> a;
  double rdamp;
  std::int64_t t, T, n;
  int D;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int b = static_cast<int>(idx / n);
    const std::int64_t j = idx % n;
    double acc = 0;
    if (e.offsets.extent(0) > 0) {
      for (int d = 1; d <= D; ++d) {
        if (t + d >= T) break;
        const int slot = static_cast<int>((t + d) % D);
        const std::int64_t g = j * D + (d - 1);
        for (std::int64_t k = e.offsets(g); k < e.offsets(g + 1); ++k)
          acc += static_cast<double>(e.weight(k)) * a.gu(slot, b, e.channel(k), e.target(k));
      }
    }
    a.gz(b, j) = a.rate_grad(b, j) + rdamp * acc;
  }
};

// The neuron adjoint of step t; reads V_t and r_t recorded in the recomputed segment.
template <class Real, class ExecSpace>
struct NeuronAdjointFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  NeuronConstants<Real, MemSpace> k;
  Adjoint<Real, MemSpace> a;
  Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace> v_rec;          // [C][B][N]
  Kokkos::View<std::int16_t***, Kokkos::LayoutRight, MemSpace> r_rec;  // [C][B][N]
  BackwardParams p;
  int slot_rec, slot_gu;
  std::int64_t n;
  int R;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int b = static_cast<int>(idx / n);
    const int i = static_cast<int>(idx % n);
    const double v = static_cast<double>(v_rec(slot_rec, b, i));
    const bool free = r_rec(slot_rec, b, i) == 0;
    const double gV_next = a.gV(b, i);
    const double cf = static_cast<double>(k.current_factor(i));
    const double gV = vreg_grad(v, p) + (free ? a.gz(b, i) * surrogate(v, p) : 0.0) +
                      p.vdamp_keep * static_cast<double>(k.decay(i)) * gV_next;
    const int nch = k.n_channels(i);
    for (int c = 0; c < R; ++c) {
      if (c >= nch) {
        a.gu(slot_gu, b, c, i) = 0;
        continue;
      }
      const double sd = static_cast<double>(k.syn_decay(c, i));
      const double gP_next = a.gP(b, c, i), gQ_next = a.gQ(b, c, i);
      const double gP = sd * gP_next + cf * gV_next;
      const double gQ = sd * gQ_next + p.dt * sd * gP_next;
      a.gP(b, c, i) = gP;
      a.gQ(b, c, i) = gQ;
      a.gu(slot_gu, b, c, i) = static_cast<double>(k.psc_initial(c, i)) * gQ;
    }
    a.gV(b, i) = gV;
  }
};

// dL/dw_e += sum_b gu_t[b, c_e, post_e] act(b, pre_e, t - d_e), event-driven over active (source, delay) groups;
// each group is owned by one work item, so no atomics. act_ext holds steps t0 - D .. t0 + C - 1 at index
// step - (t0 - D).
template <class Real, class ExecSpace, class Activity>
struct WeightGradFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  GroupedEdges<Real, MemSpace> e;
  Kokkos::View<Activity***, Kokkos::LayoutRight, MemSpace> act_ext;  // [D + C][B][n_src]
  Kokkos::View<double****, Kokkos::LayoutRight, MemSpace> gu;        // ring [D][B][R][N]
  Kokkos::View<double*, MemSpace> grad;                              // per grouped edge
  std::int64_t t, ext_base;                                          // ext_base = t0 - D
  int D, B, slot_gu;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t g) const {
    const std::int64_t j = g / D;
    const int d = static_cast<int>(g % D) + 1;
    const std::int64_t s = t - d;
    if (s < 0) return;
    const int xi = static_cast<int>(s - ext_base);
    bool any = false;
    for (int b = 0; b < B; ++b) any = any || act_ext(xi, b, j) != 0;
    if (!any) return;
    for (std::int64_t q = e.offsets(g); q < e.offsets(g + 1); ++q) {
      double acc = 0;
      for (int b = 0; b < B; ++b) {
        const Activity x = act_ext(xi, b, j);
        if (x) acc += gu(slot_gu, b, e.channel(q), e.target(q)) * static_cast<double>(x);
      }
      grad(q) += acc;
    }
  }
};

// Forward-pass statistics for the losses: spike counts per (b, i) of one step, and the two voltage
// regularizer sums over (b, i) of one step (functors with tags, so no lambda sits in a class member).
template <class Real, class ExecSpace>
struct ForwardStatsFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  struct CountTag {};
  struct RangeTag {};
  struct ThresholdTag {};
  Kokkos::View<std::int32_t**, Kokkos::LayoutRight, MemSpace> counts;
  SpikeRing<MemSpace> ring;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v;
  std::int64_t n;
  int slot;
  KOKKOS_INLINE_FUNCTION void operator()(CountTag, const std::int64_t idx) const {
    counts(static_cast<int>(idx / n), idx % n) += ring(slot, static_cast<int>(idx / n), idx % n);
  }
  KOKKOS_INLINE_FUNCTION void operator()(RangeTag, const std::int64_t idx, double& acc) const {
    acc += vreg_range(static_cast<double>(v(static_cast<int>(idx / n), idx % n)));
  }
  KOKKOS_INLINE_FUNCTION void operator()(ThresholdTag, const std::int64_t idx, double& acc) const {
    const double x = static_cast<double>(v(static_cast<int>(idx / n), idx % n)) - 1.0;
    acc += x * x;
  }
};

// Adam with bias correction on one surface, then the sign constraint (side of the initial weight; 0 counts
// as non-negative). Weights and moments are Real; arithmetic is double.
template <class Real, class ExecSpace>
struct AdamFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<Real*, MemSpace> w, w0, m, v;
  Kokkos::View<double*, MemSpace> grad;
  double lr, b1, b2, eps, bc1, bc2, scale;  // bc = 1 - beta^k; scale = clipping factor
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const double g = grad(e) * scale;
    const double mn = b1 * static_cast<double>(m(e)) + (1 - b1) * g;
    const double vn = b2 * static_cast<double>(v(e)) + (1 - b2) * g * g;
    m(e) = static_cast<Real>(mn);
    v(e) = static_cast<Real>(vn);
    const double mhat = static_cast<double>(m(e)) / bc1, vhat = static_cast<double>(v(e)) / bc2;
    double wn = static_cast<double>(w(e)) - lr * mhat / (compat::sqrt(vhat) + eps);
    if (w0(e) >= Real(0))
      wn = wn > 0 ? wn : 0.0;
    else
      wn = wn < 0 ? wn : 0.0;
    w(e) = static_cast<Real>(wn);
  }
};

}  // namespace dpointnet::kernels
