// One time step of the recurrent neurons with run.dynamics = "nest" (docs/model-nest.md, "One step"): what
// NEST 3.8's glif_psc::update and iaf_psc_alpha::update compute, in their order, on dpointnet's normalized
// state (v = U / vs, currents / vs). The channel update and the drive u of step t are those of the discrete
// step (neuron_step.hpp): y2 = psc, y1 = psc_rise, u of step t = NEST's ring-buffer value read in step t.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/fixed_point.hpp"
#include "dpointnet/device/model_constants.hpp"

namespace dpointnet::device {

template <class Real, class ExecSpace>
struct NestStepFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  NeuronConstants<Real, MemSpace> k;
  NestConstants<Real, MemSpace> nk;
  NeuronState<Real, MemSpace> s;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u;  // fixed-point synaptic drive [B][R][N]
  SpikeRing<MemSpace> ring;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v_out;  // optional [B][N] copy of v' (may be empty)
  // for training (may be empty): V before the reset (what the threshold and the losses see) and the gate as a
  // refractory flag, 0 if the step integrated, 1 if V was held ([B][N] each)
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v_pre;
  Kokkos::View<std::int16_t**, Kokkos::LayoutRight, MemSpace> held;
  Real h;  // NEST's step in ms (MS_PER_TIC * TICS_PER_STEP)
  int n, slot_now;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int b = static_cast<int>(idx / n);
    const int i = static_cast<int>(idx % n);
    const int R = static_cast<int>(s.psc.extent(1));
    int r = static_cast<int>(s.r(b, i));
    Real v = s.v(b, i);
    std::uint8_t z = 0;
    const bool open = r == 0;
    if (open) {
      if (nk.iaf(i)) {  // iaf_psc_alpha.cpp l.314-318, left to right
        Real acc = k.current_factor(i) * nk.i_e(i);
        for (int c = 0; c < R; ++c) {
          acc += nk.p31(c, i) * s.psc_rise(b, c, i);
          acc += nk.p32(c, i) * s.psc(b, c, i);
        }
        acc += k.decay(i) * v;
        v = acc + v;
        v = v < nk.v_min(i) ? nk.v_min(i) : v;
        z = v >= Real(1) ? 1 : 0;
      } else {  // glif_psc.cpp l.497-531: the ASC's step mean from its start value, then its decay
        Real S = 0;
        for (int a = 0; a < kNumAsc; ++a) {
          const Real A = s.asc(b, a, i);
          S += nk.asc_stable(a, i) * A;
          s.asc(b, a, i) = A * k.asc_decay(a, i);
        }
        v = v * k.decay(i) + S * k.current_factor(i);
        for (int c = 0; c < R; ++c) v += nk.p31(c, i) * s.psc_rise(b, c, i) + nk.p32(c, i) * s.psc(b, c, i);
        z = v > Real(1) ? 1 : 0;
      }
    } else {
      --r;  // V held, ASC frozen
    }
    if (v_pre.extent(0) > 0) v_pre(b, i) = v;
    if (z) {  // (only an open step spikes) refractory count, ASC jump (iaf's amps are 0), hard reset in this step
      r = k.t_ref_steps(i);
      for (int a = 0; a < kNumAsc; ++a) s.asc(b, a, i) = k.asc_amps(a, i) + s.asc(b, a, i) * nk.asc_refr(a, i);
      v = k.v_reset(i);
    }
    for (int c = 0; c < R; ++c) {  // always (glif_psc.cpp l.582-590): y2 first from the old y1
      const Real rise = s.psc_rise(b, c, i);
      const Real sd = k.syn_decay(c, i);
      s.psc(b, c, i) = h * sd * rise + sd * s.psc(b, c, i);
      const int dc = drive_channel(c, k.n_receptors(i));
      s.psc_rise(b, c, i) = sd * rise + k.psc_initial(c, i) * static_cast<Real>(from_fixed(u(b, dc, i)));
    }
    s.v(b, i) = v;
    s.r(b, i) = static_cast<std::int16_t>(r);
    ring(slot_now, b, i) = z;
    if (v_out.extent(0) > 0) v_out(b, i) = v;
    if (held.extent(0) > 0) held(b, i) = open ? 0 : 1;
  }
};

template <class Real, class ExecSpace>
void nest_step(const ExecSpace& space, const NestStepFunctor<Real, ExecSpace>& f, int B) {
  Kokkos::parallel_for("dpointnet::nest_neuron_step", Kokkos::RangePolicy<ExecSpace>(space, 0, std::int64_t(B) * f.n),
                       f);
}

}  // namespace dpointnet::device
