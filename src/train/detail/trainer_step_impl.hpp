// Template implementation of the trainer's steps (train/trainer.hpp): the recurrent-weight losses, the optimizer
// step and the end of an update, a whole training step, and the terminal state; included by trainer_impl.hpp.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "dpointnet/train/trainer.hpp"

namespace dpointnet {

// The losses of the recurrent weights of sets [s_lo, s_hi): their gradients times `factor` added into the store
// (once: the sets are one loss set's copies), their values per set and loss (0 for other losses).
template <class Real, class ExecSpace>
std::vector<std::vector<double>> Trainer<Real, ExecSpace>::add_recurrent_weight_losses(int s_lo, int s_hi,
                                                                                       double factor, bool once) {
  (void)once;
  std::vector<std::vector<double>> terms;
  bool any = false;
  for (int s = s_lo; s < s_hi; ++s) {
    terms.emplace_back(losses_[static_cast<std::size_t>(s)].size(), 0.0);
    for (const auto& l : losses_[static_cast<std::size_t>(s)]) any = any || l->recurrent_weight_loss();
  }
  if (!any) return terms;
  set_initial_weights();
  store_->get_stored(0, Store::Field::Weight, weight_host_);
  auto& g = weight_grad_host_;
  g.assign(weight_host_.size(), 0.0);
  for (int s = s_lo; s < s_hi; ++s) {
    const auto& set = losses_[static_cast<std::size_t>(s)];
    for (std::size_t q = 0; q < set.size(); ++q)
      if (set[q]->recurrent_weight_loss())
        terms[static_cast<std::size_t>(s - s_lo)][q] = set[q]->add_weight_gradient(weight_host_, g);
  }
  if (factor != 1.0)
    for (double& x : g) x *= factor;
  store_->add_gradient_stored(0, g);
  return terms;
}

// The recurrent-weight losses' edge order and initial weights (the store's order): bound once, the weights given
// again when the store's initial weights change (a restore).
template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::set_initial_weights() {
  if (initial_weights_set_ && store_->initial_version() == initial_version_) return;
  std::vector<double> w0;
  for (const auto& set : losses_)
    for (const auto& l : set)
      if (l->recurrent_weight_loss()) {
        if (w0.empty()) store_->get_stored(0, Store::Field::InitialWeight, w0);
        if (!initial_weights_set_) l->bind_edge_order(store_->read_index(0));
        l->set_initial_weights(w0);
      }
  initial_weights_set_ = true;
  initial_version_ = store_->initial_version();
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::unpack_gradients(const float* packed, double scale) {
  last_grad_norm_ = store_->unpack_gradients(packed, scale);
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::apply_step() {
  const auto start = std::chrono::steady_clock::now();
  cached_forward_ = -1;
  // float16 runs: a gradient that is not finite halves the loss scale and skips the step (train/loss_scale.hpp)
  if (!loss_scale_.step(std::isfinite(last_grad_norm_))) return;
  ++iterations_;
  optimizer_->apply(space_, *store_, iterations_, clip_factor(tc_.clip_global_norm, last_grad_norm_));
  store_->mark_changed();
  space_.fence();
  t_step_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::end_update() {
  const auto start = std::chrono::steady_clock::now();
  ++update_;
  if (tc_.carry_state) carry_.commit();  // this update's end states start the next one
  space_.fence();
  t_update_ = t_step_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t_step_ = 0;
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::train_step() {
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t first = run_.schedule.first_sample(update_, 0);
  StepMetrics m;
  if (tc_.approach == Approach::Series && !tc_.conditions.empty()) {
    std::vector<StepMetrics> parts;
    for (int c = 0; c < tc_.n_conditions(); ++c) {
      parts.push_back(compute_gradient(first, c));
      apply_step();
    }
    m = merge_series_metrics(parts);
  } else {
    m = compute_gradient(first);
    apply_step();
  }
  end_update();
  m.t_update = t_update_;
  m.step = update_;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = static_cast<double>(B_) * tc_.micro_batches() / std::max(m.seconds, 1e-12);
  return m;
}

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::terminal_state() const {
  std::vector<double> out;
  const auto v = compat::mirror_view_and_copy(space_, engine_->terminal_v());
  const std::size_t bn = static_cast<std::size_t>(B_) * static_cast<std::size_t>(N_);
  const std::vector<std::int32_t> bands = host_counts();
  std::vector<double> c(bn, 0.0);  // the whole window's counts: every band
  for (std::size_t q = 0; q < bands.size(); ++q) c[q % bn] += bands[q];
  for (int b = 0; b < B_; ++b) {
    for (std::int64_t i = 0; i < N_; ++i) out.push_back(static_cast<double>(v(b, i)));
    for (std::int64_t i = 0; i < N_; ++i) out.push_back(static_cast<double>(c[static_cast<std::size_t>(b * N_ + i)]));
  }
  return out;
}

}  // namespace dpointnet
