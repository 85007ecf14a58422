// Template implementation of Simulator; instantiated in simulator.cpp.
#pragma once
#include <stdexcept>
#include <string>

#include "dpointnet/device/fill.hpp"
#include "dpointnet/device/neuron_step.hpp"
#include "dpointnet/device/propagate.hpp"
#include "dpointnet/network/live_channels.hpp"
#include "dpointnet/network/nest_time.hpp"
#include "dpointnet/sim/detail/count_events.hpp"
#include "dpointnet/sim/detail/neuron_dynamics_impl.hpp"
#include "dpointnet/sim/detail/simulator_inputs_impl.hpp"
#include "dpointnet/sim/detail/simulator_snapshot_impl.hpp"
#include "dpointnet/sim/detail/simulator_window_impl.hpp"
#include "dpointnet/sim/simulator.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
Simulator<Real, ExecSpace>::Simulator(const ExecSpace& space, const Network& net,
                                      const std::vector<PreparedInput>& inputs, const SimOptions& opt)
    : Simulator(space, net, inputs, opt, device::KernelShape::Auto) {}

template <class Real, class ExecSpace>
Simulator<Real, ExecSpace>::Simulator(const ExecSpace& space, const Network& net,
                                      const std::vector<PreparedInput>& inputs, const SimOptions& opt,
                                      device::KernelShape shape)
    : space_(space),
      B_(opt.batch_size),
      R_(net.n_channels),
      D_(net.max_delay),
      N_(net.n_neurons),
      dt_(net.dt),
      opt_(opt),
      shape_(shape) {
  if (N_ >= (std::int64_t(1) << 31)) throw std::runtime_error("more than 2^31 neurons are not supported");
  if (shape_ == device::KernelShape::Host && !compat::host_execution<ExecSpace>)
    throw std::logic_error("kernel shape Host: the host shapes need a host execution space");
  const std::size_t N = static_cast<std::size_t>(N_);
  // Everything below is allocated, initialized and uploaded on space_ (no global fence). Views that the host fills
  // completely from a mirror are not initialized first.
  // neuron constants
  k_.decay = decltype(k_.decay)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.decay"), N);
  k_.current_factor =
      decltype(k_.current_factor)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.current_factor"), N);
  k_.v_reset = decltype(k_.v_reset)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.v_reset"), N);
  k_.t_ref_steps =
      decltype(k_.t_ref_steps)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.t_ref_steps"), N);
  k_.n_channels =
      decltype(k_.n_channels)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.n_channels"), N);
  k_.n_receptors =
      decltype(k_.n_receptors)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.n_receptors"), N);
  k_.asc_amps =
      decltype(k_.asc_amps)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.asc_amps"), kNumAsc, N);
  k_.asc_decay =
      decltype(k_.asc_decay)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.asc_decay"), kNumAsc, N);
  k_.syn_decay =
      decltype(k_.syn_decay)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.syn_decay"), R_, N);
  k_.psc_initial =
      decltype(k_.psc_initial)(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "neuron.psc_initial"), R_, N);
  {
    auto decay = Kokkos::create_mirror_view(k_.decay);
    auto cf = Kokkos::create_mirror_view(k_.current_factor);
    auto vr = Kokkos::create_mirror_view(k_.v_reset);
    auto tr = Kokkos::create_mirror_view(k_.t_ref_steps);
    auto nc = Kokkos::create_mirror_view(k_.n_channels);
    auto nr = Kokkos::create_mirror_view(k_.n_receptors);
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
      nr(i) = d.n_receptors > 0 ? d.n_receptors : nc(i);
      k_.any_slow = k_.any_slow || nr(i) < nc(i);
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
    Kokkos::deep_copy(space_, k_.decay, decay);
    Kokkos::deep_copy(space_, k_.current_factor, cf);
    Kokkos::deep_copy(space_, k_.v_reset, vr);
    Kokkos::deep_copy(space_, k_.t_ref_steps, tr);
    Kokkos::deep_copy(space_, k_.n_channels, nc);
    Kokkos::deep_copy(space_, k_.n_receptors, nr);
    Kokkos::deep_copy(space_, k_.asc_amps, aa);
    Kokkos::deep_copy(space_, k_.asc_decay, ad);
    Kokkos::deep_copy(space_, k_.syn_decay, sd);
    Kokkos::deep_copy(space_, k_.psc_initial, pi);
  }
  {  // channels without inputs (network/live_channels.hpp)
    const LiveChannels lc = live_channels(net, device::NeuronConstants<Real, MemSpace>::kLiveBlock);
    k_.live = detail::upload_vector<decltype(k_.live)>(space_, "neuron.live_channels", lc.neuron);
    k_.live_blocks = detail::upload_vector<decltype(k_.live_blocks)>(space_, "neuron.live_channel_blocks", lc.block);
    live_spans_ = detail::upload_vector<decltype(live_spans_)>(space_, "drive.live_spans", lc.span);
  }
  dynamics_ = detail::make_neuron_dynamics<Real>(space_, net, B_, R_);  // run.dynamics, once
  window_ = window_length(net, opt_.max_window, B_, R_, window_bytes(compat::host_execution<ExecSpace>));
  if (opt_.windows_with_hook && window_ > 1) {
    const auto rows = static_cast<std::size_t>(window_) * static_cast<std::size_t>(B_);
    step_v_ = decltype(step_v_)(Kokkos::view_alloc(space_, "window.training_v"), rows, N);
    step_r_ = decltype(step_r_)(Kokkos::view_alloc(space_, "window.training_r"), rows, N);
  }
  // state
  state_.v = decltype(state_.v)(Kokkos::view_alloc(space_, "state.v"), B_, N);
  state_.r = decltype(state_.r)(Kokkos::view_alloc(space_, "state.r"), B_, N);
  state_.asc = decltype(state_.asc)(Kokkos::view_alloc(space_, "state.asc"), B_, kNumAsc, N);
  state_.psc_rise = decltype(state_.psc_rise)(Kokkos::view_alloc(space_, "state.psc_rise"), B_, R_, N);
  state_.psc = decltype(state_.psc)(Kokkos::view_alloc(space_, "state.psc"), B_, R_, N);
  u_ = decltype(u_)(Kokkos::view_alloc(space_, "drive.u"), static_cast<std::size_t>(window_) * B_, R_, N);
  z_ring_ = device::SpikeRing<MemSpace>(Kokkos::view_alloc(space_, "state.z_ring"), D_, B_, N);
  const bool active_lists = device::device_shape<ExecSpace>(shape_);
  recurrent_ =
      device::group_edges<Real, MemSpace>(space_, net.projections[0], net.initial_weights(0), D_, N_, "edges.recurrent",
                                          opt_.read_order ? &recurrent_order_ : nullptr, active_lists);
  for (const PreparedInput& in : inputs) {
    auto rt = std::make_unique<InputRuntime>();
    rt->spec = in;
    const Projection& pr = net.projections[static_cast<std::size_t>(in.projection)];
    const std::string lbl = "input." + pr.source_population;
    rt->edges = device::group_edges<Real, MemSpace>(space_, pr, net.initial_weights(in.projection), D_, N_,
                                                    "edges." + pr.source_population,
                                                    opt_.read_order ? &rt->order : nullptr, active_lists);
    rt->ring = device::CountRing<MemSpace>(Kokkos::view_alloc(space_, lbl + ".ring"), D_, B_,
                                           static_cast<std::size_t>(pr.n_sources));
    upload_schedule(*rt, in);
    inputs_.push_back(std::move(rt));
  }
  rec_z_ = decltype(rec_z_)(Kokkos::view_alloc(space_, "record.z"), opt_.record_chunk, B_, N);
  if (opt_.record_v) rec_v_ = decltype(rec_v_)(Kokkos::view_alloc(space_, "record.v"), opt_.record_chunk, B_, N);
  i_ext_ = decltype(i_ext_)(Kokkos::view_alloc(space_, "neuron.i_ext"), N);
  // host staging of the recorder, allocated once (run() is called per segment in training)
  rec_z_host_ = Kokkos::create_mirror_view(rec_z_);
  rec_v_host_ = Kokkos::create_mirror_view(rec_v_);
  rec_v_double_ = decltype(rec_v_double_)("record.v_host", rec_v_.extent(0), rec_v_.extent(1), rec_v_.extent(2));
  for (std::size_t k = 0; opt_.record_inputs && k < inputs_.size(); ++k) {
    rec_in_.emplace_back(Kokkos::view_alloc(space_, "record.input." + inputs_[k]->spec.name), opt_.record_chunk, B_,
                         inputs_[k]->ring.extent(2));
    rec_in_host_.push_back(Kokkos::create_mirror_view(rec_in_.back()));
  }
  space_.fence();  // the uploads above read host mirrors that go out of scope here
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
  std::vector<double> acc(static_cast<std::size_t>(N_), 0.0);
  for (const auto& p : pulses_)
    if (p.first_step <= t && t < p.end_step)
      for (std::size_t q = 0; q < p.neurons.size(); ++q) acc[static_cast<std::size_t>(p.neurons[q])] += p.amp[q];
  auto h = Kokkos::create_mirror_view(i_ext_);
  space_.fence();  // the mirror may be i_ext_ itself (host memory), read by the steps already launched
  for (std::int64_t i = 0; i < N_; ++i) h(i) = static_cast<Real>(acc[static_cast<std::size_t>(i)]);
  Kokkos::deep_copy(space_, i_ext_, h);
  space_.fence();  // h goes out of scope
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::reset() {
  dynamics_->initial_v(space_, state_.v);
  Kokkos::deep_copy(space_, state_.r, std::int16_t(0));
  Kokkos::deep_copy(space_, state_.asc, Real(0));
  Kokkos::deep_copy(space_, state_.psc_rise, Real(0));
  Kokkos::deep_copy(space_, state_.psc, Real(0));
  Kokkos::deep_copy(space_, z_ring_, std::uint8_t(0));
  Kokkos::deep_copy(space_, i_ext_, Real(0));
  for (auto& in : inputs_) Kokkos::deep_copy(space_, in->ring, std::uint16_t(0));
  t_ = 0;
  history_ = 0;
  events_ = 0;
  update_current(0);
}

