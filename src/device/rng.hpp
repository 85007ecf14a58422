// Counter-based random draws usable inside kernels (docs/model.md section 6).
// One draw per (seed, purpose, global sample index, step, source): Random123 Philox4x32-10 with
//   key = {seed, purpose}, counter = {source, step, sample, 0},
// and the uniform u = (x0 + 0.5) * 2^-32 in (0, 1) from the first output word.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/util/counter_uniform.hpp"

namespace dpointnet::device {

KOKKOS_INLINE_FUNCTION double uniform01(std::uint32_t seed, std::uint32_t purpose, std::uint32_t source,
                                        std::uint32_t step, std::uint32_t sample) {
  return counter_uniform01(seed, purpose, source, step, sample);
}

// Poisson count by inversion of the CDF: P0 = exp(-lam) computed on the host, then P_k = P_{k-1} lam / k.
KOKKOS_INLINE_FUNCTION int poisson_from_uniform(double u, double lam, double p0) {
  int k = 0;
  double p = p0, f = p0;
  while (u > f && k < 1000) {
    ++k;
    p *= lam / k;
    f += p;
  }
  return k;
}

}  // namespace dpointnet::device
