// A software prefetch hint for the host shapes of the event-driven kernels (no-op in device code and on compilers
// without the builtin).
#pragma once
#include <Kokkos_Core.hpp>

namespace dpointnet::compat {

KOKKOS_FORCEINLINE_FUNCTION void prefetch(const void* p) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
  (void)p;
#elif defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 0, 3);
#else
  (void)p;
#endif
}

// The same for a location about to be written.
KOKKOS_FORCEINLINE_FUNCTION void prefetch_write(const void* p) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
  (void)p;
#elif defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 1, 3);
#else
  (void)p;
#endif
}

}  // namespace dpointnet::compat
