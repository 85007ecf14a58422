// Per-step forward statistics the losses need (spike counts, voltage-regularizer sums).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "device/model_constants.hpp"
#include "device/surrogate.hpp"

namespace dpointnet::device {

// Forward-pass statistics for the losses: spike counts per (b, i) of one step, and the two voltage
// regularizer sums over (b, i) of one step (functors with tags, so no lambda sits in a class member).
template <class Real, class ExecSpace>
struct ForwardStatsFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  struct CountTag {};
  struct RangeTag {};
  struct ThresholdTag {};
  Kokkos::View<std::int32_t**, Kokkos::LayoutRight, MemSpace> counts;
  SpikeRing<MemSpace> ring;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v;
  std::int64_t n;
  int slot;
  KOKKOS_INLINE_FUNCTION void operator()(CountTag, const std::int64_t idx) const {
    counts(static_cast<int>(idx / n), idx % n) += ring(slot, static_cast<int>(idx / n), idx % n);
  }
  KOKKOS_INLINE_FUNCTION void operator()(RangeTag, const std::int64_t idx, double& acc) const {
    acc += vreg_range(static_cast<double>(v(static_cast<int>(idx / n), idx % n)));
  }
  KOKKOS_INLINE_FUNCTION void operator()(ThresholdTag, const std::int64_t idx, double& acc) const {
    const double x = static_cast<double>(v(static_cast<int>(idx / n), idx % n)) - 1.0;
    acc += x * x;
  }
};

// The weight regularizer on one surface: returns sum of (w - w0)^2 and adds its gradient 2 scale (w - w0).
template <class Real, class ExecSpace>
struct WeightRegularizerFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<Real*, MemSpace> w, w0;
  Kokkos::View<double*, MemSpace> grad;
  double scale;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e, double& acc) const {
    const double d = static_cast<double>(w(e)) - static_cast<double>(w0(e));
    acc += d * d;
    grad(e) += 2.0 * scale * d;
  }
};

}  // namespace dpointnet::device
