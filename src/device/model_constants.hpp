// Device-side containers of the neuron model: per-neuron constants, per-sample state and the activity rings.
// Plain data (no JSON, no I/O): every device translation unit includes this.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "dpointnet/network/neuron_model.hpp"

namespace dpointnet::device {

// Per-neuron constants on the device, normalized units.
template <class Real, class MemSpace>
struct NeuronConstants {
  Kokkos::View<Real*, MemSpace> decay, current_factor, v_reset;
  Kokkos::View<int*, MemSpace> t_ref_steps, n_channels;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> asc_amps, asc_decay;     // [kNumAsc][N]
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> syn_decay, psc_initial;  // [R][N]
  // Receptor ports per neuron: channel c >= n_receptors(i) is a slow channel (glif_psc_double_alpha), driven by
  // the drive of channel c - n_receptors(i); equal to the channel count otherwise.
  Kokkos::View<int*, MemSpace> n_receptors;
  bool any_slow = false;  // some neuron has slow channels (else every channel is driven by its own drive)
  // Channels that edges reach (network/live_channels.hpp): bit c of live(i) for neuron i, and of live_blocks(q) for
  // the neurons [q kLiveBlock, (q + 1) kLiveBlock). A channel without inputs stays at rest, so the neuron step and
  // the neuron adjoint skip it. Empty views: every channel is live.
  static constexpr int kLiveBlock = 256;
  Kokkos::View<std::uint32_t*, MemSpace> live, live_blocks;
  KOKKOS_INLINE_FUNCTION bool channel_live(const int c, const int i) const {
    return live.extent(0) == 0 || ((live(i) >> c) & 1u) != 0;
  }
  KOKKOS_INLINE_FUNCTION bool block_channel_live(const int c, const std::int64_t q) const {
    return live_blocks.extent(0) == 0 || ((live_blocks(q) >> c) & 1u) != 0;
  }
};

// run.dynamics = "nest" (docs/model-nest.md): NEST's propagators and initial values beside the shared constants,
// whose decay is then P33 (glif) or expm1(-h/tau_m) (iaf), current_factor P30 and t_ref_steps NEST's refractory
// count.
template <class Real, class MemSpace>
struct NestConstants {
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> p31, p32;              // [R][N]
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> asc_stable, asc_refr;  // [kNumAsc][N]
  Kokkos::View<Real*, MemSpace> v_init, i_e, v_min;
  Kokkos::View<std::uint8_t*, MemSpace> iaf;  // 1: iaf_psc_alpha (its sum order, spike at v >= 1)
};

// The channel whose synaptic drive feeds channel c of a neuron with nr receptor ports.
KOKKOS_INLINE_FUNCTION int drive_channel(const int c, const int nr) { return c < nr ? c : c - nr; }

// State per sample and neuron. Views are [B][N] or [B][R][N] (LayoutRight, neurons fastest).
template <class Real, class MemSpace>
struct NeuronState {
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v;
  Kokkos::View<std::int16_t**, Kokkos::LayoutRight, MemSpace> r;
  Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace> asc;       // [B][kNumAsc][N]
  Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace> psc_rise;  // [B][R][N]
  Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace> psc;       // [B][R][N]
};

// Spike history ring: slot (t mod D) holds the spikes emitted in step t. [D][B][N]
template <class MemSpace>
using SpikeRing = Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, MemSpace>;

// Input activity ring of a virtual population: slot (t mod D) holds the counts of step t. [D][B][n_src]
template <class MemSpace>
using CountRing = Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, MemSpace>;

}  // namespace dpointnet::device
