// Template implementation of the trainer's pooled-loss part (train/trainer.hpp): which micro-batches pool their
// spike counts together, and the counts of this trainer's samples; included by trainer_impl.hpp.
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
  std::vector<double> sum(static_cast<std::size_t>(N_) * static_cast<std::size_t>(pool_groups(condition)), 0.0);
  const int A = tc_.accumulate;
  const int k_lo = condition < 0 ? 0 : condition * A, k_hi = condition < 0 ? tc_.micro_batches() : k_lo + A;
  for (int k = k_lo; k < k_hi; ++k) {
    const std::int64_t first = first_sample + run_.schedule.micro_offset(k);
    select_micro_batch(k);
    forward(k, first);
    std::vector<double> group(static_cast<std::size_t>(N_), 0.0);
    add_neuron_counts(host_counts(), group);
    const auto off = static_cast<std::size_t>(pool_group(k, condition)) * static_cast<std::size_t>(N_);
    for (std::size_t i = 0; i < group.size(); ++i) sum[off + i] += group[i];
    cached_forward_ = first;
    cached_version_ = store_->version();
  }
  return sum;
}

}  // namespace dpointnet
