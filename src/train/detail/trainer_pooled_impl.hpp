// Template implementation of the trainer's pooled-loss part (train/trainer.hpp): which micro-batches pool their
// spike counts together, and the counts of this trainer's samples per loss window; included by trainer_impl.hpp.
#pragma once
#include <algorithm>
#include <chrono>
#include <stdexcept>
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
  ensure_initial_state(first_sample);
  const auto t_start = std::chrono::steady_clock::now();
  const bool stats = has_stats_loss(condition);
  const std::int64_t update = first_sample / run_.schedule.global_batch();
  for (int st = loss_set(k_lo); st <= loss_set(k_hi - 1); ++st)
    for (const auto& l : losses_[static_cast<std::size_t>(st)]) l->prepare_update(update, condition_batch());
  t_losses_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  const auto t_runs = std::chrono::steady_clock::now();
  mb_bands_.assign(static_cast<std::size_t>(tc_.micro_batches()), {});
  mb_pool_sums_.assign(static_cast<std::size_t>(tc_.micro_batches()), {});
  for (int k = k_lo; k < k_hi; ++k) {
    const std::int64_t first = first_sample + run_.schedule.micro_offset(k);
    select_micro_batch(k);
    forward(k, first);
    const std::vector<std::int32_t> bands = host_counts();
    if (stats) {
      mb_bands_[static_cast<std::size_t>(k)] = bands;
      if (engine_->has_pools()) mb_pool_sums_[static_cast<std::size_t>(k)] = engine_->pool_sums();
    }
    const auto group = static_cast<std::size_t>(pool_group(k, condition));
    for (std::size_t w = 0; w < nw; ++w) {
      windows_.window_sum(bands, static_cast<int>(w), bn, window);
      double* out = sum.data() + (group * nw + w) * n;
      for (int b = 0; b < B_; ++b)
        for (std::size_t i = 0; i < n; ++i) out[i] += window[static_cast<std::size_t>(b) * n + i];
    }
    cached_forward_ = first;
    cached_version_ = store_->version();
    t_pooled_forward_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_runs).count();
  }
  return sum;
}

// From rest, run.tstop steps of the initial-state inputs without gradient; sample slot s of every condition gets the
// end state of sample 2^31 + epoch x (samples of a condition) + s of those inputs.
template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::ensure_initial_state(std::int64_t first_sample) {
  const std::int64_t update = first_sample / run_.schedule.global_batch();
  if (!tc_.from_input || update == initial_update_) return;
  initial_update_ = update;
  const std::int64_t per = tc_.steps_per_epoch > 0 ? tc_.steps_per_epoch : tc_.steps;
  if (carry_.valid() && update % per != 0) return;
  Kokkos::Profiling::pushRegion("dpointnet::initial_state");
  const std::int64_t epoch = update / per;
  sim_->set_input_schedules(run_.initial_inputs);
  active_condition_ = -2;
  engine_->clear_pools();
  for (int k = 0; k < tc_.micro_batches(); ++k) {
    const std::int64_t first = (std::int64_t(1) << 31) + epoch * condition_batch() +
                               first_sample % run_.schedule.global_batch() +
                               static_cast<std::int64_t>(k % tc_.accumulate) * B_;
    sim_->set_sample_offset(first);
    sim_->reset();
    sim_->run(T_, nullptr);
    sim_->save(carry_.start_for_write(*sim_, k));
  }
  space_.fence();
  carry_.mark_valid();
  cached_forward_ = -1;
  Kokkos::Profiling::popRegion();
}

template <class Real, class ExecSpace>
bool Trainer<Real, ExecSpace>::has_stats_loss(int condition) const {
  for (int st = 0; st < static_cast<int>(losses_.size()); ++st)
    if (condition < 0 || st == condition)
      for (const auto& l : losses_[static_cast<std::size_t>(st)])
        if (l->stats_size() > 0) return true;
  return false;
}

// The engine's pools for micro-batch k: those of every pool loss of its loss set, side by side (columns), over the
// union of their windows (rows); or none.
template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::set_pools(int k, std::int64_t first) {
  const int st = loss_set(k);
  const auto& set = losses_[static_cast<std::size_t>(st)];
  if (pool_blocks_.size() != static_cast<std::size_t>(tc_.micro_batches()))
    pool_blocks_.assign(static_cast<std::size_t>(tc_.micro_batches()), {});
  auto& blocks = pool_blocks_[static_cast<std::size_t>(k)];
  blocks.clear();
  std::vector<std::int32_t> sample, all_sample;
  std::vector<std::vector<std::int32_t>> members, all_members;
  std::int64_t t0 = T_, t1 = 0;
  const std::int64_t slot0 = condition_slot(k, first);
  for (std::size_t q = 0; q < set.size(); ++q) {
    if (!set[q]->pools(slot0, B_, sample, members) || sample.empty()) continue;
    const int w = window_of(st, q);
    PoolBlock b;
    b.q = q;
    b.row0 = windows_.begin(w);
    b.rows = windows_.length(w);
    b.col0 = static_cast<std::int64_t>(all_sample.size());
    b.cols = static_cast<std::int64_t>(sample.size());
    blocks.push_back(b);
    all_sample.insert(all_sample.end(), sample.begin(), sample.end());
    all_members.insert(all_members.end(), members.begin(), members.end());
    t0 = std::min(t0, windows_.begin(w));
    t1 = std::max(t1, windows_.end(w));
  }
  if (blocks.empty()) {
    engine_->clear_pools();
    return;
  }
  for (auto& b : blocks) {
    b.row0 -= t0;
    b.stride = static_cast<std::int64_t>(all_sample.size());
  }
  engine_->set_pools(all_sample, all_members, t0, t1);
}

