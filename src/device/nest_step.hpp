// One time step of the recurrent neurons with run.dynamics = "nest" (docs/model-nest.md, "One step"): what
// NEST 3.8's glif_psc::update and iaf_psc_alpha::update compute, in their order, on dpointnet's normalized
// state (v = U / vs, currents / vs). The channel update and the drive u of step t are those of the discrete
// step (neuron_step.hpp): y2 = psc, y1 = psc_rise, u of step t = NEST's ring-buffer value read in step t.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/fixed_point.hpp"
#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/neuron_blocks.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Two shapes of the same per-(sample, neuron) arithmetic, as the discrete step's (neuron_step.hpp): devices one
// work item per (b, i); hosts one per (b, block of kBlock neurons), each stage a vector loop over the block, the
// iaf and GLIF updates both computed where the block has both and the neuron's own selected (the same operations
// in the same order: the same values).
template <class Real, class ExecSpace>
struct NestStepFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  struct PerBlock {};
  // 64 neurons: a block's state and constants stay in L1 through the steps of a window (bench/README.md)
  static constexpr int kBlock = 64;
  NeuronConstants<Real, MemSpace> k;
  NestConstants<Real, MemSpace> nk;
  NeuronState<Real, MemSpace> s;
  // fixed-point synaptic drive [n_steps B][R][N]: rows [w B, (w + 1) B) for step w of the launch
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u;
  SpikeRing<MemSpace> ring;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v_out;  // optional [n_steps B][N] copy of v' (may be empty)
  // for training (may be empty): V before the reset (what the threshold and the losses see) and the gate as a
  // refractory flag, 0 if the step integrated, 1 if V was held ([B][N] each)
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v_pre;
  Kokkos::View<std::int16_t**, Kokkos::LayoutRight, MemSpace> held;
  Real h;  // NEST's step in ms (MS_PER_TIC * TICS_PER_STEP)
  int n, slot_now;
  int n_steps = 1;  // steps per launch (a min-delay window): step w writes ring slot (slot_now + w) mod D
  // optional [n_steps B][N] (may be empty): v_pre and held of each step of the launch (what training reads)
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> step_v{};
  Kokkos::View<std::int16_t**, Kokkos::LayoutRight, MemSpace> step_r{};

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int b = static_cast<int>(idx / n);
    const int i = static_cast<int>(idx % n);
    for (int w = 0; w < n_steps; ++w) one(b, i, w);
  }

  KOKKOS_INLINE_FUNCTION void one(const int b, const int i, const int w) const {
    const int ub = w * static_cast<int>(s.v.extent(0)) + b;
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
    if (step_v.extent(0) > 0) {
      step_v(ub, i) = v;
      step_r(ub, i) = open ? 0 : 1;
    }
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
      s.psc_rise(b, c, i) = sd * rise + k.psc_initial(c, i) * static_cast<Real>(from_fixed(u(ub, dc, i)));
    }
    s.v(b, i) = v;
    s.r(b, i) = static_cast<std::int16_t>(r);
    ring(static_cast<int>((slot_now + w) % static_cast<int>(ring.extent(0))), b, i) = z;
    if (v_out.extent(0) > 0) v_out(ub, i) = v;
    if (held.extent(0) > 0) held(b, i) = open ? 0 : 1;
  }

  // Host shape: sample b, neurons [i0, i0 + kBlock), every step of the launch in turn.
  void operator()(PerBlock, const std::int64_t idx) const {
    const NeuronBlock nb = neuron_block(idx, n, kBlock);
    for (int w = 0; w < n_steps; ++w) block(nb.b, nb.i0, w);
  }

  void block(const int b, const int i0, const int w) const {
    const int m = n - i0 < kBlock ? n - i0 : kBlock;
    const int R = static_cast<int>(s.psc.extent(1));
    const int ub = w * static_cast<int>(s.v.extent(0)) + b;
    Real* KOKKOS_RESTRICT V = &s.v(b, i0);
    std::int16_t* KOKKOS_RESTRICT rr = &s.r(b, i0);
    const std::uint8_t* KOKKOS_RESTRICT iaf = &nk.iaf(i0);
    const Real* KOKKOS_RESTRICT dec = &k.decay(i0);
    const Real* KOKKOS_RESTRICT cf = &k.current_factor(i0);
    bool any_iaf = false, any_glif = false;
    for (int q = 0; q < m; ++q) any_iaf = any_iaf || iaf[q], any_glif = any_glif || !iaf[q];
    Real vi[kBlock], vg[kBlock], vn[kBlock];
    std::uint8_t zo[kBlock], open[kBlock];
    for (int q = 0; q < m; ++q) open[q] = rr[q] == 0;
    if (any_iaf) {  // iaf_psc_alpha.cpp l.314-318, left to right
      const Real* KOKKOS_RESTRICT ie = &nk.i_e(i0);
      for (int q = 0; q < m; ++q) vi[q] = cf[q] * ie[q];
      for (int c = 0; c < R; ++c) {
        const Real *KOKKOS_RESTRICT p31 = &nk.p31(c, i0), *KOKKOS_RESTRICT p32 = &nk.p32(c, i0);
        const Real *KOKKOS_RESTRICT rise = &s.psc_rise(b, c, i0), *KOKKOS_RESTRICT psc = &s.psc(b, c, i0);
        for (int q = 0; q < m; ++q) {
          vi[q] += p31[q] * rise[q];
          vi[q] += p32[q] * psc[q];
        }
      }
      const Real* KOKKOS_RESTRICT vmin = &nk.v_min(i0);
      for (int q = 0; q < m; ++q) {
        Real x = vi[q] + dec[q] * V[q];
        x = x + V[q];
        vi[q] = x < vmin[q] ? vmin[q] : x;
      }
    }
    if (any_glif) {  // glif_psc.cpp l.497-531: the ASC's step mean from its start value, then its decay
      Real S[kBlock];
      for (int q = 0; q < m; ++q) S[q] = 0;
      for (int a = 0; a < kNumAsc; ++a) {
        Real* KOKKOS_RESTRICT A = &s.asc(b, a, i0);
        const Real *KOKKOS_RESTRICT st = &nk.asc_stable(a, i0), *KOKKOS_RESTRICT ad = &k.asc_decay(a, i0);
        for (int q = 0; q < m; ++q) {
          S[q] += st[q] * A[q];
          if (open[q] && !iaf[q]) A[q] = A[q] * ad[q];
        }
      }
      for (int q = 0; q < m; ++q) vg[q] = V[q] * dec[q] + S[q] * cf[q];
      for (int c = 0; c < R; ++c) {
        const Real *KOKKOS_RESTRICT p31 = &nk.p31(c, i0), *KOKKOS_RESTRICT p32 = &nk.p32(c, i0);
        const Real *KOKKOS_RESTRICT rise = &s.psc_rise(b, c, i0), *KOKKOS_RESTRICT psc = &s.psc(b, c, i0);
        for (int q = 0; q < m; ++q) vg[q] += p31[q] * rise[q] + p32[q] * psc[q];
      }
    }
    for (int q = 0; q < m; ++q) {
      const bool z = open[q] && (iaf[q] ? vi[q] >= Real(1) : vg[q] > Real(1));
      vn[q] = open[q] ? (iaf[q] ? vi[q] : vg[q]) : V[q];
      zo[q] = z ? 1 : 0;
    }
    if (v_pre.extent(0) > 0)
      for (int q = 0; q < m; ++q) v_pre(b, i0 + q) = vn[q];
    if (step_v.extent(0) > 0)
      for (int q = 0; q < m; ++q) {
        step_v(ub, i0 + q) = vn[q];
        step_r(ub, i0 + q) = open[q] ? 0 : 1;
      }
    const Real* KOKKOS_RESTRICT vr = &k.v_reset(i0);
    const int* KOKKOS_RESTRICT tr = &k.t_ref_steps(i0);
    for (int q = 0; q < m; ++q) {  // refractory count (an open step spikes or not; a held one counts down), reset
      rr[q] = static_cast<std::int16_t>(zo[q] ? tr[q] : (open[q] ? 0 : rr[q] - 1));
      if (zo[q]) vn[q] = vr[q];
    }
    for (int a = 0; a < kNumAsc; ++a) {  // the ASC jump of a spike (iaf's amps are 0)
      Real* KOKKOS_RESTRICT A = &s.asc(b, a, i0);
      const Real *KOKKOS_RESTRICT aa = &k.asc_amps(a, i0), *KOKKOS_RESTRICT ar = &nk.asc_refr(a, i0);
      for (int q = 0; q < m; ++q)
        if (zo[q]) A[q] = aa[q] + A[q] * ar[q];
    }
    for (int c = 0; c < R; ++c) {  // always (glif_psc.cpp l.582-590): y2 first from the old y1
      Real *KOKKOS_RESTRICT rise = &s.psc_rise(b, c, i0), *KOKKOS_RESTRICT psc = &s.psc(b, c, i0);
      const Real *KOKKOS_RESTRICT sd = &k.syn_decay(c, i0), *KOKKOS_RESTRICT pi = &k.psc_initial(c, i0);
      if (!k.any_slow) {
        Real drive[kBlock];
        from_fixed_block(&u(ub, c, i0), m, drive);
        for (int q = 0; q < m; ++q) {
          const Real r0 = rise[q];
          psc[q] = h * sd[q] * r0 + sd[q] * psc[q];
          rise[q] = sd[q] * r0 + pi[q] * drive[q];
        }
      } else {
        const int* KOKKOS_RESTRICT nr = &k.n_receptors(i0);
        for (int q = 0; q < m; ++q) {
          const Real r0 = rise[q];
          psc[q] = h * sd[q] * r0 + sd[q] * psc[q];
          rise[q] = sd[q] * r0 + pi[q] * static_cast<Real>(from_fixed(u(ub, drive_channel(c, nr[q]), i0 + q)));
        }
      }
    }
    std::uint8_t* zout = &ring(static_cast<int>((slot_now + w) % static_cast<int>(ring.extent(0))), b, i0);
    for (int q = 0; q < m; ++q) V[q] = vn[q];
    for (int q = 0; q < m; ++q) zout[q] = zo[q];
    if (v_out.extent(0) > 0)
      for (int q = 0; q < m; ++q) v_out(ub, i0 + q) = vn[q];
    if (held.extent(0) > 0)
      for (int q = 0; q < m; ++q) held(b, i0 + q) = open[q] ? 0 : 1;
  }
};

template <class Real, class ExecSpace>
void nest_step(const ExecSpace& space, const NestStepFunctor<Real, ExecSpace>& f, int B,
               KernelShape shape = KernelShape::Auto) {
  launch_neuron_step(space, "dpointnet::nest_neuron_step", f, B, shape);
}

}  // namespace dpointnet::device
