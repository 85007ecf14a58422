// Input activity of virtual populations for one step, written into the population's ring slot (t mod D).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/rng.hpp"
#include "dpointnet/util/host_simd.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Spike file: the same counts for every sample, stored per step as (source, count) lists. One launch writes the
// spikes of steps t, ..., t + n_steps - 1 (item: a spike of those steps x a sample), step t + w into ring slot
// (slot + w) mod D.
template <class ExecSpace>
struct StampedSpikesFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<std::int64_t*, MemSpace> step_offsets;  // [T + 1]
  Kokkos::View<std::int32_t*, MemSpace> source;
  Kokkos::View<std::uint16_t*, MemSpace> count;
  CountRing<MemSpace> ring;
  std::int64_t t;
  int slot, batch;
  int n_steps = 1;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const std::int64_t e = step_offsets(t) + idx / batch;
    const int b = static_cast<int>(idx % batch);
    int lo = 0, hi = n_steps - 1;  // the spike's step t + lo: the last with step_offsets(t + lo) <= e
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (step_offsets(t + mid) <= e)
        lo = mid;
      else
        hi = mid - 1;
    }
    ring(static_cast<int>((slot + lo) % static_cast<int>(ring.extent(0))), b, source(e)) = count(e);
  }
};

// Bernoulli spikes (rates, p per source) or Poisson counts (lam, p0 = exp(-lam) per source), drawn per
// (seed, purpose, global sample index, step, source).
template <class ExecSpace>
struct RandomInputFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<double*, MemSpace> p;   // Bernoulli probability, or lam for Poisson
  Kokkos::View<double*, MemSpace> p0;  // exp(-lam) for Poisson (empty for Bernoulli)
  CountRing<MemSpace> ring;
  std::uint32_t seed, purpose;
  std::int64_t t, sample_offset, n_src;
  int slot;
  bool poisson;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const std::int64_t j = idx % n_src;
    const std::int64_t b = idx / n_src;
    const double u = uniform01(seed, purpose, static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(t),
                               static_cast<std::uint32_t>(sample_offset + b));
    std::uint16_t a;
    if (poisson) {
      a = static_cast<std::uint16_t>(poisson_from_uniform(u, p(j), p0(j)));
    } else {
      a = u < p(j) ? 1 : 0;
    }
    ring(slot, static_cast<int>(b), j) = a;
  }
  // Hosts: item (b, c) draws sources [c kChunk, (c + 1) kChunk) of sample b: the uniforms in a vector loop
  // (Philox's rounds are 32-bit multiplies and xors), then the comparison or the Poisson inversion; the same
  // draws as the item-per-(sample, source) shape above, without its two index divisions per draw.
  struct HostChunks {};
  static constexpr std::int64_t kChunk = 256;
  KOKKOS_INLINE_FUNCTION std::int64_t chunks() const { return (n_src + kChunk - 1) / kChunk; }
  KOKKOS_INLINE_FUNCTION void operator()(HostChunks, const std::int64_t item) const {
    const std::int64_t b = item / chunks(), j0 = (item % chunks()) * kChunk;
    const int m = static_cast<int>(n_src - j0 < kChunk ? n_src - j0 : kChunk);
    const auto step = static_cast<std::uint32_t>(t), sample = static_cast<std::uint32_t>(sample_offset + b);
    double u[kChunk];
    DPOINTNET_HOST_SIMD
    for (int q = 0; q < m; ++q) u[q] = uniform01(seed, purpose, static_cast<std::uint32_t>(j0 + q), step, sample);
    std::uint16_t* const out = &ring(slot, static_cast<int>(b), j0);
    const double* const pj = &p(j0);
    if (poisson) {
      const double* const p0j = &p0(j0);
      for (int q = 0; q < m; ++q) out[q] = static_cast<std::uint16_t>(poisson_from_uniform(u[q], pj[q], p0j[q]));
    } else {
      DPOINTNET_HOST_SIMD
      for (int q = 0; q < m; ++q) out[q] = u[q] < pj[q] ? 1 : 0;
    }
  }
};

// Launches one step's random draws of an input functor F (RandomInputFunctor, LgnSpikesFunctor: an item per
// (sample, source), or on hosts F::HostChunks items of F::kChunk sources) in the shape that suits the space.
template <class ExecSpace, class F>
void draw_random_input(const ExecSpace& space, const char* label, const F& f, int B,
                       KernelShape shape = KernelShape::Auto) {
  if constexpr (compat::host_execution<ExecSpace>) {
    if (host_shape<ExecSpace>(shape)) {
      Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, typename F::HostChunks>(space, 0, B * f.chunks()), f);
      return;
    }
  }
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, B * f.n_src), f);
}

}  // namespace dpointnet::device
