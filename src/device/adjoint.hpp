// Backward pass of docs/model-gradients.md (model section 5) (BPTT with a surrogate gradient), one time step at a time
// in reverse.
//
// Per sample b and neuron i, with V_t = v' after step t, P_t/Q_t = psc/psc_rise after step t and u_t the drive
// of step t:
//   V_{t+1} = decay damp(V_t) + cf (sum_c P_t + sum A_t) - sg(z_t)(1 - v_reset),  z_t = H(V_t - 1)[r_t = 0]
//   P_{t+1} = sd P_t + dt sd Q_t,   Q_{t+1} = sd Q_t + pi u_{t+1},   u_t = sum_s w_s a_s(t - d_s)
// the adjoints are
//   gz_t = dL/dz_t (losses) + rdamp sum_{s from j} w_s gu_{t+d_s}[post_s, c_s]      (recurrent reads only)
//   gV_t = dL/dV_t (losses) + gz_t surrogate(V_t)[r_t = 0] + (1 - vdamp) decay gV_{t+1}
//   gP_t = sd gP_{t+1} + cf gV_{t+1},   gQ_t = sd gQ_{t+1} + dt sd gP_{t+1},   gu_t = pi gQ_t
//   dL/dw_s += gu_t[post_s, c_s] a_s(t - d_s)
// No gradient flows through the reset, the ASC jump or the refractory counter; inputs carry none.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/surrogate.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Adjoint state, samples fastest ([..][N][B]): every per-edge gather reads B contiguous values, and a team's
// vector lanes run over the samples. Acc is the adjoint's arithmetic type; Ring the storage type of the drive
// adjoint ring gu that the spike adjoint and the weight gradients gather (Acc, or 16 bits: device/ring_storage.hpp).
template <class Acc, class MemSpace, class Ring = Acc>
struct Adjoint {
  Kokkos::View<Acc**, Kokkos::LayoutRight, MemSpace> gV;         // [N][B] dL/dV_{t+1} until step t is done
  Kokkos::View<Acc***, Kokkos::LayoutRight, MemSpace> gP;        // [R][N][B]
  Kokkos::View<Acc***, Kokkos::LayoutRight, MemSpace> gQ;        // [R][N][B]
  Kokkos::View<Ring****, Kokkos::LayoutRight, MemSpace> gu;      // ring [D][R][N][B], slot t mod D
  Kokkos::View<Acc**, Kokkos::LayoutRight, MemSpace> gz;         // [N][B] for the current step
  Kokkos::View<Acc**, Kokkos::LayoutRight, MemSpace> rate_grad;  // [N][B] dL/dz from rate losses
};

// Segment records of the recompute, samples fastest: v and r of each step [C][N][B], and the activity of the D
// steps before the segment and of its own steps [D + C][n_src][B].
template <class Real, class MemSpace>
struct SegmentRecord {
  Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace> v;
  Kokkos::View<std::int16_t***, Kokkos::LayoutRight, MemSpace> r;
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, MemSpace> z;
};

// dst(dst_slot, i, b) = src(src_slot, b, i): a [B][n] slice into a samples-fastest [n][B] slice (or zero).
template <class T, class ExecSpace>
struct ToSamplesFastest {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<const T***, Kokkos::LayoutRight, MemSpace> src;  // [slots][B][n]
  Kokkos::View<T***, Kokkos::LayoutRight, MemSpace> dst;        // [slots][n][B]
  int src_slot, dst_slot, B;
  bool zero;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const std::int64_t i = idx / B;
    const int b = static_cast<int>(idx % B);
    dst(dst_slot, i, b) = zero ? T(0) : src(src_slot, b, i);
  }
  // Hosts: tiles of kTile elements of every sample (no index division; the tile stays in L1).
  static constexpr std::int64_t kTile = 64;
  struct HostTile {};
  KOKKOS_INLINE_FUNCTION void operator()(HostTile, const std::int64_t tile) const {
    const std::int64_t n = static_cast<std::int64_t>(dst.extent(1));
    const std::int64_t i0 = tile * kTile, i1 = i0 + kTile < n ? i0 + kTile : n;
    for (int b = 0; b < B; ++b)
      for (std::int64_t i = i0; i < i1; ++i) dst(dst_slot, i, b) = zero ? T(0) : src(src_slot, b, i);
  }
};

