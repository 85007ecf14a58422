// Input schedules on the device: uploaded at construction, and replaced by another stimulus condition's
// (train.conditions) between forward passes; outside the step loop.
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>

#include "dpointnet/device/fill.hpp"
#include "dpointnet/device/inputs.hpp"
#include "dpointnet/device/lgn_runtime.hpp"
#include "dpointnet/sim/simulator.hpp"

namespace dpointnet {

namespace detail {
// A device view of the values of a host vector, each converted to the view's element type (empty vector: empty
// view), allocated and copied on `space`, which is fenced (the host mirror goes out of scope; no global fence).
// Every element is written: no initialization. Outside the step loop only.
template <class View, class ExecSpace, class Vec>
View upload_vector(const ExecSpace& space, const std::string& label, const Vec& vec) {
  View dev(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), vec.size());
  auto h = Kokkos::create_mirror_view(dev);
  for (std::size_t q = 0; q < vec.size(); ++q) h(q) = static_cast<typename View::value_type>(vec[q]);
  Kokkos::deep_copy(space, dev, h);
  space.fence();
  return dev;
}
}  // namespace detail

template <class Real, class ExecSpace>
struct Simulator<Real, ExecSpace>::InputRuntime {
  PreparedInput spec;
  device::GroupedEdges<Real, MemSpace> edges;
  std::vector<std::int64_t> order;  // grouped -> read order
  device::CountRing<MemSpace> ring;
  Kokkos::View<std::int64_t*, MemSpace> step_offsets;
  std::vector<std::int64_t> h_step_offsets;
  Kokkos::View<std::int32_t*, MemSpace> source;
  Kokkos::View<std::uint16_t*, MemSpace> count;
  Kokkos::View<double*, MemSpace> p, p0;
  device::LgnRuntime<ExecSpace> lgn;
};

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::upload_schedule(InputRuntime& rt, const PreparedInput& in) {
  rt.spec = in;
  rt.h_step_offsets.clear();
  rt.step_offsets = {};
  rt.source = {};
  rt.count = {};
  rt.p = rt.p0 = {};
  const std::string lbl = "input." + in.name;
  auto copy = [&](auto& dev, const auto& vec, const std::string& name) {
    dev = detail::upload_vector<std::decay_t<decltype(dev)>>(space_, lbl + "." + name, vec);
  };
  if (in.silent) return;
  if (in.kind == InputKind::SpikeFile) {
    rt.h_step_offsets = in.spikes.step_offsets;
    copy(rt.step_offsets, in.spikes.step_offsets, "step_offsets");
    copy(rt.source, in.spikes.source, "source");
    copy(rt.count, in.spikes.count, "count");
  } else if (in.kind == InputKind::Lgn) {
    rt.lgn.upload(space_, lbl, in.lgn, in.stimulus);
  } else {
    copy(rt.p, in.p, "p");
    if (in.kind == InputKind::Poisson) copy(rt.p0, in.p0, "p0");
  }
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::set_input_schedules(const std::vector<PreparedInput>& inputs) {
  if (inputs.size() != inputs_.size())
    throw std::logic_error("set_input_schedules: " + std::to_string(inputs.size()) + " inputs for " +
                           std::to_string(inputs_.size()));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].projection != inputs_[k]->spec.projection || inputs[k].name != inputs_[k]->spec.name)
      throw std::logic_error("set_input_schedules: input " + std::to_string(k) + " (" + inputs[k].name +
                             ") is not on the population and edges of " + inputs_[k]->spec.name);
    upload_schedule(*inputs_[k], inputs[k]);
  }
}

