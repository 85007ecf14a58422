// Test-only switches of the trainer, kept out of its public interface: trainers in a chosen kernel shape (the
// device shapes on a host backend, or the host shapes under DPOINTNET_KERNEL_SHAPE=device), and fault injection.
#pragma once
#include <cmath>
#include <memory>
#include <utility>

#include "dpointnet/train/trainer.hpp"

namespace dpointnet::detail {

struct TrainerTestAccess {
  template <class Real, class ExecSpace>
  static std::unique_ptr<Trainer<Real, ExecSpace>> make(const ExecSpace& space, const PreparedRun& run,
                                                        device::KernelShape shape, int target_blocks = 0) {
    return std::unique_ptr<Trainer<Real, ExecSpace>>(new Trainer<Real, ExecSpace>(space, run, target_blocks, shape));
  }
};

// One gradient value of surface s becomes NaN (DPOINTNET_FAULT_NAN_STEP).
template <class Real, class ExecSpace>
void poison_gradient(WeightStore<Real, ExecSpace>& store, int s) {
  auto g = store[s].grad;
  if (g.extent(0) == 0) return;
  Kokkos::deep_copy(Kokkos::subview(g, std::make_pair<std::size_t, std::size_t>(0, 1)), Real(std::nan("")));
}

}  // namespace dpointnet::detail
