// Event-driven synaptic propagation (docs/model.md, step 1): for every source that was active d steps ago, add
// its edges of delay d into the drive u. Work is (sources x delays) checks plus (active sources x fan-out)
// additions, not all edges.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>

#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/fill.hpp"
#include "dpointnet/device/fixed_point.hpp"
#include "dpointnet/util/host_simd.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/prefetch.hpp"

namespace dpointnet::device {

// Activity of step s >= s_min from a ring [D][B][n_src] (slot s mod D; s_min >= -D, see PropagateFunctor).
template <class Activity, class MemSpace>
struct RingActivity {
  using memory_space = MemSpace;
  Kokkos::View<Activity***, Kokkos::LayoutRight, MemSpace> ring;
  int D;
  std::int64_t s_min = 0;
  KOKKOS_INLINE_FUNCTION bool in_range(const std::int64_t s) const { return s >= s_min; }
  KOKKOS_INLINE_FUNCTION Activity operator()(const int b, const std::int64_t j, const std::int64_t s) const {
    return ring(static_cast<int>((s + D) % D), b, j);
  }
};

// Activity = spikes (uint8) for the recurrent projection or counts (uint16) for inputs. ring: [D][B][n_src].
// Two shapes of the same sums (integer sums: the result does not depend on the order):
// * hosts: one work item per sample, which owns its u(b, ...) and adds without atomics;
// * devices: the groups (j, d) active in some sample are compacted first (a scan, CompactActiveGroups); then
//   each team takes active groups in turn and spreads the group's edges over its threads (a source with
//   thousands of targets is not one thread's work); each edge is read once for all samples and added with
//   atomics into the samples where its source was active.
template <class Real, class ExecSpace, class Activity>
struct PropagateFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  struct PerSample {};
  GroupedEdges<Real, MemSpace> e;
  Kokkos::View<Activity***, Kokkos::LayoutRight, MemSpace> ring;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u;  // fixed-point drive [B][R][N]
  std::int64_t t;                                                  // current step
  int D;
  // first step whose activity the ring holds: 0 from rest; -D when the run continues a carried state
  // (train.carry_state), whose last D steps are in the ring at slots (s + D) mod D
  std::int64_t s_min = 0;
  // zero the drive before adding (the step's first projection): on hosts each work item zeroes its own row, so
  // the zeros are written where they are added to, without a separate kernel; devices fill first (propagate())
  bool zero_first = false;
  // Hosts, optional: zero only the live rows of the drive, [2 c], [2 c + 1] the span of neurons of channel c whose
  // rows edges reach (LiveChannels::span); the other rows no edge adds to, so they keep their initial zeros and
  // the neuron step does not read them as live channels. Empty: zero all rows.
  Kokkos::View<const std::int64_t*, MemSpace> zero_spans = {};
  // Steps t, ..., t + n_steps - 1 in one launch (a min-delay window: no step of it reads a source step >= t), the
  // drive of step t + w into rows [w B, (w + 1) B) of u
  int n_steps = 1;
  // Host shape: items per (step, sample). With fewer (step, sample) pairs than threads, part p of P adds only the
  // edges onto targets [p N / P, (p + 1) N / P) (a group's edges are in target order: two binary searches) and
  // zeroes only their rows; integer sums, so the drive is the same for any P. 0: propagate() picks P.
  int target_parts = 0;

