// Template implementation of the simulator's snapshots: segment snapshots of BPTT time checkpointing (save,
// restore) and the continuation of a run from another's end state (train.carry_state).
#pragma once
#include "dpointnet/sim/simulator.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
typename Simulator<Real, ExecSpace>::SegmentSnapshot Simulator<Real, ExecSpace>::make_snapshot() const {
  SegmentSnapshot s;
  const std::size_t N = static_cast<std::size_t>(N_);
  s.state.v = decltype(s.state.v)(Kokkos::view_alloc(space_, "snapshot.v"), B_, N);
  s.state.r = decltype(s.state.r)(Kokkos::view_alloc(space_, "snapshot.r"), B_, N);
  s.state.asc = decltype(s.state.asc)(Kokkos::view_alloc(space_, "snapshot.asc"), B_, kNumAsc, N);
  s.state.psc_rise = decltype(s.state.psc_rise)(Kokkos::view_alloc(space_, "snapshot.psc_rise"), B_, R_, N);
  s.state.psc = decltype(s.state.psc)(Kokkos::view_alloc(space_, "snapshot.psc"), B_, R_, N);
  s.z_ring = device::SpikeRing<MemSpace>(Kokkos::view_alloc(space_, "snapshot.z_ring"), D_, B_, N);
  for (const auto& in : inputs_)
    s.input_rings.emplace_back(Kokkos::view_alloc(space_, "snapshot.input_ring"), in->ring.extent(0),
                               in->ring.extent(1), in->ring.extent(2));
  return s;
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::save(SegmentSnapshot& s) const {
  Kokkos::deep_copy(space_, s.state.v, state_.v);
  Kokkos::deep_copy(space_, s.state.r, state_.r);
  Kokkos::deep_copy(space_, s.state.asc, state_.asc);
  Kokkos::deep_copy(space_, s.state.psc_rise, state_.psc_rise);
  Kokkos::deep_copy(space_, s.state.psc, state_.psc);
  Kokkos::deep_copy(space_, s.z_ring, z_ring_);
  for (std::size_t q = 0; q < inputs_.size(); ++q) Kokkos::deep_copy(space_, s.input_rings[q], inputs_[q]->ring);
  s.t = t_;
  s.history = history_;
}

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::restore(const SegmentSnapshot& s) {
  Kokkos::deep_copy(space_, state_.v, s.state.v);
  Kokkos::deep_copy(space_, state_.r, s.state.r);
  Kokkos::deep_copy(space_, state_.asc, s.state.asc);
  Kokkos::deep_copy(space_, state_.psc_rise, s.state.psc_rise);
  Kokkos::deep_copy(space_, state_.psc, s.state.psc);
  Kokkos::deep_copy(space_, z_ring_, s.z_ring);
  for (std::size_t q = 0; q < inputs_.size(); ++q) Kokkos::deep_copy(space_, inputs_[q]->ring, s.input_rings[q]);
  t_ = s.t;
  history_ = s.history;
  update_current(t_, true);
}

namespace detail {
// dst slot q = src slot (q + shift) mod D, one slot copy each (D copies per continued run).
template <class ExecSpace, class Ring>
void rotate_ring(const ExecSpace& space, const Ring& dst, const Ring& src, std::int64_t shift) {
  const std::int64_t D = static_cast<std::int64_t>(dst.extent(0));
  for (std::int64_t q = 0; q < D; ++q) {
    const std::int64_t from = ((q + shift) % D + D) % D;
    Kokkos::deep_copy(space, Kokkos::subview(dst, q, Kokkos::ALL(), Kokkos::ALL()),
                      Kokkos::subview(src, from, Kokkos::ALL(), Kokkos::ALL()));
  }
}
}  // namespace detail

template <class Real, class ExecSpace>
void Simulator<Real, ExecSpace>::continue_from(const SegmentSnapshot& end, std::int64_t t_start) {
  Kokkos::deep_copy(space_, state_.v, end.state.v);
  Kokkos::deep_copy(space_, state_.r, end.state.r);
  Kokkos::deep_copy(space_, state_.asc, end.state.asc);
  Kokkos::deep_copy(space_, state_.psc_rise, end.state.psc_rise);
  Kokkos::deep_copy(space_, state_.psc, end.state.psc);
  const std::int64_t shift = end.t - t_start;
  detail::rotate_ring(space_, z_ring_, end.z_ring, shift);
  for (std::size_t q = 0; q < inputs_.size(); ++q)
    detail::rotate_ring(space_, inputs_[q]->ring, end.input_rings[q], shift);
  t_ = t_start;
  history_ = D_;
  events_ = 0;
  update_current(t_, true);
}

}  // namespace dpointnet
