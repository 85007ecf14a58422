// Synaptic events (edge additions) of one step, counted when the simulator is asked to (benchmarks).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/edge_layout.hpp"

namespace dpointnet {

namespace detail {
template <class ExecSpace, class Activity, class Ring>
double count_events(const ExecSpace& space, const Ring& ring,
                    const Kokkos::View<std::int64_t*, typename ExecSpace::memory_space>& offsets, std::int64_t t, int D,
                    int B, std::int64_t n_src, std::int64_t s_min) {
  double total = 0;
  Kokkos::parallel_reduce(
      "dpointnet::count_events", Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(B) * n_src * D),
      KOKKOS_LAMBDA(const std::int64_t idx, double& acc) {
        const int dm1 = static_cast<int>(idx % D);
        const std::int64_t rest = idx / D;
        const std::int64_t j = rest % n_src;
        const int b = static_cast<int>(rest / n_src);
        const std::int64_t s = t - (dm1 + 1);
        if (s < s_min) return;
        const Activity a = ring(static_cast<int>((s + D) % D), b, j);
        const std::int64_t g = device::group_index(j, dm1 + 1, n_src);
        if (a) acc += double(a > 0) * double(offsets(g + 1) - offsets(g));
      },
      total);
  return total;
}
}  // namespace detail

}  // namespace dpointnet
