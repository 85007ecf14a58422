// Edges on the device, grouped by (source, delay) for the event-driven kernels. Only what the kernels read
// lives on the device; the permutation back to the projection's read order stays on the host (export,
// checkpoints).
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/util/huge_pages.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/prefetch.hpp"

namespace dpointnet::device {

// The (source, delay) group index, delay-major: g = (d - 1) n_sources + j (GroupedEdges::offsets), and back.
KOKKOS_INLINE_FUNCTION std::int64_t group_index(const std::int64_t j, const int d, const std::int64_t n_sources) {
  return static_cast<std::int64_t>(d - 1) * n_sources + j;
}
KOKKOS_INLINE_FUNCTION std::int64_t group_source(const std::int64_t g, const std::int64_t n_sources) {
  return g % n_sources;
}
KOKKOS_INLINE_FUNCTION int group_delay(const std::int64_t g, const std::int64_t n_sources) {
  return static_cast<int>(g / n_sources) + 1;
}

template <class Real, class MemSpace>
struct GroupedEdges {
  // [n_sources * D + 1]: the edges of group (j, d) are offsets(g) .. offsets(g + 1) - 1, g = group(j, d). Groups
  // are delay-major, g = (d - 1) n_sources + j: the groups of one delay are contiguous in source order, so that
  // the spike adjoint's pass over one delay streams the edge arrays.
  Kokkos::View<std::int64_t*, MemSpace> offsets;
  // The row an edge adds to, line = channel * n_targets + target (target: global neuron index): one index
  // addresses the [R][N] rows of the drive u[B][R][N] and of the adjoint ring gu[D][R][N][B] (edge_row).
  Kokkos::View<std::int32_t*, MemSpace> line;
  Kokkos::View<Real*, MemSpace> weight;  // normalized weight: the only copy of the live weights
  // Device shapes only (empty on hosts): the (source, delay) groups active in the current step, compacted by
  // a scan, [n_groups + 1] with the count in the last entry (read on the device: no host round trip).
  Kokkos::View<std::int32_t*, MemSpace> active;
  std::int64_t n_sources = 0;
  // the smallest and largest delay (steps) with edges, set by group_edges (d_lo > d_hi: no edges; the defaults
  // cover every delay)
  int d_lo = 1, d_hi = 1 << 30;
  KOKKOS_INLINE_FUNCTION std::int64_t group(const std::int64_t j, const int d) const {
    return group_index(j, d, n_sources);
  }
  KOKKOS_INLINE_FUNCTION std::int64_t source_of(const std::int64_t g) const { return group_source(g, n_sources); }
  KOKKOS_INLINE_FUNCTION int delay_of(const std::int64_t g) const { return group_delay(g, n_sources); }
  // No row twice in one (source, delay) group (no two edges with the same source, delay, target and channel):
  // then a group's additions into a drive row may run as vector scatters (host propagation)
  bool rows_unique = false;
};

// Row `line` (GroupedEdges::line) of the last dimensions [R][N] of a LayoutRight view, at the given leading
// indices: &v(i..., c, n, 0...) for line = c * N + n (the [R][N] block is contiguous in a LayoutRight view).
template <class View>
KOKKOS_INLINE_FUNCTION typename View::pointer_type edge_row(const View& v, const std::int32_t line, const int i) {
  static_assert(View::rank == 3 || View::rank == 4, "edge_row: u[B][R][N] or gu[D][R][N][B]");
  if constexpr (View::rank == 3)
    return &v(i, 0, 0) + line;
  else
    return &v(i, 0, 0, 0) + static_cast<std::int64_t>(line) * static_cast<std::int64_t>(v.extent(3));
}

// Device shape, stage 1: the groups (j, d) of step t (activity of step t - d) active in at least one sample and
// with edges, compacted in group order into active[0, n); n into active[n_groups]. Act(b, j, step) reads the
// activity (a ring of the forward pass, or a segment record of the reverse sweep).
template <class Act>
struct CompactActiveGroups {
  using value_type = std::int32_t;
  Kokkos::View<const std::int64_t*, typename Act::memory_space> offsets;
  Kokkos::View<std::int32_t*, typename Act::memory_space> active;
  Act act;
  std::int64_t t, n_groups, n_sources;
  int D, B;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t g, std::int32_t& upd, const bool final) const {
    const std::int64_t j = group_source(g, n_sources);
    const std::int64_t s = t - group_delay(g, n_sources);
    bool on = false;
    if (act.in_range(s) && offsets(g + 1) > offsets(g))
      for (int b = 0; b < B && !on; ++b) on = act(b, j, s) != 0;
    if (on) {
      if (final) active(upd) = static_cast<std::int32_t>(g);
      ++upd;
    }
    if (final && g == n_groups - 1) active(n_groups) = upd;
  }
};

