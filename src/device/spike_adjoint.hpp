// The spike adjoint of the reverse sweep (docs/model-gradients.md): dL/dz of every recurrent neuron and sample from
// the drive adjoints gu of the next D steps, through the recurrent edges. Part of adjoint.hpp's backward pass.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "device/adjoint.hpp"
#include "device/edge_layout.hpp"
#include "util/kokkos_compat.hpp"

namespace dpointnet::device {

// gz_t[j, b] = rate_grad[j, b] + rdamp * sum over recurrent edges e from j of w_e gu_{t + d_e}[c_e, post_e, b].
// Each thread owns sources; every edge is read once for all samples, which are summed in edge order (the same
// order on every backend). Devices: one vector lane per sample, the edge broadcast to the lanes. Hosts: the
// samples in register blocks of kHostLanes, so that the inner loop is a fixed-width vector loop.
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
  // Calls f(w, c, post, slot) for every edge from j whose delay step t + d is inside the sequence (a group's
  // edges in target order: the gathers of a group walk gu in address order).
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_edges(const std::int64_t j, F&& f) const {
    if (e.offsets.extent(0) == 0) return;
    for (int d = 1; d <= D; ++d) {
      if (t + d >= T) break;
      const int slot = static_cast<int>((t + d) % D);
      const std::int64_t g = j * D + (d - 1);
      for (std::int64_t k = e.offsets(g); k < e.offsets(g + 1); ++k)
        f(static_cast<Acc>(e.weight(k)), static_cast<int>(e.channel(k)), static_cast<int>(e.target(k)), slot);
    }
  }

  // Team r, thread k handles source r * team_size + k.
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const std::int64_t j = static_cast<std::int64_t>(m.league_rank()) * m.team_size() + m.team_rank();
    if (j >= n) return;
    if constexpr (kHost) {
      for (int b0 = 0; b0 < B; b0 += kHostLanes) {
        Acc acc[kHostLanes] = {};
        if (b0 + kHostLanes <= B) {
          for_edges(j, [&](const Acc w, const int c, const int post, const int slot) {
            const Acc* g = &a.gu(slot, c, post, b0);
            for (int q = 0; q < kHostLanes; ++q) acc[q] += w * g[q];
          });
        } else {
          const int nb = B - b0;
          for_edges(j, [&](const Acc w, const int c, const int post, const int slot) {
            const Acc* g = &a.gu(slot, c, post, b0);
            for (int q = 0; q < nb; ++q) acc[q] += w * g[q];
          });
        }
        for (int q = 0; q < kHostLanes && b0 + q < B; ++q) a.gz(j, b0 + q) = a.rate_grad(j, b0 + q) + rdamp * acc[q];
      }
    } else {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, B), [&](const int b) {
        Acc acc = 0;
        for_edges(j,
                  [&](const Acc w, const int c, const int post, const int slot) { acc += w * a.gu(slot, c, post, b); });
        a.gz(j, b) = a.rate_grad(j, b) + rdamp * acc;
      });
    }
  }
};

// Launches the spike adjoint of one reverse step.
template <class Real, class Acc, class ExecSpace>
void spike_adjoint(const ExecSpace& space, const SpikeAdjointFunctor<Real, Acc, ExecSpace>& f) {
  using Teams = compat::SampleTeams<ExecSpace>;
  Kokkos::parallel_for("dpointnet::backward_spike_adjoint", Teams::policy(space, f.n, f.B), f);
}

}  // namespace dpointnet::device
