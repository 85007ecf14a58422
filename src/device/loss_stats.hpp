// Per-step forward statistics the losses need (spike counts, voltage-regularizer sums).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/surrogate.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Forward-pass statistics for the losses, one kernel per step: spike counts per (b, i) of the step, and (StatsTag)
// with them the two voltage-regularizer sums over (b, i) of the step, reduced as a pair (range, threshold; Kokkos'
// default init and join of an array value: zeros and element-wise sums).
template <class Real, class ExecSpace>
struct ForwardStatsFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  struct CountTag {};
  struct StatsTag {};
  using value_type = double[];
  static constexpr unsigned value_count = 2;
  Kokkos::View<std::int32_t**, Kokkos::LayoutRight, MemSpace> counts;
  SpikeRing<MemSpace> ring;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v;
  std::int64_t n;
  int slot;
  KOKKOS_INLINE_FUNCTION void operator()(CountTag, const std::int64_t idx) const {
    counts(static_cast<int>(idx / n), idx % n) += ring(slot, static_cast<int>(idx / n), idx % n);
  }
  // Hosts: work item b takes sample b's row, the sums in kHostSums interleaved partial sums (independent add
  // chains, a vector loop) combined in a fixed order; no index division.
  struct HostStatsTag {};
  static constexpr int kHostSums = 8;
  KOKKOS_INLINE_FUNCTION void operator()(HostStatsTag, const int b, double* acc) const {
    std::int32_t* const cb = &counts(b, 0);
    const std::uint8_t* const zb = &ring(slot, b, 0);
    const Real* const vb = &v(b, 0);
    double s0[kHostSums] = {}, s1[kHostSums] = {};
    std::int64_t i = 0;
    for (; i + kHostSums <= n; i += kHostSums) {
      for (int q = 0; q < kHostSums; ++q) {
        cb[i + q] += zb[i + q];
        const double vi = static_cast<double>(vb[i + q]);
        s0[q] += vreg_range(vi);
        const double x = vi - 1.0;
        s1[q] += x * x;
      }
    }
    for (int q = 0; i < n; ++i, ++q) {
      cb[i] += zb[i];
      const double vi = static_cast<double>(vb[i]);
      s0[q] += vreg_range(vi);
      const double x = vi - 1.0;
      s1[q] += x * x;
    }
    for (int w = kHostSums / 2; w > 0; w /= 2)
      for (int q = 0; q < w; ++q) {
        s0[q] += s0[q + w];
        s1[q] += s1[q + w];
      }
    acc[0] += s0[0];
    acc[1] += s1[0];
  }
  KOKKOS_INLINE_FUNCTION void operator()(StatsTag, const std::int64_t idx, double* acc) const {
    const int b = static_cast<int>(idx / n);
    const std::int64_t i = idx % n;
    counts(b, i) += ring(slot, b, i);
    const double vi = static_cast<double>(v(b, i));
    acc[0] += vreg_range(vi);
    const double x = vi - 1.0;
    acc[1] += x * x;
  }
};

// Launches one step's statistics in the shape that suits the space: spike counts, and with need_v the two
// voltage-regularizer sums reduced into sums (a device view of 2 doubles: no host round trip).
template <class Real, class ExecSpace, class Sums>
void forward_stats(const ExecSpace& space, const ForwardStatsFunctor<Real, ExecSpace>& f, int B, bool need_v,
                   const Sums& sums, KernelShape shape = KernelShape::Auto) {
  using F = ForwardStatsFunctor<Real, ExecSpace>;
  const std::int64_t work = std::int64_t(B) * f.n;
  if (!need_v) {
    Kokkos::parallel_for("dpointnet::train_count_spikes",
                         Kokkos::RangePolicy<ExecSpace, typename F::CountTag>(space, 0, work), f);
    return;
  }
  if constexpr (compat::host_execution<ExecSpace>) {
    if (host_shape<ExecSpace>(shape)) {
      Kokkos::parallel_reduce("dpointnet::train_step_stats",
                              Kokkos::RangePolicy<ExecSpace, typename F::HostStatsTag>(space, 0, B), f, sums);
      return;
    }
  }
  Kokkos::parallel_reduce("dpointnet::train_step_stats",
                          Kokkos::RangePolicy<ExecSpace, typename F::StatsTag>(space, 0, work), f, sums);
}

// The weight regularizer on one surface: returns sum of (w - w0)^2 and adds its gradient 2 scale (w - w0).
template <class Real, class ExecSpace>
struct WeightRegularizerFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<Real*, MemSpace> w, w0;
  Kokkos::View<Real*, MemSpace> grad;
  double scale;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e, double& acc) const {
    const double d = static_cast<double>(w(e)) - static_cast<double>(w0(e));
    acc += d * d;
    grad(e) = static_cast<Real>(static_cast<double>(grad(e)) + 2.0 * scale * d);
  }
};

}  // namespace dpointnet::device
