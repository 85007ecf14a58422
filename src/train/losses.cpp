#include "dpointnet/train/losses.hpp"

#include "dpointnet/train/emd_regularization.hpp"
#include "dpointnet/train/orientation_selectivity.hpp"
#include "dpointnet/train/rate_distribution.hpp"
#include "dpointnet/train/synchronization.hpp"

namespace dpointnet {

namespace {

// Mean over (b, i) of (rate - target_i)^2, rate in Hz or spikes per step.
class TargetFiringRateLoss final : public Loss {
 public:
  TargetFiringRateLoss(const LossSpec& s, const Network& net)
      : Loss(s), target_(static_cast<std::size_t>(net.n_neurons)) {
    for (std::int64_t i = 0; i < net.n_neurons; ++i) {
      double t = s.target;
      if (!s.target_by_type.empty()) {
        const auto it = s.target_by_type.find(net.node_type_id(i));
        t = it == s.target_by_type.end() ? s.target : it->second;
      }
      target_[static_cast<std::size_t>(i)] = t;
    }
  }
  double value(const LossInputs& in) const override {
    double v = 0;
    for (std::int64_t i = 0; i < in.N; ++i)
      for (int b = 0; b < in.B; ++b) {
        const double d = diff(in, b, i);
        v += d * d;
      }
    return v * (spec_.cost / (static_cast<double>(in.B) * static_cast<double>(in.N)));
  }
  void add_count_gradient(const LossInputs& in, std::vector<double>& g) const override {
    const double BN = static_cast<double>(in.B) * static_cast<double>(in.N);
    for (std::int64_t i = 0; i < in.N; ++i)
      for (int b = 0; b < in.B; ++b)
        g[static_cast<std::size_t>(b * in.N + i)] += spec_.cost * 2.0 * diff(in, b, i) * per(in) / BN;
  }

 private:
  double per(const LossInputs& in) const {
    return spec_.per_step ? 1.0 / static_cast<double>(in.T) : 1000.0 / (static_cast<double>(in.T) * in.dt);
  }
  double diff(const LossInputs& in, int b, std::int64_t i) const {
    return in.counts[static_cast<std::size_t>(b * in.N + i)] * per(in) - target_[static_cast<std::size_t>(i)];
  }
  std::vector<double> target_;  // per neuron
};

class VoltageRegularizationLoss final : public Loss {
 public:
  using Loss::Loss;
  double value(const LossInputs& in) const override {
    const double btn = static_cast<double>(in.B) * static_cast<double>(in.N) * static_cast<double>(in.T);
    return spec_.cost * (spec_.threshold_mode ? in.vreg_threshold_sum : in.vreg_range_sum) / btn;
  }
  void add_scales(RegularizerScales& s, double btn) const override {
    (spec_.threshold_mode ? s.vreg_threshold : s.vreg_range) += spec_.cost / btn;
  }
};

class WeightRegularizationLoss final : public Loss {
 public:
  using Loss::Loss;
  double value(const LossInputs& in) const override {
    return in.n_trainable > 0 ? spec_.cost * in.weight_sq_sum / static_cast<double>(in.n_trainable) : 0.0;
  }
  void add_scales(RegularizerScales& s, double) const override { s.weight += spec_.cost; }
  bool reads_weights() const override { return true; }
};

}  // namespace

std::vector<std::unique_ptr<Loss>> make_losses(const TrainConfig& tc, const Network& net) {
  std::vector<std::unique_ptr<Loss>> out;
  for (const auto& l : tc.losses) {
    switch (l.kind) {
      case LossKind::TargetFiringRate:
        out.push_back(std::make_unique<TargetFiringRateLoss>(l, net));
        break;
      case LossKind::VoltageRegularization:
        out.push_back(std::make_unique<VoltageRegularizationLoss>(l));
        break;
      case LossKind::WeightRegularization:
        out.push_back(std::make_unique<WeightRegularizationLoss>(l));
        break;
      case LossKind::RateDistribution:
        out.push_back(make_rate_distribution_loss(l, net));
        break;
      case LossKind::EMDWeightRegularization:
        out.push_back(make_emd_regularization_loss(l, net));
        break;
      case LossKind::Synchronization:
        out.push_back(make_synchronization_loss(l));
        break;
      case LossKind::OrientationSelectivity:
        out.push_back(make_orientation_selectivity_loss(l));
        break;
    }
  }
  return out;
}

RegularizerScales regularizer_scales(const std::vector<std::unique_ptr<Loss>>& losses, int B, std::int64_t T,
                                     std::int64_t N, std::int64_t n_trainable) {
  RegularizerScales s;
  const double btn = static_cast<double>(B) * static_cast<double>(T) * static_cast<double>(N);
  for (const auto& l : losses) l->add_scales(s, btn);
  s.weight = n_trainable > 0 ? s.weight / static_cast<double>(n_trainable) : 0.0;
  return s;
}

}  // namespace dpointnet