template <class Act, class ExecSpace, class Real, class MemSpace>
void compact_active_groups(const ExecSpace& space, const GroupedEdges<Real, MemSpace>& e, const Act& act,
                           std::int64_t t, int D, int B) {
  const std::int64_t n_groups = e.n_sources * D;
  Kokkos::parallel_scan("dpointnet::compact_active_groups", Kokkos::RangePolicy<ExecSpace>(space, 0, n_groups),
                        CompactActiveGroups<Act>{e.offsets, e.active, act, t, n_groups, e.n_sources, D, B});
}

// Teams per kernel of the device shapes (at least 1); each team takes active groups league size apart. On a
// device at most 2,048. On a host backend (the device shapes on a CPU) at most 4: there one team of all the threads
// takes the league ranks one after the other and its threads meet between two ranks, so 2,048 ranks cost 2,048
// meetings per launch however few groups are active (on 2 cores 2.5 ms per step at 450 neurons, dt 0.1 ms).
template <class ExecSpace>
int active_group_league(std::int64_t n_groups) {
  constexpr std::int64_t kMax = compat::host_execution<ExecSpace> ? 4 : 2048;
  return static_cast<int>(n_groups < 1 ? 1 : (n_groups < kMax ? n_groups : kMax));
}

// Groups a projection's edges by (source, delay) with the given normalized weights (read order). On return
// (*file_order)[k] is the read-order index of grouped edge k (file_order null: not kept). with_active_list: allocate
// the active-group list of the device shapes (device_shape<ExecSpace>(KernelShape::Auto) for the space that will run
// the kernels). The device views are allocated and written on the instance `space`, which is fenced on return (the host
// staging goes out of scope).
template <class Real, class MemSpace, class ExecSpace,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
GroupedEdges<Real, MemSpace> group_edges(const ExecSpace& space, const Projection& p, const std::vector<double>& weight,
                                         int D, std::int64_t n_targets, const std::string& label,
                                         std::vector<std::int64_t>* file_order, bool with_active_list) {
  GroupedEdges<Real, MemSpace> g;
  g.n_sources = p.n_sources;
  const std::size_t ne = p.size();
  const std::size_t ng = static_cast<std::size_t>(p.n_sources) * static_cast<std::size_t>(D);
  auto key_of = [&](std::size_t e) {
    return static_cast<std::size_t>(group_index(p.source[e], p.delay_steps[e], p.n_sources));
  };
  // offsets, line and weight are written whole here and copied (host memory spaces: written in place, the mirrors
  // are the views themselves)
  using Kokkos::view_alloc;
  using Kokkos::WithoutInitializing;
  g.offsets = Kokkos::View<std::int64_t*, MemSpace>(view_alloc(space, WithoutInitializing, label + ".offsets"), ng + 1);
  g.line = Kokkos::View<std::int32_t*, MemSpace>(view_alloc(space, WithoutInitializing, label + ".line"), ne);
  g.weight = Kokkos::View<Real*, MemSpace>(view_alloc(space, WithoutInitializing, label + ".weight"), ne);
  space.fence();
  auto h_off = compat::host_mirror_uninitialized(g.offsets);
  auto h_line = compat::host_mirror_uninitialized(g.line);
  auto h_w = compat::host_mirror_uninitialized(g.weight);
  // the scatter below writes these in random order: huge pages before their first touch
  advise_huge_pages(h_line.data(), ne * sizeof(std::int32_t));
  advise_huge_pages(h_w.data(), ne * sizeof(Real));
  std::fill(h_off.data(), h_off.data() + ng + 1, std::int64_t{0});
  // counts, then their prefix sums: h_off(k) is group k's first position; the scatter below advances h_off(k) as
  // group k's cursor (to group k + 1's first position), so the offsets are shifted back after it (one array of
  // random accesses, not two)
  // the cursors and the positions they point to are scattered over arrays larger than the caches: each is asked
  // for kAhead edges ahead (the positions with the cursor as read then, a hint only)
  constexpr std::size_t kAhead = 16;
  for (std::size_t e = 0; e < ne; ++e) {
    if (e + 2 * kAhead < ne) compat::prefetch_write(h_off.data() + key_of(e + 2 * kAhead) + 1);
    h_off(key_of(e) + 1)++;
  }
  for (std::size_t k = 0; k < ng; ++k) h_off(k + 1) += h_off(k);
  if (file_order) {
    std::vector<std::int64_t>().swap(*file_order);
    file_order->reserve(ne);
    advise_huge_pages(file_order->data(), ne * sizeof(std::int64_t));
    file_order->resize(ne);
  }
  std::int64_t* const order = file_order ? file_order->data() : nullptr;
  std::int64_t max_channel = 0;
  for (std::size_t e = 0; e < ne; ++e) {
    if (e + 2 * kAhead < ne) compat::prefetch_write(h_off.data() + key_of(e + 2 * kAhead));
    if (e + kAhead < ne) {
      const std::int64_t q = h_off(key_of(e + kAhead));
      compat::prefetch_write(h_line.data() + q);
      compat::prefetch_write(h_w.data() + q);
    }
    const auto pos = static_cast<std::size_t>(h_off(key_of(e))++);
    const std::int64_t tgt = p.target[e], ch = p.channel[e], line = ch * n_targets + tgt;
    if (tgt < 0 || tgt >= n_targets || ch < 0 || line > INT32_MAX)
      throw std::runtime_error(label + ": edge " + std::to_string(e) + " (target " + std::to_string(tgt) +
                               ", channel " + std::to_string(ch) + ") outside the " + std::to_string(n_targets) +
                               " targets or the 32-bit row index");
    h_line(pos) = static_cast<std::int32_t>(line);
    max_channel = ch > max_channel ? ch : max_channel;
    h_w(pos) = static_cast<Real>(weight[e]);
    if (order) order[pos] = static_cast<std::int64_t>(e);
  }
  for (std::size_t k = ng; k > 0; --k) h_off(k) = h_off(k - 1);
  h_off(0) = 0;
  // each group's edges in target order (stable: equal targets keep the read order), so that a range of targets
  // is a contiguous range of the group (the target blocks of the host spike adjoint, target_blocks.hpp)
  {
    std::vector<std::size_t> idx;
    std::vector<std::int32_t> ln;
    std::vector<Real> wt;
    std::vector<std::int64_t> fo;
    auto target = [&](std::int32_t line) { return static_cast<std::int64_t>(line) % n_targets; };
    for (std::size_t k = 0; k < ng; ++k) {
      const std::int64_t a = h_off(k), b = h_off(k + 1);
      bool sorted = true;
      for (std::int64_t q = a + 1; q < b && sorted; ++q) sorted = target(h_line(q - 1)) <= target(h_line(q));
      if (sorted) continue;
      const auto n = static_cast<std::size_t>(b - a);
      idx.resize(n);
      for (std::size_t q = 0; q < n; ++q) idx[q] = q;
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
        return target(h_line(a + static_cast<std::int64_t>(x))) < target(h_line(a + static_cast<std::int64_t>(y)));
      });
      ln.resize(n);
      wt.resize(n);
      fo.resize(n);
      for (std::size_t q = 0; q < n; ++q) {
        const std::int64_t src = a + static_cast<std::int64_t>(idx[q]);
        ln[q] = h_line(src);
        wt[q] = h_w(src);
        if (order) fo[q] = order[src];
      }
      for (std::size_t q = 0; q < n; ++q) {
        h_line(a + static_cast<std::int64_t>(q)) = ln[q];
        h_w(a + static_cast<std::int64_t>(q)) = wt[q];
        if (order) order[static_cast<std::size_t>(a) + q] = fo[q];
      }
    }
  }
  // rows_unique: the last group that added to each row, a repeat within a group is a duplicate row
  {
    std::vector<std::int64_t> last(static_cast<std::size_t>(max_channel + 1) * static_cast<std::size_t>(n_targets), -1);
    g.rows_unique = true;
    for (std::size_t k = 0; k < ng && g.rows_unique; ++k)
      for (std::int64_t q = h_off(k); q < h_off(k + 1); ++q) {
        std::int64_t& l = last[static_cast<std::size_t>(h_line(q))];
        if (l == static_cast<std::int64_t>(k)) {
          g.rows_unique = false;
          break;
        }
        l = static_cast<std::int64_t>(k);
      }
  }
  // the delays with edges: groups are delay-major, so a delay's groups are offsets [(d - 1) n_sources, d n_sources)
  g.d_lo = D + 1;
  g.d_hi = 0;
  for (int d = 1; d <= D; ++d)
    if (h_off(static_cast<std::size_t>(d) * static_cast<std::size_t>(p.n_sources)) >
        h_off(static_cast<std::size_t>(d - 1) * static_cast<std::size_t>(p.n_sources))) {
      g.d_lo = std::min(g.d_lo, d);
      g.d_hi = d;
    }
  Kokkos::deep_copy(space, g.offsets, h_off);
  Kokkos::deep_copy(space, g.line, h_line);
  Kokkos::deep_copy(space, g.weight, h_w);
  if (with_active_list) {
    if (ng >= static_cast<std::size_t>(INT32_MAX))
      throw std::runtime_error(label + ": " + std::to_string(ng) +
                               " (source, delay) groups exceed the 32-bit active list");
    g.active = Kokkos::View<std::int32_t*, MemSpace>(view_alloc(space, label + ".active_groups"), ng + 1);
  }
  space.fence();
  return g;
}

// The same on a default instance of the memory space's execution space (tests, tools).
template <class Real, class MemSpace>
GroupedEdges<Real, MemSpace> group_edges(const Projection& p, const std::vector<double>& weight, int D,
                                         std::int64_t n_targets, const std::string& label,
                                         std::vector<std::int64_t>& file_order, bool with_active_list) {
  return group_edges<Real, MemSpace>(typename MemSpace::execution_space(), p, weight, D, n_targets, label, &file_order,
                                     with_active_list);
}

}  // namespace dpointnet::device
