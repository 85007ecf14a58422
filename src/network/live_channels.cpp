#include "dpointnet/network/live_channels.hpp"

#include <algorithm>

namespace dpointnet {

LiveChannels live_channels(const Network& net, const int block) {
  LiveChannels lc;
  const int R = net.n_channels;
  const std::int64_t N = net.n_neurons;
  // the drive rows (channel, target) that some edge adds to
  std::vector<std::uint8_t> row(static_cast<std::size_t>(R) * static_cast<std::size_t>(N), 0);
  for (const Projection& p : net.projections)
    for (std::size_t e = 0; e < p.size(); ++e) {
      const int c = p.channel[e];
      const std::int64_t i = p.target[e];
      if (c >= 0 && c < R && i >= 0 && i < N) row[static_cast<std::size_t>(c) * static_cast<std::size_t>(N) + i] = 1;
    }
  lc.span.assign(2 * static_cast<std::size_t>(R), 0);
  for (int c = 0; c < R; ++c) {
    const auto first = row.begin() + static_cast<std::ptrdiff_t>(c) * N, last = first + N;
    const auto lo = std::find(first, last, std::uint8_t(1));
    if (lo == last) continue;
    const auto hi = std::find(std::make_reverse_iterator(last), std::make_reverse_iterator(lo), std::uint8_t(1));
    lc.span[2 * static_cast<std::size_t>(c)] = lo - first;
    lc.span[2 * static_cast<std::size_t>(c) + 1] = hi.base() - first;
  }
  if (R > kMaxMaskedChannels) return lc;
  lc.neuron.assign(static_cast<std::size_t>(N), 0);
  lc.block.assign(static_cast<std::size_t>((N + block - 1) / block), 0);
  for (std::int64_t i = 0; i < N; ++i) {
    const DerivedNeuron& d = net.neurons[static_cast<std::size_t>(i)];
    const int nch = static_cast<int>(d.syn_decay.size());
    const int nr = d.n_receptors > 0 ? d.n_receptors : nch;
    std::uint32_t m = 0;
    for (int c = 0; c < nch && c < R; ++c) {
      const int dc = c < nr ? c : c - nr;
      if (row[static_cast<std::size_t>(dc) * static_cast<std::size_t>(N) + i]) m |= std::uint32_t(1) << c;
    }
    lc.neuron[static_cast<std::size_t>(i)] = m;
    lc.block[static_cast<std::size_t>(i / block)] |= m;
  }
  return lc;
}

}  // namespace dpointnet
