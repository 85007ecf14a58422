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

KOKKOS_INLINE_FUNCTION std::int64_t to_fixed(double x) {
  const double s = x * kDriveScale;
  return static_cast<std::int64_t>(s >= 0 ? s + 0.5 : s - 0.5);
}
KOKKOS_INLINE_FUNCTION double from_fixed(std::int64_t q) { return static_cast<double>(q) * (1.0 / kDriveScale); }

}  // namespace dpointnet::device
