// Fixed-point accumulation of the synaptic drive (docs/model.md, "Drive accumulation").
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

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

}  // namespace dpointnet::device
