// The weight gradients of the reverse sweep (docs/model-gradients.md 5.4), dL/dw_e += sum_b gu_t[c_e, post_e, b]
// a(pre_e, t - d_e, b), event-driven over the (source, delay) groups active at t - d_e; the host shapes' sample
// sums are shared with the spike adjoint's fused recurrent gradient (spike_adjoint.hpp).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/util/half_precision.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Activity of step s from a segment record [D + C][n_src][B] holding steps ext_base ... (those before s_min
// are zero: before step 0 from rest).
template <class Activity, class MemSpace>
struct RecordActivity {
  using memory_space = MemSpace;
  Kokkos::View<Activity***, Kokkos::LayoutRight, MemSpace> act_ext;
  std::int64_t ext_base;
  std::int64_t s_min = 0;
  KOKKOS_INLINE_FUNCTION bool in_range(const std::int64_t s) const { return s >= ext_base && s >= s_min; }
  KOKKOS_INLINE_FUNCTION Activity operator()(const int b, const std::int64_t j, const std::int64_t s) const {
    return act_ext(static_cast<int>(s - ext_base), j, b);
  }
};

// The active samples of one source at one step (host shapes of the weight gradient).
struct HostActiveLanes {
  int nact = 0, b1 = 0, b2 = 0;
};
template <class Activity>
KOKKOS_INLINE_FUNCTION HostActiveLanes host_active_lanes(const Activity* act, const int B) {
  HostActiveLanes l;
  for (int b = 0; b < B; ++b) {
    if (act[b] == 0) continue;
    if (l.nact == 0) l.b1 = b;
    if (l.nact == 1) l.b2 = b;
    ++l.nact;
  }
  return l;
}

// Whether any sample of an activity row is active: the bytes 8 at a time (most rows are all zero at cortical rates;
// a branch per byte costs more than the row).
template <class Activity>
KOKKOS_INLINE_FUNCTION bool host_any_active(const Activity* act, const int B) {
  const int bytes = B * static_cast<int>(sizeof(Activity));
  const unsigned char* p = reinterpret_cast<const unsigned char*>(act);
  std::uint64_t any = 0;
  int q = 0;
  for (; q + 8 <= bytes; q += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + q, 8);
    any |= w;
  }
  for (; q < bytes; ++q) any |= p[q];
  return any != 0;
}

// The short path of the host weight gradient: one active sample, or two in the same block of 16 lanes. Then the
// fixed tree sum of an edge's products over the block is exactly the sum of these one or two products (the other
// lanes add zeros), so only those lanes of the edge's line are read.
struct HostShortTerm {
  int b1 = 0, b2 = 0;
  bool two = false;
  double x1 = 0, x2 = 0;
  KOKKOS_INLINE_FUNCTION static bool applies(const HostActiveLanes& l) {
    constexpr int kLanes = compat::kHostSampleLanes;
    return l.nact == 1 || (l.nact == 2 && l.b1 / kLanes == l.b2 / kLanes);
  }
  template <class Activity>
  KOKKOS_INLINE_FUNCTION HostShortTerm(const HostActiveLanes& l, const Activity* act)
      : b1(l.b1),
        b2(l.b2),
        two(l.nact == 2),
        x1(static_cast<double>(act[l.b1])),
        x2(l.nact == 2 ? static_cast<double>(act[l.b2]) : 0.0) {}
  // the term of the edge whose line (sample 0 of its row) is `line`
  template <class T>
  KOKKOS_INLINE_FUNCTION double operator()(const T* line) const {
    const double p1 = static_cast<double>(widen(line[b1])) * x1;
    return two ? p1 + static_cast<double>(widen(line[b2])) * x2 : p1;
  }
};

