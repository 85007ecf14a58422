// The losses (docs/model.md, "Losses"): one object per configured loss, giving its value and its gradients with
// respect to the spike counts (on the host), the voltages and the weights (as scales that the BPTT engine and the
// weight store apply on the device). A new loss derives from Loss and is created in make_losses.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/train_config.hpp"

namespace dpointnet {

// What the losses see after a forward pass of B samples over N neurons: counts and T of the loss's window.
struct LossInputs {
  int B = 1;
  std::int64_t N = 0, T = 0;
  double dt = 1.0;
  const std::int32_t* counts = nullptr;               // spikes per (b, i), row-major [B][N]
  double vreg_range_sum = 0, vreg_threshold_sum = 0;  // raw sums over (b, t, i)
  double weight_sq_sum = 0;                           // sum over trainable edges of (w - w0)^2
  std::int64_t n_trainable = 0;                       // trainable edges over all surfaces
};

// What a pooled (not sample-separable) loss sees: the spike counts per neuron summed over every sample of the
// update (all micro-batches and all replicas) and the window, and how many samples that is.
struct PooledCounts {
  const double* counts = nullptr;  // [N]
  double samples = 0;
  std::int64_t N = 0, T = 0;
  double dt = 1.0;
};

// Per-(b, t, i) scales of the voltage regularizer's gradient (sum of costs / (B T N) per mode), and the weight
// regularizer's scale (sum of costs / trainable edges).
struct RegularizerScales {
  double vreg_range = 0, vreg_threshold = 0, weight = 0;
};

// What a batch-statistics loss sees of one micro-batch (Synchronization, OrientationSelectivity).
struct MicroBatch {
  std::int64_t slot0 = 0;         // position of its first sample in its condition's global batch
  std::int64_t first_sample = 0;  // global index of its first sample
  int B = 1;
  std::int64_t N = 0, T = 0;  // T: the loss's window
  double dt = 1.0;
  const std::int32_t* counts = nullptr;  // [B][N] spikes in the loss's window
  const double* pool_sums = nullptr;     // [T][pools] of the micro-batch's pools (pools() below)
};

class Loss {
 public:
  explicit Loss(const LossSpec& spec) : spec_(spec) {}
  virtual ~Loss() = default;
  const LossSpec& spec() const { return spec_; }
  bool pooled() const { return !spec_.sample_separable; }
  // Per-sample losses: the mean over the batch's samples.
  virtual double value(const LossInputs& in) const = 0;
  // Adds dL/dcount(b, i) into rate_grad ([B][N]); losses that do not read counts add nothing.
  virtual void add_count_gradient(const LossInputs& in, std::vector<double>& rate_grad) const {
    (void)in, (void)rate_grad;
  }
  // Pooled losses: the value of the whole update, and dL/dcount(b, i), the same for every sample b of a
  // micro-batch of B, added into rate_grad ([B][N]).
  virtual double pooled_value(const PooledCounts& pc) const {
    (void)pc;
    return 0.0;
  }
  virtual void add_pooled_gradient(const PooledCounts& pc, int B, std::vector<double>& rate_grad) const {
    (void)pc, (void)B, (void)rate_grad;
  }
  // dL/dv: adds the loss's cost / (B T N) to the scale of its voltage mode; dL/dw: adds its cost to s.weight (the
  // sum is divided by the trainable edges after every loss has added its share).
  virtual void add_scales(RegularizerScales& s, double btn) const { (void)s, (void)btn; }
  // Whether value() reads the weights (LossInputs::weight_sq_sum): evaluated once per update, after the gradients.
  virtual bool reads_weights() const { return false; }
  // Losses of the recurrent weights themselves (EMDWeightRegularization), evaluated once per update: add dL/dw
  // into grad given the weights w and the initial weights w0 (all three in the recurrent projection's read order),
  // and return the value.
  virtual bool recurrent_weight_loss() const { return false; }

  // ---- batch statistics (Synchronization, OrientationSelectivity) ----
  // A loss of statistics summed over every sample of its condition in the update: stats_size() values per
  // micro-batch (add_stats), summed over the micro-batches and replicas, then its value and its gradient.
  virtual std::size_t stats_size() const { return 0; }
  // Once per update (or series step) of the loss's condition, before its forward passes: the update index and the
  // condition's global batch (e.g. the synchronization loss's sampling plan and pools).
  virtual void prepare_update(std::int64_t update, std::int64_t global_batch) { (void)update, (void)global_batch; }
  // Then, before its statistics: the pooled spike counts of the loss's window over its condition's samples (e.g.
  // the running mean of OrientationSelectivity).
  virtual void begin_update(const PooledCounts& pooled) { (void)pooled; }
  // The neuron pools of the micro-batch whose first sample is at slot0 of its condition's batch (the engine sums
  // their spikes at every step of the loss's window): each pool's sample and members; false without pools.
  virtual bool pools(std::int64_t slot0, int B, std::vector<std::int32_t>& sample,
                     std::vector<std::vector<std::int32_t>>& members) const {
    (void)slot0, (void)B, (void)sample, (void)members;
    return false;
  }
  virtual void add_stats(const MicroBatch& mb, double* stats) const { (void)mb, (void)stats; }
  virtual double stats_value(const double* stats) const {
    (void)stats;
    return 0.0;
  }
  // Adds dL/dcount(b, i) of the micro-batch's samples (in its window) and dL/dy of its pools, exact for the whole
  // update's loss (the trainer undoes its averaging over micro-batches and replicas).
  virtual void add_stats_gradient(const MicroBatch& mb, const double* stats, std::vector<double>& count_grad,
                                  std::vector<double>& pool_grad) const {
    (void)mb, (void)stats, (void)count_grad, (void)pool_grad;
  }
  // State kept from update to update (checkpointed); empty for most losses.
  virtual std::vector<double> state() const { return {}; }
  virtual void set_state(const std::vector<double>& s) { (void)s; }
  // The inputs of the loss's condition and the run's seed (a grating's directions).
  virtual void bind_inputs(const std::vector<PreparedInput>& inputs, std::uint32_t seed) { (void)inputs, (void)seed; }
  // Losses of the recurrent weights (recurrent_weight_loss()). Their vectors hold one value per recurrent edge in
  // the order bound here (read_index[k]: the read-order index of the edge at position k; read order until bound).
  // The initial weights are set before the first update and again after a restore; add_weight_gradient returns the
  // loss at weights w and adds its gradient into grad.
  virtual void bind_edge_order(const std::vector<std::int64_t>& read_index) { (void)read_index; }
  virtual void set_initial_weights(const std::vector<double>& w0) { (void)w0; }
  virtual double add_weight_gradient(const std::vector<double>& w, std::vector<double>& grad) const {
    (void)w, (void)grad;
    return 0.0;
  }

 protected:
  LossSpec spec_;
};

std::vector<std::unique_ptr<Loss>> make_losses(const TrainConfig& tc, const Network& net);

RegularizerScales regularizer_scales(const std::vector<std::unique_ptr<Loss>>& losses, int B, std::int64_t T,
                                     std::int64_t N, std::int64_t n_trainable);

}  // namespace dpointnet
