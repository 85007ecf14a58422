// The spike adjoint of the reverse sweep (docs/model-gradients.md): dL/dz of every recurrent neuron and sample from
// the drive adjoints gu of the next D steps, through the recurrent edges. Part of adjoint.hpp's backward pass.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "device/adjoint.hpp"
#include "device/edge_layout.hpp"
#include "device/weight_grad.hpp"
#include "util/host_simd.hpp"
#include "util/kokkos_compat.hpp"

namespace dpointnet::device {

// The recurrent weight gradient read from the spike adjoint's own gathers (host shapes). The gradient of edge e
// from j with delay d, dL/dw_e += sum_b gu_{s + d}[c_e, post_e, b] z_s[j, b], needs at step t = s + d the line
// that the spike adjoint of step s reads anyway, and gu_{s + d} is final once the reverse sweep is at step s.
// So the spike adjoint of step s also adds, for every source active at s, these products to its edges: each edge
// still gets its terms in decreasing t (the order of the separate weight-gradient kernel, whose arithmetic
// host_group_weight_grad is), and the lines are read once per step instead of twice. The steps before the
// first reverse step (activity from a warm-up or a carried state) follow with grad_only passes at the end.
template <class Grad, class MemSpace>
struct FusedWeightGrad {
  Kokkos::View<const std::uint8_t***, Kokkos::LayoutRight, MemSpace> act_ext;  // [D + C][n][B], segment record
  Kokkos::View<Grad*, MemSpace> grad;                                          // per grouped edge; empty: off
  std::int64_t ext_base = 0;                                                   // step of act_ext index 0 (t0 - D)
  std::int64_t t_lo = 0;   // grad_only: the first step whose gu is valid (the first reverse step)
  bool grad_only = false;  // no gz: only the weight-gradient terms of edges with t + d >= t_lo
  KOKKOS_INLINE_FUNCTION bool on() const { return grad.extent(0) > 0; }
};

// gz_t[j, b] = rate_grad[j, b] + rdamp * sum over recurrent edges e from j of w_e gu_{t + d_e}[c_e, post_e, b].
// Each thread owns sources; every edge is read once for all samples, which are summed in edge order, delays
// ascending (the same order on every backend). Devices: one vector lane per sample, the edge broadcast to the
// lanes. Hosts: blocks of sources, the samples in register blocks of kHostLanes (a fixed-width vector loop),
// optionally with the recurrent weight gradient (wg).
template <class Real, class Acc, class ExecSpace>
struct SpikeAdjointFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr bool kHost = compat::host_execution<ExecSpace>;
  static constexpr int kHostLanes = compat::kHostSampleLanes;
  GroupedEdges<Real, MemSpace> e;
  Adjoint<Acc, MemSpace> a;
  Acc rdamp;
  std::int64_t t, T, n;
  int D, B;
  // Hosts, optional: the recurrent weight gradient fused into the same pass (FusedWeightGrad above).
  FusedWeightGrad<Acc, MemSpace> wg = {};
  // Calls f(w, row, slot) for every edge from j whose delay step t + d is inside the sequence, row = the edge's
  // row of gu (GroupedEdges::line; a group's edges in target order: its gathers walk gu in address order).
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_edges(const std::int64_t j, F&& f) const {
    if (e.offsets.extent(0) == 0) return;
    for (int d = 1; d <= D; ++d) {
      if (t + d >= T) break;
      const int slot = static_cast<int>((t + d) % D);
      const std::int64_t g = j * D + (d - 1);
      for (std::int64_t k = e.offsets(g); k < e.offsets(g + 1); ++k) f(static_cast<Acc>(e.weight(k)), e.line(k), slot);
    }
  }

