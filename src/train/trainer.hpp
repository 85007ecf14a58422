// The single-replica trainer: one update's micro-batches through the BPTT engine, the losses on the host, the
// optimizer step. Its parts: the simulator (the forward dynamics), the weight store (weights, initial weights,
// optimizer state, gradients), the BPTT engine, the carried states, the losses and the optimizer. Free of MPI: the
// parallel layer wraps it.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dpointnet/device/kernel_shape.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/train/bptt_engine.hpp"
#include "dpointnet/train/carried_states.hpp"
#include "dpointnet/train/loss_scale.hpp"
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

// The loss of one stimulus condition in an update: its total and its terms (in TrainConfig::losses_of order).
struct ConditionLoss {
  int condition = 0;
  double total = 0;
  std::vector<double> terms;
};

struct StepMetrics {
  std::int64_t step = 0;  // 1-based update count after this step
  double loss = 0;        // with conditions: the mean over them of each condition's total
  // in TrainConfig::losses order, when every condition uses it (with conditions: the mean over them); else empty
  std::vector<double> loss_terms;
  std::vector<ConditionLoss> conditions;  // with train.conditions: those of this update (or series step)
  double rate_hz = 0;                     // mean over samples and neurons
  double grad_norm = 0;                   // after adding the weight regularizer, before clipping
  double seconds = 0;
  double samples_per_s = 0;
  // wall time by phase (s): forward with snapshots, segment recompute, reverse sweep, optimizer update
  double t_forward = 0, t_recompute = 0, t_backward = 0, t_update = 0;
  // the losses' host work: their values, count and weight gradients and batch statistics (their device kernels, the
  // engine's pool sums and gradients, run inside the forward and reverse phases)
  double t_losses = 0;
  double t_allreduce = 0;     // sample-parallel runs: the packed gradient allreduce
  double peak_rss_bytes = 0;  // peak resident memory of the process so far (set by the training loop)
  // float16 runs (train/loss_scale.hpp): the loss scale of this update's backward passes, and its optimizer steps
  // skipped for a gradient that was not finite (set by the training loop)
  double loss_scale = 1;
  std::int64_t skipped = 0;
};

