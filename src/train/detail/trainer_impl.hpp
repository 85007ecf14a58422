// Template implementation of the trainer (train/trainer.hpp); instantiated in trainer.cpp.
#pragma once
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpointnet/train/detail/bptt_engine_impl.hpp"
#include "dpointnet/train/detail/trainer_pooled_impl.hpp"
#include "dpointnet/train/detail/trainer_step_impl.hpp"
#include "dpointnet/train/trainer.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
Trainer<Real, ExecSpace>::Trainer(const ExecSpace& space, const PreparedRun& run, int target_blocks)
    : Trainer(space, run, target_blocks, device::KernelShape::Auto) {}

template <class Real, class ExecSpace>
Trainer<Real, ExecSpace>::Trainer(const ExecSpace& space, const PreparedRun& run, int target_blocks,
                                  device::KernelShape shape)
    : space_(space),
      run_(run),
      tc_(*run.tc),
      B_(run.schedule.batch),
      N_(run.net->n_neurons),
      T_(run.cfg->n_steps),
      W_(run.tc->warmup_steps),
      carry_(space, run.tc->carry_state || run.tc->from_input, run.tc->micro_batches(), run.schedule.batch) {
  for (const auto& in : run.inputs)
    if (!in.silent && in.kind == InputKind::SpikeFile &&
        static_cast<std::int64_t>(in.spikes.step_offsets.size()) - 1 < W_ + T_)
      throw std::logic_error("input " + in.name + " was prepared for " +
                             std::to_string(in.spikes.step_offsets.size() - 1) + " steps; training runs " +
                             std::to_string(W_ + T_) + " (train.warmup_ms + run.tstop)");
  if (static_cast<int>(run.conditions.size()) != static_cast<int>(tc_.conditions.size()))
    throw std::logic_error("the prepared run has " + std::to_string(run.conditions.size()) +
                           " stimulus conditions; train.conditions has " + std::to_string(tc_.conditions.size()));
  SimOptions o;
  o.batch_size = B_;
  o.n_steps = W_ + T_;
  o.seed = run.cfg->seed;
  o.record_chunk = kTrainingRecordChunk;
  o.max_window = run.max_window;  // min-delay windows in the warm-up, forward and recompute passes
  o.windows_with_hook = true;
  sim_ = detail::SimulatorAccess::make<Real>(space_, *run.net, run.inputs, o, shape);
  sim_->set_current_pulses(run.clamps);
  optimizer_ = make_optimizer<Real, ExecSpace>(tc_);
  store_ = std::make_unique<Store>(space_, *sim_, *run.net, tc_.trainable, optimizer_->n_state());
  // one loss set per condition (its own losses, or train.losses), each with its regularizer scales; the windows
  // of all of them
  std::vector<LossSpec> all;
  for (int c = 0; c < static_cast<int>(std::max<std::size_t>(1, tc_.conditions.size())); ++c) {
    TrainConfig set = tc_;
    set.losses = tc_.losses_of(tc_.conditions.empty() ? -1 : c);
    set_offset_.push_back(all.size());
    all.insert(all.end(), set.losses.begin(), set.losses.end());
    losses_.push_back(make_losses(set, *run.net));
    scales_.push_back(regularizer_scales(losses_.back(), B_, T_, N_, store_->n_trainable()));
  }
  windows_ = LossWindows(all, T_);
  stats_begin_.push_back(0);
  for (std::size_t st = 0; st < losses_.size(); ++st) {
    const auto& inputs = tc_.conditions.empty() ? run.inputs : run.conditions[st];
    std::size_t off = 0;
    stats_offset_.emplace_back();
    for (const auto& l : losses_[st]) {
      l->bind_inputs(inputs, run.cfg->seed);
      stats_offset_.back().push_back(off);
      off += l->stats_size();
    }
    stats_begin_.push_back(stats_begin_.back() + off);
  }
  set_initial_weights();  // the weight losses' set-up (EMD sorts the initial weights) before the first update
  BpttSettings st;
  st.batch = B_;
  st.window_steps = T_;
  st.warmup_steps = W_;
  st.segment_steps = tc_.checkpoint_interval;
  st.bands = windows_.bands();
  st.target_blocks = target_blocks > 0 ? target_blocks : tc_.target_blocks;
  st.shape = shape;
  if (run.cfg->precision == Precision::BFloat16) st.ring = device::RingStorage::BFloat16;
  if (run.cfg->precision == Precision::Float16) {
    st.ring = device::RingStorage::Float16;
    loss_scale_.on = true;
    loss_scale_.scale = tc_.loss_scale_initial;
    loss_scale_.growth_steps = tc_.loss_scale_growth_steps;
  }
  auto& bp = st.backward;
  bp.gamma = tc_.dampening_factor;
  bp.sigma = tc_.sigma;
  bp.gauss = tc_.surrogate == SurrogateKind::Gauss;
  bp.vdamp_keep = 1.0 - tc_.voltage_gradient_dampening;
  bp.rdamp = tc_.recurrent_dampening_factor;
  bp.dt = run.cfg->dt;
  bp.vreg_range_scale = scales_[0].vreg_range;
  bp.vreg_threshold_scale = scales_[0].vreg_threshold;
  engine_ = std::make_unique<BpttEngine<Real, ExecSpace>>(space_, *sim_, *store_, st);
}

