// The drive adjoint ring gu in 16 bits (run.precision "bfloat16" or "float16", docs/training-update.md "Storage
// types"). The neuron adjoint of reverse step t writes gu_t in float32 into a one-slot buffer [1][R][N][B];
// narrow_ring_slot rounds it (to nearest, ties to even) into slot t mod D of the 16-bit ring [D][R][N][B] that the
// spike adjoint and the weight gradients gather for the next D reverse steps, widening each value exactly to float32
// before the same float32 arithmetic (spike_adjoint.hpp, weight_grad.hpp): a gathered row is half the bytes.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <stdexcept>

#include "dpointnet/util/half_precision.hpp"

namespace dpointnet::device {

// The storage of the drive adjoint ring: the adjoint's arithmetic type, or 16 bits (float32 arithmetic only).
enum class RingStorage { Native, BFloat16, Float16 };

template <class Ring, class ExecSpace>
struct NarrowRingSlotFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged> src;  // [R * N * B]
  Kokkos::View<Ring*, MemSpace, Kokkos::MemoryUnmanaged> dst;         // the ring's slot, [R * N * B]
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const { dst(k) = narrow<Ring>(src(k)); }
};

// ring(slot, ...) = the 16-bit value of one_slot(0, ...).
template <class Ring, class ExecSpace>
void narrow_ring_slot(const ExecSpace& space,
                      const Kokkos::View<float****, Kokkos::LayoutRight, typename ExecSpace::memory_space>& one_slot,
                      const Kokkos::View<Ring****, Kokkos::LayoutRight, typename ExecSpace::memory_space>& ring,
                      const int slot) {
  using MemSpace = typename ExecSpace::memory_space;
  const std::int64_t n = static_cast<std::int64_t>(ring.extent(1) * ring.extent(2) * ring.extent(3));
  if (one_slot.extent(0) != 1 || static_cast<std::int64_t>(one_slot.span()) != n)
    throw std::logic_error("narrow_ring_slot: the float32 buffer must be one slot of the ring's shape");
  if (n == 0) return;
  NarrowRingSlotFunctor<Ring, ExecSpace> f{
      Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(one_slot.data(), n),
      Kokkos::View<Ring*, MemSpace, Kokkos::MemoryUnmanaged>(ring.data() + static_cast<std::int64_t>(slot) * n, n)};
  Kokkos::parallel_for("dpointnet::backward_narrow_gu", Kokkos::RangePolicy<ExecSpace>(space, 0, n), f);
}

}  // namespace dpointnet::device
