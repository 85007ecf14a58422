// DPOINTNET_HOST_SIMD: marks the loop of a host-shape kernel to vectorize (an OpenMP simd construct: its iterations
// are independent): the sample-lane loop of the spike adjoint (without it GCC vectorized the enclosing edge loop
// as a chain of in-order reductions, one lane at a time, 5.5x slower), a group's scatter into a drive row whose
// rows are distinct (propagate.hpp), the uniforms of the random inputs (inputs.hpp). Empty in device code and
// without OpenMP.
#pragma once

#if defined(_OPENMP) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define DPOINTNET_HOST_SIMD _Pragma("omp simd")
#else
#define DPOINTNET_HOST_SIMD
#endif

#include <Kokkos_Core.hpp>
#include <cstring>

// HostLanes16<T>: 16 lanes of T as one GCC/Clang vector (one or two registers) on host compilers, so that a partial
// sum kept over a loop stays in registers and is loaded and stored as a vector (held as a plain array, GCC split it
// into 16 scalars with about 50 shuffles per load and store); a plain array elsewhere (device code, nvcc). The
// arithmetic is lane by lane, a product then a sum, each rounded: the same values either way.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define DPOINTNET_HOST_VECTOR_EXT 1
#else
#define DPOINTNET_HOST_VECTOR_EXT 0
#endif

namespace dpointnet::compat {

template <class T>
struct HostLanes16 {
#if DPOINTNET_HOST_VECTOR_EXT
  typedef T Vec __attribute__((vector_size(16 * sizeof(T))));
  Vec v;
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) { std::memcpy(&v, p, sizeof v); }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const { std::memcpy(p, &v, sizeof v); }
  // v += w * p[0..15]
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    Vec x;
    std::memcpy(&x, p, sizeof x);
    const Vec prod = w * x;
    v = v + prod;
  }
#else
  T v[16];
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) {
    for (int q = 0; q < 16; ++q) v[q] = p[q];
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const {
    for (int q = 0; q < 16; ++q) p[q] = v[q];
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    for (int q = 0; q < 16; ++q) v[q] += w * p[q];
  }
#endif
};

}  // namespace dpointnet::compat
