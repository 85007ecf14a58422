// Template implementation of the trainer (train/trainer.hpp); instantiated in trainer.cpp.
#pragma once
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpointnet/train/detail/bptt_engine_impl.hpp"
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
      carry_(space, run.tc->carry_state, run.tc->micro_batches(), run.schedule.batch),
      losses_(make_losses(*run.tc, *run.net)),
      windows_(run.tc->losses, run.cfg->n_steps) {
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
  sim_ = detail::SimulatorAccess::make<Real>(space_, *run.net, run.inputs, o, shape);
  sim_->set_current_pulses(run.clamps);
  optimizer_ = make_optimizer<Real, ExecSpace>(tc_);
  store_ = std::make_unique<Store>(space_, *sim_, *run.net, tc_.trainable, optimizer_->n_state());
  scales_ = regularizer_scales(losses_, B_, T_, N_, store_->n_trainable());
  BpttSettings st;
  st.batch = B_;
  st.window_steps = T_;
  st.warmup_steps = W_;
  st.segment_steps = tc_.checkpoint_interval;
  st.bands = windows_.bands();
  st.target_blocks = target_blocks > 0 ? target_blocks : tc_.target_blocks;
  st.shape = shape;
  auto& bp = st.backward;
  bp.gamma = tc_.dampening_factor;
  bp.sigma = tc_.sigma;
  bp.gauss = tc_.surrogate == SurrogateKind::Gauss;
  bp.vdamp_keep = 1.0 - tc_.voltage_gradient_dampening;
  bp.rdamp = tc_.recurrent_dampening_factor;
  bp.dt = run.cfg->dt;
  bp.vreg_range_scale = scales_.vreg_range;
  bp.vreg_threshold_scale = scales_.vreg_threshold;
  engine_ = std::make_unique<BpttEngine<Real, ExecSpace>>(space_, *sim_, *store_, st);
}

template <class Real, class ExecSpace>
Trainer<Real, ExecSpace>::~Trainer() = default;

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::select_micro_batch(int k) {
  const int c = tc_.condition_of(k);
  if (c < 0 || c == active_condition_) return;
  sim_->set_input_schedules(run_.conditions[static_cast<std::size_t>(c)]);
  active_condition_ = c;
}