KOKKOS_INLINE_FUNCTION double lane_tree_sum(const double* p) {
  double s8[8];
  for (int q = 0; q < 8; ++q) s8[q] = p[q] + p[q + 8];
  const double s4[4] = {s8[0] + s8[4], s8[1] + s8[5], s8[2] + s8[6], s8[3] + s8[7]};
  return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

// Host shapes: grad[k] += sum_b line(k)[b] act[b] for the edges k0..k1 of one active group, the products summed
// in double in a fixed tree over blocks of 16 lanes and each block's sum added to grad[k] in its type (Real: a
// float32 run rounds once per term); HostShortTerm when it applies.
template <class Activity, class Line, class Grad>
KOKKOS_INLINE_FUNCTION void host_group_weight_grad(const HostActiveLanes& l, const Activity* act, const int B,
                                                   const std::int64_t k0, const std::int64_t k1, Line&& line,
                                                   Grad* grad) {
  constexpr int kLanes = compat::kHostSampleLanes;
  static_assert(kLanes == 16, "lane_tree_sum sums 16 lanes");
  if (HostShortTerm::applies(l)) {
    const HostShortTerm term(l, act);
    for (std::int64_t k = k0; k < k1; ++k) grad[k] = static_cast<Grad>(grad[k] + term(line(k)));
    return;
  }
  for (int b0 = 0; b0 < B; b0 += kLanes) {
    const int nb = B - b0 < kLanes ? B - b0 : kLanes;
    double x[kLanes];
    for (int q = 0; q < kLanes; ++q) x[q] = q < nb ? static_cast<double>(act[b0 + q]) : 0.0;
    for (std::int64_t k = k0; k < k1; ++k) {
      const auto* gk = line(k) + b0;
      double p[kLanes];
      if (nb == kLanes) {
        for (int q = 0; q < kLanes; ++q) p[q] = static_cast<double>(widen(gk[q])) * x[q];
      } else {
        for (int q = 0; q < kLanes; ++q) p[q] = q < nb ? static_cast<double>(widen(gk[q])) * x[q] : 0.0;
      }
      grad[k] = static_cast<Grad>(grad[k] + lane_tree_sum(p));
    }
  }
}

// dL/dw_e += sum_b gu_t[c_e, post_e, b] act(pre_e, t - d_e, b), event-driven; every edge has one writer, so no
// atomics. act_ext holds steps t0 - D .. t0 + C - 1 at index step - (t0 - D).
// * hosts (untagged): a thread per (source, delay) group; groups without activity in any sample leave at once,
//   the others read each edge once for all samples, 16 samples at a time (vector loop), the products added in
//   a fixed tree order (only the active lanes are read when one or two samples are active: the same sums);
// * devices (ActiveTeams, after compact_active_groups): each team takes active groups in turn, spreads the
//   group's edges over its threads and reduces over the samples' vector lanes.
// Ring: the storage type of gu (spike_adjoint.hpp).
template <class Real, class Acc, class ExecSpace, class Activity, class Ring = Acc>
struct WeightGradFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  struct ActiveTeams {};
  static constexpr int kLanes = compat::kHostSampleLanes;
  GroupedEdges<Real, MemSpace> e;
  Kokkos::View<Activity***, Kokkos::LayoutRight, MemSpace> act_ext;  // [D + C][n_src][B]
  Kokkos::View<Ring****, Kokkos::LayoutRight, MemSpace> gu;          // ring [D][R][N][B]
  Kokkos::View<Acc*, MemSpace> grad;                                 // per grouped edge
  std::int64_t t, ext_base, n_groups;                                // ext_base = t0 - D
  int D, B, slot_gu;
  std::int64_t s_min = 0;  // first step with activity (PropagateFunctor::s_min)

  // Host shape: team r, thread k handles work item i = r * team_size + k, the group of source i / D and delay
  // i mod D + 1: work items in source order, so that a static split gives each thread sources of every delay (a
  // projection often uses one delay: in group order its groups would all fall to one thread).
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const std::int64_t i = static_cast<std::int64_t>(m.league_rank()) * m.team_size() + m.team_rank();
    if (i >= n_groups) return;
    const std::int64_t j = i / D;
    const int d = static_cast<int>(i % D) + 1;
    const std::int64_t g = e.group(j, d);
    const std::int64_t s = t - d;
    if (s < s_min || e.offsets(g) == e.offsets(g + 1)) return;
    const Activity* act = &act_ext(static_cast<int>(s - ext_base), j, 0);
    const HostActiveLanes lanes = host_active_lanes(act, B);
    if (lanes.nact == 0) return;
    host_group_weight_grad(
        lanes, act, B, e.offsets(g), e.offsets(g + 1),
        [&](const std::int64_t k) { return edge_row(gu, e.line(k), slot_gu); }, grad.data());
  }

  // Device shape: team r takes active groups r, r + league, ...
  KOKKOS_INLINE_FUNCTION void operator()(ActiveTeams, const Member& m) const {
    const std::int32_t n_active = e.active(n_groups);
    for (std::int32_t q = m.league_rank(); q < n_active; q += m.league_size()) {
      const std::int64_t g = e.active(q);
      const std::int64_t j = e.source_of(g);
      const int xi = static_cast<int>(t - e.delay_of(g) - ext_base);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, e.offsets(g), e.offsets(g + 1)), [&](const std::int64_t k) {
        const Ring* const gk = edge_row(gu, e.line(k), slot_gu);
        double sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(m, B),
            [&](const int b, double& acc) {
              acc += static_cast<double>(widen(gk[b])) * static_cast<double>(act_ext(xi, j, b));
            },
            sum);
        Kokkos::single(Kokkos::PerThread(m), [&]() { grad(k) = static_cast<Acc>(grad(k) + sum); });
      });
    }
  }
};

// Launches the weight gradient of one surface in the shape that suits the space (or the one asked for).
template <class Real, class Acc, class ExecSpace, class Activity, class Ring>
void weight_grad(const ExecSpace& space, const char* label,
                 const WeightGradFunctor<Real, Acc, ExecSpace, Activity, Ring>& f,
                 KernelShape shape = KernelShape::Auto) {
  using F = WeightGradFunctor<Real, Acc, ExecSpace, Activity, Ring>;
  using MemSpace = typename ExecSpace::memory_space;
  using Teams = compat::SampleTeams<ExecSpace>;
  if (device_shape<ExecSpace>(shape)) {
    compact_active_groups(space, f.e, RecordActivity<Activity, MemSpace>{f.act_ext, f.ext_base, f.s_min}, f.t, f.D,
                          f.B);
    const int league = active_group_league<ExecSpace>(f.n_groups);
    Kokkos::parallel_for(
        label, compat::auto_team_policy<ExecSpace, typename F::ActiveTeams>(space, league, Teams::vector_length(f.B)),
        f);
  } else {
    Kokkos::parallel_for(label, Kokkos::TeamPolicy<ExecSpace>(space, static_cast<int>(f.n_groups), 1, 1), f);
  }
}

}  // namespace dpointnet::device
