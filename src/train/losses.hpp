// The losses (docs/model.md, "Losses"): one object per configured loss, giving its value and its gradients with
// respect to the spike counts (on the host), the voltages and the weights (as scales that the BPTT engine and the
// weight store apply on the device). A new loss derives from Loss and is created in make_losses.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

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
  virtual double add_weight_gradient(const std::vector<double>& w, const std::vector<double>& w0,
                                     std::vector<double>& grad) const {
    (void)w, (void)w0, (void)grad;
    return 0.0;
  }

 protected:
  LossSpec spec_;
};

std::vector<std::unique_ptr<Loss>> make_losses(const TrainConfig& tc, const Network& net);

RegularizerScales regularizer_scales(const std::vector<std::unique_ptr<Loss>>& losses, int B, std::int64_t T,
                                     std::int64_t N, std::int64_t n_trainable);

}  // namespace dpointnet
