// SONATA spike files (docs/simulation.md): current `/spikes/<pop>/{timestamps,node_ids}` and legacy
// `/spikes/{gids,timestamps}` layouts, units ms or s; writing in the BMTK layout.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dpointnet {

struct SpikeTrains {
  std::string population;  // empty for the legacy layout
  std::vector<std::int64_t> node_ids;
  std::vector<double> times_ms;
};

// Reads the population named `population` if the file has it; else, if the file holds exactly one population,
// that one; else an error naming the file and the populations it has.
SpikeTrains read_spike_file(const std::string& path, const std::string& population);

// Lists the populations of a spike file (empty string for the legacy layout).
std::vector<std::string> spike_file_populations(const std::string& path);

// Writes spikes of several populations in the BMTK layout, sorted by time then node id
// (`sorting = "by_time"`), timestamps float64 in ms (gzip), node_ids int64.
void write_spike_file(const std::string& path, bool overwrite, const std::map<std::string, SpikeTrains>& pops);

}  // namespace dpointnet
