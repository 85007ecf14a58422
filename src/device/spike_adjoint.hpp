// The spike adjoint of the reverse sweep (docs/model-gradients.md): dL/dz of every recurrent neuron and sample from
// the drive adjoints gu of the next D steps, through the recurrent edges. Part of adjoint.hpp's backward pass.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <stdexcept>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/target_blocks.hpp"
#include "dpointnet/device/weight_grad.hpp"
#include "dpointnet/util/host_simd.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/prefetch.hpp"

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
// lanes. Hosts: a range of sources per thread, the samples in register blocks of kHostLanes (a fixed-width vector
// loop), optionally with the recurrent weight gradient (wg).
// Ring: the storage type of gu (Acc, or bfloat16 / float16 with Acc = float: widened exactly, the same arithmetic).
template <class Real, class Acc, class ExecSpace, class Ring = Acc>
struct SpikeAdjointFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr bool kHost = compat::host_execution<ExecSpace>;
  static constexpr int kHostLanes = compat::kHostSampleLanes;
  GroupedEdges<Real, MemSpace> e;
  Adjoint<Acc, MemSpace, Ring> a;
  Acc rdamp;
  std::int64_t t, T, n;
  int D, B;
  // Hosts, optional: the recurrent weight gradient fused into the same pass (FusedWeightGrad above).
  FusedWeightGrad<Acc, MemSpace> wg = {};
  // Hosts, optional: the edges in target blocks (target_blocks.hpp), when a slot of gu is large.
  TargetBlockedEdges<Real, MemSpace> tb = {};
  // Calls f(w, row, slot) for every edge from j whose delay step t + d is inside the sequence, row = the edge's
  // row of gu (GroupedEdges::line; a group's edges in target order: its gathers walk gu in address order).
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_edges(const std::int64_t j, F&& f) const {
    if (e.offsets.extent(0) == 0) return;
    for (int d = 1; d <= D; ++d) {
      if (t + d >= T) break;
      const int slot = static_cast<int>((t + d) % D);
      const std::int64_t g = e.group(j, d);
      for (std::int64_t k = e.offsets(g); k < e.offsets(g + 1); ++k) f(static_cast<Acc>(e.weight(k)), e.line(k), slot);
    }
  }

  // Hosts: work item r handles the sources [chunk_begin(r), chunk_begin(r + 1)) (about E / n_chunks edges; one
  // chunk per thread), in one pass per delay over all of them. A pass gathers from one slot of the gu ring only
  // (the slot stays in the core's L2 for the whole pass) and streams the edge arrays, whose groups are
  // delay-major. The sums of (j, b) are carried in gz from pass to pass: each still adds its edges from zero in
  // the order d = 1..D, group order, as the device shape does, so the result does not depend on n_chunks.
  struct HostPasses {};
  int n_chunks = 1;  // set by spike_adjoint()
  // the edges of the sources before j, over all delays
  KOKKOS_INLINE_FUNCTION std::int64_t edges_before(const std::int64_t j) const {
    std::int64_t c = 0;
    for (int d = 1; d <= D; ++d) c += e.offsets(e.group(j, d)) - e.offsets(e.group(0, d));
    return c;
  }
  // the first source of chunk r: the first j with at least r / n_chunks of the edges before it
  KOKKOS_INLINE_FUNCTION std::int64_t chunk_begin(const std::int64_t r) const {
    if (r >= n_chunks) return n;
    if (e.offsets.extent(0) == 0) return n * r / n_chunks;
    const std::int64_t goal = e.offsets(n * D) / n_chunks * r;
    std::int64_t lo = 0, hi = n;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (edges_before(mid) < goal)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  // Batches of B <= 32 samples other than 16: all samples in one pass over a group's edges (a full block of 16 and
  // the B mod 16 others, or the B < 16 alone), each edge's row read once, the fused weight gradient's short terms
  // from the same lines. B = 16 and B > 32 take a pass per block of 16 lanes.
  KOKKOS_INLINE_FUNCTION bool host_one_pass() const {
    return B < kHostLanes || (B > kHostLanes && B <= 2 * kHostLanes);
  }
  // The fused weight gradient of the edges k0 .. k1 - 1 (rows ln[k], gradients g0[k - k0]) of a source j active
  // at t (lanes, act: its activity): returns the lane block whose gz loop adds it (HostShortTerm applies and the
  // block is full, or the batch takes one pass: from the lines that loop loads anyway), or -1 after adding it here.
  KOKKOS_INLINE_FUNCTION int host_edges_grad(const std::int64_t k0, const std::int64_t k1, const std::int32_t* ln,
                                             const int slot, const HostActiveLanes& lanes, const std::uint8_t* act,
                                             Acc* g0) const {
    const int blk = lanes.b1 / kHostLanes * kHostLanes;
    if (!wg.grad_only && HostShortTerm::applies(lanes) && (host_one_pass() || B - blk >= kHostLanes)) return blk;
    host_group_weight_grad(
        lanes, act, B, 0, k1 - k0, [&](const std::int64_t k) { return edge_row(a.gu, ln[k0 + k], slot); }, g0);
    return -1;
  }
  // aj[0 .. 15] (kFull) and the NB lanes after them += sum of w_k gs[ln[k] * B + b0 + lane] over k0 .. k1 - 1, in
  // edge order, the partial sums in registers (compat::HostLanes16, compat::HostLanes<Acc, NB>); with merge also the
  // fused weight gradient's short terms, to g0[k - k0] (the term reads its lanes from the row's start).
  template <int NB, bool kFull>
  KOKKOS_INLINE_FUNCTION void host_add_lanes(Acc* aj, const std::int64_t k0, const std::int64_t k1,
                                             const std::int32_t* ln, const Real* wt, const Ring* gs, const int b0,
                                             const bool merge, const HostActiveLanes& lanes, const std::uint8_t* act,
                                             Acc* g0) const {
    constexpr int kTail = kFull ? kHostLanes : 0;
    const std::int64_t row = B;
    compat::HostLanes16<Acc> r0;
    compat::HostLanes<Acc, NB> r1;
    if constexpr (kFull) r0.load(aj);
    r1.load(aj + kTail);
    const auto add = [&](const Acc w, const Ring* line) {
      if constexpr (kFull) r0.add_product(w, line + b0);
      r1.add_product(w, line + b0 + kTail);
    };
    if (!merge) {
      for (std::int64_t k = k0; k < k1; ++k) add(static_cast<Acc>(wt[k]), gs + static_cast<std::int64_t>(ln[k]) * row);
    } else {
      const HostShortTerm term(lanes, act);
      for (std::int64_t k = k0; k < k1; ++k) {
        const Ring* line = gs + static_cast<std::int64_t>(ln[k]) * row;
        add(static_cast<Acc>(wt[k]), line);
        g0[k - k0] = static_cast<Acc>(g0[k - k0] + term(line));
      }
    }
    if constexpr (kFull) r0.store(aj);
    r1.store(aj + kTail);
  }
  // host_add_lanes with NB = nb (a run-time count, 1 .. 16)
  template <int NB, bool kFull>
  KOKKOS_INLINE_FUNCTION void host_add_lanes_n(const int nb, Acc* aj, const std::int64_t k0, const std::int64_t k1,
                                               const std::int32_t* ln, const Real* wt, const Ring* gs, const int b0,
                                               const bool merge, const HostActiveLanes& lanes, const std::uint8_t* act,
                                               Acc* g0) const {
    if constexpr (NB <= kHostLanes) {
      if (nb != NB)
        host_add_lanes_n<NB + 1, kFull>(nb, aj, k0, k1, ln, wt, gs, b0, merge, lanes, act, g0);
      else
        host_add_lanes<NB, kFull>(aj, k0, k1, ln, wt, gs, b0, merge, lanes, act, g0);
    }
  }
  // gz(j, :) += sum of w_k gu[ln[k]] over k0 .. k1 - 1, in edge order (gs: the gu slot); in lane block merge_b0
  // also the fused weight gradient's short terms, to g0[k - k0].
  KOKKOS_INLINE_FUNCTION void host_add_edges(const std::int64_t j, const std::int64_t k0, const std::int64_t k1,
                                             const std::int32_t* ln, const Real* wt, const Ring* gs, const int merge_b0,
                                             const HostActiveLanes& lanes, const std::uint8_t* act, Acc* g0) const {
    if (host_one_pass()) {
      if (B > kHostLanes)
        host_add_lanes_n<1, true>(B - kHostLanes, &a.gz(j, 0), k0, k1, ln, wt, gs, 0, merge_b0 >= 0, lanes, act, g0);
      else
        host_add_lanes_n<1, false>(B, &a.gz(j, 0), k0, k1, ln, wt, gs, 0, merge_b0 >= 0, lanes, act, g0);
      return;
    }
    const std::int64_t row = B;
    for (int b0 = 0; b0 < B; b0 += kHostLanes) {
      const int nb = B - b0 < kHostLanes ? B - b0 : kHostLanes;
      Acc* const aj = &a.gz(j, b0);
      if (nb < kHostLanes) {  // the last block of B > 32 (never merged: see host_edges_grad)
        host_add_lanes_n<1, false>(nb, aj, k0, k1, ln, wt, gs, b0, false, lanes, act, g0);
        continue;
      }
      static_assert(kHostLanes == 16, "HostLanes16");
      compat::HostLanes16<Acc> r;  // the partial sums stay in registers over the edges
      r.load(aj);
      if (b0 != merge_b0) {
        for (std::int64_t k = k0; k < k1; ++k)
          r.add_product(static_cast<Acc>(wt[k]), gs + static_cast<std::int64_t>(ln[k]) * row + b0);
      } else {  // with the weight gradient's terms from the same lines
        const HostShortTerm term(lanes, act);
        for (std::int64_t k = k0; k < k1; ++k) {
          const Ring* line = gs + static_cast<std::int64_t>(ln[k]) * row;
          r.add_product(static_cast<Acc>(wt[k]), line + b0);
          g0[k - k0] = static_cast<Acc>(g0[k - k0] + term(line));
        }
      }
      r.store(aj);
    }
  }
  KOKKOS_INLINE_FUNCTION const std::uint8_t* host_activity(const std::int64_t j) const {
    return &wg.act_ext(static_cast<int>(t - wg.ext_base), j, 0);
  }
  // One pass per delay over the groups (j, d) of the sources j0 .. j1 - 1.
  KOKKOS_INLINE_FUNCTION void host_group_passes(const std::int64_t j0, const std::int64_t j1) const {
    const std::int32_t* const ln = e.line.data();
    const Real* const wt = e.weight.data();
    for (int d = 1; d <= D; ++d) {
      if (t + d >= T) break;
      const int slot = static_cast<int>((t + d) % D);
      const bool grad_on = wg.on() && !(wg.grad_only && t + d < wg.t_lo);
      if (wg.grad_only && !grad_on) continue;  // (nothing to add; t + d may be before step 0: no slot)
      const Ring* const gs = &a.gu(slot, 0, 0, 0);
      for (std::int64_t j = j0; j < j1; ++j) {
        const std::int64_t g = e.group(j, d);
        const std::int64_t k0 = e.offsets(g), k1 = e.offsets(g + 1);
        if (k0 == k1) continue;
        HostActiveLanes lanes;
        const std::uint8_t* act = nullptr;
        int merge_b0 = -1;
        Acc* g0 = nullptr;
        if (grad_on && host_any_active(act = host_activity(j), B)) {
          lanes = host_active_lanes(act, B);
          g0 = wg.grad.data() + k0;
          merge_b0 = host_edges_grad(k0, k1, ln, slot, lanes, act, g0);
        }
        if (!wg.grad_only) host_add_edges(j, k0, k1, ln, wt, gs, merge_b0, lanes, act, g0);
      }
    }
  }
  // Target-blocked passes (TargetBlockedEdges): per delay, per block of targets, the segments of the sources
  // j0 .. j1 - 1, so that the gathers of a pass stay in one block's rows of the slot. A segment's fused weight
  // gradients go to the grouped edges that follow the group's earlier segments (cursor).
  static constexpr std::int64_t kAheadActive = 4;
  KOKKOS_INLINE_FUNCTION void host_block_passes(const std::int64_t j0, const std::int64_t j1) const {
    const std::int32_t* const ln = tb.line.data();
    const Real* const wt = tb.weight.data();
    std::int32_t* const act_list = tb.active.data() + j0;
    std::int64_t* const cursor = tb.cursor.data() + j0;
    std::int64_t n_act = 0;
    if (wg.on())
      for (std::int64_t j = j0; j < j1; ++j)
        if (host_any_active(host_activity(j), B)) act_list[n_act++] = static_cast<std::int32_t>(j);
    for (int d = 1; d <= D; ++d) {
      if (t + d >= T) break;
      const int slot = static_cast<int>((t + d) % D);
      const bool grad_on = n_act > 0 && !(wg.grad_only && t + d < wg.t_lo);
      if (wg.grad_only && !grad_on) continue;
      if (grad_on)
        for (std::int64_t q = 0; q < n_act; ++q) cursor[q] = e.offsets(e.group(act_list[q], d));
      const Ring* const gs = &a.gu(slot, 0, 0, 0);
      for (int blk = 0; blk < tb.n_blocks; ++blk) {
        const std::int32_t* const seg = tb.seg.data() + tb.section(d, blk);
        std::int64_t q = 0, next = grad_on ? act_list[0] : j1;
        for (std::int64_t j = j0; j < j1; ++j) {
          const std::int64_t k0 = seg[j], k1 = seg[j + 1];
          HostActiveLanes lanes;
          const std::uint8_t* act = nullptr;
          int merge_b0 = -1;
          Acc* g0 = nullptr;
          if (j == next) {
            g0 = wg.grad.data() + cursor[q];
            // the gradients of an active segment are a DRAM line at random: fetched kAheadActive segments early
            if (q + kAheadActive < n_act) compat::prefetch(wg.grad.data() + cursor[q + kAheadActive]);
            cursor[q] += k1 - k0;
            next = ++q < n_act ? act_list[q] : j1;
            if (k0 != k1) {
              act = host_activity(j);
              lanes = host_active_lanes(act, B);
              merge_b0 = host_edges_grad(k0, k1, ln, slot, lanes, act, g0);
            }
          }
          if (k0 != k1 && !wg.grad_only) host_add_edges(j, k0, k1, ln, wt, gs, merge_b0, lanes, act, g0);
        }
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void operator()(HostPasses, const std::int64_t r) const {
    const std::int64_t j0 = chunk_begin(r), j1 = chunk_begin(r + 1);
    if (!wg.grad_only)
      for (std::int64_t j = j0; j < j1; ++j)
        for (int b = 0; b < B; ++b) a.gz(j, b) = Acc(0);
    if (tb.on())
      host_block_passes(j0, j1);
    else if (e.offsets.extent(0) != 0)
      host_group_passes(j0, j1);
    if (wg.grad_only) return;
    for (std::int64_t j = j0; j < j1; ++j)
      for (int b = 0; b < B; ++b) a.gz(j, b) = a.rate_grad(j, b) + rdamp * a.gz(j, b);
  }

  // Devices: team r, thread k handles source r * team_size + k.
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const std::int64_t j = static_cast<std::int64_t>(m.league_rank()) * m.team_size() + m.team_rank();
    if (j >= n) return;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, B), [&](const int b) {
      Acc acc = 0;
      for_edges(j, [&](const Acc w, const std::int32_t line, const int slot) {
        acc += w * widen(edge_row(a.gu, line, slot)[b]);
      });
      a.gz(j, b) = a.rate_grad(j, b) + rdamp * acc;
    });
  }
};