// A "series" update's metrics from those of its condition steps (in order): every condition's loss, the mean of
// the steps' losses, loss terms, rates and gradient norms, the steps' times summed.
inline StepMetrics merge_series_metrics(const std::vector<StepMetrics>& parts) {
  StepMetrics m;
  const double n = static_cast<double>(parts.size());
  for (const StepMetrics& p : parts) {
    m.loss += p.loss / n;
    m.rate_hz += p.rate_hz / n;
    m.grad_norm += p.grad_norm / n;
    m.loss_terms.resize(p.loss_terms.size(), 0.0);
    for (std::size_t q = 0; q < p.loss_terms.size(); ++q) m.loss_terms[q] += p.loss_terms[q] / n;
    m.conditions.insert(m.conditions.end(), p.conditions.begin(), p.conditions.end());
    m.t_forward += p.t_forward, m.t_recompute += p.t_recompute, m.t_backward += p.t_backward;
    m.t_losses += p.t_losses;
    m.t_allreduce += p.t_allreduce, m.seconds += p.seconds;
  }
  if (!parts.empty()) m.loss_scale = parts.front().loss_scale;
  return m;
}

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

  // Loss and gradients of one update on this trainer's samples first_sample + the schedule's micro-batch offsets:
  // every micro-batch (condition < 0; the conditions combined as train.approach says), or those of one stimulus
  // condition (a "series" step: the mean over its micro-batches). Pooled losses (RateDistribution) see only these
  // samples.
  StepMetrics compute_gradient(std::int64_t first_sample, int condition = -1);
  // With pooled losses over several replicas: spike counts per (pool group, loss window, neuron) summed over this
  // trainer's samples (its forward passes; the last one is reused by compute_gradient) of each pool group
  // (pool_groups(condition) x windows x N: the whole update, or each condition, TrainConfig::shared_pool), then the
  // gradient from the counts summed over every replica (`pooled_samples` samples in each group).
  bool has_pooled_loss(int condition = -1) const;
  int pool_groups(int condition = -1) const;
  std::vector<double> pooled_counts(std::int64_t first_sample, int condition = -1);
  StepMetrics compute_gradient(std::int64_t first_sample, const std::vector<double>& pooled, double pooled_samples,
                               int condition = -1);
  // With batch-statistics losses (Synchronization, OrientationSelectivity), after pooled_counts: their statistics
  // over this trainer's samples, from the counts summed over every replica (each loss's update starts here, e.g.
  // OrientationSelectivity's running mean); then the gradient from the statistics summed over every replica.
  bool has_stats_loss(int condition = -1) const;
  std::vector<double> batch_stats(std::int64_t first_sample, const std::vector<double>& pooled, double pooled_samples,
                                  int condition = -1);
  StepMetrics compute_gradient(std::int64_t first_sample, const std::vector<double>& pooled, double pooled_samples,
                               const std::vector<double>& stats, int condition);
  // The losses' states kept from update to update (checkpointed), concatenated in (condition, loss) order.
  std::vector<double> loss_state() const;
  void set_loss_state(const std::vector<double>& s);
  // The same per loss with a state: "<loss name>", or "<condition>/<loss name>" with conditions.
  std::vector<std::pair<std::string, std::vector<double>>> named_loss_states() const;
  // gradient = packed * scale (the job's mean from the packed buffer of WeightStore::pack_gradients).
  void unpack_gradients(const float* packed, double scale);
  // Clipping (optional) and one optimizer step on the trainable surfaces (a "series" update makes one per
  // condition); end_update ends the update (the carried states advance). apply_update: both.
  void apply_step();
  void end_update();
  void apply_update() {
    apply_step();
    end_update();
  }
  // Update number updates_done() + 1 on replica 0's samples of the run's schedule (a serial run's samples): the
  // gradients and optimizer steps of train.approach.
  StepMetrics train_step();

  const TrainConfig& config() const { return tc_; }
  Store& weights() { return *store_; }
  const Store& weights() const { return *store_; }
  std::int64_t updates_done() const { return update_; }  // updates applied (train.steps counts them)
  void set_updates_done(std::int64_t u) { update_ = u; }
  // Optimizer steps applied (its bias-correction t): updates x TrainConfig::steps_per_update.
  std::int64_t optimizer_iterations() const { return iterations_; }
  void set_optimizer_iterations(std::int64_t t) { iterations_ = t; }
  double last_grad_norm() const { return last_grad_norm_; }
  // float16 runs: the dynamic loss scale (its state is part of a checkpoint)
  const LossScale& loss_scale() const { return loss_scale_; }
  void set_loss_scale(const LossScale& s) { loss_scale_ = s; }
  double last_update_seconds() const { return t_update_; }  // wall time of the last update's optimizer steps
  const BpttEngine<Real, ExecSpace>& engine() const { return *engine_; }
  // Steps per min-delay window of the warm-up, forward and recompute passes (PreparedRun::max_window).
  int step_window() const { return sim_->window(); }

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
  void select_micro_batch(int k);  // the inputs and voltage-regularizer scales of micro-batch k
  int loss_set(int k) const { return tc_.conditions.empty() ? 0 : tc_.condition_of(k); }
  int pool_group(int k, int condition) const { return pool_groups(condition) == 1 ? 0 : tc_.condition_of(k); }
  void forward(int micro_batch, std::int64_t first);
  void set_pools(int micro_batch, std::int64_t first);  // the engine's pools for micro-batch k's loss set
  // train.initial_state "from_input": the start states of the epoch of the update whose samples start at
  // first_sample (regenerated at the epoch's first update, or when none are held)
  void ensure_initial_state(std::int64_t first_sample);
  std::int64_t initial_update_ = -1;  // the update the start states were last checked for
  // the micro-batch of loss q of set s: its window's counts (of `bands`, [bands][B][N]) and the sums of its pools
  // (its block of the engine's `pool_sums`, copied into `pools`)
  MicroBatch micro_batch_of(int k, std::int64_t first, int s, std::size_t q, const std::vector<std::int32_t>& bands,
                            const std::vector<double>& pool_sums, std::vector<std::int32_t>& counts,
                            std::vector<double>& pools) const;
  // Where the pools of loss q sit in the engine's pools of micro-batch k: rows (steps) from row0, columns from col0.
  struct PoolBlock {
    std::size_t q = 0;
    std::int64_t row0 = 0, rows = 0, col0 = 0, cols = 0, stride = 0;  // stride: the micro-batch's pools
  };
  const PoolBlock* pool_block(int k, std::size_t q) const {
    for (const auto& b : pool_blocks_[static_cast<std::size_t>(k)])
      if (b.q == q) return &b;
    return nullptr;
  }
  // Position of micro-batch k's first sample (global index `first`) in its condition's batch.
  std::int64_t condition_slot(int k, std::int64_t first) const {
    return first % run_.schedule.global_batch() -
           static_cast<std::int64_t>(std::max(0, tc_.condition_of(k))) * condition_batch();
  }
  // The pooled counts of pool group g in loss window w, of `pooled` ([groups][windows][N]).
  PooledCounts pooled_window(const std::vector<double>& pooled, double samples, int g, int w) const {
    PooledCounts pc;
    const std::size_t n = static_cast<std::size_t>(N_);
    pc.counts =
        pooled.empty()
            ? nullptr
            : pooled.data() + (static_cast<std::size_t>(g) * windows_.n_windows() + static_cast<std::size_t>(w)) * n;
    pc.samples = samples;
    pc.N = N_;
    pc.T = windows_.length(w);
    pc.dt = run_.cfg->dt;
    return pc;
  }
  std::int64_t condition_batch() const {  // samples of one condition in an update (the global batch without)
    return static_cast<std::int64_t>(B_) * tc_.accumulate * run_.schedule.replicas;
  }
  double add_neuron_counts(const std::vector<std::int32_t>& band_counts, std::vector<double>& sum) const;
  std::vector<std::int32_t> host_counts() const;  // [bands][B][N] of the last forward pass
  // the recurrent-weight losses of sets [s_lo, s_hi) (their gradients times `factor`): values per set and loss
  std::vector<std::vector<double>> add_recurrent_weight_losses(int s_lo, int s_hi, double factor, bool once);
  void set_initial_weights();
  int window_of(int set, std::size_t q) const {
    return windows_.window_of(set_offset_[static_cast<std::size_t>(set)] + q);
  }

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
  std::vector<std::vector<std::unique_ptr<Loss>>> losses_;  // per condition (one set without conditions)
  std::vector<std::size_t> set_offset_;                     // each set's first loss in windows_
  LossWindows windows_;                                     // of every set's losses
  std::vector<std::vector<std::size_t>> stats_offset_;      // per set and loss: its statistics in a set's block
  std::vector<std::size_t> stats_begin_;                    // per set: its block of the statistics (+ the end)
  std::vector<std::vector<std::int32_t>> mb_bands_;         // per micro-batch of pooled_counts: its band counts
  std::vector<std::vector<double>> mb_pool_sums_;           // ... and its pools' sums
  std::vector<std::vector<PoolBlock>> pool_blocks_;         // per micro-batch: its losses' blocks of the pools
  std::vector<RegularizerScales> scales_;                   // of each set
  std::int64_t update_ = 0, iterations_ = 0;
  double last_grad_norm_ = 0, t_update_ = 0, t_step_ = 0;
  LossScale loss_scale_;
  std::int64_t cached_forward_ = -1;  // first sample of a forward pass still valid for the backward pass
  std::uint64_t cached_version_ = 0;  // the weight store's version it ran at
  std::int64_t last_forward_sample_ = -1;
  std::vector<double> weight_host_, weight_grad_host_;  // the recurrent weights and their losses' gradient (stored)
  bool initial_weights_set_ = false;
  std::uint64_t initial_version_ = 0;
  double t_losses_ = 0;                // the losses' host work in pooled_counts and batch_stats, for the next gradient
  double t_pooled_forward_ = 0;        // wall time of pooled_counts' forward passes, counted by the next gradient
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
