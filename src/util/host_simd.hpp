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

// HostLanes16<T>: 16 lanes of T as GCC/Clang vectors of the host's register width on host compilers, so that a
// partial sum kept over a loop stays in registers and is loaded and stored as vectors; a plain array elsewhere
// (device code, nvcc). The arithmetic is lane by lane, a product then a sum, each rounded: the same values either
// way. Why the register width: held as a plain array, GCC split it into 16 scalars with about 50 shuffles per load
// and store; held as one 16-lane vector wider than a register (64 bytes of float without AVX-512, 128 of double),
// GCC kept it on the stack and moved it through 8-byte pieces at every edge (store-forwarding stalls: a gather loop
// ran 8x slower on an AVX2 machine, docs/performance-host-isa.md). So it is a chain of K vectors of
// kHostVectorBytes each, one named member per link: each stays a register.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define DPOINTNET_HOST_VECTOR_EXT 1
#else
#define DPOINTNET_HOST_VECTOR_EXT 0
#endif

namespace dpointnet::compat {

#if DPOINTNET_HOST_VECTOR_EXT
#if defined(__AVX512F__)
inline constexpr int kHostVectorBytes = 64;
#elif defined(__AVX__)
inline constexpr int kHostVectorBytes = 32;
#else
inline constexpr int kHostVectorBytes = 16;
#endif
namespace impl {
// K vectors of Bytes bytes of T, lanes in order: link 0 holds the first Bytes / sizeof(T) lanes. The arithmetic is
// that of one link (K = 1); a longer chain is a link and the rest. (The vector type is declared in the link from
// Bytes: passed as a template argument, GCC 12 drops its vector_size and makes it a scalar.)
template <class T, int Bytes, int K>
struct LaneChain {
  static constexpr int kLanes = Bytes / static_cast<int>(sizeof(T));
  LaneChain<T, Bytes, 1> head;
  LaneChain<T, Bytes, K - 1> rest;
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) {
    head.load(p);
    rest.load(p + kLanes);
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const {
    head.store(p);
    rest.store(p + kLanes);
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    head.add_product(w, p);
    rest.add_product(w, p + kLanes);
  }
};
template <class T, int Bytes>
struct LaneChain<T, Bytes, 1> {
  typedef T V __attribute__((vector_size(Bytes)));
  V v;
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) { std::memcpy(&v, p, sizeof v); }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const { std::memcpy(p, &v, sizeof v); }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    V x;
    std::memcpy(&x, p, sizeof x);
    const V prod = w * x;
    v = v + prod;
  }
};
// One piece of a partial lane block (HostLanes below): Lanes (a power of two) lanes of T in one vector, or a scalar.
template <class T, int Lanes>
struct LanePiece {
  typedef T V __attribute__((vector_size(Lanes * sizeof(T))));
  V v;
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) { std::memcpy(&v, p, sizeof v); }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const { std::memcpy(p, &v, sizeof v); }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    V x;
    std::memcpy(&x, p, sizeof x);
    const V prod = w * x;
    v = v + prod;
  }
};
template <class T>
struct LanePiece<T, 1> {
  T v;
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) { v = *p; }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const { *p = v; }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    const T prod = w * *p;
    v = v + prod;
  }
};
// the largest power of two <= n and <= max
constexpr int largest_piece(const int n, const int max) {
  int p = 1;
  while (2 * p <= n && 2 * p <= max) p *= 2;
  return p;
}
// N lanes as pieces of power-of-two lanes, each at most a register wide, largest first (15 floats with AVX2:
// 8 + 4 + 2 + 1).
template <class T, int N>
struct LanePieces {
  static constexpr int kHead = largest_piece(N, kHostVectorBytes / static_cast<int>(sizeof(T)));
  LanePiece<T, kHead> head;
  LanePieces<T, N - kHead> rest;
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) {
    head.load(p);
    rest.load(p + kHead);
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const {
    head.store(p);
    rest.store(p + kHead);
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    head.add_product(w, p);
    rest.add_product(w, p + kHead);
  }
};
template <class T>
struct LanePieces<T, 0> {
  KOKKOS_FORCEINLINE_FUNCTION void load(const T*) {}
  KOKKOS_FORCEINLINE_FUNCTION void store(T*) const {}
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T, const T*) {}
};
}  // namespace impl
#endif

// HostLanes<T, N>: N (1..16) lanes of T kept in registers, the partial sums of a partial lane block (a batch of
// fewer than 16 samples, or the last B mod 16 samples): pieces of power-of-two lanes, each at most a register wide.
// The same arithmetic as HostLanes16, a product then a sum, each rounded. Session 17: with these sums in memory
// instead (a load, an add and a store per edge and sample) the reverse sweep at B = 4 cost as much as at B = 16.
template <class T, int N>
struct HostLanes {
  static_assert(N >= 1 && N <= 16, "1 to 16 lanes");
#if DPOINTNET_HOST_VECTOR_EXT
  impl::LanePieces<T, N> v;
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) { v.load(p); }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const { v.store(p); }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) { v.add_product(w, p); }
#else
  T v[N];
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) {
    for (int q = 0; q < N; ++q) v[q] = p[q];
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const {
    for (int q = 0; q < N; ++q) p[q] = v[q];
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    for (int q = 0; q < N; ++q) v[q] += w * p[q];
  }
#endif
};

template <class T>
struct HostLanes16 {
#if DPOINTNET_HOST_VECTOR_EXT
  static constexpr int kBytes = 16 * static_cast<int>(sizeof(T));
  static constexpr int kLinkBytes = kBytes < kHostVectorBytes ? kBytes : kHostVectorBytes;
  static constexpr int kLinks = kBytes / kLinkBytes;
  static_assert(kLinks * kLinkBytes == kBytes, "16 lanes in whole vectors");
  impl::LaneChain<T, kLinkBytes, kLinks> v;
  static_assert(sizeof(v) == static_cast<std::size_t>(kBytes), "vectors of the declared size, without padding");
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) { v.load(p); }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const { v.store(p); }
  // v += w * p[0..15]
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) { v.add_product(w, p); }
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