  // Hosts: work item r handles the sources [r kHostSources, (r + 1) kHostSources), delay by delay, so that the
  // gathers of a pass read one slot of the gu ring (R N B values) rather than all D of them: a slot fits a core's
  // L2 where the ring does not. Each (j, b) still sums its edges in the order d = 1..D, group order, as the
  // per-source loop of the device shape does.
  static constexpr int kHostSources = 32;
  struct HostBlock {};
  KOKKOS_INLINE_FUNCTION void operator()(HostBlock, const std::int64_t r) const {
    const std::int64_t j0 = r * kHostSources;
    const std::int64_t j1 = j0 + kHostSources < n ? j0 + kHostSources : n;
    const bool fused = wg.on() && e.offsets.extent(0) != 0;
    // the active lanes of each source of the block at step t (fused weight gradient)
    HostActiveLanes lanes[kHostSources];
    const std::uint8_t* act[kHostSources] = {};
    if (fused) {
      for (std::int64_t j = j0; j < j1; ++j) {
        act[j - j0] = &wg.act_ext(static_cast<int>(t - wg.ext_base), j, 0);
        lanes[j - j0] = host_active_lanes(act[j - j0], B);
      }
    }
    if (fused) {  // the weight gradient of the active groups, before the gz pass walks the same lines
      for (int d = 1; d <= D; ++d) {
        if (t + d >= T) break;
        if (wg.grad_only && t + d < wg.t_lo) continue;
        const int slot = static_cast<int>((t + d) % D);
        for (std::int64_t j = j0; j < j1; ++j) {
          if (lanes[j - j0].nact == 0) continue;
          const std::int64_t g = j * D + (d - 1);
          host_group_weight_grad(
              lanes[j - j0], act[j - j0], B, e.offsets(g), e.offsets(g + 1),
              [&](const std::int64_t k) { return edge_row(a.gu, e.line(k), slot); }, wg.grad.data());
        }
      }
    }
    if (wg.grad_only) return;
    const std::int32_t* const ln = e.line.data();
    const Real* const wt = e.weight.data();
    const std::int64_t row = a.gu.extent(3);  // B
    for (int b0 = 0; b0 < B; b0 += kHostLanes) {
      const int nb = B - b0 < kHostLanes ? B - b0 : kHostLanes;
      Acc acc[kHostSources][kHostLanes] = {};
      if (e.offsets.extent(0) != 0) {
        for (int d = 1; d <= D; ++d) {
          if (t + d >= T) break;
          const Acc* const gs = &a.gu(static_cast<int>((t + d) % D), 0, 0, b0);
          for (std::int64_t j = j0; j < j1; ++j) {
            const std::int64_t g = j * D + (d - 1);
            Acc* aj = acc[j - j0];
            if (nb == kHostLanes) {
              Acc r[kHostLanes];  // the block's partial sums stay in registers over the group
              for (int q = 0; q < kHostLanes; ++q) r[q] = aj[q];
              const std::int64_t k1 = e.offsets(g + 1);
              for (std::int64_t k = e.offsets(g); k < k1; ++k) {
                const Acc w = static_cast<Acc>(wt[k]);
                const Acc* gk = gs + static_cast<std::int64_t>(ln[k]) * row;
                DPOINTNET_HOST_SIMD
                for (int q = 0; q < kHostLanes; ++q) r[q] += w * gk[q];
              }
              for (int q = 0; q < kHostLanes; ++q) aj[q] = r[q];
            } else {
              for (std::int64_t k = e.offsets(g); k < e.offsets(g + 1); ++k) {
                const Acc w = static_cast<Acc>(wt[k]);
                const Acc* gk = gs + static_cast<std::int64_t>(ln[k]) * row;
                DPOINTNET_HOST_SIMD
                for (int q = 0; q < nb; ++q) aj[q] += w * gk[q];
              }
            }
          }
        }
      }
      for (std::int64_t j = j0; j < j1; ++j)
        for (int q = 0; q < nb; ++q) a.gz(j, b0 + q) = a.rate_grad(j, b0 + q) + rdamp * acc[j - j0][q];
    }
  }

  // Devices: team r, thread k handles source r * team_size + k.
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const std::int64_t j = static_cast<std::int64_t>(m.league_rank()) * m.team_size() + m.team_rank();
    if (j >= n) return;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, B), [&](const int b) {
      Acc acc = 0;
      for_edges(
          j, [&](const Acc w, const std::int32_t line, const int slot) { acc += w * edge_row(a.gu, line, slot)[b]; });
      a.gz(j, b) = a.rate_grad(j, b) + rdamp * acc;
    });
  }
};

// Launches the spike adjoint of one reverse step.
template <class Real, class Acc, class ExecSpace>
void spike_adjoint(const ExecSpace& space, const SpikeAdjointFunctor<Real, Acc, ExecSpace>& f) {
  using F = SpikeAdjointFunctor<Real, Acc, ExecSpace>;
  using Teams = compat::SampleTeams<ExecSpace>;
  if constexpr (F::kHost) {
    const std::int64_t blocks = (f.n + F::kHostSources - 1) / F::kHostSources;
    Kokkos::parallel_for(
        f.wg.grad_only ? "dpointnet::backward_weight_grad_recurrent" : "dpointnet::backward_spike_adjoint",
        Kokkos::RangePolicy<ExecSpace, typename F::HostBlock>(space, 0, blocks), f);
  } else {
    Kokkos::parallel_for("dpointnet::backward_spike_adjoint", Teams::policy(space, f.n, f.B), f);
  }
}

}  // namespace dpointnet::device
