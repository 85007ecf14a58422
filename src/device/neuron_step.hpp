// One time step of the recurrent neurons (docs/model.md section 4, steps 2-8) for a batch.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/fixed_point.hpp"
#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/neuron_blocks.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Two shapes of the same per-(sample, neuron) arithmetic: devices run one work item per (b, i), neurons
// fastest (coalesced); hosts run one work item per (b, block of kBlock neurons), each stage a loop over the
// block's neurons that the compiler vectorizes. Channels c >= n_channels(i) have zero constants and stay zero;
// so do channels without inputs (NeuronConstants::live), which devices skip per neuron and hosts per block of
// neurons: adding a channel that is zero changes no sum, so both shapes compute the same values in the same order.
// A slow channel (c >= n_receptors(i), glif_psc_double_alpha) takes the drive of channel c - n_receptors(i).
// n_steps > 1 advances every neuron n_steps steps in one launch (a min-delay window, sim/simulator.hpp): step w
// reads the drive rows [w B, (w + 1) B) of u, writes ring slot (slot_now + w) mod D and v_out rows [w B, (w + 1) B);
// its neuron's own spike of the step before is the slot it wrote at w - 1.
template <class Real, class ExecSpace>
struct NeuronStepFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  struct PerBlock {};
  static constexpr int kBlock = 256;
  NeuronConstants<Real, MemSpace> k;
  NeuronState<Real, MemSpace> s;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u;  // fixed-point synaptic drive [n_steps B][R][N]
  SpikeRing<MemSpace> ring;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v_out;  // optional [n_steps B][N] copy of v' (may be empty)
  Kokkos::View<Real*, MemSpace> i_ext;  // normalized external (clamp) current per neuron, same for all samples
  Real dt;
  int n, slot_prev, slot_now;
  bool have_prev;
  int n_steps = 1;
  // optional [n_steps B][N] (may be empty): v' and r of each step of the launch, what training reads of a step
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> step_v{};
  Kokkos::View<std::int16_t**, Kokkos::LayoutRight, MemSpace> step_r{};

  // Step w of the launch: its ring slots and whether the step before it exists.
  KOKKOS_INLINE_FUNCTION int slot_of(const int w) const {
    return static_cast<int>((slot_now + w) % static_cast<int>(ring.extent(0)));
  }
  KOKKOS_INLINE_FUNCTION int prev_slot_of(const int w) const { return w == 0 ? slot_prev : slot_of(w - 1); }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int b = static_cast<int>(idx / n);
    const int i = static_cast<int>(idx % n);
    for (int w = 0; w < n_steps; ++w) one(b, i, w);
  }

  KOKKOS_INLINE_FUNCTION void one(const int b, const int i, const int w) const {
    const int B = static_cast<int>(s.v.extent(0)), ub = w * B + b;
    const Real zp = (have_prev || w > 0) ? static_cast<Real>(ring(prev_slot_of(w), b, i)) : Real(0);
    Real psum = 0;
    const int R = static_cast<int>(s.psc.extent(1));
    for (int c = 0; c < R; ++c) {
      if (!k.channel_live(c, i)) continue;
      const Real rise = s.psc_rise(b, c, i);
      const Real p = s.psc(b, c, i);
      const Real sd = k.syn_decay(c, i);
      psum += p;
      const int dc = drive_channel(c, k.n_receptors(i));
      s.psc_rise(b, c, i) = sd * rise + k.psc_initial(c, i) * static_cast<Real>(from_fixed(u(ub, dc, i)));
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
    ring(slot_of(w), b, i) = z;
    if (v_out.extent(0) > 0) v_out(ub, i) = vn;
    if (step_v.extent(0) > 0) {
      step_v(ub, i) = vn;
      step_r(ub, i) = static_cast<std::int16_t>(rn);
    }
  }

  // Host shape: sample b, neurons [i0, i0 + kBlock) of it, stage by stage over the block (each step of the launch
  // in turn: the block's state stays in cache).
  void operator()(PerBlock, const std::int64_t idx) const {
    const NeuronBlock nb = neuron_block(idx, n, kBlock);
    for (int w = 0; w < n_steps; ++w) block(nb.b, nb.i0, w);
  }

  void block(const int b, const int i0, const int w) const {
    const int m = n - i0 < kBlock ? n - i0 : kBlock;
    const int ub = w * static_cast<int>(s.v.extent(0)) + b;
    const bool have_prev_w = have_prev || w > 0;
    const int R = static_cast<int>(s.psc.extent(1));
    Real cur[kBlock], zp[kBlock], drive[kBlock];
    int zi[kBlock];  // zp as integers: the refractory update without a float -> int conversion, which kept the
                     // last stage scalar on AVX2 (bench/README.md)
    // zin and zout are the same slot when D == 1 (not restrict): zp is copied out before zout is written
    const std::uint8_t* zin = have_prev_w ? &ring(prev_slot_of(w), b, i0) : nullptr;
    for (int q = 0; q < m; ++q) zi[q] = have_prev_w ? static_cast<int>(zin[q]) : 0;
    for (int q = 0; q < m; ++q) zp[q] = static_cast<Real>(zi[q]);
    for (int q = 0; q < m; ++q) cur[q] = 0;
    static_assert(kBlock == NeuronConstants<Real, MemSpace>::kLiveBlock, "block masks of the host shape");
    for (int c = 0; c < R; ++c) {
      if (!k.block_channel_live(c, i0 / kBlock)) continue;
      Real* KOKKOS_RESTRICT rise = &s.psc_rise(b, c, i0);
      Real* KOKKOS_RESTRICT p = &s.psc(b, c, i0);
      const Real* KOKKOS_RESTRICT sd = &k.syn_decay(c, i0);
      const Real* KOKKOS_RESTRICT pi = &k.psc_initial(c, i0);
      const Real step = dt;
      if (!k.any_slow) {
        from_fixed_block(&u(ub, c, i0), m, drive);
        for (int q = 0; q < m; ++q) {
          const Real r0 = rise[q], p0 = p[q];
          cur[q] += p0;
          rise[q] = sd[q] * r0 + pi[q] * drive[q];
          p[q] = sd[q] * p0 + step * sd[q] * r0;
        }
      } else {  // slow channels read their fast partner's drive (glif_psc_double_alpha)
        const int* KOKKOS_RESTRICT nr = &k.n_receptors(i0);
        for (int q = 0; q < m; ++q) {
          const Real r0 = rise[q], p0 = p[q];
          cur[q] += p0;
          rise[q] = sd[q] * r0 + pi[q] * static_cast<Real>(from_fixed(u(ub, drive_channel(c, nr[q]), i0 + q)));
          p[q] = sd[q] * p0 + step * sd[q] * r0;
        }
      }
    }
    Real asum[kBlock];
    for (int q = 0; q < m; ++q) asum[q] = 0;
    for (int j = 0; j < kNumAsc; ++j) {
      Real* KOKKOS_RESTRICT a = &s.asc(b, j, i0);
      const Real* KOKKOS_RESTRICT ad = &k.asc_decay(j, i0);
      const Real* KOKKOS_RESTRICT aa = &k.asc_amps(j, i0);
      for (int q = 0; q < m; ++q) {
        const Real a0 = a[q];
        asum[q] += a0;
        a[q] = ad[q] * a0 + zp[q] * aa[q];
      }
    }
    Real* KOKKOS_RESTRICT v = &s.v(b, i0);
    std::int16_t* KOKKOS_RESTRICT r = &s.r(b, i0);
    std::uint8_t* zout = &ring(slot_of(w), b, i0);
    const Real* KOKKOS_RESTRICT ie = &i_ext(i0);
    const Real* KOKKOS_RESTRICT dec = &k.decay(i0);
    const Real* KOKKOS_RESTRICT cf = &k.current_factor(i0);
    const Real* KOKKOS_RESTRICT vr = &k.v_reset(i0);
    const int* KOKKOS_RESTRICT tr = &k.t_ref_steps(i0);
    std::uint8_t zo[kBlock];  // written here, copied out after: a store through the ring's byte pointer, which
                              // may alias anything, kept this loop scalar on AVX2
    for (int q = 0; q < m; ++q) {
      const Real c = (cur[q] + asum[q]) + ie[q];
      const Real vn = dec[q] * v[q] + cf[q] * c - zp[q] * (Real(1) - vr[q]);
      int rn = static_cast<int>(r[q]) + zi[q] * tr[q] - 1;
      rn = rn > 0 ? rn : 0;
      v[q] = vn;
      r[q] = static_cast<std::int16_t>(rn);
      zo[q] = (vn > Real(1) && rn == 0) ? 1 : 0;
    }
    for (int q = 0; q < m; ++q) zout[q] = zo[q];
    if (v_out.extent(0) > 0)
      for (int q = 0; q < m; ++q) v_out(ub, i0 + q) = v[q];
    if (step_v.extent(0) > 0)
      for (int q = 0; q < m; ++q) {
        step_v(ub, i0 + q) = v[q];
        step_r(ub, i0 + q) = r[q];
      }
  }
};

// Launches the neuron step in the shape that suits the space.
template <class Real, class ExecSpace>
void neuron_step(const ExecSpace& space, const NeuronStepFunctor<Real, ExecSpace>& f, int B,
                 KernelShape shape = KernelShape::Auto) {
  launch_neuron_step(space, "dpointnet::neuron_step", f, B, shape);
}

}  // namespace dpointnet::device
