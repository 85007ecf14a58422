// Template implementation of Simulator; instantiated in simulator.cpp.
#pragma once
#include <stdexcept>
#include <string>

#include "sim/simulator.hpp"

namespace dpointnet {

template <class Real, class MemSpace>
kernels::GroupedEdges<Real, MemSpace> group_edges(const Projection& p, int D, std::int64_t n_targets,
                                                  const std::string& label) {
  kernels::GroupedEdges<Real, MemSpace> g;
  g.n_sources = p.n_sources;
  const std::size_t ne = p.size();
  const std::size_t ng = static_cast<std::size_t>(p.n_sources) * static_cast<std::size_t>(D);
  auto h_off = Kokkos::View<std::int64_t*, Kokkos::HostSpace>("offsets", ng + 1);
  for (std::size_t e = 0; e < ne; ++e) {
    const std::size_t key = static_cast<std::size_t>(p.source[e]) * D + static_cast<std::size_t>(p.delay_steps[e] - 1);
    h_off(key + 1)++;
  }
  for (std::size_t k = 0; k < ng; ++k) h_off(k + 1) += h_off(k);
  auto h_tgt = Kokkos::View<std::int32_t*, Kokkos::HostSpace>("target", ne);
  auto h_ch = Kokkos::View<std::uint8_t*, Kokkos::HostSpace>("channel", ne);
  auto h_w = Kokkos::View<Real*, Kokkos::HostSpace>("weight", ne);
  auto h_fi = Kokkos::View<std::int64_t*, Kokkos::HostSpace>("file_index", ne);
  auto h_src = Kokkos::View<std::int32_t*, Kokkos::HostSpace>("source", ne);
  auto h_del = Kokkos::View<std::uint16_t*, Kokkos::HostSpace>("delay", ne);
  std::vector<std::int64_t> fill(ng, 0);
  for (std::size_t e = 0; e < ne; ++e) {
    const std::size_t key = static_cast<std::size_t>(p.source[e]) * D + static_cast<std::size_t>(p.delay_steps[e] - 1);
    const std::int64_t pos = h_off(key) + fill[key]++;
    h_tgt(pos) = static_cast<std::int32_t>(p.target[e]);
    h_ch(pos) = static_cast<std::uint8_t>(p.channel[e]);
    h_w(pos) = static_cast<Real>(p.weight[e]);
    h_fi(pos) = static_cast<std::int64_t>(e);
    h_src(pos) = static_cast<std::int32_t>(p.source[e]);
    h_del(pos) = static_cast<std::uint16_t>(p.delay_steps[e]);
  }
  // target-major index (stable: within a target, in source-grouped order)
  auto h_toff =
      Kokkos::View<std::int64_t*, Kokkos::HostSpace>("target_offsets", static_cast<std::size_t>(n_targets) + 1);
  auto h_bt = Kokkos::View<std::int64_t*, Kokkos::HostSpace>("by_target", ne);
  for (std::size_t k = 0; k < ne; ++k) h_toff(static_cast<std::size_t>(h_tgt(k)) + 1)++;
  for (std::int64_t i = 0; i < n_targets; ++i) h_toff(i + 1) += h_toff(i);
  {
    std::vector<std::int64_t> tfill(static_cast<std::size_t>(n_targets), 0);
    for (std::size_t k = 0; k < ne; ++k) {
      const auto i = static_cast<std::size_t>(h_tgt(k));
      h_bt(h_toff(i) + tfill[i]++) = static_cast<std::int64_t>(k);
    }
  }
  g.offsets = Kokkos::View<std::int64_t*, MemSpace>(label + ".offsets", ng + 1);
  g.target = Kokkos::View<std::int32_t*, MemSpace>(label + ".target", ne);
  g.channel = Kokkos::View<std::uint8_t*, MemSpace>(label + ".channel", ne);
  g.weight = Kokkos::View<Real*, MemSpace>(label + ".weight", ne);
  g.file_index = Kokkos::View<std::int64_t*, MemSpace>(label + ".file_index", ne);
  Kokkos::deep_copy(g.offsets, h_off);
  Kokkos::deep_copy(g.target, h_tgt);
  Kokkos::deep_copy(g.channel, h_ch);
  Kokkos::deep_copy(g.weight, h_w);
  Kokkos::deep_copy(g.file_index, h_fi);
  g.source = Kokkos::View<std::int32_t*, MemSpace>(label + ".source", ne);
  g.delay = Kokkos::View<std::uint16_t*, MemSpace>(label + ".delay", ne);
  g.target_offsets = Kokkos::View<std::int64_t*, MemSpace>(label + ".target_offsets", h_toff.extent(0));
  g.by_target = Kokkos::View<std::int64_t*, MemSpace>(label + ".by_target", ne);
  Kokkos::deep_copy(g.source, h_src);
  Kokkos::deep_copy(g.delay, h_del);
  Kokkos::deep_copy(g.target_offsets, h_toff);
  Kokkos::deep_copy(g.by_target, h_bt);
  return g;
}

template <class Real, class ExecSpace>
struct Simulator<Real, ExecSpace>::InputRuntime {
  PreparedInput spec;
  kernels::GroupedEdges<Real, MemSpace> edges;
  kernels::CountRing<MemSpace> ring;
  Kokkos::View<std::int64_t*, MemSpace> step_offsets;
  std::vector<std::int64_t> h_step_offsets;
  Kokkos::View<std::int32_t*, MemSpace> source;
  Kokkos::View<std::uint16_t*, MemSpace> count;
  Kokkos::View<double*, MemSpace> p, p0;
};

template <class Real, class ExecSpace>
Simulator<Real, ExecSpace>::Simulator(const Network& net, const std::vector<PreparedInput>& inputs,
                                      const SimOptions& opt)
    : B_(opt.batch_size), R_(net.n_channels), D_(net.max_delay), N_(net.n_neurons), dt_(net.dt), opt_(opt) {
  if (N_ >= (std::int64_t(1) << 31)) throw std::runtime_error("more than 2^31 neurons are not supported");
  const std::size_t N = static_cast<std::size_t>(N_);
  // neuron constants
  k_.decay = decltype(k_.decay)("neuron.decay", N);
  k_.current_factor = decltype(k_.current_factor)("neuron.current_factor", N);
  k_.v_reset = decltype(k_.v_reset)("neuron.v_reset", N);
  k_.t_ref_steps = decltype(k_.t_ref_steps)("neuron.t_ref_steps", N);
  k_.n_channels = decltype(k_.n_channels)("neuron.n_channels", N);
  k_.asc_amps = decltype(k_.asc_amps)("neuron.asc_amps", kNumAsc, N);
  k_.asc_decay = decltype(k_.asc_decay)("neuron.asc_decay", kNumAsc, N);
  k_.syn_decay = decltype(k_.syn_decay)("neuron.syn_decay", R_, N);
  k_.psc_initial = decltype(k_.psc_initial)("neuron.psc_initial", R_, N);
  {
    auto decay = Kokkos::create_mirror_view(k_.decay);
    auto cf = Kokkos::create_mirror_view(k_.current_factor);
    auto vr = Kokkos::create_mirror_view(k_.v_reset);
    auto tr = Kokkos::create_mirror_view(k_.t_ref_steps);
    auto nc = Kokkos::create_mirror_view(k_.n_channels);
    auto aa = Kokkos::create_mirror_view(k_.asc_amps);
    auto ad = Kokkos::create_mirror_view(k_.asc_decay);
    auto sd = Kokkos::create_mirror_view(k_.syn_decay);
    auto pi = Kokkos::create_mirror_view(k_.psc_initial);
    for (std::size_t i = 0; i < N; ++i) {
      const DerivedNeuron& d = net.neurons[i];
      decay(i) = static_cast<Real>(d.decay);
      cf(i) = static_cast<Real>(d.current_factor);
      vr(i) = static_cast<Real>(d.v_reset);
      tr(i) = d.t_ref_steps;
      nc(i) = static_cast<int>(d.syn_decay.size());
      for (int j = 0; j < kNumAsc; ++j) {
        aa(j, i) = static_cast<Real>(d.asc_amps[j]);
        ad(j, i) = static_cast<Real>(d.asc_decay[j]);
      }
      for (int c = 0; c < R_; ++c) {
        const bool has = c < static_cast<int>(d.syn_decay.size());
        sd(c, i) = has ? static_cast<Real>(d.syn_decay[static_cast<std::size_t>(c)]) : Real(0);
        pi(c, i) = has ? static_cast<Real>(d.psc_initial[static_cast<std::size_t>(c)]) : Real(0);
      }
    }
    Kokkos::deep_copy(k_.decay, decay);
    Kokkos::deep_copy(k_.current_factor, cf);
    Kokkos::deep_copy(k_.v_reset, vr);
    Kokkos::deep_copy(k_.t_ref_steps, tr);
    Kokkos::deep_copy(k_.n_channels, nc);
    Kokkos::deep_copy(k_.asc_amps, aa);
    Kokkos::deep_copy(k_.asc_decay, ad);
    Kokkos::deep_copy(k_.syn_decay, sd);
    Kokkos::deep_copy(k_.psc_initial, pi);
  }
  // state
  state_.v = decltype(state_.v)("state.v", B_, N);
  state_.r = decltype(state_.r)("state.r", B_, N);
  state_.asc = decltype(state_.asc)("state.asc", B_, kNumAsc, N);
  state_.psc_rise = decltype(state_.psc_rise)("state.psc_rise", B_, R_, N);
  state_.psc = decltype(state_.psc)("state.psc", B_, R_, N);
  u_ = decltype(u_)("drive.u", B_, R_, N);
  z_ring_ = kernels::SpikeRing<MemSpace>("state.z_ring", D_, B_, N);
  recurrent_ = group_edges<Real, MemSpace>(net.projections[0], D_, N_, "edges.recurrent");
  for (const PreparedInput& in : inputs) {
    auto rt = std::make_unique<InputRuntime>();
    rt->spec = in;
    const Projection& pr = net.projections[static_cast<std::size_t>(in.projection)];
    const std::string lbl = "input." + pr.source_population;
    rt->edges = group_edges<Real, MemSpace>(pr, D_, N_, "edges." + pr.source_population);
    rt->ring = kernels::CountRing<MemSpace>(lbl + ".ring", D_, B_, static_cast<std::size_t>(pr.n_sources));
    if (!in.silent && in.kind == InputKind::SpikeFile) {
      rt->h_step_offsets = in.spikes.step_offsets;
      auto copy = [&](auto& dev, const auto& vec, const std::string& name) {
        using V = std::decay_t<decltype(dev)>;
        dev = V(lbl + "." + name, vec.size());
        auto h = Kokkos::create_mirror_view(dev);
        for (std::size_t q = 0; q < vec.size(); ++q) h(q) = vec[q];
        Kokkos::deep_copy(dev, h);
      };
      copy(rt->step_offsets, in.spikes.step_offsets, "step_offsets");
      copy(rt->source, in.spikes.source, "source");
      copy(rt->count, in.spikes.count, "count");
    } else if (!in.silent) {
      auto copy = [&](Kokkos::View<double*, MemSpace>& dev, const std::vector<double>& vec, const std::string& nm) {
        dev = Kokkos::View<double*, MemSpace>(lbl + "." + nm, vec.size());
        auto h = Kokkos::create_mirror_view(dev);
        for (std::size_t q = 0; q < vec.size(); ++q) h(q) = vec[q];
        Kokkos::deep_copy(dev, h);
      };
      copy(rt->p, in.p, "p");
      if (in.kind == InputKind::Poisson) copy(rt->p0, in.p0, "p0");
    }
    inputs_.push_back(std::move(rt));
  }
  rec_z_ = decltype(rec_z_)("record.z", opt_.record_chunk, B_, N);
  if (opt_.record_v) rec_v_ = decltype(rec_v_)("record.v", opt_.record_chunk, B_, N);
  i_ext_ = decltype(i_ext_)("neuron.i_ext", N);
  // host staging of the recorder, allocated once (run() is called per segment in training)
  rec_z_host_ = Kokkos::create_mirror_view(rec_z_);
  rec_v_host_ = Kokkos::create_mirror_view(rec_v_);
  rec_v_double_ = decltype(rec_v_double_)("record.v_host", rec_v_.extent(0), rec_v_.extent(1), rec_v_.extent(2));
  v_step_ = decltype(v_step_)("record.v_step", opt_.record_v ? B_ : 0, opt_.record_v ? N : 0);
}

template <class Real, class ExecSpace>
Simulator<Real, ExecSpace>::~Simulator() = default;

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::set_current_pulses(const std::vector<CurrentPulse>& pulses) {
  pulses_ = pulses;
  update_current(t_);
}

// Recomputes the external current from the pulses active at step t (only when the active set changes).
template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::update_current(std::int64_t t, bool force) {
  bool change = force || (t == 0);
  for (const auto& p : pulses_) change = change || p.first_step == t || p.end_step == t;
  if (!change || pulses_.empty()) return;
  auto h = Kokkos::create_mirror_view(i_ext_);
  std::vector<double> acc(static_cast<std::size_t>(N_), 0.0);
  for (const auto& p : pulses_)
    if (p.first_step <= t && t < p.end_step)
      for (std::size_t q = 0; q < p.neurons.size(); ++q) acc[static_cast<std::size_t>(p.neurons[q])] += p.amp[q];
  for (std::int64_t i = 0; i < N_; ++i) h(i) = static_cast<Real>(acc[static_cast<std::size_t>(i)]);
  Kokkos::deep_copy(i_ext_, h);
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::reset() {
  Kokkos::deep_copy(state_.v, Real(0));
  Kokkos::deep_copy(state_.r, std::int16_t(0));
  Kokkos::deep_copy(state_.asc, Real(0));
  Kokkos::deep_copy(state_.psc_rise, Real(0));
  Kokkos::deep_copy(state_.psc, Real(0));
  Kokkos::deep_copy(z_ring_, std::uint8_t(0));
  Kokkos::deep_copy(i_ext_, Real(0));
  for (auto& in : inputs_) Kokkos::deep_copy(in->ring, std::uint16_t(0));
  t_ = 0;
  events_ = 0;
  update_current(0);
}

namespace impl {
template <class ExecSpace, class Activity, class Ring>
double count_events(const Ring& ring, const Kokkos::View<std::int64_t*, typename ExecSpace::memory_space>& offsets,
                    std::int64_t t, int D, int B, std::int64_t n_src) {
  double total = 0;
  Kokkos::parallel_reduce(
      "dpointnet::count_events", Kokkos::RangePolicy<ExecSpace>(0, static_cast<std::int64_t>(B) * n_src * D),
      KOKKOS_LAMBDA(const std::int64_t idx, double& acc) {
        const int dm1 = static_cast<int>(idx % D);
        const std::int64_t rest = idx / D;
        const std::int64_t j = rest % n_src;
        const int b = static_cast<int>(rest / n_src);
        const std::int64_t s = t - (dm1 + 1);
        if (s < 0) return;
        const Activity a = ring(static_cast<int>(s % D), b, j);
        if (a) acc += double(a > 0) * double(offsets(j * D + dm1 + 1) - offsets(j * D + dm1));
      },
      total);
  return total;
}
}  // namespace impl

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::step_once(int rec_index) {
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  const std::int64_t t = t_;
  update_current(t);
  Kokkos::deep_copy(u_, std::int64_t(0));
  // 1. synaptic drive
  if (recurrent_.target.extent(0) > 0) {
    kernels::PropagateFunctor<Real, ExecSpace, std::uint8_t> f{recurrent_, z_ring_, u_, t, D_};
    Kokkos::parallel_for("dpointnet::propagate_recurrent", Policy(0, std::int64_t(B_) * N_ * D_), f);
    if (count_events_)
      events_ += impl::count_events<ExecSpace, std::uint8_t>(z_ring_, recurrent_.offsets, t, D_, B_, N_);
  }
  for (auto& in : inputs_) {
    const std::int64_t ns = in->edges.n_sources;
    kernels::PropagateFunctor<Real, ExecSpace, std::uint16_t> f{in->edges, in->ring, u_, t, D_};
    Kokkos::parallel_for("dpointnet::propagate_input", Policy(0, std::int64_t(B_) * ns * D_), f);
    if (count_events_)
      events_ += impl::count_events<ExecSpace, std::uint16_t>(in->ring, in->edges.offsets, t, D_, B_, ns);
  }
  // 2-8. neurons
  const int slot_now = static_cast<int>(t % D_);
  const int slot_prev = static_cast<int>((t + D_ - 1) % D_);
  kernels::NeuronStepFunctor<Real, ExecSpace> nf{
      k_, state_, u_, z_ring_, v_step_, i_ext_, static_cast<Real>(dt_), int(N_), slot_prev, slot_now, t > 0};
  Kokkos::parallel_for("dpointnet::neuron_step", Policy(0, std::int64_t(B_) * N_), nf);
  // inputs of this step, into their ring slot (read from the next step on)
  for (auto& in : inputs_) {
    auto ring_slot = Kokkos::subview(in->ring, slot_now, Kokkos::ALL, Kokkos::ALL);
    Kokkos::deep_copy(ring_slot, std::uint16_t(0));
    if (in->spec.silent) continue;
    if (in->spec.kind == InputKind::SpikeFile) {
      if (t >= static_cast<std::int64_t>(in->h_step_offsets.size()) - 1) continue;
      const std::int64_t n =
          in->h_step_offsets[static_cast<std::size_t>(t + 1)] - in->h_step_offsets[static_cast<std::size_t>(t)];
      if (n == 0) continue;
      kernels::StampedSpikesFunctor<ExecSpace> f{in->step_offsets, in->source, in->count, in->ring, t, slot_now, B_};
      Kokkos::parallel_for("dpointnet::input_spike_file", Policy(0, n * B_), f);
    } else {
      kernels::RandomInputFunctor<ExecSpace> f{in->p,
                                               in->p0,
                                               in->ring,
                                               opt_.seed,
                                               in->spec.purpose,
                                               t,
                                               opt_.sample_offset,
                                               in->edges.n_sources,
                                               slot_now,
                                               in->spec.kind == InputKind::Poisson};
      Kokkos::parallel_for("dpointnet::input_random", Policy(0, std::int64_t(B_) * in->edges.n_sources), f);
    }
  }
  // record
  Kokkos::deep_copy(Kokkos::subview(rec_z_, rec_index, Kokkos::ALL, Kokkos::ALL),
                    Kokkos::subview(z_ring_, slot_now, Kokkos::ALL, Kokkos::ALL));
  if (opt_.record_v) {
    Kokkos::deep_copy(Kokkos::subview(rec_v_, rec_index, Kokkos::ALL, Kokkos::ALL), v_step_);
  }
  if (hook_) hook_(t, slot_now);
  ++t_;
}

template <class Real, class ExecSpace>
typename Simulator<Real, ExecSpace>::Snapshot Simulator<Real, ExecSpace>::make_snapshot() const {
  Snapshot s;
  const std::size_t N = static_cast<std::size_t>(N_);
  s.state.v = decltype(s.state.v)("snapshot.v", B_, N);
  s.state.r = decltype(s.state.r)("snapshot.r", B_, N);
  s.state.asc = decltype(s.state.asc)("snapshot.asc", B_, kNumAsc, N);
  s.state.psc_rise = decltype(s.state.psc_rise)("snapshot.psc_rise", B_, R_, N);
  s.state.psc = decltype(s.state.psc)("snapshot.psc", B_, R_, N);
  s.z_ring = kernels::SpikeRing<MemSpace>("snapshot.z_ring", D_, B_, N);
  for (const auto& in : inputs_)
    s.input_rings.emplace_back("snapshot.input_ring", in->ring.extent(0), in->ring.extent(1), in->ring.extent(2));
  return s;
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::save(Snapshot& s) const {
  Kokkos::deep_copy(s.state.v, state_.v);
  Kokkos::deep_copy(s.state.r, state_.r);
  Kokkos::deep_copy(s.state.asc, state_.asc);
  Kokkos::deep_copy(s.state.psc_rise, state_.psc_rise);
  Kokkos::deep_copy(s.state.psc, state_.psc);
  Kokkos::deep_copy(s.z_ring, z_ring_);
  for (std::size_t q = 0; q < inputs_.size(); ++q) Kokkos::deep_copy(s.input_rings[q], inputs_[q]->ring);
  s.t = t_;
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::restore(const Snapshot& s) {
  Kokkos::deep_copy(state_.v, s.state.v);
  Kokkos::deep_copy(state_.r, s.state.r);
  Kokkos::deep_copy(state_.asc, s.state.asc);
  Kokkos::deep_copy(state_.psc_rise, s.state.psc_rise);
  Kokkos::deep_copy(state_.psc, s.state.psc);
  Kokkos::deep_copy(z_ring_, s.z_ring);
  for (std::size_t q = 0; q < inputs_.size(); ++q) Kokkos::deep_copy(inputs_[q]->ring, s.input_rings[q]);
  t_ = s.t;
  update_current(t_, true);
}

template <class Real, class ExecSpace>
kernels::GroupedEdges<Real, typename ExecSpace::memory_space>& Simulator<Real, ExecSpace>::input_edges(int k) {
  return inputs_[static_cast<std::size_t>(k)]->edges;
}
template <class Real, class ExecSpace>
const PreparedInput& Simulator<Real, ExecSpace>::input_spec(int k) const {
  return inputs_[static_cast<std::size_t>(k)]->spec;
}
template <class Real, class ExecSpace>
const kernels::CountRing<typename ExecSpace::memory_space>& Simulator<Real, ExecSpace>::input_ring(int k) const {
  return inputs_[static_cast<std::size_t>(k)]->ring;
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::run(std::int64_t steps, const std::function<void(const RecordedChunk&)>& sink) {
  auto& hz = rec_z_host_;
  auto& hv = rec_v_host_;
  auto& hv_d = rec_v_double_;
  std::int64_t done = 0;
  while (done < steps) {
    const int n = static_cast<int>(std::min<std::int64_t>(opt_.record_chunk, steps - done));
    const std::int64_t first = t_;
    for (int k = 0; k < n; ++k) step_once(k);
    if (sink) {
      Kokkos::deep_copy(hz, rec_z_);
      if (opt_.record_v) {
        Kokkos::deep_copy(hv, rec_v_);
        for (std::size_t q = 0; q < hv.span(); ++q) hv_d.data()[q] = static_cast<double>(hv.data()[q]);
      }
      RecordedChunk c;
      c.first_step = first;
      c.n_steps = n;
      c.z = Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, Kokkos::HostSpace>(hz.data(), hz.extent(0), hz.extent(1),
                                                                                  hz.extent(2));
      c.v = hv_d;
      sink(c);
    } else {
      Kokkos::fence();
    }
    done += n;
  }
}

}  // namespace dpointnet
