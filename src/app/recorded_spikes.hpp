// Spike trains from the simulator's recorded chunks, per simulated population (the SONATA spike-file layout):
// what `simulate` writes per sample and what the run report's rasters write for sample 0.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/io/spike_file.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/sim/simulator.hpp"

namespace dpointnet {

// One empty train per simulated (non-virtual) population.
inline std::map<std::string, SpikeTrains> empty_spike_trains(const Network& net) {
  std::map<std::string, SpikeTrains> pops;
  for (const auto& p : net.populations)
    if (!p.is_virtual) pops[p.name].population = p.name;
  return pops;
}

// Appends the spikes of sample b in step k of chunk c, stamped at the step's end (first_step + k + 1) dt; returns
// how many.
inline std::int64_t append_step_spikes(const RecordedChunk& c, int k, int b, const Network& net, double dt,
                                       std::map<std::string, SpikeTrains>& pops) {
  const double time = static_cast<double>(c.first_step + k + 1) * dt;
  std::int64_t n = 0;
  const std::uint8_t* const z = &c.z(k, b, 0);
  constexpr std::int64_t kWord = 64;  // neurons a time: most words of a step's spikes are all zero
  for (std::int64_t i0 = 0; i0 < net.n_neurons; i0 += kWord) {
    const std::int64_t i1 = std::min(i0 + kWord, net.n_neurons);
    std::uint8_t any = 0;
    for (std::int64_t i = i0; i < i1; ++i) any |= z[i];
    if (any == 0) continue;
    for (std::int64_t i = i0; i < i1; ++i) {
      if (!z[i]) continue;
      const auto& pop = net.populations[static_cast<std::size_t>(net.neuron_population[static_cast<std::size_t>(i)])];
      auto& st = pops[pop.name];
      st.node_ids.push_back(net.neuron_node_id[static_cast<std::size_t>(i)]);
      st.times_ms.push_back(time);
      ++n;
    }
  }
  return n;
}

// Appends input q's activity of sample b in step k of chunk c (a count of n adds n spikes), stamped like
// neuron spikes at the step's end, under the input population's name and node ids.
inline void append_input_spikes(const RecordedChunk& c, std::size_t q, int k, int b, const Network& net,
                                const PreparedInput& in, double dt, std::map<std::string, SpikeTrains>& pops) {
  if (in.silent) return;
  const Projection& pr = net.projections[static_cast<std::size_t>(in.projection)];
  const Population& pop = *net.find_population(pr.source_population);
  const double time = static_cast<double>(c.first_step + k + 1) * dt;
  auto& st = pops[pop.name];
  st.population = pop.name;
  for (std::size_t j = 0; j < c.inputs[q].extent(2); ++j)
    for (std::uint16_t n = 0; n < c.inputs[q](k, b, j); ++n) {
      st.node_ids.push_back(pop.node_ids[j]);
      st.times_ms.push_back(time);
    }
}

}  // namespace dpointnet
