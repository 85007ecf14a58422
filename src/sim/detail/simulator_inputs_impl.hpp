// Input schedules on the device: uploaded at construction, and replaced by another stimulus condition's
// (train.conditions) between forward passes; outside the step loop.
#pragma once
#include <stdexcept>
#include <string>

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

}  // namespace dpointnet
