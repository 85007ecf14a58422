// Backpropagation through time over one micro-batch (docs/training-update.md): the forward pass with segment
// snapshots (spike counts and voltage-regularizer sums on the device), the recompute of each segment from its
// snapshot into samples-fastest records, and the reverse sweep (spike adjoint, neuron adjoint, weight gradients
// added into the weight store's gradients).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/kernel_shape.hpp"
#include "dpointnet/device/pool_traces.hpp"
#include "dpointnet/device/ring_storage.hpp"
#include "dpointnet/device/spike_adjoint.hpp"
#include "dpointnet/device/surrogate.hpp"
#include "dpointnet/device/target_block_calibration.hpp"
#include "dpointnet/device/target_blocks.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/train/weight_store.hpp"

namespace dpointnet {

struct BpttSettings {
  int batch = 1;
  std::int64_t window_steps = 0;  // T: the BPTT window (run.tstop)
  std::int64_t warmup_steps = 0;  // W: run from rest without gradient before the window
  int segment_steps = 1;          // C: steps per segment snapshot (train.checkpoint_interval, at most T)
  int target_blocks = 0;          // host shapes: the spike adjoint's target blocks (0: timed, "auto")
  // The window's bands: steps [bands[k], bands[k + 1]) of the window, 0 = bands[0] < ... < bands.back() = T; the
  // losses' windows are unions of bands. Empty: one band, the whole window.
  std::vector<std::int64_t> bands;
  device::BackwardParams backward;
  device::KernelShape shape = device::KernelShape::Auto;
  // The drive adjoint ring's storage (device/ring_storage.hpp); 16 bits with float32 engines only.
  device::RingStorage ring = device::RingStorage::Native;
};

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class BpttEngine {
 public:
  using MemSpace = typename ExecSpace::memory_space;
  using Snapshot = typename Simulator<Real, ExecSpace>::SegmentSnapshot;
  using Acc = Real;  // the adjoint's storage and accumulation type

  BpttEngine(const ExecSpace& space, Simulator<Real, ExecSpace>& sim, WeightStore<Real, ExecSpace>& store,
             const BpttSettings& settings);

  // The forward pass of the simulator's current inputs and samples: from `carried_start` (its state continues
  // into the window, no warm-up) or from rest after the warm-up; saves the end state into `end_state` if given.
  void forward(const Snapshot* carried_start, Snapshot* end_state);
  // Spikes per (band, b, i), and the voltage regularizer's raw sums over (b, t, i) of the window, of the last
  // forward pass.
  const Kokkos::View<std::int32_t***, Kokkos::LayoutRight, MemSpace>& band_counts() const { return counts_; }
  int n_bands() const { return static_cast<int>(bands_.size()) - 1; }
  const std::vector<std::int64_t>& bands() const { return bands_; }
  double vreg_range_sum() const { return vreg_range_sum_; }
  double vreg_threshold_sum() const { return vreg_threshold_sum_; }
  // v' of every (b, i) after the window's last step, of the last forward pass.
  const Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace>& terminal_v() const { return terminal_v_; }

  // The reverse sweep after forward(): dL/dz(t, b, i) for t in each band ([bands][B][N] row-major) from the
  // losses; adds the gradient of every trainable surface into the store.
  void backward(const std::vector<double>& count_gradient);
  double recompute_seconds() const { return t_recompute_; }

  // Neuron pools (the synchronization loss): pool k sums the spikes of `members[k]` in micro-batch sample
  // `sample[k]` at every step [t_begin, t_end) of the window in the forward pass; pool_sums() are those sums of the
  // last forward pass ([t_end - t_begin][P], host); set_pool_gradient() gives dL/dy of the same shape, which the
  // next backward() adds to dL/dz of the pools' members. Without pools (the default) nothing runs.
  void set_pools(const std::vector<std::int32_t>& sample, const std::vector<std::vector<std::int32_t>>& members,
                 std::int64_t t_begin, std::int64_t t_end);
  void clear_pools() { pools_ = device::PoolSet<MemSpace>{}; }
  bool has_pools() const { return pools_.on(); }
  std::vector<double> pool_sums() const;
  void set_pool_gradient(const std::vector<double>& dy);
  double backward_seconds() const { return t_backward_; }

  // The voltage regularizer's per-(b, t, i) gradient scales of the next forward and backward passes (the loss set
  // of the micro-batch's stimulus condition).
  // The factor of every loss gradient of the next backward passes (float16 runs' loss scaling: train/loss_scale.hpp;
  // the store's gradients come out multiplied by it). Set it before set_pool_gradient.
  void set_loss_scale(double s) { loss_scale_ = s; }
  void set_voltage_regularizer(double range_scale, double threshold_scale) {
    bp_.vreg_range_scale = range_scale;
    bp_.vreg_threshold_scale = threshold_scale;
  }

  // Host shapes: the target blocks of the spike adjoint (1: unblocked), and the timings they were chosen from.
  int target_blocks() const { return blocks_.on() ? blocks_.n_blocks : 1; }
  const device::TargetBlockChoice& target_block_choice() const { return block_choice_; }

 private:
  void reverse_step(std::int64_t t, std::int64_t t0);
  void record_history(const Snapshot& snap, std::int64_t t0);
  void record_step(std::int64_t t, std::int64_t t0, int slot);
  void set_up_target_blocks();
  // The band of absolute step t (0 for warm-up steps).
  int band_of(std::int64_t t) const {
    const std::int64_t w = t - W_;
    int k = 0;
    while (k + 2 < static_cast<int>(bands_.size()) && w >= bands_[static_cast<std::size_t>(k + 1)]) ++k;
    return k;
  }
  // f(adjoint) with the adjoint whose ring the spike adjoint and the weight gradients gather: adj_, or with a
  // 16-bit ring adj_bf16_ or adj_f16_.
  template <class F>
  void with_ring(F&& f) const {
    if constexpr (std::is_same_v<Acc, float>) {
      if (ring_ == device::RingStorage::BFloat16) return f(adj_bf16_);
      if (ring_ == device::RingStorage::Float16) return f(adj_f16_);
    }
    f(adj_);
  }
  bool ring16() const { return ring_ != device::RingStorage::Native; }
  // The spike adjoint of reverse step t over the recurrent edges (in target blocks where the engine keeps them).
  template <class Ring>
  auto spike_adjoint_at(std::int64_t t, const device::Adjoint<Acc, MemSpace, Ring>& a) const {
    device::SpikeAdjointFunctor<Real, Acc, ExecSpace, Ring> sa{
        sim_.edges(0), a, static_cast<Acc>(bp_.rdamp), t, W_ + T_, N_, D_, B_};
    sa.a.rate_grad = Kokkos::subview(rate_grads_, band_of(t), Kokkos::ALL(), Kokkos::ALL());
    sa.tb = blocks_;
    return sa;
  }
  // Host shapes add the recurrent weight gradient inside the spike adjoint (device::FusedWeightGrad).
  bool fused_recurrent_grad() const {
    return device::host_shape<ExecSpace>(shape_) && store_.size() > 0 && store_[0].set == 0 && store_[0].trainable &&
           sim_.edges(0).weight.extent(0) > 0;
  }

  ExecSpace space_;
  Simulator<Real, ExecSpace>& sim_;
  WeightStore<Real, ExecSpace>& store_;
  device::KernelShape shape_;
  device::BackwardParams bp_;
  int B_, C_, D_, R_;
  std::int64_t N_, T_, W_;
  int target_blocks_config_;
  std::vector<Snapshot> segment_snapshots_;
  device::Adjoint<Acc, MemSpace> adj_;  // with a 16-bit ring, its gu is the neuron adjoint's one float32 slot
  device::RingStorage ring_ = device::RingStorage::Native;
  device::Adjoint<Acc, MemSpace, bfloat16> adj_bf16_;  // adj_'s views, gu the bfloat16 ring
  device::Adjoint<Acc, MemSpace, float16> adj_f16_;    // adj_'s views, gu the float16 ring
  double loss_scale_ = 1;                              // set_loss_scale
  device::TargetBlockedEdges<Real, MemSpace> blocks_;  // host shapes, large N: the spike adjoint's edge order
  device::TargetBlockChoice block_choice_;
  device::PoolSet<MemSpace> pools_;
  std::vector<std::int64_t> bands_;
  Kokkos::View<std::int32_t***, Kokkos::LayoutRight, MemSpace> counts_;  // spikes per (band, b, i)
  Kokkos::View<Acc***, Kokkos::LayoutRight, MemSpace> rate_grads_;       // dL/dz per (band, i, b)
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> vreg_steps_;     // [T][2] voltage-regularizer sums per step
  double vreg_range_sum_ = 0, vreg_threshold_sum_ = 0;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> terminal_v_;
  // records of the recomputed segment (samples fastest): v and r per step, and the activity of the D steps
  // before it and of its own steps
  device::SegmentRecord<Real, MemSpace> rec_;
  std::vector<Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, MemSpace>> x_ext_;
  bool last_segment_recorded_ = false;  // the forward pass left the last segment's records in rec_
  std::int64_t s_min_ = 0;              // first step with activity in the current forward pass (-D when carried)
  double t_recompute_ = 0, t_backward_ = 0;
};

}  // namespace dpointnet
