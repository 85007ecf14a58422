// Template implementation of the trainer's passes; instantiated in trainer.cpp.
#pragma once
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "device/adam.hpp"
#include "device/fill.hpp"
#include "device/loss_stats.hpp"
#include "sim/impl/simulator_impl.hpp"
#include "train/impl/trainer_records_impl.hpp"
#include "train/sample_schedule.hpp"
#include "train/trainer.hpp"
#include "util/kokkos_compat.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
Trainer<Real, ExecSpace>::Trainer(const ExecSpace& space, const Network& net, const std::vector<PreparedInput>& inputs,
                                  const SimulationConfig& cfg, const TrainConfig& tc, int batch_size)
    : space_(space),
      net_(net),
      tc_(tc),
      losses_(make_losses(tc, net)),
      B_(batch_size),
      N_(net.n_neurons),
      T_(cfg.n_steps),
      W_(tc.warmup_steps) {
  for (const auto& in : inputs)
    if (!in.silent && in.kind == InputKind::SpikeFile &&
        static_cast<std::int64_t>(in.spikes.step_offsets.size()) - 1 < W_ + T_)
      throw std::logic_error("input " + in.name + " was prepared for " +
                             std::to_string(in.spikes.step_offsets.size() - 1) + " steps; training runs " +
                             std::to_string(W_ + T_) +
                             " (train.warmup_ms + run.tstop): prepare_inputs(cfg, net, "
                             "tc.total_steps(cfg))");
  SimOptions o;
  o.batch_size = B_;
  o.n_steps = W_ + T_;
  o.seed = cfg.seed;
  o.record_chunk = kTrainingRecordChunk;
  sim_ = std::make_unique<Simulator<Real, ExecSpace>>(space_, net, inputs, o);
  sim_->set_current_pulses(prepare_current_clamps(cfg, net));
  D_ = sim_->max_delay();
  R_ = sim_->n_channels();
  C_ = static_cast<int>(std::min<std::int64_t>(tc.checkpoint_interval, T_));
  const std::size_t N = static_cast<std::size_t>(N_);

  for (int set = 0; set < sim_->n_edge_sets(); ++set) {
    Surface<Real, MemSpace> s;
    const Projection& p = net.projections[static_cast<std::size_t>(sim_->projection(set))];
    s.name = set == 0 ? "recurrent" : p.source_population;
    s.set = set;
    auto it = tc.trainable.find(s.name);
    s.trainable = it != tc.trainable.end() && it->second;
    const auto& w = sim_->edges(set).weight;
    const std::size_t ne = w.extent(0);
    s.w0 = Kokkos::View<Real*, MemSpace>("train." + s.name + ".w0", ne);
    Kokkos::deep_copy(s.w0, w);
    s.m = Kokkos::View<Real*, MemSpace>("train." + s.name + ".adam_m", s.trainable ? ne : 0);
    s.v = Kokkos::View<Real*, MemSpace>("train." + s.name + ".adam_v", s.trainable ? ne : 0);
    s.grad = Kokkos::View<double*, MemSpace>("train." + s.name + ".grad", s.trainable ? ne : 0);
    if (s.trainable) n_trainable_ += static_cast<std::int64_t>(ne);
    surfaces_.push_back(s);
  }

  const std::int64_t nseg = (T_ + C_ - 1) / C_;
  for (std::int64_t q = 0; q < nseg; ++q) segment_snapshots_.push_back(sim_->make_snapshot());
  adj_.gV = decltype(adj_.gV)("adjoint.gV", N, B_);
  adj_.gP = decltype(adj_.gP)("adjoint.gP", R_, N, B_);
  adj_.gQ = decltype(adj_.gQ)("adjoint.gQ", R_, N, B_);
  adj_.gu = decltype(adj_.gu)("adjoint.gu", D_, R_, N, B_);
  adj_.gz = decltype(adj_.gz)("adjoint.gz", N, B_);
  adj_.rate_grad = decltype(adj_.rate_grad)("adjoint.rate_grad", N, B_);
  counts_ = decltype(counts_)("train.spike_counts", B_, N);
  vreg_steps_ = decltype(vreg_steps_)("train.vreg_per_step", T_, 2);
  terminal_v_ = decltype(terminal_v_)("train.terminal_v", B_, N);
  rec_.v = decltype(rec_.v)("segment.v", C_, N, B_);
  rec_.r = decltype(rec_.r)("segment.r", C_, N, B_);
  rec_.z = decltype(rec_.z)("segment.z", D_ + C_, N, B_);
  for (int k = 0; k < sim_->n_inputs(); ++k)
    x_ext_.emplace_back("segment.x", D_ + C_, sim_->input_ring(k).extent(2), B_);

  scales_ = regularizer_scales(tc, B_, T_, N_, n_trainable_);
  bp_.gamma = tc.dampening_factor;
  bp_.sigma = tc.sigma;
  bp_.gauss = tc.surrogate == SurrogateKind::Gauss;
  bp_.vdamp_keep = 1.0 - tc.voltage_gradient_dampening;
  bp_.rdamp = tc.recurrent_dampening_factor;
  bp_.dt = cfg.dt;
  bp_.vreg_range_scale = scales_.vreg_range;
  bp_.vreg_threshold_scale = scales_.vreg_threshold;
}