// The input activity of steps t, ..., t + n_steps - 1 of every input into its ring slots (slot + w) mod D:
// random inputs (rates, poisson, lgn) write every entry, a launch per step; the others are zeroed first and a
// spike file's spikes of those steps written in one launch. An LGN input's rate table is computed for the batch on
// its first use.
template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::write_inputs(std::int64_t t, int slot, int n_steps) {
  for (auto& in : inputs_) {
    const bool random = !in->spec.silent && in->spec.kind != InputKind::SpikeFile;
    if (!random) {  // slots [slot, slot + n_steps) mod D: at most two ranges
      const std::size_t slot_size = in->ring.extent(1) * in->ring.extent(2);
      const int first = std::min(n_steps, D_ - slot);
      device::fill(space_, in->ring.data() + static_cast<std::size_t>(slot) * slot_size,
                   static_cast<std::size_t>(first) * slot_size, std::uint16_t(0));
      if (first < n_steps)
        device::fill(space_, in->ring.data(), static_cast<std::size_t>(n_steps - first) * slot_size, std::uint16_t(0));
    }
    if (in->spec.silent) continue;
    if (in->spec.kind == InputKind::SpikeFile) {
      const std::int64_t t_end =
          std::min<std::int64_t>(t + n_steps, static_cast<std::int64_t>(in->h_step_offsets.size()) - 1);
      if (t >= t_end) continue;
      const std::int64_t n =
          in->h_step_offsets[static_cast<std::size_t>(t_end)] - in->h_step_offsets[static_cast<std::size_t>(t)];
      if (n == 0) continue;
      device::StampedSpikesFunctor<ExecSpace> f{in->step_offsets, in->source, in->count, in->ring, t, slot, B_};
      f.n_steps = static_cast<int>(t_end - t);
      Kokkos::parallel_for("dpointnet::input_spike_file", Kokkos::RangePolicy<ExecSpace>(space_, 0, n * B_), f);
    } else {
      for (int w = 0; w < n_steps; ++w) write_random_input(*in, t + w, (slot + w) % D_);
    }
  }
}

// Step t's draws of a random input (rates, poisson, lgn) into ring slot `slot`.
template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::write_random_input(InputRuntime& in, std::int64_t t, int slot) {
  if (in.spec.kind == InputKind::Lgn) {
    const std::int64_t frames = lgn_frames();
    in.lgn.prepare(space_, "input." + in.spec.name, in.spec.name, opt_.seed, opt_.sample_offset, B_, frames, dt_);
    std::int64_t f = static_cast<std::int64_t>(static_cast<double>(t) * dt_ + 1e-9);
    if (f >= frames) f = frames - 1;
    device::draw_random_input(
        space_, "dpointnet::input_lgn",
        device::LgnSpikesFunctor<ExecSpace>{in.lgn.probabilities(), in.ring, opt_.seed, in.spec.purpose, t, f,
                                            opt_.sample_offset, in.edges.n_sources, slot},
        B_, shape_);
  } else {
    device::RandomInputFunctor<ExecSpace> f{in.p,
                                            in.p0,
                                            in.ring,
                                            opt_.seed,
                                            in.spec.purpose,
                                            t,
                                            opt_.sample_offset,
                                            in.edges.n_sources,
                                            slot,
                                            in.spec.kind == InputKind::Poisson};
    device::draw_random_input(space_, "dpointnet::input_random", f, B_, shape_);
  }
}

template <class Real, class ExecSpace>
Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace> Simulator<Real, ExecSpace>::lgn_rates(int k) {
  InputRuntime& in = *inputs_[static_cast<std::size_t>(k)];
  if (in.spec.silent || in.spec.kind != InputKind::Lgn) return {};
  in.lgn.prepare(space_, "input." + in.spec.name, in.spec.name, opt_.seed, opt_.sample_offset, B_, lgn_frames(), dt_);
  auto h = compat::mirror_view_and_copy(space_, in.lgn.probabilities());
  for (std::size_t q = 0; q < h.size(); ++q)  // p = 1 - exp(-r dt) back to r (Hz)
    h.data()[q] = static_cast<float>(-std::log1p(-static_cast<double>(h.data()[q])) * 1000.0 / dt_);
  return h;
}

// Each input's counts of this step (ring slot `slot`) into row rec_index of its record buffer.
template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::record_input_slots(int rec_index, int slot) {
  for (std::size_t k = 0; k < rec_in_.size(); ++k) {
    const std::size_t n = inputs_[k]->ring.extent(1) * inputs_[k]->ring.extent(2);
    device::copy(space_, rec_in_[k].data() + static_cast<std::size_t>(rec_index) * n,
                 inputs_[k]->ring.data() + static_cast<std::size_t>(slot) * n, n);
  }
}

// 1-ms frames of an LGN input's rate table: the input schedule's length (at least one).
template <class Real, class ExecSpace>
std::int64_t Simulator<Real, ExecSpace>::lgn_frames() const {
  const auto f = static_cast<std::int64_t>(std::ceil(static_cast<double>(opt_.n_steps) * dt_ - 1e-9));
  return f > 0 ? f : 1;
}

}  // namespace dpointnet
