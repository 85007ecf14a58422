// The synaptic channels that can carry current: channel c of a neuron is live when some edge (of any projection)
// adds to its drive row. A channel that no edge reaches keeps its rest state (zero) for the whole run, so the
// neuron step and the neuron adjoint may skip it, and only the live rows of the drive need zeroing each step
// (docs/model.md, "Channels without inputs").
#pragma once
#include <cstdint>
#include <vector>

#include "dpointnet/network/network.hpp"

namespace dpointnet {

// Bit masks hold up to kMaxMaskedChannels channels; with more, every channel counts as live (empty masks).
inline constexpr int kMaxMaskedChannels = 32;

struct LiveChannels {
  // bit c of neuron[i]: channel c (< the neuron's channel count) is driven by a drive row that edges reach (a
  // slow channel, glif_psc_double_alpha, by its fast partner's row). Empty: every channel is live.
  std::vector<std::uint32_t> neuron;
  // the OR of neuron[] over each block of `block` consecutive neurons
  std::vector<std::uint32_t> block;
  // [2 c], [2 c + 1]: the first neuron and one past the last one whose drive row of channel c edges reach (0, 0
  // when none): every live row of the drive lies in these spans.
  std::vector<std::int64_t> span;
};

// The live channels of net (neurons and projections in; R = net.n_channels), with block masks over `block`
// neurons.
LiveChannels live_channels(const Network& net, int block);

}  // namespace dpointnet
