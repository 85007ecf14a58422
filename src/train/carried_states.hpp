// Carried states (train.carry_state): the final state of every sample slot of an update, the next update's
// start. Per micro-batch two device snapshots: the committed start states and the end states of the current
// update's forward passes, swapped when the update is applied, so that repeated forward passes of one update
// (pooled counts, gradient checks) all start from the same states. Host records (one per sample slot) for
// checkpoint files: v[N], r[N], asc[2][N], psc_rise[R][N], psc[R][N], the spike ring [D][N] and each input ring
// [D][n_src] in ring-slot order as of the runs' end step.
#pragma once
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet {

namespace detail {
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

template <class Real, class ExecSpace, class Snap>
HostSnapshot<Real> host_copy(const ExecSpace& space, const Snap& s) {
  HostSnapshot<Real> h;
  h.state.v = compat::mirror_view_and_copy(space, s.state.v);
  h.state.r = compat::mirror_view_and_copy(space, s.state.r);
  h.state.asc = compat::mirror_view_and_copy(space, s.state.asc);
  h.state.psc_rise = compat::mirror_view_and_copy(space, s.state.psc_rise);
  h.state.psc = compat::mirror_view_and_copy(space, s.state.psc);
  h.z_ring = compat::mirror_view_and_copy(space, s.z_ring);
  for (const auto& r : s.input_rings) h.input_rings.push_back(compat::mirror_view_and_copy(space, r));
  return h;
}
}  // namespace detail

template <class Real, class ExecSpace>
class CarriedStates {
 public:
  using Snapshot = typename Simulator<Real, ExecSpace>::SegmentSnapshot;

  // `on`: train.carry_state; one start and one end state per micro-batch of B samples.
  CarriedStates(const ExecSpace& space, bool on, int micro_batches, int batch)
      : space_(space), on_(on), micro_batches_(micro_batches), B_(batch) {}

  bool on() const { return on_; }
  // Whether committed start states exist (false before the first update: it starts from rest).
  bool valid() const { return valid_; }
  const Snapshot& start(int m) const { return in_[static_cast<std::size_t>(m)]; }
  // Where micro-batch m's forward pass leaves its end states (allocated on first use).
  Snapshot& end(const Simulator<Real, ExecSpace>& sim, int m) {
    allocate(sim);
    return out_[static_cast<std::size_t>(m)];
  }
  // Start states written directly (train.initial_state "from_input"): micro-batch m's, then mark_valid().
  Snapshot& start_for_write(const Simulator<Real, ExecSpace>& sim, int m) {
    allocate(sim);
    return in_[static_cast<std::size_t>(m)];
  }
  void mark_valid() { valid_ = true; }
  // The update is applied: its end states start the next one.
  void commit() {
    if (!on_ || out_.empty()) return;
    std::swap(in_, out_);
    valid_ = true;
  }

  std::size_t record_size(const Simulator<Real, ExecSpace>& sim) const {
    const std::size_t N = static_cast<std::size_t>(sim.n_neurons()), R = static_cast<std::size_t>(sim.n_channels()),
                      D = static_cast<std::size_t>(sim.max_delay());
    std::size_t n = N * (2 + kNumAsc + 2 * R + D);
    for (int k = 0; k < sim.n_inputs(); ++k) n += D * sim.input_ring(k).extent(2);
    return n;
  }
  // The committed start states as host records, micro-batch m sample b at slot m B + b (empty when not valid).
  std::vector<double> records(const Simulator<Real, ExecSpace>& sim) const {
    std::vector<double> out;
    if (!valid_) return out;
    out.reserve(in_.size() * static_cast<std::size_t>(B_) * record_size(sim));
    for (const auto& snap : in_) {
      auto h = detail::host_copy<Real>(space_, snap);
      for (int b = 0; b < B_; ++b)
        detail::for_record_fields(h, b, [&](const auto& x) { out.push_back(static_cast<double>(x)); });
    }
    return out;
  }
  void set_records(const Simulator<Real, ExecSpace>& sim, const std::vector<double>& records, std::int64_t end_step) {
    if (!on_) throw std::logic_error("carried records without train.carry_state");
    allocate(sim);
    const std::size_t per = record_size(sim);
    if (records.size() != in_.size() * static_cast<std::size_t>(B_) * per)
      throw std::logic_error("carried records: " + std::to_string(records.size()) + " values for " +
                             std::to_string(in_.size() * static_cast<std::size_t>(B_)) + " slots of " +
                             std::to_string(per));
    std::size_t q = 0;
    for (auto& snap : in_) {
      auto h = detail::host_copy<Real>(space_, snap);
      for (int b = 0; b < B_; ++b)
        detail::for_record_fields(
            h, b, [&](auto& x) { x = static_cast<std::remove_reference_t<decltype(x)>>(records[q++]); });
      Kokkos::deep_copy(space_, snap.state.v, h.state.v);
      Kokkos::deep_copy(space_, snap.state.r, h.state.r);
      Kokkos::deep_copy(space_, snap.state.asc, h.state.asc);
      Kokkos::deep_copy(space_, snap.state.psc_rise, h.state.psc_rise);
      Kokkos::deep_copy(space_, snap.state.psc, h.state.psc);
      Kokkos::deep_copy(space_, snap.z_ring, h.z_ring);
      for (std::size_t k = 0; k < snap.input_rings.size(); ++k)
        Kokkos::deep_copy(space_, snap.input_rings[k], h.input_rings[k]);
      space_.fence();
      snap.t = end_step;
      snap.history = 0;
    }
    valid_ = true;
  }

 private:
  void allocate(const Simulator<Real, ExecSpace>& sim) {
    if (!on_ || !in_.empty()) return;
    for (int m = 0; m < micro_batches_; ++m) {
      in_.push_back(sim.make_snapshot());
      out_.push_back(sim.make_snapshot());
    }
  }

  ExecSpace space_;
  bool on_;
  int micro_batches_, B_;
  std::vector<Snapshot> in_, out_;
  bool valid_ = false;
};

}  // namespace dpointnet
