// The exponentiated Adam kernel (docs/model.md, "Optimizer"; V1-PAPER section 4.4).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Exponentiated Adam on one surface: Adam's moments, then the multiplicative step
// w <- w exp(-alpha m / (sqrt(v) + eps) s(w)), s(w) = sign(w) with s(0) = +1, alpha = lr sqrt(1 - b2^t) / (1 - b1^t);
// then the sign constraint (a no-op: the step keeps every sign). Weights, moments and gradients are Real;
// arithmetic is double.
template <class Real, class ExecSpace>
struct ExpAdamFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<Real*, MemSpace> w, w0, m, v;
  Kokkos::View<Real*, MemSpace> grad;
  double alpha, b1, b2, eps, scale;  // alpha = lr sqrt(1 - b2^t) / (1 - b1^t); scale = clipping factor
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const double g = static_cast<double>(grad(e)) * scale;
    const double mn = b1 * static_cast<double>(m(e)) + (1 - b1) * g;
    const double vn = b2 * static_cast<double>(v(e)) + (1 - b2) * g * g;
    m(e) = static_cast<Real>(mn);
    v(e) = static_cast<Real>(vn);
    const double wo = static_cast<double>(w(e));
    const double s = wo < 0 ? -1.0 : 1.0;
    const double step = alpha * static_cast<double>(m(e)) / (compat::sqrt(static_cast<double>(v(e))) + eps);
    double wn = wo * compat::exp(-step * s);
    if (w0(e) >= Real(0))
      wn = wn > 0 ? wn : 0.0;
    else
      wn = wn < 0 ? wn : 0.0;
    w(e) = static_cast<Real>(wn);
  }
};

}  // namespace dpointnet::device
