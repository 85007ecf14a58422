// The two neuron dynamics (sim/neuron_dynamics.hpp) and the choice between them; compiled with the simulator.
#pragma once
#include <memory>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/nest_adjoint.hpp"
#include "dpointnet/device/nest_step.hpp"
#include "dpointnet/device/neuron_step.hpp"
#include "dpointnet/network/nest_time.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/sim/detail/simulator_nest_impl.hpp"
#include "dpointnet/sim/neuron_dynamics.hpp"

namespace dpointnet::detail {

// The discrete GLIF step (docs/model.md, "One time step").
template <class Real, class ExecSpace>
class DiscreteDynamics final : public NeuronDynamics<Real, ExecSpace> {
  using Base = NeuronDynamics<Real, ExecSpace>;

 public:
  void initial_v(const ExecSpace& space, const typename Base::VView& v) const override {
    Kokkos::deep_copy(space, v, Real(0));
  }
  void step(const ExecSpace& space, const typename Base::Step& s) const override {
    device::NeuronStepFunctor<Real, ExecSpace> nf{
        s.k,      s.state,     s.u,        s.z_ring,  s.v_out, s.i_ext, static_cast<Real>(s.dt),
        int(s.n), s.slot_prev, s.slot_now, s.has_prev};
    nf.n_steps = s.n_steps;
    nf.step_v = s.step_v;
    nf.step_r = s.step_r;
    device::neuron_step(space, nf, s.batch, s.shape);
  }
  void adjoint(const ExecSpace& space, const typename Base::Reverse& r) const override {
    device::NeuronAdjointFunctor<Real, Real, ExecSpace> na{r.k,       r.adj,   r.rec,     r.bp, r.step_in_segment,
                                                           r.slot_gu, r.batch, r.channels};
    device::neuron_adjoint(space, na, r.n, r.shape);
  }
  const typename Base::VView& training_v(const typename Base::State& s) const override { return s.v; }
  const typename Base::RView& training_r(const typename Base::State& s) const override { return s.r; }
};

// NEST 3.8's glif_psc / iaf_psc_alpha update (docs/model-nest.md), with its own constants, its step in ms, and
// per sample and neuron V before the reset and the held flag of the last step (what training reads).
template <class Real, class ExecSpace>
class NestDynamics final : public NeuronDynamics<Real, ExecSpace> {
  using Base = NeuronDynamics<Real, ExecSpace>;
  using MemSpace = typename ExecSpace::memory_space;

 public:
  NestDynamics(const ExecSpace& space, const Network& net, int batch, int channels) : h_(nest_time::step_ms(net.dt)) {
    upload_nest_constants(space, net, channels, nk_);
    const auto n = static_cast<std::size_t>(net.n_neurons);
    v_pre_ = typename Base::VView(Kokkos::view_alloc(space, "state.nest_v_pre_reset"), batch, n);
    held_ = typename Base::RView(Kokkos::view_alloc(space, "state.nest_held"), batch, n);
  }
  void initial_v(const ExecSpace& space, const typename Base::VView& v) const override {
    // NEST's initial state: U = V_m - E_L
    auto v0 = nk_.v_init;
    const std::int64_t n = static_cast<std::int64_t>(v.extent(1));
    Kokkos::parallel_for(
        "dpointnet::nest_initial_v",
        Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(v.extent(0)) * n),
        KOKKOS_LAMBDA(const std::int64_t idx) { v(idx / n, idx % n) = v0(idx % n); });
  }
  void step(const ExecSpace& space, const typename Base::Step& s) const override {
    device::NestStepFunctor<Real, ExecSpace> nf{
        s.k, nk_, s.state, s.u, s.z_ring, s.v_out, v_pre_, held_, static_cast<Real>(h_), int(s.n), s.slot_now};
    nf.n_steps = s.n_steps;
    nf.step_v = s.step_v;
    nf.step_r = s.step_r;
    device::nest_step(space, nf, s.batch, s.shape);
  }
  void adjoint(const ExecSpace& space, const typename Base::Reverse& r) const override {
    device::NestNeuronAdjointFunctor<Real, Real, ExecSpace> na{
        r.k, nk_, r.adj, r.rec, r.bp, h_, r.step_in_segment, r.slot_gu, r.batch, r.channels};
    device::nest_neuron_adjoint(space, na, r.n);
  }
  const typename Base::VView& training_v(const typename Base::State&) const override { return v_pre_; }
  const typename Base::RView& training_r(const typename Base::State&) const override { return held_; }

 private:
  device::NestConstants<Real, MemSpace> nk_;
  double h_;  // NEST's step in ms
  typename Base::VView v_pre_;
  typename Base::RView held_;
};

// The network's run.dynamics as its type.
template <class Real, class ExecSpace>
std::unique_ptr<NeuronDynamics<Real, ExecSpace>> make_neuron_dynamics(const ExecSpace& space, const Network& net,
                                                                      int batch, int channels) {
  if (net.dynamics == Dynamics::Nest)
    return std::make_unique<NestDynamics<Real, ExecSpace>>(space, net, batch, channels);
  return std::make_unique<DiscreteDynamics<Real, ExecSpace>>();
}

}  // namespace dpointnet::detail
