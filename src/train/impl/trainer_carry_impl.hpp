// Carried states (train.carry_state): the final state of every sample slot of an update, the next update's
// start. Per micro-batch two device snapshots: the committed start states (carry_in_) and the end states of the
// current update's forward passes (carry_out_), swapped when the update is applied, so that repeated forward
// passes of one update (pooled counts, gradient checks) all start from the same states. Host records (one per
// sample slot, CarriedRecord's layout) for checkpoint files.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/impl/simulator_impl.hpp"
#include "train/trainer.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
std::size_t Trainer<Real, ExecSpace>::carried_record_size() const {
  const std::size_t N = static_cast<std::size_t>(N_), R = static_cast<std::size_t>(R_),
                    D = static_cast<std::size_t>(D_);
  std::size_t n = N * (2 + kNumAsc + 2 * R + D);
  for (int k = 0; k < sim_->n_inputs(); ++k) n += D * sim_->input_ring(k).extent(2);
  return n;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::allocate_carry() {
  if (!tc_.carry_state || !carry_in_.empty()) return;
  for (int m = 0; m < tc_.micro_batches(); ++m) {
    carry_in_.push_back(sim_->make_snapshot());
    carry_out_.push_back(sim_->make_snapshot());
  }
}

namespace impl {
// Visits the fields of sample b of a snapshot in record order: f(host view, index function) per element.
template <class Snap, class F>
void for_record_fields(Snap& h, int b, F&& f) {
  const std::size_t N = h.state.v.extent(1);
  for (std::size_t i = 0; i < N; ++i) f(h.state.v(b, i));
  for (std::size_t i = 0; i < N; ++i) f(h.state.r(b, i));
  for (std::size_t a = 0; a < h.state.asc.extent(1); ++a)
    for (std::size_t i = 0; i < N; ++i) f(h.state.asc(b, a, i));
  for (std::size_t c = 0; c < h.state.psc_rise.extent(1); ++c)
    for (std::size_t i = 0; i < N; ++i) f(h.state.psc_rise(b, c, i));
  for (std::size_t c = 0; c < h.state.psc.extent(1); ++c)
    for (std::size_t i = 0; i < N; ++i) f(h.state.psc(b, c, i));
  for (std::size_t d = 0; d < h.z_ring.extent(0); ++d)
    for (std::size_t i = 0; i < N; ++i) f(h.z_ring(d, b, i));
  for (auto& ring : h.input_rings)
    for (std::size_t d = 0; d < ring.extent(0); ++d)
      for (std::size_t j = 0; j < ring.extent(2); ++j) f(ring(d, b, j));
}

template <class Real>
struct HostSnapshot {
  device::NeuronState<Real, Kokkos::HostSpace> state;
  device::SpikeRing<Kokkos::HostSpace> z_ring;
  std::vector<device::CountRing<Kokkos::HostSpace>> input_rings;
};

template <class Real, class Snap>
HostSnapshot<Real> host_copy(const Snap& s) {
  HostSnapshot<Real> h;
  h.state.v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.state.v);
  h.state.r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.state.r);
  h.state.asc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.state.asc);
  h.state.psc_rise = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.state.psc_rise);
  h.state.psc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.state.psc);
  h.z_ring = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.z_ring);
  for (const auto& r : s.input_rings)
    h.input_rings.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r));
  return h;
}
}  // namespace impl

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::carried_records() const {
  std::vector<double> out;
  if (!carry_valid_) return out;
  out.reserve(carry_in_.size() * static_cast<std::size_t>(B_) * carried_record_size());
  for (const auto& snap : carry_in_) {
    auto h = impl::host_copy<Real>(snap);
    for (int b = 0; b < B_; ++b)
      impl::for_record_fields(h, b, [&](const auto& x) { out.push_back(static_cast<double>(x)); });
  }
  return out;
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::set_carried_records(const std::vector<double>& records, std::int64_t end_step) {
  if (!tc_.carry_state) throw std::logic_error("set_carried_records without train.carry_state");
  allocate_carry();
  const std::size_t per = carried_record_size();
  if (records.size() != carry_in_.size() * static_cast<std::size_t>(B_) * per)
    throw std::logic_error("carried records: " + std::to_string(records.size()) + " values for " +
                           std::to_string(carry_in_.size() * static_cast<std::size_t>(B_)) + " slots of " +
                           std::to_string(per));
  std::size_t q = 0;
  for (auto& snap : carry_in_) {
    auto h = impl::host_copy<Real>(snap);
    for (int b = 0; b < B_; ++b)
      impl::for_record_fields(h, b,
                              [&](auto& x) { x = static_cast<std::remove_reference_t<decltype(x)>>(records[q++]); });
    Kokkos::deep_copy(snap.state.v, h.state.v);
    Kokkos::deep_copy(snap.state.r, h.state.r);
    Kokkos::deep_copy(snap.state.asc, h.state.asc);
    Kokkos::deep_copy(snap.state.psc_rise, h.state.psc_rise);
    Kokkos::deep_copy(snap.state.psc, h.state.psc);
    Kokkos::deep_copy(snap.z_ring, h.z_ring);
    for (std::size_t k = 0; k < snap.input_rings.size(); ++k) Kokkos::deep_copy(snap.input_rings[k], h.input_rings[k]);
    snap.t = end_step;
    snap.history = 0;
  }
  carry_valid_ = true;
}

}  // namespace dpointnet
