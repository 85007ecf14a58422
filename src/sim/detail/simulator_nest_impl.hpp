// The per-neuron constants of run.dynamics = "nest" (docs/model-nest.md), from the network's derived neurons
// onto the device; the discrete model's constants decay, current_factor and t_ref_steps already hold NEST's
// P33 (iaf: expm1(-h/tau_m)), P30 and refractory counts.
#pragma once
#include <Kokkos_Core.hpp>

#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet::detail {

// Allocated and copied on `space` (fenced before the host mirrors go); the host writes every element, so the
// views are not initialized first.
template <class ExecSpace, class Real, class MemSpace>
void upload_nest_constants(const ExecSpace& space, const Network& net, int R,
                           device::NestConstants<Real, MemSpace>& k) {
  const std::size_t N = static_cast<std::size_t>(net.n_neurons);
  k.p31 = decltype(k.p31)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "neuron.nest_p31"), R, N);
  k.p32 = decltype(k.p32)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "neuron.nest_p32"), R, N);
  k.asc_stable = decltype(k.asc_stable)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "neuron.nest_asc_stable"), kNumAsc, N);
  k.asc_refr =
      decltype(k.asc_refr)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "neuron.nest_asc_refr"), kNumAsc, N);
  k.v_init = decltype(k.v_init)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "neuron.nest_v_init"), N);
  k.i_e = decltype(k.i_e)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "neuron.nest_i_e"), N);
  k.v_min = decltype(k.v_min)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "neuron.nest_v_min"), N);
  k.iaf = decltype(k.iaf)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "neuron.nest_iaf"), N);
  auto p31 = Kokkos::create_mirror_view(k.p31);
  auto p32 = Kokkos::create_mirror_view(k.p32);
  auto sc = Kokkos::create_mirror_view(k.asc_stable);
  auto rr = Kokkos::create_mirror_view(k.asc_refr);
  auto v0 = Kokkos::create_mirror_view(k.v_init);
  auto ie = Kokkos::create_mirror_view(k.i_e);
  auto vm = Kokkos::create_mirror_view(k.v_min);
  auto iaf = Kokkos::create_mirror_view(k.iaf);
  for (std::size_t i = 0; i < N; ++i) {
    const DerivedNeuron& d = net.neurons[i];
    for (int c = 0; c < R; ++c) {
      const bool has = c < static_cast<int>(d.nest.p31.size());
      p31(c, i) = has ? static_cast<Real>(d.nest.p31[static_cast<std::size_t>(c)]) : Real(0);
      p32(c, i) = has ? static_cast<Real>(d.nest.p32[static_cast<std::size_t>(c)]) : Real(0);
    }
    for (int a = 0; a < kNumAsc; ++a) {
      sc(a, i) = static_cast<Real>(d.nest.asc_stable[a]);
      rr(a, i) = static_cast<Real>(d.nest.asc_refr[a]);
    }
    v0(i) = static_cast<Real>(d.nest.v_init);
    ie(i) = static_cast<Real>(d.nest.i_e);
    vm(i) = static_cast<Real>(d.nest.v_min);  // -inf stays -inf in float32
    iaf(i) = d.nest.iaf ? 1 : 0;
  }
  Kokkos::deep_copy(space, k.p31, p31);
  Kokkos::deep_copy(space, k.p32, p32);
  Kokkos::deep_copy(space, k.asc_stable, sc);
  Kokkos::deep_copy(space, k.asc_refr, rr);
  Kokkos::deep_copy(space, k.v_init, v0);
  Kokkos::deep_copy(space, k.i_e, ie);
  Kokkos::deep_copy(space, k.v_min, vm);
  Kokkos::deep_copy(space, k.iaf, iaf);
  space.fence();
}

}  // namespace dpointnet::detail