template <class Real, class ExecSpace>
MicroBatch Trainer<Real, ExecSpace>::micro_batch_of(int k, std::int64_t first, int st, std::size_t q,
                                                    const std::vector<std::int32_t>& bands,
                                                    const std::vector<double>& pool_sums,
                                                    std::vector<std::int32_t>& counts,
                                                    std::vector<double>& pools) const {
  const int w = window_of(st, q);
  windows_.window_sum(bands, w, static_cast<std::size_t>(B_) * static_cast<std::size_t>(N_), counts);
  MicroBatch mb;
  mb.slot0 = condition_slot(k, first);
  mb.first_sample = first;
  mb.B = B_;
  mb.N = N_;
  mb.T = windows_.length(w);
  mb.dt = run_.cfg->dt;
  mb.counts = counts.data();
  const PoolBlock* b = pool_block(k, q);
  pools.clear();
  if (b && !pool_sums.empty()) {
    for (std::int64_t r = 0; r < b->rows; ++r)
      for (std::int64_t c = 0; c < b->cols; ++c)
        pools.push_back(pool_sums[static_cast<std::size_t>((b->row0 + r) * b->stride + b->col0 + c)]);
    mb.pool_sums = pools.data();
  }
  return mb;
}

// Each batch-statistics loss of these micro-batches' sets starts its update from the pooled counts, then adds the
// statistics of the micro-batches that pooled_counts ran ([sets][their losses' statistics]).
template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::batch_stats(std::int64_t first_sample, const std::vector<double>& pooled,
                                                          double pooled_samples, int condition) {
  const auto t_start = std::chrono::steady_clock::now();
  const int A = tc_.accumulate;
  const int k_lo = condition < 0 ? 0 : condition * A, k_hi = condition < 0 ? tc_.micro_batches() : k_lo + A;
  const int s_lo = loss_set(k_lo), s_hi = loss_set(k_hi - 1) + 1;
  for (int st = s_lo; st < s_hi; ++st) {
    const auto& set = losses_[static_cast<std::size_t>(st)];
    const int g = pool_groups(condition) == 1 ? 0 : st;
    for (std::size_t q = 0; q < set.size(); ++q) {
      if (set[q]->stats_size() == 0) continue;
      set[q]->begin_update(pooled_window(pooled, pooled_samples, g, window_of(st, q)));
    }
  }
  std::vector<double> out(stats_begin_[static_cast<std::size_t>(s_hi)] - stats_begin_[static_cast<std::size_t>(s_lo)],
                          0.0);
  std::vector<std::int32_t> counts;
  std::vector<double> pools;
  for (int k = k_lo; k < k_hi; ++k) {
    const int st = loss_set(k);
    const auto& set = losses_[static_cast<std::size_t>(st)];
    const std::int64_t first = first_sample + run_.schedule.micro_offset(k);
    for (std::size_t q = 0; q < set.size(); ++q) {
      if (set[q]->stats_size() == 0) continue;
      const MicroBatch mb = micro_batch_of(k, first, st, q, mb_bands_[static_cast<std::size_t>(k)],
                                           mb_pool_sums_[static_cast<std::size_t>(k)], counts, pools);
      set[q]->add_stats(mb, out.data() + stats_begin_[static_cast<std::size_t>(st)] -
                                stats_begin_[static_cast<std::size_t>(s_lo)] +
                                stats_offset_[static_cast<std::size_t>(st)][q]);
    }
  }
  t_losses_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return out;
}

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::loss_state() const {
  std::vector<double> out;
  for (const auto& set : losses_)
    for (const auto& l : set) {
      const auto s = l->state();
      out.insert(out.end(), s.begin(), s.end());
    }
  return out;
}

template <class Real, class ExecSpace>
std::vector<std::pair<std::string, std::vector<double>>> Trainer<Real, ExecSpace>::named_loss_states() const {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (std::size_t st = 0; st < losses_.size(); ++st)
    for (const auto& l : losses_[st]) {
      auto v = l->state();
      if (v.empty()) continue;
      const std::string prefix = tc_.conditions.empty() ? "" : tc_.condition_names[st] + "/";
      out.emplace_back(prefix + l->spec().name, std::move(v));
    }
  return out;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::set_loss_state(const std::vector<double>& s) {
  std::size_t off = 0;
  for (auto& set : losses_)
    for (auto& l : set) {
      const std::size_t n = l->state().size();
      if (n == 0) continue;
      if (off + n > s.size()) throw std::logic_error("the losses' state is too short");
      l->set_state(std::vector<double>(s.begin() + static_cast<std::ptrdiff_t>(off),
                                       s.begin() + static_cast<std::ptrdiff_t>(off + n)));
      off += n;
    }
  if (off != s.size()) throw std::logic_error("the losses' state is too long");
}

}  // namespace dpointnet