template <class Real, class ExecSpace>
device::GroupedEdges<Real, typename ExecSpace::memory_space>& Simulator<Real, ExecSpace>::edges(int s) {
  return s == 0 ? recurrent_ : inputs_[static_cast<std::size_t>(s - 1)]->edges;
}
template <class Real, class ExecSpace>
const device::GroupedEdges<Real, typename ExecSpace::memory_space>& Simulator<Real, ExecSpace>::edges(int s) const {
  return s == 0 ? recurrent_ : inputs_[static_cast<std::size_t>(s - 1)]->edges;
}
template <class Real, class ExecSpace>
const std::vector<std::int64_t>& Simulator<Real, ExecSpace>::file_order(int s) const {
  if (!opt_.read_order) throw std::logic_error("Simulator::file_order: built with SimOptions::read_order = false");
  return s == 0 ? recurrent_order_ : inputs_[static_cast<std::size_t>(s - 1)]->order;
}
template <class Real, class ExecSpace>
int Simulator<Real, ExecSpace>::projection(int s) const {
  return s == 0 ? 0 : inputs_[static_cast<std::size_t>(s - 1)]->spec.projection;
}
template <class Real, class ExecSpace>
const PreparedInput& Simulator<Real, ExecSpace>::input_spec(int k) const {
  return inputs_[static_cast<std::size_t>(k)]->spec;
}
template <class Real, class ExecSpace>
const device::CountRing<typename ExecSpace::memory_space>& Simulator<Real, ExecSpace>::input_ring(int k) const {
  return inputs_[static_cast<std::size_t>(k)]->ring;
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::run(std::int64_t steps, const std::function<void(const RecordedChunk&)>& sink) {
  auto& hz = rec_z_host_;
  auto& hv = rec_v_host_;
  auto& hv_d = rec_v_double_;
  std::int64_t done = 0;
  while (done < steps) {
    // (without a sink one chunk: chunks would only cut windows)
    const int n = static_cast<int>(sink ? std::min<std::int64_t>(opt_.record_chunk, steps - done) : steps - done);
    const std::int64_t first = t_;
    for (int k = 0; k < n;) {
      const int w = window_steps(n - k);
      advance(w, sink ? k : -1);
      k += w;
    }
    if (sink) {
      Kokkos::deep_copy(space_, hz, rec_z_);
      if (opt_.record_v) Kokkos::deep_copy(space_, hv, rec_v_);
      for (std::size_t k = 0; k < rec_in_.size(); ++k) Kokkos::deep_copy(space_, rec_in_host_[k], rec_in_[k]);
      space_.fence();  // the host reads the chunk
      if (opt_.record_v) {
        for (std::size_t q = 0; q < hv.span(); ++q) hv_d.data()[q] = static_cast<double>(hv.data()[q]);
      }
      RecordedChunk c;
      c.first_step = first;
      c.n_steps = n;
      c.z = Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, Kokkos::HostSpace>(hz.data(), hz.extent(0), hz.extent(1),
                                                                                  hz.extent(2));
      c.v = hv_d;
      c.inputs = rec_in_host_;
      sink(c);
    }
    done += n;
  }
}

}  // namespace dpointnet
