// Backward pass of docs/model.md section 5 (BPTT with a surrogate gradient), one time step at a time in reverse.
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

#include "device/edge_layout.hpp"
#include "device/model_constants.hpp"
#include "device/surrogate.hpp"

namespace dpointnet::device {

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

}  // namespace dpointnet::device