  // Device shape, stage 2 (after compact_active_groups): team r takes active groups r, r + league, ...
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const std::int64_t n_groups = e.n_sources * D;
    const std::int32_t n_active = e.active(n_groups);
    const int B = static_cast<int>(u.extent(0));
    for (std::int32_t q = m.league_rank(); q < n_active; q += m.league_size()) {
      const std::int64_t g = e.active(q);
      const std::int64_t j = e.source_of(g);
      const int slot = static_cast<int>((t - e.delay_of(g) + D) % D);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, e.offsets(g), e.offsets(g + 1)), [&](const std::int64_t k) {
        const double w = static_cast<double>(e.weight(k));
        const std::int32_t line = e.line(k);
        for (int b = 0; b < B; ++b) {
          const Activity a = ring(slot, b, j);
          if (a != 0) Kokkos::atomic_add(edge_row(u, line, b), to_fixed(w * static_cast<double>(a)));
        }
      });
    }
  }

  // Host shape: adds the listed active groups of one sample (group[q], activity count[q]) into its drive row ub.
  // While a group is added, the offsets of the group kAheadOffsets on and the first kLinesAhead edge lines (80
  // edges: a typical recurrent group whole, 74 at 370 synapses per neuron over 5 delays) of the group kAheadEdges
  // on are prefetched: at cortical rates the active groups are scattered over the edge arrays, and a group would
  // otherwise wait for its lines one group after the other. The distances are the fastest of those timed
  // (bench/README.md).
  static constexpr int kList = 64, kAheadOffsets = 6, kAheadEdges = 3, kLinesAhead = 5;
  KOKKOS_INLINE_FUNCTION void add_groups(const std::int64_t* group, const double* count, const int n, std::int64_t* ub,
                                         const std::int64_t n0, const std::int64_t n1) const {
    const std::int64_t* const off = e.offsets.data();
    const std::int32_t* const ln = e.line.data();
    const Real* const wgt = e.weight.data();
    const std::int64_t N = static_cast<std::int64_t>(u.extent(2));
    auto first_target = [&](std::int64_t lo, std::int64_t hi, const std::int64_t target) {  // lower bound
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (static_cast<std::int64_t>(ln[mid]) % N < target)
          lo = mid + 1;
        else
          hi = mid;
      }
      return lo;
    };
    for (int q = 0; q < n; ++q) {
      if (q + kAheadOffsets < n) compat::prefetch(off + group[q + kAheadOffsets]);
      if (q + kAheadEdges < n) {  // inside that group's edges only
        const std::int64_t k = off[group[q + kAheadEdges]], k_end = off[group[q + kAheadEdges] + 1];
        for (int l = 0; l < kLinesAhead && k + 16 * l < k_end; ++l) {
          compat::prefetch(ln + k + 16 * l);
          compat::prefetch(wgt + k + 16 * l);
        }
      }
      const double fa = count[q];
      std::int64_t k0 = off[group[q]], k1 = off[group[q] + 1];
      if (target_parts > 1) {
        k0 = first_target(k0, k1, n0);
        k1 = first_target(k0, k1, n1);
      }
      if (e.rows_unique) {  // no two lanes of a vector add into the same row: gathers and scatters
        DPOINTNET_HOST_SIMD
        for (std::int64_t k = k0; k < k1; ++k) ub[ln[k]] += to_fixed(static_cast<double>(wgt[k]) * fa);
      } else {
        for (std::int64_t k = k0; k < k1; ++k) ub[ln[k]] += to_fixed(static_cast<double>(wgt[k]) * fa);
      }
    }
  }

  // Zeroes the targets [n0, n1) of a sample's drive row ub ([R][N], R and N those of u): within the live spans, or
  // every channel's without zero_spans.
  KOKKOS_INLINE_FUNCTION void zero_row(std::int64_t* const ub, const std::int64_t n0, const std::int64_t n1) const {
    const auto R = static_cast<std::int64_t>(u.extent(1)), N = static_cast<std::int64_t>(u.extent(2));
    const bool spans = static_cast<std::int64_t>(zero_spans.extent(0)) == 2 * R;
    for (std::int64_t c = 0; c < R; ++c) {
      const std::int64_t lo = spans && zero_spans(2 * c) > n0 ? zero_spans(2 * c) : n0;
      const std::int64_t hi = spans && zero_spans(2 * c + 1) < n1 ? zero_spans(2 * c + 1) : n1;
      for (std::int64_t i = lo; i < hi; ++i) ub[c * N + i] = 0;
    }
  }

  // Sample b of step t + w (item w B + b): every active (j, d) of this sample, listed kList at a time and added by
  // add_groups. Raw pointers and local bounds: the drive row is the only thing written, so nothing the loop reads
  // has to be reloaded after each addition.
  KOKKOS_INLINE_FUNCTION void operator()(PerSample, const int item) const {
    const int P = target_parts > 0 ? target_parts : 1;
    const int B = static_cast<int>(ring.extent(1)), row = item / P, part = item % P;
    const int b = row % B;
    const std::int64_t t_w = t + row / B;
    const std::int64_t N = static_cast<std::int64_t>(u.extent(2));
    const std::int64_t n0 = N * part / P, n1 = N * (part + 1) / P;
    std::int64_t* const ub = &u(row, 0, 0);
    if (zero_first) zero_row(ub, n0, n1);
    const std::int64_t n_src = e.n_sources;
    std::int64_t group[kList];
    double count[kList];
    int n = 0;
    const int d_end = e.d_hi < D ? e.d_hi : D;
    for (int dm1 = e.d_lo - 1; dm1 < d_end; ++dm1) {  // the delays with edges only
      const std::int64_t src_step = t_w - (dm1 + 1);
      if (src_step < s_min) continue;
      const int slot = static_cast<int>((src_step + D) % D);
      const Activity* const act = &ring(slot, b, 0);
      // sources a 64-byte word at a time (an OR over a full word is one vector reduction): at cortical rates
      // most words of the activity row are all zero
      constexpr std::int64_t kWord = 64 / static_cast<std::int64_t>(sizeof(Activity));
      for (std::int64_t j0 = 0; j0 < n_src; j0 += kWord) {
        const std::int64_t j1 = j0 + kWord < n_src ? j0 + kWord : n_src;
        Activity any = 0;
        if (j1 - j0 == kWord)
          for (std::int64_t q = 0; q < kWord; ++q) any |= act[j0 + q];
        else
          for (std::int64_t j = j0; j < j1; ++j) any |= act[j];
        if (any == 0) continue;
        for (std::int64_t j = j0; j < j1; ++j) {
          const Activity a = act[j];
          if (a == 0) continue;
          group[n] = e.group(j, dm1 + 1);
          count[n] = static_cast<double>(a);
          if (++n == kList) {
            add_groups(group, count, n, ub, n0, n1);
            n = 0;
          }
        }
      }
    }
    add_groups(group, count, n, ub, n0, n1);
  }
};

