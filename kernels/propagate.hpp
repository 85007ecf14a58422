// Event-driven synaptic propagation (MODEL.md section 4, step 1): for every source that was active d steps
// ago, add its edges of delay d into the drive u. Edges are grouped by (source, delay), so the work is
// proportional to (sources x delays) checks plus (active sources x fan-out) additions, not to all edges.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

namespace dpointnet::kernels {

// The synaptic drive is accumulated in fixed point (units of 2^-36, int64), so the sum of a step's events does
// not depend on the order in which threads add them: runs are bitwise reproducible for any thread count, and a
// recomputed segment (time checkpointing) reproduces the forward pass exactly. Range +-2^27 in normalized
// units (threshold gaps), resolution 1.5e-11.
inline constexpr double kDriveScale = 68719476736.0;  // 2^36

KOKKOS_INLINE_FUNCTION std::int64_t to_fixed(double x) {
  const double s = x * kDriveScale;
  return static_cast<std::int64_t>(s >= 0 ? s + 0.5 : s - 0.5);
}
KOKKOS_INLINE_FUNCTION double from_fixed(std::int64_t q) { return static_cast<double>(q) * (1.0 / kDriveScale); }

template <class Real, class MemSpace>
struct GroupedEdges {
  Kokkos::View<std::int64_t*, MemSpace> offsets;  // [n_sources * D + 1], group (j, d) = j * D + (d - 1)
  Kokkos::View<std::int32_t*, MemSpace> target;   // global neuron index
  Kokkos::View<std::uint8_t*, MemSpace> channel;
  Kokkos::View<Real*, MemSpace> weight;              // normalized weight
  Kokkos::View<std::int64_t*, MemSpace> file_index;  // position of the edge in the projection's read order
  Kokkos::View<std::int32_t*, MemSpace> source;      // per grouped edge
  Kokkos::View<std::uint16_t*, MemSpace> delay;      // per grouped edge, steps
  // Target-major view of the same edges (for the backward pass): edges of target i are
  // by_target(target_offsets(i)) .. by_target(target_offsets(i + 1) - 1), indices into the arrays above.
  Kokkos::View<std::int64_t*, MemSpace> target_offsets;  // [n_targets + 1]
  Kokkos::View<std::int64_t*, MemSpace> by_target;
  std::int64_t n_sources = 0;
};

// Activity = spikes (uint8) for the recurrent projection or counts (uint16) for inputs. ring: [D][B][n_src]
template <class Real, class ExecSpace, class Activity>
struct PropagateFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  GroupedEdges<Real, MemSpace> e;
  Kokkos::View<Activity***, Kokkos::LayoutRight, MemSpace> ring;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u;  // fixed-point drive [B][R][N]
  std::int64_t t;                                                  // current step
  int D;

  // idx runs over (b, j, d-1) with d fastest.
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int dm1 = static_cast<int>(idx % D);
    const std::int64_t rest = idx / D;
    const std::int64_t j = rest % e.n_sources;
    const int b = static_cast<int>(rest / e.n_sources);
    const std::int64_t src_step = t - (dm1 + 1);
    if (src_step < 0) return;
    const int slot = static_cast<int>(src_step % D);
    const Activity a = ring(slot, b, j);
    if (a == 0) return;
    const double fa = static_cast<double>(a);
    const std::int64_t g = j * D + dm1;
    for (std::int64_t k = e.offsets(g); k < e.offsets(g + 1); ++k)
      Kokkos::atomic_add(&u(b, e.channel(k), e.target(k)), to_fixed(static_cast<double>(e.weight(k)) * fa));
  }
};

// The same drive computed target-major, without atomics: every (b, i) sums its own in-edges. Costs all edges
// per step (used by tests as an independent check of the scatter, and by the backward pass's transposes).
template <class Real, class ExecSpace, class Activity>
struct GatherDriveFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  GroupedEdges<Real, MemSpace> e;
  Kokkos::View<Activity***, Kokkos::LayoutRight, MemSpace> ring;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u;  // fixed-point [B][R][N], accumulated into
  std::int64_t t;
  int D;
  std::int64_t n_targets;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const std::int64_t i = idx % n_targets;
    const int b = static_cast<int>(idx / n_targets);
    for (std::int64_t q = e.target_offsets(i); q < e.target_offsets(i + 1); ++q) {
      const std::int64_t k = e.by_target(q);
      const std::int64_t s = t - e.delay(k);
      if (s < 0) continue;
      const Activity a = ring(static_cast<int>(s % D), b, e.source(k));
      if (a) u(b, e.channel(k), i) += to_fixed(static_cast<double>(e.weight(k)) * static_cast<double>(a));
    }
  }
};

}  // namespace dpointnet::kernels
