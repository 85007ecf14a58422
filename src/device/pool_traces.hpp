// Spike sums of neuron pools (the synchronization loss, docs/training.md): pool k of a micro-batch sums sample
// b(k)'s spikes of its member neurons at every step of a window; the reverse sweep adds each pool's gradient of
// that step to dL/dz of its members. The gradient is a gather over the (neuron, sample) slots that belong to pools,
// each summing its pools in a fixed order (no atomics: the same sums on every backend and run).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

namespace dpointnet::device {

template <class MemSpace>
struct PoolSet {
  Kokkos::View<std::int32_t*, MemSpace> sample;       // [P] the micro-batch sample of pool k
  Kokkos::View<std::int64_t*, MemSpace> offsets;      // [P + 1] into members
  Kokkos::View<std::int32_t*, MemSpace> members;      // neuron indices of the pools
  Kokkos::View<std::int32_t*, MemSpace> slot_neuron;  // [S] the (neuron, sample) slots in any pool
  Kokkos::View<std::int32_t*, MemSpace> slot_sample;
  Kokkos::View<std::int64_t*, MemSpace> slot_offsets;       // [S + 1] into slot_pools
  Kokkos::View<std::int32_t*, MemSpace> slot_pools;         // the pools of each slot, ascending
  std::int64_t t_begin = 0, t_end = 0;                      // the window, steps of the BPTT window
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> y;  // [t_end - t_begin][P] spike sums (forward)
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> g;  // [t_end - t_begin][P] dL/dy (backward)
  bool on() const { return sample.extent(0) > 0; }
  bool covers(std::int64_t w) const { return on() && w >= t_begin && w < t_end; }
};

// y(row, k) = sum over the members n of pool k of z(slot, b(k), n).
template <class ExecSpace>
struct PoolSumFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  PoolSet<MemSpace> p;
  Kokkos::View<const std::uint8_t***, Kokkos::LayoutRight, MemSpace> ring;
  int slot;
  std::int64_t row;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    double s = 0;
    const int b = p.sample(k);
    for (std::int64_t q = p.offsets(k); q < p.offsets(k + 1); ++q) s += ring(slot, b, p.members(q));
    p.y(row, k) = s;
  }
};

// gz(n, b) += sum over the pools of slot (n, b) of g(row, pool).
template <class Acc, class ExecSpace>
struct PoolGradFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  PoolSet<MemSpace> p;
  Kokkos::View<Acc**, Kokkos::LayoutRight, MemSpace> gz;  // [N][B]
  std::int64_t row;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t s) const {
    double acc = 0;
    for (std::int64_t q = p.slot_offsets(s); q < p.slot_offsets(s + 1); ++q) acc += p.g(row, p.slot_pools(q));
    gz(p.slot_neuron(s), p.slot_sample(s)) += static_cast<Acc>(acc);
  }
};

template <class ExecSpace>
void pool_sums(const ExecSpace& space, const PoolSumFunctor<ExecSpace>& f) {
  Kokkos::parallel_for("dpointnet::pool_sums",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(f.p.sample.extent(0))), f);
}

template <class Acc, class ExecSpace>
void pool_gradient(const ExecSpace& space, const PoolGradFunctor<Acc, ExecSpace>& f) {
  Kokkos::parallel_for("dpointnet::pool_gradient",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(f.p.slot_neuron.extent(0))),
                       f);
}

}  // namespace dpointnet::device
