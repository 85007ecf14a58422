// Event-driven synaptic propagation (docs/model.md, step 1): for every source that was active d steps ago, add
// its edges of delay d into the drive u. Work is (sources x delays) checks plus (active sources x fan-out)
// additions, not all edges.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "device/edge_layout.hpp"
#include "device/fixed_point.hpp"

namespace dpointnet::device {

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

}  // namespace dpointnet::device
