// The optimizer kernel (docs/model.md, "Optimizer").
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Adam with bias correction on one surface, then the sign constraint (side of the initial weight; 0 counts
// as non-negative). Weights, moments and gradients are Real; arithmetic is double.
template <class Real, class ExecSpace>
struct AdamFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<Real*, MemSpace> w, w0, m, v;
  Kokkos::View<Real*, MemSpace> grad;
  double lr, b1, b2, eps, bc1, bc2, scale;  // bc = 1 - beta^k; scale = clipping factor
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const double g = static_cast<double>(grad(e)) * scale;
    const double mn = b1 * static_cast<double>(m(e)) + (1 - b1) * g;
    const double vn = b2 * static_cast<double>(v(e)) + (1 - b2) * g * g;
    m(e) = static_cast<Real>(mn);
    v(e) = static_cast<Real>(vn);
    const double mhat = static_cast<double>(m(e)) / bc1, vhat = static_cast<double>(v(e)) / bc2;
    double wn = static_cast<double>(w(e)) - lr * mhat / (compat::sqrt(vhat) + eps);
    if (w0(e) >= Real(0))
      wn = wn > 0 ? wn : 0.0;
    else
      wn = wn < 0 ? wn : 0.0;
    w(e) = static_cast<Real>(wn);
  }
};

}  // namespace dpointnet::device