template <class Real, class ExecSpace>
Trainer<Real, ExecSpace>::~Trainer() = default;

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::forward_with_snapshots() {
  device::fill(space_, counts_, 0);
  const bool need_v = bp_.vreg_range_scale > 0 || bp_.vreg_threshold_scale > 0;
  using Stats = device::ForwardStatsFunctor<Real, ExecSpace>;
  Stats stats{counts_, sim_->z_ring(), sim_->state().v, N_, 0};
  const std::int64_t work = std::int64_t(B_) * N_;
  // The last segment is recorded as it runs (its records are what the reverse sweep needs first), so the
  // backward pass does not recompute it.
  std::int64_t t0_recorded = -1;
  sim_->reset();
  if (W_ > 0) {  // warm-up from rest: no statistics, no snapshots, no gradient
    Kokkos::Profiling::pushRegion("dpointnet::warmup_steps");
    sim_->run(W_, nullptr);
    Kokkos::Profiling::popRegion();
  }
  // per step of the window: spike counts, and the voltage-regularizer sums reduced into device memory (no host
  // round trip)
  sim_->set_step_hook([&](std::int64_t t, int slot) {
    stats.slot = slot;
    if (need_v)
      Kokkos::parallel_reduce("dpointnet::train_step_stats",
                              Kokkos::RangePolicy<ExecSpace, typename Stats::StatsTag>(space_, 0, work), stats,
                              Kokkos::subview(vreg_steps_, t - W_, Kokkos::ALL()));
    else
      Kokkos::parallel_for("dpointnet::train_count_spikes",
                           Kokkos::RangePolicy<ExecSpace, typename Stats::CountTag>(space_, 0, work), stats);
    if (t0_recorded >= 0) record_step(t, t0_recorded, slot);
  });
  for (std::size_t q = 0; q < segment_snapshots_.size(); ++q) {
    auto& snap = segment_snapshots_[q];
    sim_->save(snap);
    if (q + 1 == segment_snapshots_.size()) {
      t0_recorded = snap.t;
      record_history(snap, snap.t);
    }
    Kokkos::Profiling::pushRegion("dpointnet::forward_steps");
    sim_->run(std::min<std::int64_t>(C_, W_ + T_ - sim_->current_step()), nullptr);
    Kokkos::Profiling::popRegion();
  }
  sim_->set_step_hook(nullptr);
  last_segment_recorded_ = true;
  // the sums in step order, as one copy per update
  vreg_range_sum_ = vreg_threshold_sum_ = 0;
  if (need_v) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), vreg_steps_);
    for (std::int64_t t = 0; t < T_; ++t) {
      vreg_range_sum_ += h(t, 0);
      vreg_threshold_sum_ += h(t, 1);
    }
  }
  // terminal state of every sample (after step T-1), kept for checks before the backward pass recomputes
  Kokkos::deep_copy(terminal_v_, sim_->state().v);
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::backward() {
  Kokkos::deep_copy(adj_.gV, 0.0);
  Kokkos::deep_copy(adj_.gP, 0.0);
  Kokkos::deep_copy(adj_.gQ, 0.0);
  Kokkos::deep_copy(adj_.gu, 0.0);
  t_recompute_ = t_backward_ = 0;
  using clock = std::chrono::steady_clock;
  for (std::int64_t seg = static_cast<std::int64_t>(segment_snapshots_.size()) - 1; seg >= 0; --seg) {
    const auto& snap = segment_snapshots_[static_cast<std::size_t>(seg)];
    const std::int64_t t0 = snap.t, t1 = std::min<std::int64_t>(W_ + T_, t0 + C_);
    auto tr0 = clock::now();
    const bool recorded = last_segment_recorded_ && seg + 1 == static_cast<std::int64_t>(segment_snapshots_.size());
    if (!recorded) {
      sim_->restore(snap);
      record_history(snap, t0);
      sim_->set_step_hook([this, t0](std::int64_t t, int slot) { record_step(t, t0, slot); });
      Kokkos::Profiling::pushRegion("dpointnet::recompute_steps");
      sim_->run(t1 - t0, nullptr);
      Kokkos::Profiling::popRegion();
      sim_->set_step_hook(nullptr);
    }
    Kokkos::fence();
    auto tr1 = clock::now();
    t_recompute_ += std::chrono::duration<double>(tr1 - tr0).count();
    Kokkos::Profiling::pushRegion("dpointnet::reverse_steps");
    for (std::int64_t t = t1 - 1; t >= t0; --t) reverse_step(t, t0);
    Kokkos::Profiling::popRegion();
    Kokkos::fence();
    t_backward_ += std::chrono::duration<double>(clock::now() - tr1).count();
  }
  last_segment_recorded_ = false;
}

