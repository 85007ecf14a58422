// The optimizer (docs/model.md, "Optimizer"): turns the gradients of a weight store into new weights, keeping
// its per-edge state in the store (so that checkpoint files and the replicas' broadcast carry it). Adam and
// exponentiated Adam (exp_adam) are implemented; another optimizer derives from Optimizer and is picked by
// train.optimizer.type in make_optimizer.
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>

#include "dpointnet/device/adam.hpp"
#include "dpointnet/device/exp_adam.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/train/weight_store.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Per-edge values the optimizer keeps for each trainable surface (WeightStore::Surface::state).
  virtual int n_state() const = 0;
  // Optimizer iteration `update` (1-based, every step counted) of every trainable surface, from its gradient times
  // `grad_scale` (the clipping factor).
  virtual void apply(const ExecSpace& space, WeightStore<Real, ExecSpace>& store, std::int64_t update,
                     double grad_scale) const = 0;
};

// Adam with bias correction, then the sign constraint (each weight stays on the side of its initial weight).
template <class Real, class ExecSpace>
class AdamOptimizer final : public Optimizer<Real, ExecSpace> {
 public:
  AdamOptimizer(double lr, double beta1, double beta2, double epsilon)
      : lr_(lr), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}
  int n_state() const override { return 2; }
  void apply(const ExecSpace& space, WeightStore<Real, ExecSpace>& store, std::int64_t update,
             double grad_scale) const override {
    const double k = static_cast<double>(update);
    for (int q = 0; q < store.size(); ++q) {
      auto& s = store[q];
      if (!s.trainable) continue;
      device::AdamFunctor<Real, ExecSpace> f{s.w,
                                             s.w0,
                                             s.state[0],
                                             s.state[1],
                                             s.grad,
                                             lr_,
                                             beta1_,
                                             beta2_,
                                             epsilon_,
                                             1.0 - std::pow(beta1_, k),
                                             1.0 - std::pow(beta2_, k),
                                             grad_scale};
      Kokkos::parallel_for("dpointnet::adam",
                           Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(s.grad.extent(0))), f);
    }
  }

 private:
  double lr_, beta1_, beta2_, epsilon_;
};

// Exponentiated Adam (V1-PAPER section 4.4): Adam's moments, a multiplicative step that keeps every sign.
template <class Real, class ExecSpace>
class ExpAdamOptimizer final : public Optimizer<Real, ExecSpace> {
 public:
  ExpAdamOptimizer(double lr, double beta1, double beta2, double epsilon)
      : lr_(lr), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}
  int n_state() const override { return 2; }
  void apply(const ExecSpace& space, WeightStore<Real, ExecSpace>& store, std::int64_t update,
             double grad_scale) const override {
    const double k = static_cast<double>(update);
    const double alpha = lr_ * std::sqrt(1.0 - std::pow(beta2_, k)) / (1.0 - std::pow(beta1_, k));
    for (int q = 0; q < store.size(); ++q) {
      auto& s = store[q];
      if (!s.trainable) continue;
      device::ExpAdamFunctor<Real, ExecSpace> f{s.w,   s.w0,   s.state[0], s.state[1], s.grad,
                                                alpha, beta1_, beta2_,     epsilon_,   grad_scale};
      Kokkos::parallel_for("dpointnet::exp_adam",
                           Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(s.grad.extent(0))), f);
    }
  }

 private:
  double lr_, beta1_, beta2_, epsilon_;
};

template <class Real, class ExecSpace>
std::unique_ptr<Optimizer<Real, ExecSpace>> make_optimizer(const TrainConfig& tc) {
  if (tc.optimizer == OptimizerKind::ExpAdam)
    return std::make_unique<ExpAdamOptimizer<Real, ExecSpace>>(tc.lr, tc.beta1, tc.beta2, tc.epsilon);
  return std::make_unique<AdamOptimizer<Real, ExecSpace>>(tc.lr, tc.beta1, tc.beta2, tc.epsilon);
}

// The clipping factor of train.optimizer.clip_global_norm for a gradient of norm `norm` (1: no clipping).
inline double clip_factor(double clip_global_norm, double norm) {
  return (clip_global_norm > 0 && norm > clip_global_norm) ? clip_global_norm / norm : 1.0;
}

}  // namespace dpointnet
