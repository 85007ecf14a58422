// The drive adjoint ring gu in 16 bits (run.precision "bfloat16" or "float16", docs/training-update.md "Storage
// types"). The neuron adjoint of reverse step t writes gu_t in float32 into a one-slot buffer [1][R][N][B];
// narrow_ring_slot rounds it (to nearest, ties to even) into slot t mod D of the 16-bit ring [D][R][N][B] that the
// spike adjoint and the weight gradients gather for the next D reverse steps, widening each value exactly to float32
// before the same float32 arithmetic (spike_adjoint.hpp, weight_grad.hpp): a gathered row is half the bytes.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#if (defined(__AVX512F__) || defined(__F16C__)) && !defined(__CUDACC__) && !defined(__HIPCC__)
#include <immintrin.h>
#endif

#include "dpointnet/util/half_precision.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// The storage of the drive adjoint ring: the adjoint's arithmetic type, or 16 bits (float32 arithmetic only).
enum class RingStorage { Native, BFloat16, Float16 };

template <class Ring, class ExecSpace>
struct NarrowRingSlotFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged> src;  // [R * N * B]
  Kokkos::View<Ring*, MemSpace, Kokkos::MemoryUnmanaged> dst;         // the ring's slot, [R * N * B]
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const { dst(k) = narrow<Ring>(src(k)); }
  // Hosts: blocks of 16 values; float16 by the CPU's conversion (vcvtps2ph, round to nearest even: the values of
  // to_float16, a NaN of the same sign for a NaN), whose scalar emulation does not vectorize.
  static constexpr std::int64_t kBlock = 16;
  struct HostBlocks {};
  void operator()(HostBlocks, const std::int64_t blk) const {
    const std::int64_t n = static_cast<std::int64_t>(dst.extent(0));
    const std::int64_t k0 = blk * kBlock, k1 = k0 + kBlock < n ? k0 + kBlock : n;
#if defined(__AVX512F__) && !defined(__CUDACC__) && !defined(__HIPCC__)
    if constexpr (std::is_same_v<Ring, float16>) {
      if (k1 - k0 == kBlock) {
        const __m256i h =
            _mm512_cvtps_ph(_mm512_loadu_ps(src.data() + k0), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst.data() + k0), h);
        return;
      }
    }
#elif defined(__F16C__) && !defined(__CUDACC__) && !defined(__HIPCC__)
    if constexpr (std::is_same_v<Ring, float16>) {
      if (k1 - k0 == kBlock) {
        for (int q = 0; q < 2; ++q) {
          const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src.data() + k0 + 8 * q), _MM_FROUND_TO_NEAREST_INT);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dst.data() + k0 + 8 * q), h);
        }
        return;
      }
    }
#endif
    for (std::int64_t k = k0; k < k1; ++k) dst(k) = narrow<Ring>(src(k));
  }
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
  using F = NarrowRingSlotFunctor<Ring, ExecSpace>;
  F f{Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(one_slot.data(), n),
      Kokkos::View<Ring*, MemSpace, Kokkos::MemoryUnmanaged>(ring.data() + static_cast<std::int64_t>(slot) * n, n)};
  if constexpr (compat::host_execution<ExecSpace>) {
    Kokkos::parallel_for(
        "dpointnet::backward_narrow_gu",
        Kokkos::RangePolicy<ExecSpace, typename F::HostBlocks>(space, 0, (n + F::kBlock - 1) / F::kBlock), f);
  } else {
    Kokkos::parallel_for("dpointnet::backward_narrow_gu", Kokkos::RangePolicy<ExecSpace>(space, 0, n), f);
  }
}

}  // namespace dpointnet::device
