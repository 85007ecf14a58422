// Software prefetch hints for the host shapes of the event-driven kernels (no-ops in device code and on compilers
// without the builtin).
#pragma once
#include <Kokkos_Core.hpp>

namespace dpointnet::compat {

namespace detail {
// Write: 0 for a location about to be read, 1 for one about to be written (the builtin wants a constant).
template <int Write>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_hint(const void* p) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
  (void)p;
#elif defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, Write, 3);
#else
  (void)p;
#endif
}
}  // namespace detail

KOKKOS_FORCEINLINE_FUNCTION void prefetch(const void* p) { detail::prefetch_hint<0>(p); }
KOKKOS_FORCEINLINE_FUNCTION void prefetch_write(const void* p) { detail::prefetch_hint<1>(p); }

}  // namespace dpointnet::compat
