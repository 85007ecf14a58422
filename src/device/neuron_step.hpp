// One time step of the recurrent neurons (docs/model.md section 4, steps 2-8) for a batch.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "device/fixed_point.hpp"
#include "device/model_constants.hpp"

namespace dpointnet::device {

template <class Real, class ExecSpace>
struct NeuronStepFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  NeuronConstants<Real, MemSpace> k;
  NeuronState<Real, MemSpace> s;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u;  // fixed-point synaptic drive [B][R][N]
  SpikeRing<MemSpace> ring;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v_out;  // optional [B][N] copy of v' (may be empty)
  Kokkos::View<Real*, MemSpace> i_ext;  // normalized external (clamp) current per neuron, same for all samples
  Real dt;
  int n, slot_prev, slot_now;
  bool have_prev;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int b = static_cast<int>(idx / n);
    const int i = static_cast<int>(idx % n);
    const Real zp = have_prev ? static_cast<Real>(ring(slot_prev, b, i)) : Real(0);
    Real psum = 0;
    const int nch = k.n_channels(i);
    for (int c = 0; c < nch; ++c) {
      const Real rise = s.psc_rise(b, c, i);
      const Real p = s.psc(b, c, i);
      const Real sd = k.syn_decay(c, i);
      psum += p;
      s.psc_rise(b, c, i) = sd * rise + k.psc_initial(c, i) * static_cast<Real>(from_fixed(u(b, c, i)));
      s.psc(b, c, i) = sd * p + dt * sd * rise;
    }
    Real asum = 0;
    for (int j = 0; j < kNumAsc; ++j) {
      const Real a = s.asc(b, j, i);
      asum += a;
      s.asc(b, j, i) = k.asc_decay(j, i) * a + zp * k.asc_amps(j, i);
    }
    const Real cur = (psum + asum) + i_ext(i);
    const Real vn = k.decay(i) * s.v(b, i) + k.current_factor(i) * cur - zp * (Real(1) - k.v_reset(i));
    int rn = static_cast<int>(s.r(b, i)) + static_cast<int>(zp) * k.t_ref_steps(i) - 1;
    rn = rn > 0 ? rn : 0;
    const std::uint8_t z = (vn > Real(1) && rn == 0) ? 1 : 0;
    s.v(b, i) = vn;
    s.r(b, i) = static_cast<std::int16_t>(rn);
    ring(slot_now, b, i) = z;
    if (v_out.extent(0) > 0) v_out(b, i) = vn;
  }
};

}  // namespace dpointnet::device
