// The recurrent edges in target blocks, for the host spike adjoint when one slot of the adjoint ring gu is much
// larger than a core's cache (bench/README.md). A pass of the spike adjoint over one delay then walks the target blocks
// in turn and, in each, the thread's sources: the gathers of a block come from its rows of gu only (R x block_targets x
// B values). Each (source, delay) group's edges are in target order (group_edges), so the segments of a group over the
// blocks are its edges in their order: the sums are those of the unblocked pass, bitwise.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "dpointnet/device/edge_layout.hpp"

namespace dpointnet::device {

// How many target blocks pays depends on the machine (its caches), not only on the sizes (bench/README.md): blocks
// that pay on a machine with a large L2 per core can be slower than none on one with a small L2 and a large L3. So
// the trainer times the candidates below on its own edges before the first update (target_block_calibration.hpp),
// unless train.target_blocks fixes the count.
inline constexpr int kMinSegmentEdges = 8;  // a candidate's (source, delay, block) segments hold this many on average

// The counts the calibration times: 1 (unblocked), and 2, 4, 8 while their segments keep kMinSegmentEdges edges on
// average (E edges from n_sources sources over D delays); 1 only when a slot of gu (slot_bytes) fits in
// cache_bytes (a core's L2; 0: unknown), where a block could not be closer to the core than the whole slot.
inline std::vector<int> target_block_candidates(std::int64_t n_edges, std::int64_t n_sources, int D, double slot_bytes,
                                                double cache_bytes) {
  std::vector<int> c{1};
  if (cache_bytes > 0 && slot_bytes <= cache_bytes) return c;
  for (int k = 2; k <= 8; k *= 2)
    if (static_cast<double>(n_edges) >= static_cast<double>(kMinSegmentEdges) * n_sources * D * k) c.push_back(k);
  return c;
}

// Targets per block for n_blocks blocks of n_targets targets; 0 (no blocked copy) for one block.
inline std::int64_t block_targets_for(std::int64_t n_targets, int n_blocks) {
  return n_blocks <= 1 || n_targets <= 1 ? 0 : (n_targets + n_blocks - 1) / n_blocks;
}

template <class Real, class MemSpace>
struct TargetBlockedEdges {
  // [D n_blocks n_sources + 1]: segment s = section(d, blk) + j holds the edges of group (j, d) whose target is in
  // block blk, at seg(s) .. seg(s + 1) - 1 of line and weight
  Kokkos::View<std::int32_t*, MemSpace> seg;
  Kokkos::View<std::int32_t*, MemSpace> line;
  Kokkos::View<Real*, MemSpace> weight;  // a copy of GroupedEdges::weight (refresh_target_block_weights)
  // per-source scratch of the pass (each thread writes its own sources' range): the sources active at the
  // step, and their next grouped edge (the fused weight gradient's index)
  Kokkos::View<std::int32_t*, MemSpace> active;
  Kokkos::View<std::int64_t*, MemSpace> cursor;
  std::int64_t n_sources = 0;
  int n_blocks = 0;
  KOKKOS_INLINE_FUNCTION bool on() const { return n_blocks > 1; }
  KOKKOS_INLINE_FUNCTION std::int64_t section(const int d, const int blk) const {
    return (static_cast<std::int64_t>(d - 1) * n_blocks + blk) * n_sources;
  }
};

// The blocks of n_targets targets, block_targets per block; 0 when there is no blocked copy: no blocking asked
// (block_targets 0), no edges, or more edges than the 32-bit segment offsets address.
inline int target_block_count(std::int64_t n_targets, std::int64_t block_targets, std::int64_t n_edges) {
  if (block_targets <= 0 || n_edges <= 0 || n_edges >= INT32_MAX) return 0;
  return static_cast<int>((n_targets + block_targets - 1) / block_targets);
}

// The device bytes of the blocked copy of E edges from n_sources sources (seg, line, weight, scratch).
inline double target_block_bytes(std::int64_t n_edges, double n_sources, int D, std::int64_t n_targets,
                                 std::int64_t block_targets, double real_bytes) {
  const int blocks = target_block_count(n_targets, block_targets, n_edges);
  if (blocks <= 1) return 0;
  return (D * static_cast<double>(blocks) * n_sources + 1) * 4 + static_cast<double>(n_edges) * (4 + real_bytes) +
         n_sources * 12;
}

// Builds the blocked copy of e (targets 0 .. n_targets - 1, block_targets per block); empty (on() false) when
// target_block_count gives fewer than 2 blocks. The device views are allocated and written on the instance
// `space` (fenced on return); the counting and filling run on the host's threads.
template <class ExecSpace, class Real, class MemSpace,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
TargetBlockedEdges<Real, MemSpace> target_blocks(const ExecSpace& space, const GroupedEdges<Real, MemSpace>& e, int D,
                                                 std::int64_t n_targets, std::int64_t block_targets,
                                                 const std::string& label) {
  TargetBlockedEdges<Real, MemSpace> tb;
  const std::int64_t ne = static_cast<std::int64_t>(e.line.extent(0));
  tb.n_blocks = target_block_count(n_targets, block_targets, ne);
  if (!tb.on()) return tb;
  tb.n_sources = e.n_sources;
  auto off = compat::mirror_view_and_copy(space, e.offsets);
  auto ln = compat::mirror_view_and_copy(space, e.line);
  auto wt = compat::mirror_view_and_copy(space, e.weight);
  const std::int64_t n = e.n_sources, ns = static_cast<std::int64_t>(D) * tb.n_blocks * n;
  auto block_of = [=](std::int64_t k) {
    return static_cast<int>(static_cast<std::int64_t>(ln(k)) % n_targets / block_targets);
  };
  // written in place where the memory space is the host's (create_mirror_view: the view itself), so that a build
  // needs no second copy of the edges there; seg, line and weight are written whole (seg zeroed on the host)
  using Kokkos::view_alloc;
  using Kokkos::WithoutInitializing;
  tb.seg = Kokkos::View<std::int32_t*, MemSpace>(view_alloc(space, WithoutInitializing, label + ".seg"), ns + 1);
  tb.line = Kokkos::View<std::int32_t*, MemSpace>(view_alloc(space, WithoutInitializing, label + ".line"), ne);
  tb.weight = Kokkos::View<Real*, MemSpace>(view_alloc(space, WithoutInitializing, label + ".weight"), ne);
  // on the host's threads: each source's counts and segments are its own
  const Kokkos::DefaultHostExecutionSpace host;
  using HostRange = Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>;
  auto h_seg = Kokkos::create_mirror_view(tb.seg);
  Kokkos::deep_copy(host, h_seg, 0);
  Kokkos::parallel_for("dpointnet::target_blocks_count", HostRange(host, 0, n), [=](const std::int64_t j) {
    for (int d = 1; d <= D; ++d) {
      const std::int64_t g = e.group(j, d);
      for (std::int64_t k = off(g); k < off(g + 1); ++k) h_seg(tb.section(d, block_of(k)) + j + 1)++;
    }
  });
  host.fence();
  for (std::int64_t s = 0; s < ns; ++s) h_seg(s + 1) += h_seg(s);
  auto h_line = Kokkos::create_mirror_view(tb.line);
  auto h_w = Kokkos::create_mirror_view(tb.weight);
  // a group's edges are in target order, so each block's edges of the group are consecutive: its segment
  Kokkos::parallel_for("dpointnet::target_blocks_fill", HostRange(host, 0, n), [=](const std::int64_t j) {
    for (int d = 1; d <= D; ++d) {
      const std::int64_t g = e.group(j, d);
      int blk = -1;
      std::int64_t pos = 0;
      for (std::int64_t k = off(g); k < off(g + 1); ++k) {
        if (block_of(k) != blk) pos = h_seg(tb.section(d, blk = block_of(k)) + j);
        h_line(pos) = ln(k);
        h_w(pos++) = wt(k);
      }
    }
  });
  host.fence();
  tb.active = Kokkos::View<std::int32_t*, MemSpace>(view_alloc(space, label + ".active"), n);
  tb.cursor = Kokkos::View<std::int64_t*, MemSpace>(view_alloc(space, label + ".cursor"), n);
  Kokkos::deep_copy(space, tb.seg, h_seg);
  Kokkos::deep_copy(space, tb.line, h_line);
  Kokkos::deep_copy(space, tb.weight, h_w);
  space.fence();
  return tb;
}

// The same on a default instance of the memory space's execution space (tests).
template <class Real, class MemSpace>
TargetBlockedEdges<Real, MemSpace> target_blocks(const GroupedEdges<Real, MemSpace>& e, int D, std::int64_t n_targets,
                                                 std::int64_t block_targets, const std::string& label) {
  return target_blocks(typename MemSpace::execution_space(), e, D, n_targets, block_targets, label);
}

// Copies the live weights of e into the blocked order (once per update, before the reverse sweep).
template <class ExecSpace, class Real, class MemSpace>
void refresh_target_block_weights(const ExecSpace& space, const TargetBlockedEdges<Real, MemSpace>& tb,
                                  const GroupedEdges<Real, MemSpace>& e, int D) {
  if (!tb.on()) return;
  Kokkos::parallel_for(
      "dpointnet::target_block_weights", Kokkos::RangePolicy<ExecSpace>(space, 0, tb.n_sources),
      KOKKOS_LAMBDA(const std::int64_t j) {
        for (int d = 1; d <= D; ++d) {
          std::int64_t k = e.offsets(e.group(j, d));
          for (int blk = 0; blk < tb.n_blocks; ++blk) {
            const std::int64_t s = tb.section(d, blk) + j;
            for (std::int64_t q = tb.seg(s); q < tb.seg(s + 1); ++q) tb.weight(q) = e.weight(k++);
          }
        }
      });
}

}  // namespace dpointnet::device