// Targets per part of a host propagation split by targets (PropagateFunctor::target_parts) at least.
inline constexpr std::int64_t kMinPartTargets = 1024;

// Launches the propagation of one projection for steps t, ..., t + f.n_steps - 1 in the shape that suits the space
// (or the one asked for; the device shape needs the edge set's active list, compacted per step).
template <class Real, class ExecSpace, class Activity>
void propagate(const ExecSpace& space, const char* label, const PropagateFunctor<Real, ExecSpace, Activity>& f, int B,
               KernelShape shape = KernelShape::Auto) {
  using F = PropagateFunctor<Real, ExecSpace, Activity>;
  using MemSpace = typename ExecSpace::memory_space;
  if (device_shape<ExecSpace>(shape)) {
    if (f.zero_first) fill(space, f.u, std::int64_t(0));
    for (int w = 0; w < f.n_steps; ++w) {
      F fw = f;
      fw.t = f.t + w;
      fw.n_steps = 1;
      fw.u =
          Kokkos::subview(f.u, Kokkos::make_pair(std::size_t(w) * std::size_t(B), std::size_t(w + 1) * std::size_t(B)),
                          Kokkos::ALL, Kokkos::ALL);
      compact_active_groups(space, fw.e, RingActivity<Activity, MemSpace>{fw.ring, fw.D, fw.s_min}, fw.t, fw.D, B);
      const int league = active_group_league<ExecSpace>(fw.e.n_sources * fw.D);
      Kokkos::parallel_for(label, compat::auto_team_policy<ExecSpace>(space, league), fw);
    }
  } else {
    F g = f;
    const int rows = B * f.n_steps, threads = compat::concurrency(space);
    const std::int64_t N = static_cast<std::int64_t>(f.u.extent(2));
    if (g.target_parts <= 0)
      g.target_parts = rows < threads && N >= 2 * kMinPartTargets
                           ? static_cast<int>(std::min<std::int64_t>((threads + rows - 1) / rows, N / kMinPartTargets))
                           : 1;
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, typename F::PerSample>(space, 0, rows * g.target_parts),
                         g);
  }
}

}  // namespace dpointnet::device
