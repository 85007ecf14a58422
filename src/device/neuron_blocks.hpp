// The two launch shapes the neuron steps share (neuron_step.hpp, nest_step.hpp): on devices one work item per
// (sample, neuron), neurons fastest; on hosts one per (sample, block of F::kBlock neurons), which the functor's
// PerBlock operator takes through every step of the launch in turn (F::block(b, i0, w)).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Host item idx of n neurons in blocks of `block`: its sample and first neuron.
struct NeuronBlock {
  int b, i0;
};
inline NeuronBlock neuron_block(const std::int64_t idx, const int n, const int block) {
  const std::int64_t nblk = (n + block - 1) / block;
  return {static_cast<int>(idx / nblk), static_cast<int>(idx % nblk) * block};
}

// Launches a neuron-step functor F (fields n, n_steps; PerBlock tag and kBlock) for B samples in the shape that suits
// the space (or the one asked for).
template <class ExecSpace, class F>
void launch_neuron_step(const ExecSpace& space, const char* label, const F& f, int B, KernelShape shape) {
  if constexpr (compat::host_execution<ExecSpace>) {
    if (host_shape<ExecSpace>(shape)) {
      const std::int64_t nblk = (f.n + F::kBlock - 1) / F::kBlock;
      Kokkos::parallel_for(label,
                           Kokkos::RangePolicy<ExecSpace, typename F::PerBlock>(space, 0, std::int64_t(B) * nblk), f);
      return;
    }
  }
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, std::int64_t(B) * f.n), f);
}

}  // namespace dpointnet::device
