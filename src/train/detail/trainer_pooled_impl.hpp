// Template implementation of the trainer's pooled-loss part (train/trainer.hpp): which micro-batches pool their
// spike counts together, and the counts of this trainer's samples per loss window; included by trainer_impl.hpp.
#pragma once
#include <vector>

#include "dpointnet/train/trainer.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
bool Trainer<Real, ExecSpace>::has_pooled_loss(int condition) const {
  for (int s = 0; s < static_cast<int>(losses_.size()); ++s)
    if (condition < 0 || s == condition)
      for (const auto& l : losses_[static_cast<std::size_t>(s)])
        if (l->pooled()) return true;
  return false;
}

template <class Real, class ExecSpace>
int Trainer<Real, ExecSpace>::pool_groups(int condition) const {
  return condition >= 0 || tc_.conditions.empty() || tc_.shared_pool() ? 1 : tc_.n_conditions();
}

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::pooled_counts(std::int64_t first_sample, int condition) {
  const std::size_t n = static_cast<std::size_t>(N_), nw = windows_.n_windows(), bn = static_cast<std::size_t>(B_) * n;
  std::vector<double> sum(n * nw * static_cast<std::size_t>(pool_groups(condition)), 0.0);
  std::vector<double> window;
  const int A = tc_.accumulate;
  const int k_lo = condition < 0 ? 0 : condition * A, k_hi = condition < 0 ? tc_.micro_batches() : k_lo + A;
  for (int k = k_lo; k < k_hi; ++k) {
    const std::int64_t first = first_sample + run_.schedule.micro_offset(k);
    select_micro_batch(k);
    forward(k, first);
    const std::vector<std::int32_t> bands = host_counts();
    const auto group = static_cast<std::size_t>(pool_group(k, condition));
    for (std::size_t w = 0; w < nw; ++w) {
      windows_.window_sum(bands, static_cast<int>(w), bn, window);
      double* out = sum.data() + (group * nw + w) * n;
      for (int b = 0; b < B_; ++b)
        for (std::size_t i = 0; i < n; ++i) out[i] += window[static_cast<std::size_t>(b) * n + i];
    }
    cached_forward_ = first;
    cached_version_ = store_->version();
  }
  return sum;
}

}  // namespace dpointnet
