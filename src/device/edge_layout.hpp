// Edges on the device, grouped by (source, delay) for the event-driven kernels. Only what the kernels read
// lives on the device; the permutation back to the projection's read order stays on the host (export,
// checkpoints).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "network/network.hpp"

namespace dpointnet::device {

template <class Real, class MemSpace>
struct GroupedEdges {
  Kokkos::View<std::int64_t*, MemSpace> offsets;  // [n_sources * D + 1], group (j, d) = j * D + (d - 1)
  Kokkos::View<std::int32_t*, MemSpace> target;   // global neuron index
  Kokkos::View<std::uint8_t*, MemSpace> channel;
  Kokkos::View<Real*, MemSpace> weight;  // normalized weight: the only copy of the live weights
  std::int64_t n_sources = 0;
};

// Groups a projection's edges by (source, delay) with the given normalized weights (read order). On return
// file_order[k] is the read-order index of grouped edge k.
template <class Real, class MemSpace>
GroupedEdges<Real, MemSpace> group_edges(const Projection& p, const std::vector<double>& weight, int D,
                                         const std::string& label, std::vector<std::int64_t>& file_order) {
  GroupedEdges<Real, MemSpace> g;
  g.n_sources = p.n_sources;
  const std::size_t ne = p.size();
  const std::size_t ng = static_cast<std::size_t>(p.n_sources) * static_cast<std::size_t>(D);
  auto key_of = [&](std::size_t e) {
    return static_cast<std::size_t>(p.source[e]) * static_cast<std::size_t>(D) +
           static_cast<std::size_t>(p.delay_steps[e] - 1);
  };
  auto h_off = Kokkos::View<std::int64_t*, Kokkos::HostSpace>(label + ".offsets_host", ng + 1);
  for (std::size_t e = 0; e < ne; ++e) h_off(key_of(e) + 1)++;
  for (std::size_t k = 0; k < ng; ++k) h_off(k + 1) += h_off(k);
  auto h_tgt = Kokkos::View<std::int32_t*, Kokkos::HostSpace>(label + ".target_host", ne);
  auto h_ch = Kokkos::View<std::uint8_t*, Kokkos::HostSpace>(label + ".channel_host", ne);
  auto h_w = Kokkos::View<Real*, Kokkos::HostSpace>(label + ".weight_host", ne);
  file_order.assign(ne, 0);
  std::vector<std::int64_t> fill(ng, 0);
  for (std::size_t e = 0; e < ne; ++e) {
    const std::size_t key = key_of(e);
    const auto pos = static_cast<std::size_t>(h_off(key) + fill[key]++);
    h_tgt(pos) = static_cast<std::int32_t>(p.target[e]);
    h_ch(pos) = static_cast<std::uint8_t>(p.channel[e]);
    h_w(pos) = static_cast<Real>(weight[e]);
    file_order[pos] = static_cast<std::int64_t>(e);
  }
  g.offsets = Kokkos::View<std::int64_t*, MemSpace>(label + ".offsets", ng + 1);
  g.target = Kokkos::View<std::int32_t*, MemSpace>(label + ".target", ne);
  g.channel = Kokkos::View<std::uint8_t*, MemSpace>(label + ".channel", ne);
  g.weight = Kokkos::View<Real*, MemSpace>(label + ".weight", ne);
  Kokkos::deep_copy(g.offsets, h_off);
  Kokkos::deep_copy(g.target, h_tgt);
  Kokkos::deep_copy(g.channel, h_ch);
  Kokkos::deep_copy(g.weight, h_w);
  return g;
}

}  // namespace dpointnet::device
