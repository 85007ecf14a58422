#include "dpointnet/io/spike_file.hpp"

#include <algorithm>
#include <numeric>

#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

std::vector<std::string> spike_file_populations(const std::string& path) {
  auto f = h5::File::open_read(path);
  std::vector<std::string> pops;
  if (!f.is_group("/spikes")) throw InputError(path, "", "/spikes", "group is missing: not a SONATA spike file");
  for (const auto& c : f.children("/spikes"))
    if (f.is_group("/spikes/" + c)) pops.push_back(c);
  if (pops.empty() && f.is_dataset("/spikes/timestamps")) pops.push_back("");
  return pops;
}

SpikeTrains read_spike_file(const std::string& path, const std::string& population) {
  auto f = h5::File::open_read(path);
  auto pops = spike_file_populations(path);
  SpikeTrains st;
  std::string base;
  if (std::find(pops.begin(), pops.end(), population) != pops.end() && !population.empty()) {
    st.population = population;
  } else if (pops.size() == 1) {
    st.population = pops[0];
  } else if (pops.empty()) {
    return st;  // a valid file with no spikes
  } else {
    std::string names;
    for (auto& p : pops) names += " '" + p + "'";
    throw InputError(path, "", "/spikes",
                     "has no population '" + population + "' and several others (" + names +
                         " ): cannot choose the spikes of the input");
  }
  std::string ids_ds, ts_ds;
  if (st.population.empty()) {
    ids_ds = "/spikes/gids";
    ts_ds = "/spikes/timestamps";
  } else {
    ids_ds = "/spikes/" + st.population + "/node_ids";
    ts_ds = "/spikes/" + st.population + "/timestamps";
  }
  st.node_ids = f.read_int(ids_ds);
  st.times_ms = f.read_double(ts_ds);
  if (st.node_ids.size() != st.times_ms.size())
    throw InputError(path, "population '" + st.population + "'", "timestamps",
                     "has " + std::to_string(st.times_ms.size()) + " entries but node_ids has " +
                         std::to_string(st.node_ids.size()));
  if (f.has_attr(ts_ds, "units")) {
    const std::string u = f.read_attr_string(ts_ds, "units");
    if (u == "s" || u == "sec" || u == "seconds") {
      for (double& t : st.times_ms) t *= 1000.0;
    } else if (u != "ms" && u != "milliseconds") {
      throw InputError(path, "population '" + st.population + "'", "timestamps",
                       "units '" + u + "' are not supported (ms or s)");
    }
  }
  return st;
}

void write_spike_file(const std::string& path, bool overwrite, const std::map<std::string, SpikeTrains>& pops) {
  auto f = h5::File::create(path, overwrite);
  f.write_sonata_header();
  f.create_group("/spikes");
  for (const auto& entry : pops) {
    const std::string& name = entry.first;
    const auto& st = entry.second;
    const std::size_t n = st.node_ids.size();
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (st.times_ms[a] != st.times_ms[b]) return st.times_ms[a] < st.times_ms[b];
      return st.node_ids[a] < st.node_ids[b];
    });
    std::vector<std::int64_t> ids(n);
    std::vector<double> ts(n);
    for (std::size_t i = 0; i < n; ++i) {
      ids[i] = st.node_ids[order[i]];
      ts[i] = st.times_ms[order[i]];
    }
    const std::string g = "/spikes/" + name;
    f.create_group(g);
    f.write_attr_string(g, "sorting", "by_time");
    f.write_double(g + "/timestamps", ts, true);
    f.write_attr_string(g + "/timestamps", "units", "ms");
    f.write_int64(g + "/node_ids", ids, true);
  }
}

}  // namespace dpointnet
