// Template implementation of Trainer; instantiated in trainer.cpp.
#pragma once
#include <chrono>
#include <cmath>

#include "sim/impl/simulator_impl.hpp"
#include "train/trainer.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
Trainer<Real, ExecSpace>::Trainer(const Network& net, const std::vector<PreparedInput>& inputs,
                                  const SimulationConfig& cfg, const TrainConfig& tc, int batch_size)
    : net_(net), tc_(tc), B_(batch_size), N_(net.n_neurons), T_(cfg.n_steps) {
  SimOptions o;
  o.batch_size = B_;
  o.n_steps = T_;
  o.seed = cfg.seed;
  o.record_chunk = 8;
  sim_ = std::make_unique<Simulator<Real, ExecSpace>>(net, inputs, o);
  sim_->set_current_pulses(prepare_current_clamps(cfg, net));
  D_ = sim_->max_delay();
  R_ = sim_->n_channels();
  C_ = static_cast<int>(std::min<std::int64_t>(tc.checkpoint_interval, T_));
  const std::size_t N = static_cast<std::size_t>(N_);

  auto add_surface = [&](const std::string& name, int proj, kernels::GroupedEdges<Real, MemSpace>* e) {
    Surface<Real, MemSpace> s;
    s.name = name;
    s.projection = proj;
    auto it = tc.trainable.find(name);
    s.trainable = it != tc.trainable.end() && it->second;
    s.edges = e;
    const std::size_t ne = e->weight.extent(0);
    s.w0 = Kokkos::View<Real*, MemSpace>("train." + name + ".w0", ne);
    Kokkos::deep_copy(s.w0, e->weight);
    s.m = Kokkos::View<Real*, MemSpace>("train." + name + ".adam_m", s.trainable ? ne : 0);
    s.v = Kokkos::View<Real*, MemSpace>("train." + name + ".adam_v", s.trainable ? ne : 0);
    s.grad = Kokkos::View<double*, MemSpace>("train." + name + ".grad", s.trainable ? ne : 0);
    surfaces_.push_back(s);
  };
  add_surface("recurrent", 0, &sim_->recurrent_edges());
  for (int k = 0; k < sim_->n_inputs(); ++k) {
    const int proj = sim_->input_spec(k).projection;
    add_surface(net.projections[static_cast<std::size_t>(proj)].source_population, proj, &sim_->input_edges(k));
  }

  const std::int64_t nseg = (T_ + C_ - 1) / C_;
  for (std::int64_t q = 0; q < nseg; ++q) snapshots_.push_back(sim_->make_snapshot());
  adj_.gV = decltype(adj_.gV)("adjoint.gV", B_, N);
  adj_.gP = decltype(adj_.gP)("adjoint.gP", B_, R_, N);
  adj_.gQ = decltype(adj_.gQ)("adjoint.gQ", B_, R_, N);
  adj_.gu = decltype(adj_.gu)("adjoint.gu", D_, B_, R_, N);
  adj_.gz = decltype(adj_.gz)("adjoint.gz", B_, N);
  adj_.rate_grad = decltype(adj_.rate_grad)("adjoint.rate_grad", B_, N);
  counts_ = decltype(counts_)("train.spike_counts", B_, N);
  v_rec_ = decltype(v_rec_)("segment.v", C_, B_, N);
  r_rec_ = decltype(r_rec_)("segment.r", C_, B_, N);
  z_ext_ = decltype(z_ext_)("segment.z", D_ + C_, B_, N);
  for (int k = 0; k < sim_->n_inputs(); ++k)
    x_ext_.emplace_back("segment.x", D_ + C_, B_, sim_->input_ring(k).extent(2));

  bp_.gamma = tc.dampening_factor;
  bp_.sigma = tc.sigma;
  bp_.gauss = tc.surrogate == SurrogateKind::Gauss;
  bp_.vdamp_keep = 1.0 - tc.voltage_gradient_dampening;
  bp_.rdamp = tc.recurrent_dampening_factor;
  bp_.dt = cfg.dt;
  const double btn = static_cast<double>(B_) * static_cast<double>(T_) * static_cast<double>(N_);
  for (const auto& l : tc.losses)
    if (l.kind == LossKind::VoltageRegularization)
      (l.threshold_mode ? bp_.vreg_threshold_scale : bp_.vreg_range_scale) += l.cost / btn;
}