template <class Real, class ExecSpace>
Trainer<Real, ExecSpace>::~Trainer() = default;

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::select_micro_batch(int k) {
  const RegularizerScales& sc = scales_[static_cast<std::size_t>(loss_set(k))];
  engine_->set_voltage_regularizer(sc.vreg_range, sc.vreg_threshold);
  const int c = tc_.condition_of(k);
  if (c < 0 && active_condition_ == -2) {  // back from the initial-state inputs
    sim_->set_input_schedules(run_.inputs);
    active_condition_ = -1;
  }
  if (c < 0 || c == active_condition_) return;
  sim_->set_input_schedules(run_.conditions[static_cast<std::size_t>(c)]);
  active_condition_ = c;
}

// The forward pass of micro-batch k (samples first ..): from its carried start state when there is one.
template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::forward(int k, std::int64_t first) {
  set_pools(k, first);
  sim_->set_sample_offset(first);
  engine_->forward(carry_.valid() ? &carry_.start(k) : nullptr, tc_.carry_state ? &carry_.end(*sim_, k) : nullptr);
  last_forward_sample_ = first;
}

template <class Real, class ExecSpace>
std::vector<std::int32_t> Trainer<Real, ExecSpace>::host_counts() const {
  const auto& c = engine_->band_counts();
  std::vector<std::int32_t> out(c.span());
  Kokkos::View<std::int32_t***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(
      out.data(), c.extent(0), c.extent(1), c.extent(2));
  Kokkos::deep_copy(space_, h, c);
  space_.fence();
  return out;
}