// One step of the reverse sweep: spike adjoint (recurrent reads), neuron adjoint, weight gradients.
template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::reverse_step(std::int64_t t, std::int64_t t0) {
  using Teams = compat::SampleTeams<ExecSpace>;
  const int D = D_;
  const int slot_gu = static_cast<int>(t % D);
  using SA = device::SpikeAdjointFunctor<Real, Acc, ExecSpace>;
  Kokkos::parallel_for("dpointnet::backward_spike_adjoint", Teams::policy(space_, N_, B_),
                       SA{sim_->edges(0), adj_, static_cast<Acc>(bp_.rdamp), t, W_ + T_, N_, D, B_});
  device::NeuronAdjointFunctor<Real, Acc, ExecSpace> na{sim_->constants(),        adj_,    rec_, bp_,
                                                        static_cast<int>(t - t0), slot_gu, B_,   R_};
  device::neuron_adjoint(space_, na, N_);

  for (std::size_t q = 0; q < surfaces_.size(); ++q) {
    auto& s = surfaces_[q];
    const auto& e = sim_->edges(s.set);
    if (!s.trainable || e.weight.extent(0) == 0) continue;
    const std::int64_t groups = e.n_sources * D;
    if (q == 0) {
      device::WeightGradFunctor<Real, Acc, ExecSpace, std::uint8_t> wg{e,      rec_.z, adj_.gu, s.grad, t,
                                                                       t0 - D, groups, D,       B_,     slot_gu};
      device::weight_grad(space_, "dpointnet::backward_weight_grad_recurrent", wg);
    } else {
      device::WeightGradFunctor<Real, Acc, ExecSpace, std::uint16_t> wg{
          e, x_ext_[q - 1], adj_.gu, s.grad, t, t0 - D, groups, D, B_, slot_gu};
      device::weight_grad(space_, "dpointnet::backward_weight_grad_input", wg);
    }
  }
}