template <class Real, class ExecSpace>
Trainer<Real, ExecSpace>::~Trainer() = default;

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::forward_with_snapshots() {
  Kokkos::deep_copy(counts_, 0);
  const bool need_v = bp_.vreg_range_scale > 0 || bp_.vreg_threshold_scale > 0;
  using Stats = kernels::ForwardStatsFunctor<Real, ExecSpace>;
  Stats stats{counts_, sim_->z_ring(), sim_->state().v, N_, 0};
  const std::int64_t work = std::int64_t(B_) * N_;
  double range_sum = 0, thr_sum = 0;
  sim_->set_step_hook([&](std::int64_t, int slot) {
    stats.slot = slot;
    Kokkos::parallel_for("dpointnet::train_count_spikes",
                         Kokkos::RangePolicy<ExecSpace, typename Stats::CountTag>(0, work), stats);
    if (need_v) {
      double sr = 0, st = 0;
      Kokkos::parallel_reduce("dpointnet::train_vreg_range",
                              Kokkos::RangePolicy<ExecSpace, typename Stats::RangeTag>(0, work), stats, sr);
      Kokkos::parallel_reduce("dpointnet::train_vreg_threshold",
                              Kokkos::RangePolicy<ExecSpace, typename Stats::ThresholdTag>(0, work), stats, st);
      range_sum += sr;
      thr_sum += st;
    }
  });
  sim_->reset();
  for (std::size_t q = 0; q < snapshots_.size(); ++q) {
    sim_->save(snapshots_[q]);
    sim_->run(std::min<std::int64_t>(C_, T_ - sim_->current_step()), nullptr);
  }
  sim_->set_step_hook(nullptr);
  vreg_range_sum_ = range_sum;
  // terminal state of every sample (after step T-1), kept for checks before the backward pass recomputes
  if (terminal_v_.extent(0) == 0) terminal_v_ = decltype(terminal_v_)("train.terminal_v", B_, N_);
  Kokkos::deep_copy(terminal_v_, sim_->state().v);
  vreg_threshold_sum_ = thr_sum;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::backward() {
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  Kokkos::deep_copy(adj_.gV, 0.0);
  Kokkos::deep_copy(adj_.gP, 0.0);
  Kokkos::deep_copy(adj_.gQ, 0.0);
  Kokkos::deep_copy(adj_.gu, 0.0);
  for (auto& s : surfaces_)
    if (s.trainable) Kokkos::deep_copy(s.grad, 0.0);
  const int D = D_;
  t_recompute_ = t_backward_ = 0;
  using clock = std::chrono::steady_clock;
  for (std::int64_t seg = static_cast<std::int64_t>(snapshots_.size()) - 1; seg >= 0; --seg) {
    const auto& snap = snapshots_[static_cast<std::size_t>(seg)];
    const std::int64_t t0 = snap.t, t1 = std::min<std::int64_t>(T_, t0 + C_);
    auto tr0 = clock::now();
    sim_->restore(snap);
    // history of the D steps before the segment, from the snapshot's rings
    for (int m = 0; m < D; ++m) {
      const std::int64_t s = t0 - D + m;
      auto zdst = Kokkos::subview(z_ext_, m, Kokkos::ALL, Kokkos::ALL);
      if (s < 0) {
        Kokkos::deep_copy(zdst, std::uint8_t(0));
      } else {
        Kokkos::deep_copy(zdst, Kokkos::subview(snap.z_ring, static_cast<int>(s % D), Kokkos::ALL, Kokkos::ALL));
      }
      for (std::size_t k = 0; k < x_ext_.size(); ++k) {
        auto xdst = Kokkos::subview(x_ext_[k], m, Kokkos::ALL, Kokkos::ALL);
        if (s < 0) {
          Kokkos::deep_copy(xdst, std::uint16_t(0));
        } else {
          Kokkos::deep_copy(xdst,
                            Kokkos::subview(snap.input_rings[k], static_cast<int>(s % D), Kokkos::ALL, Kokkos::ALL));
        }
      }
    }
    sim_->set_step_hook([&, t0](std::int64_t t, int slot) {
      const int k = static_cast<int>(t - t0);
      Kokkos::deep_copy(Kokkos::subview(v_rec_, k, Kokkos::ALL, Kokkos::ALL), sim_->state().v);
      Kokkos::deep_copy(Kokkos::subview(r_rec_, k, Kokkos::ALL, Kokkos::ALL), sim_->state().r);
      Kokkos::deep_copy(Kokkos::subview(z_ext_, D + k, Kokkos::ALL, Kokkos::ALL),
                        Kokkos::subview(sim_->z_ring(), slot, Kokkos::ALL, Kokkos::ALL));
      for (std::size_t q = 0; q < x_ext_.size(); ++q)
        Kokkos::deep_copy(Kokkos::subview(x_ext_[q], D + k, Kokkos::ALL, Kokkos::ALL),
                          Kokkos::subview(sim_->input_ring(static_cast<int>(q)), slot, Kokkos::ALL, Kokkos::ALL));
    });
    sim_->run(t1 - t0, nullptr);
    sim_->set_step_hook(nullptr);
    Kokkos::fence();
    auto tr1 = clock::now();
    t_recompute_ += std::chrono::duration<double>(tr1 - tr0).count();
    // reverse over the segment
    for (std::int64_t t = t1 - 1; t >= t0; --t) {
      const int slot_gu = static_cast<int>(t % D);
      kernels::SpikeAdjointFunctor<Real, ExecSpace> sa{sim_->recurrent_edges(), adj_, bp_.rdamp, t, T_, N_, D};
      Kokkos::parallel_for("dpointnet::backward_spike_adjoint", Policy(0, std::int64_t(B_) * N_), sa);
      kernels::NeuronAdjointFunctor<Real, ExecSpace> na{sim_->constants(),        adj_,    v_rec_, r_rec_, bp_,
                                                        static_cast<int>(t - t0), slot_gu, N_,     R_};
      Kokkos::parallel_for("dpointnet::backward_neuron_adjoint", Policy(0, std::int64_t(B_) * N_), na);
      for (std::size_t q = 0; q < surfaces_.size(); ++q) {
        auto& s = surfaces_[q];
        if (!s.trainable || s.edges->weight.extent(0) == 0) continue;
        const std::int64_t groups = s.edges->n_sources * D;
        if (q == 0) {
          kernels::WeightGradFunctor<Real, ExecSpace, std::uint8_t> wg{*s.edges, z_ext_, adj_.gu, s.grad, t,
                                                                       t0 - D,   D,      B_,      slot_gu};
          Kokkos::parallel_for("dpointnet::backward_weight_grad_recurrent", Policy(0, groups), wg);
        } else {
          kernels::WeightGradFunctor<Real, ExecSpace, std::uint16_t> wg{
              *s.edges, x_ext_[q - 1], adj_.gu, s.grad, t, t0 - D, D, B_, slot_gu};
          Kokkos::parallel_for("dpointnet::backward_weight_grad_input", Policy(0, groups), wg);
        }
      }
    }
    Kokkos::fence();
    t_backward_ += std::chrono::duration<double>(clock::now() - tr1).count();
  }
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::compute_gradient(std::int64_t first_sample) {
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  const auto start = std::chrono::steady_clock::now();
  sim_->set_sample_offset(first_sample);
  forward_with_snapshots();
  Kokkos::fence();
  StepMetrics m;
  m.t_forward = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // rate losses on the host (B x N values)
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts_);
  auto hg = Kokkos::create_mirror_view(adj_.rate_grad);
  Kokkos::deep_copy(hg, 0.0);
  const double BN = static_cast<double>(B_) * static_cast<double>(N_);
  double total_spikes = 0;
  for (int b = 0; b < B_; ++b)
    for (std::int64_t i = 0; i < N_; ++i) total_spikes += hc(b, i);
  m.rate_hz = total_spikes * 1000.0 / (BN * static_cast<double>(T_) * bp_.dt);
  double wreg_cost = 0;
  for (const auto& l : tc_.losses) {
    double value = 0;
    if (l.kind == LossKind::TargetFiringRate) {
      const double per = l.per_step ? 1.0 / static_cast<double>(T_) : 1000.0 / (static_cast<double>(T_) * bp_.dt);
      for (std::int64_t i = 0; i < N_; ++i) {
        double target = l.target;
        if (!l.target_by_type.empty()) {
          const auto& pop =
              net_.populations[static_cast<std::size_t>(net_.neuron_population[static_cast<std::size_t>(i)])];
          const std::int64_t type = pop.node_type_ids[static_cast<std::size_t>(i - pop.offset)];
          auto it = l.target_by_type.find(type);
          target = it == l.target_by_type.end() ? l.target : it->second;
        }
        for (int b = 0; b < B_; ++b) {
          const double diff = hc(b, i) * per - target;
          value += diff * diff;
          hg(b, i) += l.cost * 2.0 * diff * per / BN;
        }
      }
      value *= l.cost / BN;
    } else if (l.kind == LossKind::VoltageRegularization) {
      value = l.cost * (l.threshold_mode ? vreg_threshold_sum_ : vreg_range_sum_) / (BN * static_cast<double>(T_));
    } else {
      wreg_cost += l.cost;
    }
    m.loss_terms.push_back(value);
  }
  Kokkos::deep_copy(adj_.rate_grad, hg);
  backward();
  m.t_recompute = t_recompute_;
  m.t_backward = t_backward_;
  // weight regularizer: one mean over all trainable edges of all surfaces
  std::int64_t n_trainable = 0;
  for (const auto& s : surfaces_)
    if (s.trainable) n_trainable += static_cast<std::int64_t>(s.grad.extent(0));
  double wreg = 0;
  if (wreg_cost > 0 && n_trainable > 0) {
    const double scale = wreg_cost / static_cast<double>(n_trainable);
    for (auto& s : surfaces_) {
      if (!s.trainable) continue;
      auto w = s.edges->weight;
      auto w0 = s.w0;
      auto g = s.grad;
      double part = 0;
      Kokkos::parallel_reduce(
          "dpointnet::weight_regularizer", Policy(0, static_cast<std::int64_t>(g.extent(0))),
          KOKKOS_LAMBDA(const std::int64_t e, double& acc) {
            const double d = static_cast<double>(w(e)) - static_cast<double>(w0(e));
            acc += d * d;
            g(e) += 2.0 * scale * d;
          },
          part);
      wreg += part * scale;
    }
  }
  for (std::size_t q = 0; q < tc_.losses.size(); ++q)
    if (tc_.losses[q].kind == LossKind::WeightRegularization) m.loss_terms[q] = wreg * tc_.losses[q].cost / wreg_cost;
  m.loss = 0;
  for (double v : m.loss_terms) m.loss += v;
  double norm2 = 0;
  for (const auto& s : surfaces_) {
    if (!s.trainable) continue;
    auto g = s.grad;
    double part = 0;
    Kokkos::parallel_reduce(
        "dpointnet::grad_norm", Policy(0, static_cast<std::int64_t>(g.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t e, double& acc) { acc += g(e) * g(e); }, part);
    norm2 += part;
  }
  m.grad_norm = std::sqrt(norm2);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = B_ / std::max(m.seconds, 1e-12);
  last_grad_norm_ = m.grad_norm;
  return m;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::apply_update() {
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  const auto start = std::chrono::steady_clock::now();
  ++adam_step_;
  const double k = static_cast<double>(adam_step_);
  const double scale = (tc_.clip_global_norm > 0 && last_grad_norm_ > tc_.clip_global_norm)
                           ? tc_.clip_global_norm / last_grad_norm_
                           : 1.0;
  for (auto& s : surfaces_) {
    if (!s.trainable) continue;
    kernels::AdamFunctor<Real, ExecSpace> f{s.edges->weight,
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
    Kokkos::parallel_for("dpointnet::adam", Policy(0, static_cast<std::int64_t>(s.grad.extent(0))), f);
  }
  Kokkos::fence();
  t_update_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Real, class ExecSpace>
StepMetrics Trainer<Real, ExecSpace>::train_step() {
  const auto start = std::chrono::steady_clock::now();
  StepMetrics m = compute_gradient(adam_step_ * B_);
  apply_update();
  m.t_update = t_update_;
  m.step = adam_step_;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.samples_per_s = B_ / std::max(m.seconds, 1e-12);
  return m;
}

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::terminal_state() const {
  std::vector<double> out;
  if (terminal_v_.extent(0) == 0) return out;
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), terminal_v_);
  auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts_);
  for (int b = 0; b < B_; ++b) {
    for (std::int64_t i = 0; i < N_; ++i) out.push_back(static_cast<double>(v(b, i)));
    for (std::int64_t i = 0; i < N_; ++i) out.push_back(static_cast<double>(c(b, i)));
  }
  return out;
}

template <class Real, class ExecSpace>
std::int64_t Trainer<Real, ExecSpace>::sign_violations() const {
  std::int64_t bad = 0;
  for (int s = 0; s < n_surfaces(); ++s) {
    if (!surface_trainable(s)) continue;
    const auto w = get(s, Field::Weight), w0 = get(s, Field::InitialWeight);
    for (std::size_t e = 0; e < w.size(); ++e) bad += (w0[e] >= 0 ? w[e] < 0 : w[e] > 0);
  }
  return bad;
}

template <class Real, class ExecSpace>
std::size_t Trainer<Real, ExecSpace>::packed_size() const {
  std::size_t n = 0;
  for (const auto& s : surfaces_)
    if (s.trainable) n += s.grad.extent(0);
  return n;
}

template <class Real, class ExecSpace>
float* Trainer<Real, ExecSpace>::pack_gradients() {
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  if (packed_.extent(0) != packed_size()) {
    packed_ = Kokkos::View<float*, MemSpace>("train.packed_gradients", packed_size());
    packed_host_ = Kokkos::create_mirror_view(packed_);
  }
  std::int64_t off = 0;
  auto buf = packed_;
  for (const auto& s : surfaces_) {
    if (!s.trainable) continue;
    auto g = s.grad;
    const std::int64_t o = off;
    Kokkos::parallel_for(
        "dpointnet::pack_gradients", Policy(0, static_cast<std::int64_t>(g.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t e) { buf(o + e) = static_cast<float>(g(e)); });
    off += static_cast<std::int64_t>(g.extent(0));
  }
  Kokkos::deep_copy(packed_host_, packed_);
  return packed_host_.data();
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::unpack_gradients(const float* packed, double scale) {
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  if (packed_.extent(0) != packed_size()) pack_gradients();
  if (packed != packed_host_.data())
    for (std::size_t q = 0; q < packed_host_.extent(0); ++q) packed_host_(q) = packed[q];
  Kokkos::deep_copy(packed_, packed_host_);
  std::int64_t off = 0;
  auto buf = packed_;
  double norm2 = 0;
  for (auto& s : surfaces_) {
    if (!s.trainable) continue;
    auto g = s.grad;
    const std::int64_t o = off;
    double part = 0;
    Kokkos::parallel_reduce(
        "dpointnet::unpack_gradients", Policy(0, static_cast<std::int64_t>(g.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t e, double& acc) {
          g(e) = static_cast<double>(buf(o + e)) * scale;
          acc += g(e) * g(e);
        },
        part);
    norm2 += part;
    off += static_cast<std::int64_t>(g.extent(0));
  }
  last_grad_norm_ = std::sqrt(norm2);
}

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::get(int si, Field f) const {
  const auto& s = surfaces_[static_cast<std::size_t>(si)];
  auto fi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.edges->file_index);
  const std::size_t ne = fi.extent(0);
  std::vector<double> out(ne, 0.0);
  auto fill = [&](const auto& view) {
    if (view.extent(0) != ne) return;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
    for (std::size_t q = 0; q < ne; ++q) out[static_cast<std::size_t>(fi(q))] = static_cast<double>(h(q));
  };
  switch (f) {
    case Field::Weight:
      fill(s.edges->weight);
      break;
    case Field::InitialWeight:
      fill(s.w0);
      break;
    case Field::AdamM:
      fill(s.m);
      break;
    case Field::AdamV:
      fill(s.v);
      break;
    case Field::Gradient:
      fill(s.grad);
      break;
  }
  return out;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::set(int si, Field f, const std::vector<double>& values) {
  auto& s = surfaces_[static_cast<std::size_t>(si)];
  auto fi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.edges->file_index);
  auto put = [&](auto& view) {
    if (view.extent(0) != values.size()) throw std::runtime_error("surface " + s.name + ": size mismatch");
    auto h = Kokkos::create_mirror_view(view);
    for (std::size_t q = 0; q < values.size(); ++q)
      h(q) = static_cast<typename std::decay_t<decltype(view)>::value_type>(values[static_cast<std::size_t>(fi(q))]);
    Kokkos::deep_copy(view, h);
  };
  switch (f) {
    case Field::Weight:
      put(s.edges->weight);
      break;
    case Field::InitialWeight:
      put(s.w0);
      break;
    case Field::AdamM:
      put(s.m);
      break;
    case Field::AdamV:
      put(s.v);
      break;
    case Field::Gradient:
      put(s.grad);
      break;
  }
}

}  // namespace dpointnet
