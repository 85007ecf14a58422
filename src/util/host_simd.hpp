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
#include <cstdint>
#include <cstring>
#include <type_traits>
#if (defined(__AVX512F__) || defined(__AVX2__) || defined(__F16C__)) && !defined(__CUDACC__) && !defined(__HIPCC__)
#include <immintrin.h>
#endif

#include "dpointnet/util/half_precision.hpp"

// HostLanes<T, N>: N (1..16) lanes of T as GCC/Clang vectors of at most the host's register width on host compilers,
// so that a partial sum kept over a loop stays in registers and is loaded and stored as vectors; a plain array
// elsewhere (device code, nvcc). The arithmetic is lane by lane, a product then a sum, each rounded: the same values
// either way. HostLanes16 is the full block of 16 samples. Why the register width: held as a plain array, GCC splits
// 16 lanes into 16 scalars with shuffles at every load and store; held as one 16-lane vector wider than a register
// (64 bytes of float without AVX-512, 128 of double), GCC keeps it on the stack and moves it through 8-byte pieces at
// every edge (store-forwarding stalls; bench/README.md). So the lanes are pieces of power-of-two lanes, each at most a
// register wide, largest first (16 floats: one piece with AVX-512, 8 + 8 with AVX2; 15 floats with AVX2: 8 + 4 + 2 +
// 1), one named member per piece: each stays a register. A partial block (fewer than 16 samples, or the last B mod
// 16) is held the same way, so that its sums stay in registers too instead of a load, an add and a store per edge and
// sample.
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
namespace detail {
// One piece: Lanes (a power of two) lanes of T in one vector, or a scalar. (The vector type is declared here from the
// lane count: passed as a template argument, GCC 12 drops a vector type's vector_size and makes it a scalar.)
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
  // bfloat16 values (float lanes only): widened exactly (their bits shifted up), then the same product and sum
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const bfloat16* p) {
    static_assert(std::is_same_v<T, float>, "bfloat16 values widen to float lanes");
    V x;
#if defined(__AVX512F__)
    if constexpr (Lanes == 16) {  // one zero extension to 16 lanes and a shift (GCC splits the generic one in two)
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      const __m512i u = _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
      std::memcpy(&x, &u, sizeof x);
    } else
#endif
#if defined(__AVX2__)
        if constexpr (Lanes == 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m256i u = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
      std::memcpy(&x, &u, sizeof x);
    } else if constexpr (Lanes == 4) {
      const __m128i u = _mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))), 16);
      std::memcpy(&x, &u, sizeof x);
    } else
#endif
    {  // (GCC 12 refuses __builtin_convertvector on these dependent vector types)
      std::uint32_t u[Lanes];
      for (int q = 0; q < Lanes; ++q) u[q] = static_cast<std::uint32_t>(p[q].bits) << 16;
      std::memcpy(&x, u, sizeof x);
    }
    const V prod = w * x;
    v = v + prod;
  }
  // binary16 values (float lanes only): converted exactly (vcvtph2ps), then the same product and sum
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const float16* p) {
    static_assert(std::is_same_v<T, float>, "float16 values widen to float lanes");
    V x;
#if defined(__AVX512F__)
    if constexpr (Lanes == 16) {
      const __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
      std::memcpy(&x, &f, sizeof x);
    } else
#endif
#if defined(__F16C__) && defined(__AVX__)
        if constexpr (Lanes == 8) {
      const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      std::memcpy(&x, &f, sizeof x);
    } else if constexpr (Lanes == 4) {
      const __m128 f = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
      std::memcpy(&x, &f, sizeof x);
    } else
#endif
    {
      float f[Lanes];
      for (int q = 0; q < Lanes; ++q) f[q] = to_float(p[q]);
      std::memcpy(&x, f, sizeof x);
    }
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
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const bfloat16* p) {
    const T prod = w * to_float(*p);
    v = v + prod;
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const float16* p) {
    const T prod = w * to_float(*p);
    v = v + prod;
  }
};
// the largest power of two <= n and <= max
constexpr int largest_piece(const int n, const int max) {
  int p = 1;
  while (2 * p <= n && 2 * p <= max) p *= 2;
  return p;
}
// N lanes: the largest piece, then the rest (none when the piece holds all N).
template <class T, int N, int Head = largest_piece(N, kHostVectorBytes / static_cast<int>(sizeof(T))),
          bool Last = (Head == N)>
struct LanePieces {
  LanePiece<T, Head> head;
  LanePieces<T, N - Head> rest;
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) {
    head.load(p);
    rest.load(p + Head);
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const {
    head.store(p);
    rest.store(p + Head);
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) {
    head.add_product(w, p);
    rest.add_product(w, p + Head);
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const bfloat16* p) {
    head.add_product(w, p);
    rest.add_product(w, p + Head);
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const float16* p) {
    head.add_product(w, p);
    rest.add_product(w, p + Head);
  }
};
template <class T, int N, int Head>
struct LanePieces<T, N, Head, true> : LanePiece<T, Head> {};
}  // namespace detail
#endif

template <class T, int N>
struct HostLanes {
  static_assert(N >= 1 && N <= 16, "1 to 16 lanes");
#if DPOINTNET_HOST_VECTOR_EXT
  detail::LanePieces<T, N> v;
  static_assert(N != 16 || sizeof(v) == 16 * sizeof(T), "16 lanes in whole vectors, without padding");
  KOKKOS_FORCEINLINE_FUNCTION void load(const T* p) { v.load(p); }
  KOKKOS_FORCEINLINE_FUNCTION void store(T* p) const { v.store(p); }
  // v += w * p[0 .. N - 1]
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const T* p) { v.add_product(w, p); }
  // v += w * float32(p[0 .. N - 1]) (float lanes)
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const bfloat16* p) { v.add_product(w, p); }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const float16* p) { v.add_product(w, p); }
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
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const bfloat16* p) {
    for (int q = 0; q < N; ++q) v[q] += w * to_float(p[q]);
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_product(const T w, const float16* p) {
    for (int q = 0; q < N; ++q) v[q] += w * to_float(p[q]);
  }
#endif
};
template <class T>
using HostLanes16 = HostLanes<T, 16>;

}  // namespace dpointnet::compat
