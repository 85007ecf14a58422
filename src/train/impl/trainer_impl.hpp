// Template implementation of the trainer's passes; instantiated in trainer.cpp.
#pragma once
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "device/adam.hpp"
#include "device/fill.hpp"
#include "device/loss_stats.hpp"
#include "device/nest_adjoint.hpp"
#include "device/spike_adjoint.hpp"
#include "sim/impl/simulator_impl.hpp"
#include "train/impl/trainer_gradient_impl.hpp"
#include "train/impl/trainer_records_impl.hpp"
#include "train/impl/trainer_target_blocks_impl.hpp"
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
  o.kernel_shape = tc.kernel_shape;
  sim_ = std::make_unique<Simulator<Real, ExecSpace>>(space_, net, inputs, o);
  sim_->set_current_pulses(prepare_current_clamps(cfg, net));
  schedule_ = SampleSchedule{B_, 1, tc.accumulate, tc.n_conditions()};
  for (std::size_t c = 0; c < tc.conditions.size(); ++c)
    condition_inputs_.push_back(prepare_inputs(
        cfg.with_input_overrides(tc.conditions[c], "train.conditions[" + std::to_string(c) + "]"), net, W_ + T_));
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
    s.grad = Kokkos::View<Real*, MemSpace>("train." + s.name + ".grad", s.trainable ? ne : 0);
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
  if (device::host_shape<ExecSpace>(tc.kernel_shape)) set_up_target_blocks();

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
void Trainer<Real, ExecSpace>::select_micro_batch(int k) {
  const int c = tc_.condition_of(k);
  if (c < 0 || c == active_condition_) return;
  sim_->set_input_schedules(condition_inputs_[static_cast<std::size_t>(c)]);
  active_condition_ = c;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::forward_with_snapshots(int micro_batch) {
  device::fill(space_, counts_, 0);
  const bool need_v = bp_.vreg_range_scale > 0 || bp_.vreg_threshold_scale > 0;
  using Stats = device::ForwardStatsFunctor<Real, ExecSpace>;
  Stats stats{counts_, sim_->z_ring(), sim_->training_v(), N_, 0};
  // The last segment is recorded as it runs (its records are what the reverse sweep needs first), so the
  // backward pass does not recompute it.
  std::int64_t t0_recorded = -1;
  const auto m = static_cast<std::size_t>(micro_batch);
  if (carry_valid_) {  // train.carry_state: the window continues the slot's last run (no warm-up)
    sim_->continue_from(carry_in_[m], W_);
  } else {
    sim_->reset();
    if (W_ > 0) {  // warm-up from rest: no statistics, no snapshots, no gradient
      Kokkos::Profiling::pushRegion("dpointnet::warmup_steps");
      sim_->run(W_, nullptr);
      Kokkos::Profiling::popRegion();
    }
  }
  s_min_ = -sim_->history();
  // per step of the window: spike counts, and the voltage-regularizer sums reduced into device memory (no host
  // round trip)
  sim_->set_step_hook([&](std::int64_t t, int slot) {
    stats.slot = slot;
    device::forward_stats(space_, stats, B_, need_v, Kokkos::subview(vreg_steps_, t - W_, Kokkos::ALL()),
                          tc_.kernel_shape);
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
  if (tc_.carry_state) {
    allocate_carry();
    sim_->save(carry_out_[m]);
  }
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
  device::refresh_target_block_weights(space_, blocks_, sim_->edges(0), D_);
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
    if (seg == 0 && fused_recurrent_grad()) {
      // the fused recurrent weight gradient's terms from activity before the first reverse step (warm-up or
      // carried state), in decreasing activity step as the separate kernel adds them
      for (std::int64_t s = t0 - 1; s >= std::max<std::int64_t>(s_min_, t0 - D_); --s) {
        auto sa = spike_adjoint_at(s);
        sa.wg = {rec_.z, surfaces_[0].grad, t0 - D_, t0, true};
        device::spike_adjoint(space_, sa, tc_.kernel_shape);
      }
    }
    Kokkos::Profiling::popRegion();
    Kokkos::fence();
    t_backward_ += std::chrono::duration<double>(clock::now() - tr1).count();
  }
  last_segment_recorded_ = false;
}

// One step of the reverse sweep: spike adjoint (recurrent reads), neuron adjoint, weight gradients.
template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::reverse_step(std::int64_t t, std::int64_t t0) {
  const int D = D_;
  const int slot_gu = static_cast<int>(t % D);
  auto sa = spike_adjoint_at(t);
  const bool fused = fused_recurrent_grad();
  if (fused) sa.wg = {rec_.z, surfaces_[0].grad, t0 - D, 0, false};
  device::spike_adjoint(space_, sa, tc_.kernel_shape);
  if (sim_->constants().nest) {
    device::NestNeuronAdjointFunctor<Real, Acc, ExecSpace> na{
        sim_->constants(), adj_, rec_, bp_, nest_time::step_ms(net_.dt), static_cast<int>(t - t0), slot_gu, B_, R_};
    device::nest_neuron_adjoint(space_, na, N_);
  } else {
    device::NeuronAdjointFunctor<Real, Acc, ExecSpace> na{sim_->constants(),        adj_,    rec_, bp_,
                                                          static_cast<int>(t - t0), slot_gu, B_,   R_};
    device::neuron_adjoint(space_, na, N_, tc_.kernel_shape);
  }

  for (std::size_t q = 0; q < surfaces_.size(); ++q) {
    auto& s = surfaces_[q];
    const auto& e = sim_->edges(s.set);
    if (!s.trainable || e.weight.extent(0) == 0) continue;
    const std::int64_t groups = e.n_sources * D;
    if (q == 0) {
      if (fused) continue;  // added by the spike adjoint
      device::WeightGradFunctor<Real, Acc, ExecSpace, std::uint8_t> wg{e,      rec_.z, adj_.gu, s.grad,  t,     t0 - D,
                                                                       groups, D,      B_,      slot_gu, s_min_};
      device::weight_grad(space_, "dpointnet::backward_weight_grad_recurrent", wg, tc_.kernel_shape);
    } else {
      device::WeightGradFunctor<Real, Acc, ExecSpace, std::uint16_t> wg{
          e, x_ext_[q - 1], adj_.gu, s.grad, t, t0 - D, groups, D, B_, slot_gu, s_min_};
      device::weight_grad(space_, "dpointnet::backward_weight_grad_input", wg, tc_.kernel_shape);
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
  if (tc_.carry_state && !carry_out_.empty()) {  // this update's end states start the next one
    std::swap(carry_in_, carry_out_);
    carry_valid_ = true;
  }
  Kokkos::fence();
  t_update_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::train_step() {
  const auto start = std::chrono::steady_clock::now();
  StepMetrics m = compute_gradient(schedule_.first_sample(adam_step_, 0));
  apply_update();
  m.t_update = t_update_;
  m.step = adam_step_;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = static_cast<double>(B_) * tc_.micro_batches() / std::max(m.seconds, 1e-12);
  return m;
}

}  // namespace dpointnet
