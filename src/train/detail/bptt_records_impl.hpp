// The segment records of the reverse sweep (samples fastest): the activity of the D steps before a segment,
// and v, r, spikes and inputs of each of its steps, written while the segment runs (the forward pass's last
// segment, or a recompute).
#pragma once
#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/train/bptt_engine.hpp"

namespace dpointnet {

namespace detail {
// dst(dst_slot) = src(src_slot) transposed to samples fastest, or zero.
template <class ExecSpace, class Src, class Dst>
void to_samples_fastest(const ExecSpace& space, const Src& src, int src_slot, const Dst& dst, int dst_slot, bool zero,
                        device::KernelShape shape) {
  using T = typename Dst::non_const_value_type;
  const int B = static_cast<int>(dst.extent(2));
  const std::int64_t n = static_cast<std::int64_t>(dst.extent(1));
  using F = device::ToSamplesFastest<T, ExecSpace>;
  const F f{src, dst, src_slot, dst_slot, B, zero};
  if constexpr (compat::host_execution<ExecSpace>) {
    if (device::host_shape<ExecSpace>(shape)) {
      Kokkos::parallel_for(
          "dpointnet::record_samples_fastest",
          Kokkos::RangePolicy<ExecSpace, typename F::HostTile>(space, 0, (n + F::kTile - 1) / F::kTile), f);
      return;
    }
  }
  Kokkos::parallel_for("dpointnet::record_samples_fastest", Kokkos::RangePolicy<ExecSpace>(space, 0, n * B), f);
}
// A [B][n] view as a one-slot [1][B][n] view of the same memory.
template <class V>
auto as_one_slot(const V& v) {
  using T = typename V::value_type;
  return Kokkos::View<const T***, Kokkos::LayoutRight, typename V::memory_space, Kokkos::MemoryUnmanaged>(
      v.data(), 1, v.extent(0), v.extent(1));
}
}  // namespace detail

// The activity of the D steps before the segment, from the snapshot's rings.
template <class Real, class ExecSpace>
void BpttEngine<Real, ExecSpace>::record_history(const Snapshot& snap, std::int64_t t0) {
  const int D = D_;
  for (int m = 0; m < D; ++m) {
    const std::int64_t s = t0 - D + m;  // >= -D; steps before -snap.history are empty (from rest)
    const bool empty = s < -snap.history;
    const int slot = empty ? 0 : static_cast<int>((s + D) % D);
    detail::to_samples_fastest(space_, snap.z_ring, slot, rec_.z, m, empty, shape_);
    for (std::size_t k = 0; k < x_ext_.size(); ++k)
      detail::to_samples_fastest(space_, snap.input_rings[k], slot, x_ext_[k], m, empty, shape_);
  }
}

// Step t of the recompute: v, r, spikes and inputs into the segment record.
template <class Real, class ExecSpace>
void BpttEngine<Real, ExecSpace>::record_step(std::int64_t t, std::int64_t t0, int slot) {
  const int k = static_cast<int>(t - t0);
  detail::to_samples_fastest(space_, detail::as_one_slot(sim_.training_v()), 0, rec_.v, k, false, shape_);
  detail::to_samples_fastest(space_, detail::as_one_slot(sim_.training_r()), 0, rec_.r, k, false, shape_);
  detail::to_samples_fastest(space_, sim_.z_ring(), slot, rec_.z, D_ + k, false, shape_);
  for (std::size_t q = 0; q < x_ext_.size(); ++q)
    detail::to_samples_fastest(space_, sim_.input_ring(static_cast<int>(q)), slot, x_ext_[q], D_ + k, false, shape_);
}

}  // namespace dpointnet
