// Surrogate spike derivative and the voltage regularizer's pointwise terms (docs/model.md, "Gradients").
#pragma once
#include <Kokkos_Core.hpp>

#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

struct BackwardParams {
  double gamma = 0.1, sigma = 0.28;
  bool gauss = false;
  double vdamp_keep = 0.5;  // 1 - voltage_gradient_dampening
  double rdamp = 0.1;
  double dt = 1.0;
  double vreg_range_scale = 0.0;      // sum of range-mode VoltageRegularization costs / (B T N)
  double vreg_threshold_scale = 0.0;  // sum of threshold-mode costs / (B T N)
};

KOKKOS_INLINE_FUNCTION double surrogate_triangle(double v, const BackwardParams& p) {
  const double tri = 1.0 - compat::fabs(v - 1.0);
  return tri > 0 ? p.gamma * tri : 0.0;
}

KOKKOS_INLINE_FUNCTION double surrogate(double v, const BackwardParams& p) {
  if (p.gauss) {
    const double x = v - 1.0;
    return p.gamma * compat::exp(-(x / p.sigma) * (x / p.sigma));
  }
  return surrogate_triangle(v, p);
}

// dL/dv' of the voltage regularizer (range: relu(|v - 0.5| - 0.5)^2, threshold: (v - 1)^2), times cost/(BTN).
KOKKOS_INLINE_FUNCTION double vreg_grad(double v, const BackwardParams& p) {
  double g = 0.0;
  const double x = compat::fabs(v - 0.5) - 0.5;
  if (x > 0) g += p.vreg_range_scale * 2.0 * x * (v >= 0.5 ? 1.0 : -1.0);
  g += p.vreg_threshold_scale * 2.0 * (v - 1.0);
  return g;
}

// The voltage regularizer's value for one v' (before the cost/(BTN) factor), per mode.
KOKKOS_INLINE_FUNCTION double vreg_range(double v) {
  const double x = compat::fabs(v - 0.5) - 0.5;
  return x > 0 ? x * x : 0.0;
}

}  // namespace dpointnet::device