// The forward pass of micro-batch k (samples first ..): from its carried start state when there is one.
template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::forward(int k, std::int64_t first) {
  sim_->set_sample_offset(first);
  engine_->forward(carry_.valid() ? &carry_.start(k) : nullptr, carry_.on() ? &carry_.end(*sim_, k) : nullptr);
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
bool Trainer<Real, ExecSpace>::has_pooled_loss() const {
  for (const auto& l : losses_)
    if (l->pooled()) return true;
  return false;
}

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::pooled_counts(std::int64_t first_sample) {
  const std::size_t n = static_cast<std::size_t>(N_), bn = static_cast<std::size_t>(B_) * n;
  std::vector<double> sum(windows_.n_windows() * n, 0.0), window;
  for (int k = 0; k < tc_.micro_batches(); ++k) {
    const std::int64_t first = first_sample + run_.schedule.micro_offset(k);
    select_micro_batch(k);
    forward(k, first);
    const std::vector<std::int32_t> bands = host_counts();
    for (std::size_t w = 0; w < windows_.n_windows(); ++w) {
      windows_.window_sum(bands, static_cast<int>(w), bn, window);
      for (int b = 0; b < B_; ++b)
        for (std::size_t i = 0; i < n; ++i) sum[w * n + i] += window[static_cast<std::size_t>(b) * n + i];
    }
    cached_forward_ = first;
    cached_version_ = store_->version();
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
  const std::size_t nw = windows_.n_windows(), n = static_cast<std::size_t>(N_), bn = static_cast<std::size_t>(B_) * n;
  if (pool && (pooled.size() != nw * n || pooled_samples <= 0))
    throw std::logic_error("pooled losses need the pooled spike counts of every loss window and neuron");
  // the pooled counts of loss q's window
  auto pooled_of = [&](std::size_t q) {
    const int w = windows_.window_of(q);
    PooledCounts pc;
    pc.counts = pooled.data() + static_cast<std::size_t>(w) * n;
    pc.samples = pooled_samples;
    pc.N = N_;
    pc.T = windows_.length(w);
    pc.dt = run_.cfg->dt;
    return pc;
  };
  store_->zero_gradients();
  StepMetrics m;
  std::vector<double> data_terms(losses_.size(), 0.0);  // per-sample losses, summed over the micro-batches
  update_counts_.assign(n, 0.0);
  LossInputs in;
  in.B = B_;
  in.N = N_;
  in.dt = run_.cfg->dt;
  in.n_trainable = store_->n_trainable();
  std::vector<std::vector<std::int32_t>> counts(nw);  // per loss window: spikes per (b, i)
  // micro-batch k: samples first_sample + its offset; its gradient is added to the store's sums. With pooled
  // losses the micro-batches run last to first, so that the last forward pass of pooled_counts is reused.
  for (int q = 0; q < K; ++q) {
    const int k = pool ? K - 1 - q : q;
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t first = first_sample + run_.schedule.micro_offset(k);
    select_micro_batch(k);  // a no-op for the cached forward pass: its condition is still selected
    if (cached_forward_ != first || cached_version_ != store_->version()) forward(k, first);
    cached_forward_ = -1;
    space_.fence();
    m.t_forward += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // the losses on the host (B x N counts per loss window)
    const std::vector<std::int32_t> bands = host_counts();
    for (std::size_t w = 0; w < nw; ++w) windows_.window_sum(bands, static_cast<int>(w), bn, counts[w]);
    in.vreg_range_sum = engine_->vreg_range_sum();
    in.vreg_threshold_sum = engine_->vreg_threshold_sum();
    auto inputs_of = [&](std::size_t l) {
      const int w = windows_.window_of(l);
      in.counts = counts[static_cast<std::size_t>(w)].data();
      in.T = windows_.length(w);
      return in;
    };
    const double total_spikes = add_neuron_counts(bands, update_counts_);
    m.rate_hz += total_spikes * 1000.0 / (static_cast<double>(bn) * static_cast<double>(T_) * in.dt);
    // dL/dcount per window; pooled losses' times (pooled samples / B): the gradients are averaged over the K
    // micro-batches here and over the replicas by the parallel layer, which a pooled loss must not be
    std::vector<std::vector<double>> count_grad(nw, std::vector<double>(bn, 0.0));
    std::vector<double> pg(bn);
    for (std::size_t l = 0; l < losses_.size(); ++l) {
      auto& g = count_grad[static_cast<std::size_t>(windows_.window_of(l))];
      losses_[l]->add_count_gradient(inputs_of(l), g);
      if (!losses_[l]->pooled()) continue;
      std::fill(pg.begin(), pg.end(), 0.0);
      losses_[l]->add_pooled_gradient(pooled_of(l), B_, pg);
      const double f = pooled_samples / static_cast<double>(B_);
      for (std::size_t q2 = 0; q2 < bn; ++q2) g[q2] += f * pg[q2];
    }
    engine_->backward(windows_.band_gradient(count_grad, bn));
    m.t_recompute += engine_->recompute_seconds();
    m.t_backward += engine_->backward_seconds();
    for (std::size_t l = 0; l < losses_.size(); ++l)
      if (!losses_[l]->pooled() && !losses_[l]->reads_weights()) data_terms[l] += losses_[l]->value(inputs_of(l));
    in.counts = nullptr;
  }
  // the mean over the K x B samples (exact for K = 1), then the weight regularizer once
  if (K > 1) {
    store_->scale_gradients(1.0 / K);
    m.rate_hz /= K;
  }
  in.weight_sq_sum = store_->add_weight_regularizer(scales_.weight);
  const std::vector<double> weight_terms = add_recurrent_weight_losses();
  m.loss = 0;
  for (std::size_t q = 0; q < losses_.size(); ++q) {
    const auto& l = *losses_[q];
    m.loss_terms.push_back(l.recurrent_weight_loss() ? weight_terms[q]
                           : l.reads_weights()       ? l.value(in)
                           : l.pooled()              ? l.pooled_value(pooled_of(q))
                                                     : data_terms[q] / K);
    m.loss += m.loss_terms.back();
  }
  m.grad_norm = store_->gradient_norm();
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = static_cast<double>(B_) * K / std::max(m.seconds, 1e-12);
  last_grad_norm_ = m.grad_norm;
  return m;
}

// The losses of the recurrent weights: their gradients added into the store, their values (0 for other losses).
template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::add_recurrent_weight_losses() {
  std::vector<double> terms(losses_.size(), 0.0);
  bool any = false;
  for (const auto& l : losses_) any = any || l->recurrent_weight_loss();
  if (!any) return terms;
  using F = typename Store::Field;
  const std::vector<double> w = store_->get(0, F::Weight), w0 = store_->get(0, F::InitialWeight);
  std::vector<double> g(w.size(), 0.0);
  for (std::size_t q = 0; q < losses_.size(); ++q)
    if (losses_[q]->recurrent_weight_loss()) terms[q] = losses_[q]->add_weight_gradient(w, w0, g);
  store_->add_gradient(0, g);
  return terms;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::unpack_gradients(const float* packed, double scale) {
  last_grad_norm_ = store_->unpack_gradients(packed, scale);
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::apply_update() {
  const auto start = std::chrono::steady_clock::now();
  cached_forward_ = -1;
  ++update_;
  optimizer_->apply(space_, *store_, update_, clip_factor(tc_.clip_global_norm, last_grad_norm_));
  store_->mark_changed();
  carry_.commit();  // this update's end states start the next one
  space_.fence();
  t_update_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::train_step() {
  const auto start = std::chrono::steady_clock::now();
  StepMetrics m = compute_gradient(run_.schedule.first_sample(update_, 0));
  apply_update();
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