// Adds the spike counts of the last forward pass ([bands][B][N]) per neuron into sum; returns their total.
template <class Real, class ExecSpace>
double Trainer<Real, ExecSpace>::add_neuron_counts(const std::vector<std::int32_t>& band_counts,
                                                   std::vector<double>& sum) const {
  double total = 0;
  const std::size_t bn = static_cast<std::size_t>(B_) * static_cast<std::size_t>(N_);
  for (std::size_t k = 0; k < windows_.n_bands(); ++k)
    for (int b = 0; b < B_; ++b)
      for (std::int64_t i = 0; i < N_; ++i) {
        const double c = band_counts[k * bn + static_cast<std::size_t>(b * N_ + i)];
        sum[static_cast<std::size_t>(i)] += c;
        total += c;
      }
  return total;
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::compute_gradient(std::int64_t first_sample, int condition) {
  ensure_initial_state(first_sample);
  if (!has_pooled_loss(condition)) return compute_gradient(first_sample, {}, 0.0, condition);
  const std::vector<double> pooled = pooled_counts(first_sample, condition);
  const int per_group = pool_groups(condition) == 1 && condition < 0 ? tc_.micro_batches() : tc_.accumulate;
  return compute_gradient(first_sample, pooled, static_cast<double>(B_) * per_group, condition);
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::compute_gradient(std::int64_t first_sample, const std::vector<double>& pooled,
                                                       double pooled_samples, int condition) {
  const std::vector<double> stats =
      has_stats_loss(condition) ? batch_stats(first_sample, pooled, pooled_samples, condition) : std::vector<double>{};
  return compute_gradient(first_sample, pooled, pooled_samples, stats, condition);
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::compute_gradient(std::int64_t first_sample, const std::vector<double>& pooled,
                                                       double pooled_samples, const std::vector<double>& stats,
                                                       int condition) {
  ensure_initial_state(first_sample);
  const auto start = std::chrono::steady_clock::now();
  const int A = tc_.accumulate;
  const int k_lo = condition < 0 ? 0 : condition * A, k_hi = condition < 0 ? tc_.micro_batches() : k_lo + A;
  const int K = k_hi - k_lo;
  const int s_lo = loss_set(k_lo), s_hi = loss_set(k_hi - 1) + 1;  // the loss sets of these micro-batches
  const bool pool = has_pooled_loss(condition);
  const int G = pool_groups(condition);
  const std::size_t nw = windows_.n_windows(), n = static_cast<std::size_t>(N_), bn = static_cast<std::size_t>(B_) * n;
  if (pool && (pooled.size() != n * nw * static_cast<std::size_t>(G) || pooled_samples <= 0))
    throw std::logic_error("pooled losses need the pooled spike counts of every loss window and neuron");
  // the pooled counts of pool group g in loss q's window (of set s)
  // the statistics of loss q of set s (the sets of these micro-batches, in order)
  auto stats_of = [&](int s, std::size_t q) {
    return stats.data() + stats_begin_[static_cast<std::size_t>(s)] - stats_begin_[static_cast<std::size_t>(s_lo)] +
           stats_offset_[static_cast<std::size_t>(s)][q];
  };
  auto pooled_of = [&](int g, int s, std::size_t q) {
    return pooled_window(pooled, pooled_samples, g, window_of(s, q));
  };
  store_->zero_gradients();
  engine_->set_loss_scale(loss_scale_.factor());  // float16 runs: the backward passes on the scaled loss
  StepMetrics m;
  m.t_forward = t_pooled_forward_;  // the forward passes of pooled_counts (their last one is reused below)
  m.t_losses = t_losses_;
  t_pooled_forward_ = t_losses_ = 0;
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
  // per loss set: per-sample losses, summed over its micro-batches
  std::vector<std::vector<double>> data_terms;
  for (int s = s_lo; s < s_hi; ++s) data_terms.emplace_back(losses_[static_cast<std::size_t>(s)].size(), 0.0);
  update_counts_.assign(static_cast<std::size_t>(N_), 0.0);
  LossInputs in;
  in.B = B_;
  in.N = N_;
  in.dt = run_.cfg->dt;
  in.n_trainable = store_->n_trainable();
  std::vector<std::vector<std::int32_t>> counts(nw);  // per loss window: spikes per (b, i)
  // micro-batch k: samples first_sample + its offset; its gradient is added to the store's sums. With pooled
  // losses the micro-batches run last to first, so that the last forward pass of pooled_counts is reused.
  for (int q = 0; q < K; ++q) {
    const int k = pool ? k_hi - 1 - q : k_lo + q;
    const auto& losses = losses_[static_cast<std::size_t>(loss_set(k))];
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t first = first_sample + run_.schedule.micro_offset(k);
    select_micro_batch(k);  // a no-op for the cached forward pass: its condition is still selected
    if (cached_forward_ != first || cached_version_ != store_->version()) forward(k, first);
    cached_forward_ = -1;
    space_.fence();
    m.t_forward += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // the losses on the host (B x N counts per loss window)
    const int s = loss_set(k);
    const std::vector<std::int32_t> bands = host_counts();
    for (std::size_t w = 0; w < nw; ++w) windows_.window_sum(bands, static_cast<int>(w), bn, counts[w]);
    in.vreg_range_sum = engine_->vreg_range_sum();
    in.vreg_threshold_sum = engine_->vreg_threshold_sum();
    auto inputs_of = [&](std::size_t q) {
      const int w = window_of(s, q);
      in.counts = counts[static_cast<std::size_t>(w)].data();
      in.T = windows_.length(w);
      return in;
    };
    const double total_spikes = add_neuron_counts(bands, update_counts_);
    m.rate_hz += total_spikes * 1000.0 / (static_cast<double>(bn) * static_cast<double>(T_) * in.dt);
    const auto t_loss = clock::now();
    // dL/dcount per window; pooled losses' times (pooled samples / B): the gradients are averaged over the
    // micro-batches here and over the replicas by the parallel layer, which a pooled loss must not be
    std::vector<std::vector<double>> count_grad(nw, std::vector<double>(bn, 0.0));
    std::vector<double> pg(bn);
    for (std::size_t q2 = 0; q2 < losses.size(); ++q2) {
      auto& g = count_grad[static_cast<std::size_t>(window_of(s, q2))];
      losses[q2]->add_count_gradient(inputs_of(q2), g);
      if (!losses[q2]->pooled()) continue;
      std::fill(pg.begin(), pg.end(), 0.0);
      losses[q2]->add_pooled_gradient(pooled_of(pool_group(k, condition), s, q2), B_, pg);
      const double f = pooled_samples / static_cast<double>(B_);
      for (std::size_t i = 0; i < bn; ++i) g[i] += f * pg[i];
    }
    // batch-statistics losses: their exact gradient, times the condition's samples / B (undoing the averaging over
    // micro-batches and replicas)
    std::vector<double> pool_sums, pool_grad;
    if (engine_->has_pools()) {
      pool_sums = engine_->pool_sums();
      pool_grad.assign(pool_sums.size(), 0.0);
    }
    std::vector<std::int32_t> mb_counts;
    std::vector<double> mb_pools;
    const double f_stats = static_cast<double>(condition_batch()) / static_cast<double>(B_);
    for (std::size_t q2 = 0; q2 < losses.size() && !stats.empty(); ++q2) {
      if (losses[q2]->stats_size() == 0) continue;
      const MicroBatch mb = micro_batch_of(k, first, s, q2, bands, pool_sums, mb_counts, mb_pools);
      std::vector<double> cg(bn, 0.0), pgr(mb_pools.size(), 0.0);
      losses[q2]->add_stats_gradient(mb, stats_of(s, q2), cg, pgr);
      auto& g = count_grad[static_cast<std::size_t>(window_of(s, q2))];
      for (std::size_t i = 0; i < bn; ++i) g[i] += f_stats * cg[i];
      if (const PoolBlock* b = pool_block(k, q2))  // the loss's block of the pools' gradient
        for (std::int64_t r = 0; r < b->rows; ++r)
          for (std::int64_t c = 0; c < b->cols; ++c)
            pool_grad[static_cast<std::size_t>((b->row0 + r) * b->stride + b->col0 + c)] +=
                f_stats * pgr[static_cast<std::size_t>(r * b->cols + c)];
    }
    if (engine_->has_pools()) engine_->set_pool_gradient(pool_grad);
    m.t_losses += since(t_loss);
    engine_->backward(windows_.band_gradient(count_grad, bn));
    m.t_recompute += engine_->recompute_seconds();
    m.t_backward += engine_->backward_seconds();
    const auto t_value = clock::now();
    auto& dt = data_terms[static_cast<std::size_t>(s - s_lo)];
    for (std::size_t q2 = 0; q2 < losses.size(); ++q2)
      if (!losses[q2]->pooled() && !losses[q2]->reads_weights()) dt[q2] += losses[q2]->value(inputs_of(q2));
    m.t_losses += since(t_value);
    in.counts = nullptr;
  }
  // each condition's mean over its micro-batches (exact for K = 1), combined: "accumulate" the mean over the
  // conditions, "series_accumulate" the sum; then the weight regularizers (of the same combination) once
  const bool mean = condition < 0 && tc_.approach == Approach::Accumulate;
  const int divisor = mean ? K : A;
  // (float16 runs: the loss scale divided out too, before the weight regularizers and the norm)
  const double unscale = loss_scale_.factor();
  if (divisor > 1 || unscale != 1) store_->scale_gradients(1.0 / (divisor * unscale));
  if (K > 1) m.rate_hz /= K;
  double wscale = scales_[static_cast<std::size_t>(s_lo)].weight;
  if (!(mean && tc_.single_loss_set())) {
    wscale = 0;
    for (int s = s_lo; s < s_hi; ++s) wscale += scales_[static_cast<std::size_t>(s)].weight;
    if (mean) wscale /= (s_hi - s_lo);
  }
  in.weight_sq_sum = store_->add_weight_regularizer(wscale);
  const auto t_weight = clock::now();
  const bool once = mean && tc_.single_loss_set();
  const std::vector<std::vector<double>> weight_terms =
      add_recurrent_weight_losses(s_lo, once ? s_lo + 1 : s_hi, mean && !once ? 1.0 / (s_hi - s_lo) : 1.0, once);
  // per loss set (condition): its terms and total
  auto term = [&](int s, std::size_t q, double data_divisor) {
    const auto& l = *losses_[static_cast<std::size_t>(s)][q];
    const int g = G == 1 ? 0 : s;
    const int ws = once ? s_lo : s;
    return l.recurrent_weight_loss() ? weight_terms[static_cast<std::size_t>(ws - s_lo)][q]
           : l.stats_size() > 0      ? l.stats_value(stats_of(s, q))
           : l.reads_weights()       ? l.value(in)
           : l.pooled()              ? l.pooled_value(pooled_of(g, s, q))
                                     : data_terms[static_cast<std::size_t>(s - s_lo)][q] / data_divisor;
  };
  double cond_sum = 0;
  for (int s = s_lo; s < s_hi && !tc_.conditions.empty(); ++s) {
    ConditionLoss cl;
    cl.condition = s;
    for (std::size_t q = 0; q < losses_[static_cast<std::size_t>(s)].size(); ++q) {
      cl.terms.push_back(term(s, q, A));
      cl.total += cl.terms.back();
    }
    cond_sum += cl.total;
    m.conditions.push_back(std::move(cl));
  }
  m.loss = 0;
  if (tc_.single_loss_set()) {
    // the terms of train.losses: the mean over this call's micro-batches (and pool groups)
    for (std::size_t q = 0; q < losses_[static_cast<std::size_t>(s_lo)].size(); ++q) {
      double v = 0;
      const auto& l = *losses_[static_cast<std::size_t>(s_lo)][q];
      if (l.pooled() && G > 1) {
        for (int s = s_lo; s < s_hi; ++s) v += term(s, q, A);
        v /= G;
      } else {
        for (int s = s_lo; s < s_hi; ++s) v += data_terms[static_cast<std::size_t>(s - s_lo)][q];
        v = (l.pooled() || l.reads_weights() || l.recurrent_weight_loss()) ? term(s_lo, q, 1.0) : v / K;
        if (l.stats_size() > 0) {  // one statistic per set (condition): their mean
          v = 0;
          for (int s = s_lo; s < s_hi; ++s) v += term(s, q, 1.0);
          v /= (s_hi - s_lo);
        }
      }
      m.loss_terms.push_back(v);
      m.loss += v;
    }
  } else {
    m.loss = cond_sum / (s_hi - s_lo);
  }
  m.t_losses += since(t_weight);
  m.grad_norm = store_->gradient_norm();
  m.loss_scale = unscale;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = static_cast<double>(B_) * K / std::max(m.seconds, 1e-12);
  last_grad_norm_ = m.grad_norm;
  return m;
}

}  // namespace dpointnet
