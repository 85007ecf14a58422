// Simulator::run's steps, a min-delay window at a time (one step with a step hook or windows off): no spike
// reaches a target sooner than the network's smallest delay, D_min steps, so the drive of steps t, ...,
// t + D_min - 1 depends only on spikes of steps before t. One launch per projection computes the drive of every step
// of the window, one launch advances every neuron through them, one launch writes a spike file's inputs of the
// window; random inputs draw per step. Integer drive sums and per-neuron arithmetic in the same order give the
// values of step-by-step execution bitwise.
#pragma once
#include <algorithm>
#include <cstdint>

#include "dpointnet/device/fill.hpp"
#include "dpointnet/device/propagate.hpp"
#include "dpointnet/sim/detail/count_events.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/sim/step_window.hpp"

namespace dpointnet {

// Steps the next launch may take, at most max_steps: 1 without windows, or with a step hook and no buffer for what
// training reads of each step (SimOptions::windows_with_hook); else up to the window length, ending before the next
// change of the current clamps.
template <class Real, class ExecSpace>
int Simulator<Real, ExecSpace>::window_steps(std::int64_t max_steps) const {
  if ((hook_ && step_v_.extent(0) == 0) || window_ <= 1 || max_steps <= 1) return 1;
  std::int64_t w = std::min<std::int64_t>(window_, max_steps);
  for (const auto& p : pulses_) {
    if (p.first_step > t_) w = std::min(w, p.first_step - t_);
    if (p.end_step > t_) w = std::min(w, p.end_step - t_);
  }
  return static_cast<int>(std::max<std::int64_t>(w, 1));
}

// Steps t_, ..., t_ + n_steps - 1 (n_steps <= the window length), then the step hook for each of them in turn;
// rec_index >= 0: recorded into rows rec_index, ...
template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::advance(int n_steps, int rec_index) {
  const std::int64_t t = t_;
  update_current(t);
  const std::int64_t s_min = -history_;
  const auto u = Kokkos::subview(
      u_, Kokkos::make_pair(std::size_t(0), static_cast<std::size_t>(n_steps) * static_cast<std::size_t>(B_)),
      Kokkos::ALL, Kokkos::ALL);
  // 1. the drive of every step of the window
  bool zero = true;
  if (recurrent_.line.extent(0) > 0) {
    device::PropagateFunctor<Real, ExecSpace, std::uint8_t> f{recurrent_, z_ring_, u, t, D_, s_min, zero, live_spans_};
    f.n_steps = n_steps;
    device::propagate(space_, "dpointnet::propagate_recurrent", f, B_, shape_);
    zero = false;
    // (step t + w reads slots of steps >= t only for delays d <= w < D_min: no edges, so no stale slot counts)
    for (int w = 0; count_events_ && w < n_steps; ++w)
      events_ +=
          detail::count_events<ExecSpace, std::uint8_t>(space_, z_ring_, recurrent_.offsets, t + w, D_, B_, N_, s_min);
  }
  for (auto& in : inputs_) {
    device::PropagateFunctor<Real, ExecSpace, std::uint16_t> f{in->edges, in->ring, u, t, D_, s_min, zero, live_spans_};
    f.n_steps = n_steps;
    device::propagate(space_, "dpointnet::propagate_input", f, B_, shape_);
    zero = false;
    for (int w = 0; count_events_ && w < n_steps; ++w)
      events_ += detail::count_events<ExecSpace, std::uint16_t>(space_, in->ring, in->edges.offsets, t + w, D_, B_,
                                                                in->edges.n_sources, s_min);
  }
  if (zero) device::fill(space_, u, std::int64_t(0));
  // 2-8. the neurons through the window; v' straight into the recorder's rows
  const int slot_now = static_cast<int>(t % D_);
  const int slot_prev = static_cast<int>((t + D_ - 1) % D_);
  const std::size_t bn = static_cast<std::size_t>(B_) * static_cast<std::size_t>(N_);
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v_out;
  if (rec_index >= 0 && opt_.record_v)
    v_out = Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace>(
        rec_v_.data() + static_cast<std::size_t>(rec_index) * bn,
        static_cast<std::size_t>(n_steps) * static_cast<std::size_t>(B_), static_cast<std::size_t>(N_));
  typename NeuronDynamics<Real, ExecSpace>::Step st{
      k_, state_, u, z_ring_, v_out, i_ext_, dt_, N_, B_, slot_prev, slot_now, t > 0 || history_ > 0, shape_};
  st.n_steps = n_steps;
  if (hook_) {  // (empty without windows: then the dynamics' own views hold the step's values)
    st.step_v = step_v_;
    st.step_r = step_r_;
  }
  dynamics_->step(space_, st);
  write_inputs(t, slot_now, n_steps);  // the window's inputs, into their ring slots (read from the next window on)
  if (rec_index >= 0) {
    // the window's spikes: its ring slots in one copy, or two where they wrap
    for (int w = 0; w < n_steps;) {
      const int slot = (slot_now + w) % D_, run = std::min(n_steps - w, D_ - slot);
      device::copy(space_, rec_z_.data() + static_cast<std::size_t>(rec_index + w) * bn,
                   z_ring_.data() + static_cast<std::size_t>(slot) * bn, static_cast<std::size_t>(run) * bn);
      w += run;
    }
    for (int w = 0; opt_.record_inputs && w < n_steps; ++w) record_input_slots(rec_index + w, (slot_now + w) % D_);
  }
  if (hook_)
    for (int w = 0; w < n_steps; ++w) {
      hook_w_ = step_v_.extent(0) > 0 ? w : -1;
      hook_(t + w, (slot_now + w) % D_);
    }
  hook_w_ = -1;
  t_ += n_steps;
}

}  // namespace dpointnet
