// The single-replica trainer: one update's micro-batches through the BPTT engine, the losses on the host, the
// optimizer step. Its parts: the simulator (the forward dynamics), the weight store (weights, initial weights,
// optimizer state, gradients), the BPTT engine, the carried states, the losses and the optimizer. Free of MPI: the
// parallel layer wraps it.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dpointnet/device/kernel_shape.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/train/bptt_engine.hpp"
#include "dpointnet/train/carried_states.hpp"
#include "dpointnet/train/loss_windows.hpp"
#include "dpointnet/train/losses.hpp"
#include "dpointnet/train/optimizer.hpp"
#include "dpointnet/train/prepared_run.hpp"
#include "dpointnet/train/weight_store.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet {

namespace detail {
struct TrainerTestAccess;
}

struct StepMetrics {
  std::int64_t step = 0;  // 1-based update count after this step
  double loss = 0;
  std::vector<double> loss_terms;  // in TrainConfig::losses order
  double rate_hz = 0;              // mean over samples and neurons
  double grad_norm = 0;            // after adding the weight regularizer, before clipping
  double seconds = 0;
  double samples_per_s = 0;
  // wall time by phase (s): forward with snapshots, segment recompute, reverse sweep, optimizer update
  double t_forward = 0, t_recompute = 0, t_backward = 0, t_update = 0;
  double t_allreduce = 0;     // sample-parallel runs: the packed gradient allreduce
  double peak_rss_bytes = 0;  // peak resident memory of the process so far (set by the training loop)
};

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class Trainer {
 public:
  using MemSpace = typename ExecSpace::memory_space;
  using Store = WeightStore<Real, ExecSpace>;
  using Field = typename Store::Field;

  // `run` must outlive the trainer. `target_blocks` >= 1 replaces train.target_blocks (replicas after the first
  // take the first one's timed choice).
  Trainer(const ExecSpace& space, const PreparedRun& run, int target_blocks = 0);
  ~Trainer();

  // Loss and gradients of one update on this trainer's samples first_sample + the schedule's micro-batch offsets.
  // Pooled losses (RateDistribution) see only these samples.
  StepMetrics compute_gradient(std::int64_t first_sample);
  // With pooled losses over several replicas: spike counts per (loss window, neuron) summed over this trainer's
  // samples (its forward passes; the last one is reused by compute_gradient), then the gradient from the counts
  // summed over every replica (`pooled_samples` samples in all).
  bool has_pooled_loss() const;
  std::vector<double> pooled_counts(std::int64_t first_sample);
  StepMetrics compute_gradient(std::int64_t first_sample, const std::vector<double>& pooled, double pooled_samples);
  // gradient = packed * scale (the job's mean from the packed buffer of WeightStore::pack_gradients).
  void unpack_gradients(const float* packed, double scale);
  // Clipping (optional) and the optimizer step on the trainable surfaces; carried states advance.
  void apply_update();
  // compute_gradient + apply_update for update number updates_done() + 1, on replica 0's samples of the run's
  // schedule (a serial run's samples).
  StepMetrics train_step();

  Store& weights() { return *store_; }
  const Store& weights() const { return *store_; }
  std::int64_t updates_done() const { return update_; }  // updates applied (the optimizer's step count)
  void set_updates_done(std::int64_t u) { update_ = u; }
  double last_grad_norm() const { return last_grad_norm_; }
  double last_update_seconds() const { return t_update_; }  // wall time of the last apply_update
  const BpttEngine<Real, ExecSpace>& engine() const { return *engine_; }

  // Checks: per sample b, the terminal v' of every neuron then its spike count, of the last forward pass
  // ([B][2N] flattened); its first global sample; spikes per neuron summed over this trainer's samples (all
  // micro-batches) and window of the last update.
  std::vector<double> terminal_state() const;
  std::int64_t last_forward_sample() const { return last_forward_sample_; }
  const std::vector<double>& update_spike_counts() const { return update_counts_; }

  // train.carry_state: the committed start states of this trainer's sample slots (micro-batch m, sample b at
  // local slot m B + b), CarriedStates's records; empty before the first update.
  bool has_carried_state() const { return carry_.valid(); }
  std::size_t carried_record_size() const { return carry_.record_size(*sim_); }
  std::vector<double> carried_records() const { return carry_.records(*sim_); }
  void set_carried_records(const std::vector<double>& records, std::int64_t end_step) {
    carry_.set_records(*sim_, records, end_step);
  }
  std::int64_t window_end_step() const { return W_ + T_; }

 private:
  friend struct detail::TrainerTestAccess;
  Trainer(const ExecSpace& space, const PreparedRun& run, int target_blocks, device::KernelShape shape);
  void select_micro_batch(int k);  // the inputs of micro-batch k
  void forward(int micro_batch, std::int64_t first);
  double add_neuron_counts(const std::vector<std::int32_t>& band_counts, std::vector<double>& sum) const;
  std::vector<std::int32_t> host_counts() const;  // [bands][B][N] of the last forward pass
  std::vector<double> add_recurrent_weight_losses();

  ExecSpace space_;
  const PreparedRun& run_;
  const TrainConfig& tc_;
  int B_;
  std::int64_t N_, T_, W_;
  std::unique_ptr<Simulator<Real, ExecSpace>> sim_;
  std::unique_ptr<Optimizer<Real, ExecSpace>> optimizer_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<BpttEngine<Real, ExecSpace>> engine_;
  CarriedStates<Real, ExecSpace> carry_;
  std::vector<std::unique_ptr<Loss>> losses_;
  LossWindows windows_;
  RegularizerScales scales_;
  std::int64_t update_ = 0;
  double last_grad_norm_ = 0, t_update_ = 0;
  std::int64_t cached_forward_ = -1;  // first sample of a forward pass still valid for the backward pass
  std::uint64_t cached_version_ = 0;  // the weight store's version it ran at
  std::int64_t last_forward_sample_ = -1;
  int active_condition_ = -1;          // the stimulus condition the simulator holds (-1: the base inputs)
  std::vector<double> update_counts_;  // spikes per neuron of the last update (host)
};

// Instantiated once, in trainer.cpp.
extern template class BpttEngine<float, Kokkos::DefaultExecutionSpace>;
extern template class BpttEngine<double, Kokkos::DefaultExecutionSpace>;
extern template class Trainer<float, Kokkos::DefaultExecutionSpace>;
extern template class Trainer<double, Kokkos::DefaultExecutionSpace>;
#if DPOINTNET_SECOND_SERIAL_SPACE
extern template class BpttEngine<float, Kokkos::Serial>;
extern template class BpttEngine<double, Kokkos::Serial>;
extern template class Trainer<float, Kokkos::Serial>;
extern template class Trainer<double, Kokkos::Serial>;
#endif

}  // namespace dpointnet
