// The neuron adjoint of run.dynamics = "nest" (docs/model-nest.md section 6), one step in reverse. Per sample b
// and neuron i, with U~_n the V of step n before the reset, g_n = 1 if step n integrated (0: V held), y1 = psc_rise,
// y2 = psc:
//   U~_n = g_n (P33' damp(U_{n-1}) + P30 (I_e + S_n) + sum_c P31_c y1_{n-1,c} + P32_c y2_{n-1,c})
//          + (1 - g_n) damp(U_{n-1})                                  (P33' = P33; iaf: 1 + expm1(-h/tau_m))
//   U_n = U~_n - sg(z_n (U~_n - V_reset)),   z_n = H(U~_n - 1) g_n
//   y2_n = h P11 y1_{n-1} + P11 y2_{n-1},   y1_n = P11 y1_{n-1} + PSCi u_n
// so, with a.gV holding dL/dU_n, a.gQ / a.gP dL/dy1_n / dL/dy2_n (from the steps after n):
//   X = a.gV + dL/dU~_n (losses) + g_n gz_n surrogate(U~_n)              (dL/dU~_n)
//   gu_n = PSCi a.gQ;   a.gQ <- P11 a.gQ + h P11 a.gP + g_n P31 X;   a.gP <- P11 a.gP + g_n P32 X
//   a.gV <- vdamp_keep (g_n P33' + 1 - g_n) X
// No gradient flows through the reset, the ASC (its jump needs a spike) or the refractory counter.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/surrogate.hpp"

namespace dpointnet::device {

template <class Real, class Acc, class ExecSpace>
struct NestNeuronAdjointFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  NeuronConstants<Real, MemSpace> k;
  NestConstants<Real, MemSpace> nk;
  Adjoint<Acc, MemSpace> a;
  SegmentRecord<Real, MemSpace> rec;  // v: U~_n; r: 0 if step n integrated, 1 if V was held
  BackwardParams p;
  double h;
  int slot_rec, slot_gu, B, R;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int i = static_cast<int>(idx / B);
    const int b = static_cast<int>(idx % B);
    const double v = static_cast<double>(rec.v(slot_rec, i, b));
    const bool open = rec.r(slot_rec, i, b) == 0;
    const double X = static_cast<double>(a.gV(i, b)) + vreg_grad(v, p) +
                     (open ? static_cast<double>(a.gz(i, b)) * surrogate(v, p) : 0.0);
    const int nch = k.n_channels(i);
    for (int c = 0; c < R; ++c) {
      if (c >= nch) {
        a.gu(slot_gu, c, i, b) = Acc(0);
        continue;
      }
      const double sd = static_cast<double>(k.syn_decay(c, i));
      const double gQ = a.gQ(c, i, b), gP = a.gP(c, i, b);
      a.gu(slot_gu, c, i, b) = static_cast<Acc>(static_cast<double>(k.psc_initial(c, i)) * gQ);
      const double gx = open ? X : 0.0;
      a.gQ(c, i, b) = static_cast<Acc>(sd * gQ + h * sd * gP + static_cast<double>(nk.p31(c, i)) * gx);
      a.gP(c, i, b) = static_cast<Acc>(sd * gP + static_cast<double>(nk.p32(c, i)) * gx);
    }
    if (k.any_slow) {  // a slow channel's drive is its port's (glif_psc_double_alpha): its gradient moves there
      const int nr = k.n_receptors(i);
      for (int c = nr; c < nch; ++c) {
        a.gu(slot_gu, c - nr, i, b) += a.gu(slot_gu, c, i, b);
        a.gu(slot_gu, c, i, b) = Acc(0);
      }
    }
    const double self = open ? static_cast<double>(k.decay(i)) + (nk.iaf(i) ? 1.0 : 0.0) : 1.0;
    a.gV(i, b) = static_cast<Acc>(p.vdamp_keep * self * X);
  }
};

template <class Real, class Acc, class ExecSpace>
void nest_neuron_adjoint(const ExecSpace& space, const NestNeuronAdjointFunctor<Real, Acc, ExecSpace>& f,
                         std::int64_t n) {
  Kokkos::parallel_for("dpointnet::backward_nest_neuron_adjoint",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, n * std::int64_t(f.B)), f);
}

}  // namespace dpointnet::device
