// Event-driven synaptic propagation (docs/model.md, step 1): for every source that was active d steps ago, add
// its edges of delay d into the drive u. Work is (sources x delays) checks plus (active sources x fan-out)
// additions, not all edges.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "device/edge_layout.hpp"
#include "device/fixed_point.hpp"
#include "util/kokkos_compat.hpp"

namespace dpointnet::device {

// Activity = spikes (uint8) for the recurrent projection or counts (uint16) for inputs. ring: [D][B][n_src].
// Two shapes of the same sums (integer sums: the result does not depend on the order): devices run one work
// item per (b, j, d) with atomic adds; hosts run one work item per sample, which owns its u(b, ...) and adds
// without atomics.
template <class Real, class ExecSpace, class Activity>
struct PropagateFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  struct PerSample {};
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
    const Activity a = ring(static_cast<int>(src_step % D), b, j);
    if (a == 0) return;
    const double fa = static_cast<double>(a);
    const std::int64_t g = j * D + dm1;
    for (std::int64_t k = e.offsets(g); k < e.offsets(g + 1); ++k)
      Kokkos::atomic_add(&u(b, e.channel(k), e.target(k)), to_fixed(static_cast<double>(e.weight(k)) * fa));
  }

  // Sample b: every active (j, d) of this sample.
  KOKKOS_INLINE_FUNCTION void operator()(PerSample, const int b) const {
    for (int dm1 = 0; dm1 < D; ++dm1) {
      const std::int64_t src_step = t - (dm1 + 1);
      if (src_step < 0) continue;
      const int slot = static_cast<int>(src_step % D);
      for (std::int64_t j = 0; j < e.n_sources; ++j) {
        const Activity a = ring(slot, b, j);
        if (a == 0) continue;
        const double fa = static_cast<double>(a);
        const std::int64_t g = j * D + dm1;
        for (std::int64_t k = e.offsets(g); k < e.offsets(g + 1); ++k)
          u(b, e.channel(k), e.target(k)) += to_fixed(static_cast<double>(e.weight(k)) * fa);
      }
    }
  }
};

// Launches the propagation of one projection for step t in the shape that suits the space.
template <class Real, class ExecSpace, class Activity>
void propagate(const ExecSpace& space, const char* label, const PropagateFunctor<Real, ExecSpace, Activity>& f, int B) {
  using F = PropagateFunctor<Real, ExecSpace, Activity>;
  if constexpr (compat::host_memory<typename ExecSpace::memory_space>) {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, typename F::PerSample>(space, 0, B), f);
  } else {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, std::int64_t(B) * f.e.n_sources * f.D), f);
  }
}

}  // namespace dpointnet::device
