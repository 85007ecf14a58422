// Spike trains from the simulator's recorded chunks, per simulated population (the SONATA spike-file layout):
// what `simulate` writes per sample and what the run report's rasters write for sample 0.
#pragma once
#include <cstdint>
#include <map>
#include <string>

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
  for (std::int64_t i = 0; i < net.n_neurons; ++i) {
    if (!c.z(k, b, i)) continue;
    const auto& pop = net.populations[static_cast<std::size_t>(net.neuron_population[static_cast<std::size_t>(i)])];
    auto& st = pops[pop.name];
    st.node_ids.push_back(net.neuron_node_id[static_cast<std::size_t>(i)]);
    st.times_ms.push_back(time);
    ++n;
  }
  return n;
}

}  // namespace dpointnet
