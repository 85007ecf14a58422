// The neuron dynamics of a run (run.dynamics): the discrete GLIF step of docs/model.md or NEST's exact
// integration of docs/model-nest.md, each a type with its own constants and state, picked once when the simulator
// is built. Each gives the neurons' step, its adjoint for the reverse sweep, the initial membrane state and what
// training reads of a step (v and the refractory/held flag).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/kernel_shape.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/surrogate.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
class NeuronDynamics {
 public:
  using MemSpace = typename ExecSpace::memory_space;
  using VView = Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace>;
  using RView = Kokkos::View<std::int16_t**, Kokkos::LayoutRight, MemSpace>;
  using State = device::NeuronState<Real, MemSpace>;
  using Constants = device::NeuronConstants<Real, MemSpace>;

  // One step of every neuron of every sample: reads the drive u of the step, writes the state, the spikes into
  // ring slot slot_now and (when v_out is not empty) v'. n_steps > 1: that many steps in one launch (a min-delay
  // window), step w reading rows [w B, (w + 1) B) of u, writing slot (slot_now + w) mod D and those rows of v_out
  // and (when not empty) of step_v and step_r: what training reads of step w (training_v, training_r).
  struct Step {
    const Constants& k;
    const State& state;
    const Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace>& u;
    const device::SpikeRing<MemSpace>& z_ring;
    const VView& v_out;
    const Kokkos::View<Real*, MemSpace>& i_ext;  // external current per neuron (current clamps)
    double dt;
    std::int64_t n;
    int batch, slot_prev, slot_now;
    bool has_prev;  // the step before exists (step > 0, or a continued run)
    device::KernelShape shape;
    int n_steps = 1;
    VView step_v{};
    RView step_r{};
  };
  // The neuron adjoint of step `step_in_segment` of the recorded segment.
  struct Reverse {
    const Constants& k;
    const device::Adjoint<Real, MemSpace>& adj;
    const device::SegmentRecord<Real, MemSpace>& rec;
    const device::BackwardParams& bp;
    int step_in_segment, slot_gu, batch, channels;
    std::int64_t n;
    device::KernelShape shape;
  };

  virtual ~NeuronDynamics() = default;
  // v of every sample before the first step (from rest).
  virtual void initial_v(const ExecSpace& space, const VView& v) const = 0;
  virtual void step(const ExecSpace& space, const Step& s) const = 0;
  virtual void adjoint(const ExecSpace& space, const Reverse& r) const = 0;
  // What training reads of the last step: v' and r (discrete); V before the reset and 0/1 for an integrating /
  // held step (nest: docs/model-nest.md section 6). Either way r == 0 means the threshold was active.
  virtual const VView& training_v(const State& s) const = 0;
  virtual const RView& training_r(const State& s) const = 0;
};

}  // namespace dpointnet