// The neuron adjoint of step t; reads V_t and r_t of the segment record. Devices: idx runs over (i, b), b
// fastest. Hosts (PerNeuron): one work item per neuron, its samples as a vector loop (no index division, the
// constants read once). Both shapes compute the same values. Both skip channels without inputs
// (NeuronConstants::live): a channel's adjoints gP, gQ feed only gu of its drive row, which no edge reads, so they
// and that gu stay as the reverse sweep began them (zero).
template <class Real, class Acc, class ExecSpace>
struct NeuronAdjointFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  struct PerNeuron {};
  NeuronConstants<Real, MemSpace> k;
  Adjoint<Acc, MemSpace> a;
  SegmentRecord<Real, MemSpace> rec;
  BackwardParams p;
  int slot_rec, slot_gu, B, R;

  // The arithmetic of one (neuron, sample), shared by the lane-by-lane and the staged host paths.
  KOKKOS_INLINE_FUNCTION static double voltage_value(const double v, const bool free, const double gz, const double sur,
                                                     const double decay, const double gV_next,
                                                     const BackwardParams& p) {
    return vreg_grad(v, p) + (free ? gz * sur : 0.0) + p.vdamp_keep * decay * gV_next;
  }
  KOKKOS_INLINE_FUNCTION static void channel_values(const double sd, const double cf, const double dt,
                                                    const double gP_next, const double gQ_next, const double gV_next,
                                                    double& gP, double& gQ) {
    gP = sd * gP_next + cf * gV_next;
    gQ = sd * gQ_next + dt * sd * gP_next;
  }

  KOKKOS_INLINE_FUNCTION double voltage_adjoint(const int i, const int b, const double gV_next) const {
    const double v = static_cast<double>(rec.v(slot_rec, i, b));
    return voltage_value(v, rec.r(slot_rec, i, b) == 0, static_cast<double>(a.gz(i, b)), surrogate(v, p),
                         static_cast<double>(k.decay(i)), gV_next, p);
  }

  KOKKOS_INLINE_FUNCTION void channel_adjoint(const int c, const int i, const int b, const double cf,
                                              const double gV_next) const {
    const double sd = static_cast<double>(k.syn_decay(c, i));
    double gP, gQ;
    channel_values(sd, cf, p.dt, a.gP(c, i, b), a.gQ(c, i, b), gV_next, gP, gQ);
    a.gP(c, i, b) = static_cast<Acc>(gP);
    a.gQ(c, i, b) = static_cast<Acc>(gQ);
    a.gu(slot_gu, c, i, b) = static_cast<Acc>(static_cast<double>(k.psc_initial(c, i)) * gQ);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int i = static_cast<int>(idx / B);
    const int b = static_cast<int>(idx % B);
    const double gV_next = a.gV(i, b);
    const double cf = static_cast<double>(k.current_factor(i));
    const double gV = voltage_adjoint(i, b, gV_next);
    const int nch = k.n_channels(i);
    for (int c = 0; c < R; ++c) {
      if (c >= nch)
        a.gu(slot_gu, c, i, b) = Acc(0);
      else if (k.channel_live(c, i))
        channel_adjoint(c, i, b, cf, gV_next);
    }
    if (k.any_slow) fold_slow(i, b);
    a.gV(i, b) = static_cast<Acc>(gV);
  }

  // A slow channel's drive is its fast partner's: its gradient moves there (glif_psc_double_alpha).
  KOKKOS_INLINE_FUNCTION void fold_slow(const int i, const int b) const {
    const int nr = k.n_receptors(i), nch = k.n_channels(i);
    for (int c = nr; c < nch; ++c) {
      a.gu(slot_gu, c - nr, i, b) += a.gu(slot_gu, c, i, b);
      a.gu(slot_gu, c, i, b) = Acc(0);
    }
  }

  void operator()(PerNeuron, const std::int64_t idx) const {
    const int i = static_cast<int>(idx);
    constexpr int L = compat::kHostSampleLanes;
    for (int b0 = 0; b0 < B; b0 += L) {
      const int nb = B - b0 < L ? B - b0 : L;
      if (p.gauss)
        some_lanes(i, b0, nb);
      else
        lanes_n<L>(i, b0, nb);
    }
  }
  // lanes<NB> with NB = nb (a run-time count, 1 .. 16)
  template <int NB>
  void lanes_n(const int i, const int b0, const int nb) const {
    if constexpr (NB >= 1) {
      if (nb == NB)
        lanes<NB>(i, b0);
      else
        lanes_n<NB - 1>(i, b0, nb);
    }
  }

  // Hosts, L samples of one neuron with the triangle surrogate (a full block of kHostSampleLanes, or a partial one:
  // B < 16, or the last B mod 16): voltage_value and channel_values as in voltage_adjoint and channel_adjoint,
  // staged through local arrays so that every loop is a plain vector loop of a constant trip count (the views'
  // loads and stores cannot alias each other there).
  template <int L>
  void lanes(const int i, const int b0) const {
    const double cf = static_cast<double>(k.current_factor(i));
    const double decay = static_cast<double>(k.decay(i));
    const int nch = k.n_channels(i);
    const Acc* const gVp = &a.gV(i, b0);
    const Acc* const gzp = &a.gz(i, b0);
    const Real* const vp = &rec.v(slot_rec, i, b0);
    const std::int16_t* const rp = &rec.r(slot_rec, i, b0);
    double gv_next[L], gv[L];
    for (int q = 0; q < L; ++q) gv_next[q] = static_cast<double>(gVp[q]);
    for (int q = 0; q < L; ++q) {
      const double v = static_cast<double>(vp[q]);
      gv[q] = voltage_value(v, rp[q] == 0, static_cast<double>(gzp[q]), surrogate_triangle(v, p), decay, gv_next[q], p);
    }
    for (int c = 0; c < R; ++c) {
      Acc* const gPp = &a.gP(c, i, b0);
      Acc* const gQp = &a.gQ(c, i, b0);
      Acc* const gup = &a.gu(slot_gu, c, i, b0);
      if (c >= nch) {
        for (int q = 0; q < L; ++q) gup[q] = Acc(0);
        continue;
      }
      if (!k.channel_live(c, i)) continue;
      const double sd = static_cast<double>(k.syn_decay(c, i));
      const double pi = static_cast<double>(k.psc_initial(c, i));
      double gP_next[L], gQ_next[L], gP[L], gQ[L];
      for (int q = 0; q < L; ++q) gP_next[q] = gPp[q];
      for (int q = 0; q < L; ++q) gQ_next[q] = gQp[q];
      for (int q = 0; q < L; ++q) channel_values(sd, cf, p.dt, gP_next[q], gQ_next[q], gv_next[q], gP[q], gQ[q]);
      for (int q = 0; q < L; ++q) gPp[q] = static_cast<Acc>(gP[q]);
      for (int q = 0; q < L; ++q) gQp[q] = static_cast<Acc>(gQ[q]);
      for (int q = 0; q < L; ++q) gup[q] = static_cast<Acc>(pi * gQ[q]);
    }
    if (k.any_slow)
      for (int q = 0; q < L; ++q) fold_slow(i, b0 + q);
    Acc* const gVo = &a.gV(i, b0);
    for (int q = 0; q < L; ++q) gVo[q] = static_cast<Acc>(gv[q]);
  }

  // Hosts, the gauss surrogate: lane by lane.
  void some_lanes(const int i, const int b0, const int nb) const {
    constexpr int L = compat::kHostSampleLanes;
    const double cf = static_cast<double>(k.current_factor(i));
    const int nch = k.n_channels(i);
    double gv_next[L], gv[L];
    for (int q = 0; q < nb; ++q) gv_next[q] = static_cast<double>(a.gV(i, b0 + q));
    for (int q = 0; q < nb; ++q) gv[q] = voltage_adjoint(i, b0 + q, gv_next[q]);
    for (int c = 0; c < R; ++c) {
      if (c >= nch) {
        for (int q = 0; q < nb; ++q) a.gu(slot_gu, c, i, b0 + q) = Acc(0);
        continue;
      }
      if (!k.channel_live(c, i)) continue;
      for (int q = 0; q < nb; ++q) channel_adjoint(c, i, b0 + q, cf, gv_next[q]);
    }
    if (k.any_slow)
      for (int q = 0; q < nb; ++q) fold_slow(i, b0 + q);
    for (int q = 0; q < nb; ++q) a.gV(i, b0 + q) = static_cast<Acc>(gv[q]);
  }
};

// Launches the neuron adjoint in the shape that suits the space.
template <class Real, class Acc, class ExecSpace>
void neuron_adjoint(const ExecSpace& space, const NeuronAdjointFunctor<Real, Acc, ExecSpace>& f, std::int64_t n,
                    KernelShape shape = KernelShape::Auto) {
  using F = NeuronAdjointFunctor<Real, Acc, ExecSpace>;
  if constexpr (compat::host_execution<ExecSpace>) {
    if (host_shape<ExecSpace>(shape)) {
      Kokkos::parallel_for("dpointnet::backward_neuron_adjoint",
                           Kokkos::RangePolicy<ExecSpace, typename F::PerNeuron>(space, 0, n), f);
      return;
    }
  }
  Kokkos::parallel_for("dpointnet::backward_neuron_adjoint",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, n * std::int64_t(f.B)), f);
}

}  // namespace dpointnet::device
