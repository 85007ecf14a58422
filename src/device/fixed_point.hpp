// Fixed-point accumulation of the synaptic drive (docs/model.md, "Drive accumulation").
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

namespace dpointnet::device {

// The synaptic drive is accumulated in fixed point (units of 2^-36, int64), so the sum of a step's events does
// not depend on the order in which threads add them: runs are bitwise reproducible for any thread count, and a
// recomputed segment (time checkpointing) reproduces the forward pass exactly. Range +-2^27 in normalized
// units (threshold gaps), resolution 1.5e-11.
inline constexpr double kDriveScale = 68719476736.0;  // 2^36

// Rounds half away from zero. Branch-free (weights of both signs would defeat a branch predictor): the
// offset is +0.5 for s >= 0 (and -0.0) and -0.5 for s < 0.
KOKKOS_INLINE_FUNCTION std::int64_t to_fixed(double x) {
  const double s = x * kDriveScale;
  const double half = 0.5 - static_cast<double>(s < 0);
  return static_cast<std::int64_t>(s + half);
}
KOKKOS_INLINE_FUNCTION double from_fixed(std::int64_t q) { return static_cast<double>(q) * (1.0 / kDriveScale); }

// Hosts: out[i] = Real(from_fixed(q[i])) for i < m, the same values, in a form that vectorizes without AVX-512
// (which brought the first packed int64 -> double conversion; without it GCC converts one value at a time, and the
// host neuron step does not vectorize on AVX2, bench/README.md): for |q| <
// 2^51 the double whose bits are those of 1.5 x 2^52 plus q is exactly 1.5 x 2^52 + q (its ulp is 1), so
// subtracting 1.5 x 2^52 gives q exactly, as the conversion does. A block with a value outside (a drive of 2^15
// threshold gaps) is converted value by value.
template <class Real>
inline void from_fixed_block(const std::int64_t* q, const int m, Real* out) {
  constexpr std::int64_t kMagicBits = 0x4338000000000000;  // 1.5 x 2^52
  constexpr double kMagic = 6755399441055744.0;
  constexpr std::int64_t kHalfRange = std::int64_t(1) << 51;
  std::uint64_t outside = 0;
  for (int i = 0; i < m; ++i) outside |= static_cast<std::uint64_t>(q[i] + kHalfRange) >> 52;
  if (outside != 0) {
    for (int i = 0; i < m; ++i) out[i] = static_cast<Real>(from_fixed(q[i]));
    return;
  }
  for (int i = 0; i < m; ++i) {
    const std::int64_t bits = q[i] + kMagicBits;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    out[i] = static_cast<Real>((d - kMagic) * (1.0 / kDriveScale));
  }
}

}  // namespace dpointnet::device
