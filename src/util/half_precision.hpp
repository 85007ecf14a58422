// 16-bit floating-point storage for what a run streams and gathers: bfloat16 (float32's 8-bit exponent, 7 stored
// mantissa bits) and IEEE 754 binary16 (5-bit exponent, 10 mantissa bits, subnormals below 2^-14). Each is held
// as its bits and converted to and from float32 in plain integer and float arithmetic that compiles for every Kokkos
// backend (Kokkos 3.4 has no 16-bit type on host backends; the compilers' own types differ between g++, clang and
// nvcc): float32 -> 16 bits rounds to nearest, ties to even, overflows to infinity (binary16 from 65520 on), keeps
// subnormals, and maps NaN to a quiet NaN of the same sign; 16 bits -> float32 is exact.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__F16C__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__)
#include <immintrin.h>
#endif

namespace dpointnet {

struct bfloat16 {
  std::uint16_t bits;
};
struct float16 {
  std::uint16_t bits;
};

namespace half_detail {

KOKKOS_INLINE_FUNCTION std::uint32_t bits_of(float f) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}
KOKKOS_INLINE_FUNCTION float float_of(std::uint32_t u) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

}  // namespace half_detail

KOKKOS_INLINE_FUNCTION float to_float(bfloat16 h) {
  return half_detail::float_of(static_cast<std::uint32_t>(h.bits) << 16);
}

KOKKOS_INLINE_FUNCTION bfloat16 to_bfloat16(float f) {
  std::uint32_t u = half_detail::bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: its top mantissa bits, quiet
    return bfloat16{static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even (a carry into the exponent is right)
  return bfloat16{static_cast<std::uint16_t>(u >> 16)};
}

KOKKOS_INLINE_FUNCTION float to_float(float16 h) {
#if defined(__F16C__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__)
  return _cvtsh_ss(h.bits);  // the CPU's conversion (vcvtph2ps): the same exact value, one instruction
#else
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000u) << 16;
  const std::uint32_t exp = (h.bits >> 10) & 0x1fu, mant = h.bits & 0x3ffu;
  if (exp == 0x1fu)  // infinity or NaN (the payload kept)
    return half_detail::float_of(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {  // zero or subnormal: mant x 2^-24, exact in float32
    const float m = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return half_detail::float_of(sign | half_detail::bits_of(m));
  }
  return half_detail::float_of(sign | ((exp + 112u) << 23) | (mant << 13));
#endif
}

KOKKOS_INLINE_FUNCTION float16 to_float16(float f) {
  std::uint32_t u = half_detail::bits_of(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  std::uint32_t o;
  if (u >= 0x47800000u) {  // |f| >= 65536, infinity or NaN
    o = u > 0x7f800000u ? (0x7e00u | ((u >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (u < 0x38800000u) {  // below 2^-14: subnormal or zero; a float add aligns and rounds (to nearest even)
    const float magic = half_detail::float_of(126u << 23);  // 0.5: its ulp is 2^-24, binary16's smallest subnormal
    o = half_detail::bits_of(half_detail::float_of(u) + magic) - (126u << 23);
  } else {  // normal: rebias the exponent, round the 13 dropped bits (a carry may give infinity, as it should)
    u += 0xc8000fffu + ((u >> 13) & 1u);  // (15 - 127) << 23, plus the rounding bias
    o = u >> 13;
  }
  return float16{static_cast<std::uint16_t>(o | sign)};
}

// widen(x): a stored value in its arithmetic type (16 bits -> float32, exactly; others unchanged); narrow<T>(x): a
// float32 value stored as T (to_bfloat16 / to_float16, or unchanged).
template <class T>
KOKKOS_INLINE_FUNCTION T widen(const T x) {
  return x;
}
KOKKOS_INLINE_FUNCTION float widen(const bfloat16 h) { return to_float(h); }
KOKKOS_INLINE_FUNCTION float widen(const float16 h) { return to_float(h); }
template <class T>
KOKKOS_INLINE_FUNCTION T narrow(const T x) {
  return x;
}
template <class T>
KOKKOS_INLINE_FUNCTION T narrow(const float x, std::enable_if_t<std::is_same_v<T, bfloat16>, int> = 0) {
  return to_bfloat16(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T narrow(const float x, std::enable_if_t<std::is_same_v<T, float16>, int> = 0) {
  return to_float16(x);
}

}  // namespace dpointnet
