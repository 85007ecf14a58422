// The gradient of one update: its micro-batches (train.accumulate), each a forward pass with snapshots, the
// losses on the host and the reverse sweep; pooled losses (RateDistribution) from the spike counts of every
// sample of the update; the mean over the micro-batches and the weight regularizer once.
#pragma once
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "device/fill.hpp"
#include "train/losses.hpp"
#include "train/trainer.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
bool Trainer<Real, ExecSpace>::has_pooled_loss() const {
  for (const auto& l : losses_)
    if (l->pooled()) return true;
  return false;
}

// Adds the spike counts of the last forward pass (host copy hc, [B][N]) per neuron into sum; returns their total.
template <class Real, class ExecSpace>
template <class HostCounts>
double Trainer<Real, ExecSpace>::add_neuron_counts(const HostCounts& hc, std::vector<double>& sum) const {
  double total = 0;
  for (int b = 0; b < B_; ++b)
    for (std::int64_t i = 0; i < N_; ++i) {
      sum[static_cast<std::size_t>(i)] += hc(b, i);
      total += hc(b, i);
    }
  return total;
}

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::pooled_counts(std::int64_t first_sample) {
  std::vector<double> sum(static_cast<std::size_t>(N_), 0.0);
  for (int k = 0; k < tc_.micro_batches(); ++k) {
    const std::int64_t first = first_sample + schedule_.micro_offset(k);
    select_micro_batch(k);
    sim_->set_sample_offset(first);
    forward_with_snapshots(k);
    last_forward_sample_ = first;
    add_neuron_counts(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts_), sum);
    cached_forward_ = first;
  }
  return sum;
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::compute_gradient(std::int64_t first_sample) {
  if (!has_pooled_loss()) return compute_gradient(first_sample, {}, 0.0);
  const std::vector<double> pooled = pooled_counts(first_sample);
  return compute_gradient(first_sample, pooled, static_cast<double>(B_) * tc_.micro_batches());
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::compute_gradient(std::int64_t first_sample, const std::vector<double>& pooled,
                                                       double pooled_samples) {
  const auto start = std::chrono::steady_clock::now();
  const int K = tc_.micro_batches();
  const bool pool = has_pooled_loss();
  if (pool && (pooled.size() != static_cast<std::size_t>(N_) || pooled_samples <= 0))
    throw std::logic_error("pooled losses need the pooled spike counts of every neuron");
  PooledCounts pc;
  pc.counts = pooled.data();
  pc.samples = pooled_samples;
  pc.N = N_;
  pc.T = T_;
  pc.dt = bp_.dt;
  for (auto& s : surfaces_)
    if (s.trainable) device::fill(space_, s.grad, 0.0);
  StepMetrics m;
  m.t_forward = m.t_recompute = m.t_backward = m.rate_hz = 0;
  std::vector<double> data_terms(losses_.size(), 0.0);  // per-sample losses, summed over the micro-batches
  update_counts_.assign(static_cast<std::size_t>(N_), 0.0);
  LossInputs in;
  in.B = B_;
  in.N = N_;
  in.T = T_;
  in.dt = bp_.dt;
  in.n_trainable = n_trainable_;
  // micro-batch k: samples first_sample + k B .. + B - 1; its gradient is added to the surfaces' sums. With
  // pooled losses the micro-batches run last to first, so that the last forward pass of pooled_counts is reused.
  for (int q = 0; q < K; ++q) {
    const int k = pool ? K - 1 - q : q;
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t first = first_sample + schedule_.micro_offset(k);
    select_micro_batch(k);  // a no-op for the cached forward pass: its condition is still selected
    if (cached_forward_ != first) {
      sim_->set_sample_offset(first);
      forward_with_snapshots(k);
      last_forward_sample_ = first;
    }
    cached_forward_ = -1;
    Kokkos::fence();
    m.t_forward += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // count losses on the host (B x N values)
    auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts_);
    in.counts = hc.data();
    in.vreg_range_sum = vreg_range_sum_;
    in.vreg_threshold_sum = vreg_threshold_sum_;
    const double total_spikes = add_neuron_counts(hc, update_counts_);
    const double BN = static_cast<double>(B_) * static_cast<double>(N_);
    m.rate_hz += total_spikes * 1000.0 / (BN * static_cast<double>(T_) * bp_.dt);
    std::vector<double> rate_grad(static_cast<std::size_t>(B_) * static_cast<std::size_t>(N_), 0.0);
    for (const auto& l : losses_) l->add_count_gradient(in, rate_grad);
    if (pool) {
      // dL/dcount of each sample, times (pooled samples / B): the gradients are averaged over the K micro-batches
      // here and over the replicas by the parallel layer, which a pooled loss must not be
      std::vector<double> pg(rate_grad.size(), 0.0);
      for (const auto& l : losses_) l->add_pooled_gradient(pc, B_, pg);
      const double f = pooled_samples / static_cast<double>(B_);
      for (std::size_t q2 = 0; q2 < pg.size(); ++q2) rate_grad[q2] += f * pg[q2];
    }
    auto hg = Kokkos::create_mirror_view(adj_.rate_grad);
    for (int b = 0; b < B_; ++b)
      for (std::int64_t i = 0; i < N_; ++i)
        hg(i, b) = static_cast<Acc>(rate_grad[static_cast<std::size_t>(b * N_ + i)]);
    Kokkos::deep_copy(adj_.rate_grad, hg);
    backward();
    m.t_recompute += t_recompute_;
    m.t_backward += t_backward_;
    for (std::size_t q = 0; q < losses_.size(); ++q)
      if (losses_[q]->spec().kind != LossKind::WeightRegularization) data_terms[q] += losses_[q]->value(in);
    in.counts = nullptr;
  }
  // the mean over the K x B samples (exact for K = 1), then the weight regularizer once
  if (K > 1) {
    for (auto& s : surfaces_)
      if (s.trainable) device::scale(space_, s.grad, 1.0 / K);
    m.rate_hz /= K;
  }
  in.weight_sq_sum = weight_regularizer();
  m.loss = 0;
  for (std::size_t q = 0; q < losses_.size(); ++q) {
    const bool weights = losses_[q]->spec().kind == LossKind::WeightRegularization;
    m.loss_terms.push_back(weights                ? losses_[q]->value(in)
                           : losses_[q]->pooled() ? losses_[q]->pooled_value(pc)
                                                  : data_terms[q] / K);
    m.loss += m.loss_terms.back();
  }
  double norm2 = 0;
  for (const auto& s : surfaces_) {
    if (!s.trainable) continue;
    auto g = s.grad;
    double part = 0;
    Kokkos::parallel_reduce(
        "dpointnet::grad_norm", Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(g.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t e, double& acc) {
          acc += static_cast<double>(g(e)) * static_cast<double>(g(e));
        },
        part);
    norm2 += part;
  }
  m.grad_norm = std::sqrt(norm2);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = static_cast<double>(B_) * K / std::max(m.seconds, 1e-12);
  last_grad_norm_ = m.grad_norm;
  return m;
}

}  // namespace dpointnet