template <class Real, class ExecSpace>
double Trainer<Real, ExecSpace>::weight_regularizer() {
  double total = 0;
  if (scales_.weight <= 0) return total;
  const double scale = scales_.weight;
  for (auto& s : surfaces_) {
    if (!s.trainable) continue;
    double part = 0;
    Kokkos::parallel_reduce("dpointnet::weight_regularizer",
                            Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(s.grad.extent(0))),
                            device::WeightRegularizerFunctor<Real, ExecSpace>{weights(s), s.w0, s.grad, scale}, part);
    total += part;
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
  std::vector<double> sum(static_cast<std::size_t>(N_), 0.0);
  for (int k = 0; k < tc_.accumulate; ++k) {
    const std::int64_t first = first_sample + static_cast<std::int64_t>(k) * B_;
    sim_->set_sample_offset(first);
    forward_with_snapshots();
    auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts_);
    for (int b = 0; b < B_; ++b)
      for (std::int64_t i = 0; i < N_; ++i) sum[static_cast<std::size_t>(i)] += hc(b, i);
    cached_forward_ = first;
  }
  return sum;
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::compute_gradient(std::int64_t first_sample) {
  if (!has_pooled_loss()) return compute_gradient(first_sample, {}, 0.0);
  const std::vector<double> pooled = pooled_counts(first_sample);
  return compute_gradient(first_sample, pooled, static_cast<double>(B_) * tc_.accumulate);
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::compute_gradient(std::int64_t first_sample, const std::vector<double>& pooled,
                                                       double pooled_samples) {
  const auto start = std::chrono::steady_clock::now();
  const int K = tc_.accumulate;
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
    const std::int64_t first = first_sample + static_cast<std::int64_t>(k) * B_;
    if (cached_forward_ != first) {
      sim_->set_sample_offset(first);
      forward_with_snapshots();
    }
    cached_forward_ = -1;
    Kokkos::fence();
    m.t_forward += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // count losses on the host (B x N values)
    auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts_);
    in.counts = hc.data();
    in.vreg_range_sum = vreg_range_sum_;
    in.vreg_threshold_sum = vreg_threshold_sum_;
    double total_spikes = 0;
    for (std::size_t q = 0; q < hc.span(); ++q) total_spikes += hc.data()[q];
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
        KOKKOS_LAMBDA(const std::int64_t e, double& acc) { acc += g(e) * g(e); }, part);
    norm2 += part;
  }
  m.grad_norm = std::sqrt(norm2);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = static_cast<double>(B_) * K / std::max(m.seconds, 1e-12);
  last_grad_norm_ = m.grad_norm;
  return m;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::apply_update() {
  const auto start = std::chrono::steady_clock::now();
  cached_forward_ = -1;
  ++adam_step_;
  const double k = static_cast<double>(adam_step_);
  const double scale = (tc_.clip_global_norm > 0 && last_grad_norm_ > tc_.clip_global_norm)
                           ? tc_.clip_global_norm / last_grad_norm_
                           : 1.0;
  for (auto& s : surfaces_) {
    if (!s.trainable) continue;
    device::AdamFunctor<Real, ExecSpace> f{weights(s),
                                           s.w0,
                                           s.m,
                                           s.v,
                                           s.grad,
                                           tc_.lr,
                                           tc_.beta1,
                                           tc_.beta2,
                                           tc_.epsilon,
                                           1.0 - std::pow(tc_.beta1, k),
                                           1.0 - std::pow(tc_.beta2, k),
                                           scale};
    Kokkos::parallel_for("dpointnet::adam",
                         Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(s.grad.extent(0))), f);
  }
  Kokkos::fence();
  t_update_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::train_step() {
  const auto start = std::chrono::steady_clock::now();
  StepMetrics m = compute_gradient(SampleSchedule{B_, 1, tc_.accumulate}.first_sample(adam_step_, 0));
  apply_update();
  m.t_update = t_update_;
  m.step = adam_step_;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = static_cast<double>(B_) * tc_.accumulate / std::max(m.seconds, 1e-12);
  return m;
}

}  // namespace dpointnet