// Launches the spike adjoint of one reverse step.
template <class Real, class Acc, class ExecSpace, class Ring>
void spike_adjoint(const ExecSpace& space, const SpikeAdjointFunctor<Real, Acc, ExecSpace, Ring>& f,
                   KernelShape shape = KernelShape::Auto) {
  using F = SpikeAdjointFunctor<Real, Acc, ExecSpace, Ring>;
  using Teams = compat::SampleTeams<ExecSpace>;
  if constexpr (F::kHost) {
    if (host_shape<ExecSpace>(shape)) {
      F g = f;
      g.n_chunks = compat::concurrency(space);
      Kokkos::parallel_for(
          f.wg.grad_only ? "dpointnet::backward_weight_grad_recurrent" : "dpointnet::backward_spike_adjoint",
          Kokkos::RangePolicy<ExecSpace, typename F::HostPasses>(space, 0, g.n_chunks), g);
      return;
    }
  }
  // the device shape: no fused weight gradient, no target blocks (host shapes only)
  if (f.wg.on() || f.tb.on())
    throw std::logic_error("spike_adjoint: the fused weight gradient and target blocks are host shapes only");
  Kokkos::parallel_for("dpointnet::backward_spike_adjoint", Teams::policy(space, f.n, f.B), f);
}

}  // namespace dpointnet::device
