#include "dpointnet/inputs/input_schedule.hpp"

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>

#include "dpointnet/io/spike_file.hpp"
#include "dpointnet/network/nest_time.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/hash.hpp"
#include "dpointnet/util/log.hpp"

namespace dpointnet {

StampedSpikes stamp_spike_file(const std::string& file, const Population& pop, double dt, std::int64_t n_steps,
                               Dynamics dynamics) {
  SpikeTrains st = read_spike_file(file, pop.name);
  std::unordered_map<std::int64_t, std::int64_t> row;
  for (std::size_t i = 0; i < pop.node_ids.size(); ++i) row[pop.node_ids[i]] = static_cast<std::int64_t>(i);
  // (step, row) -> count
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> counts;
  StampedSpikes s;
  for (std::size_t i = 0; i < st.times_ms.size(); ++i) {
    const double t = st.times_ms[i];
    const std::string where = "population '" + st.population + "' spike " + std::to_string(i);
    if (!std::isfinite(t) || t <= 0)
      throw InputError(file, where, "timestamps", "spike time " + std::to_string(t) + " ms is not > 0");
    auto it = row.find(st.node_ids[i]);
    if (it == row.end())
      throw InputError(file, where, "node_ids",
                       "node id " + std::to_string(st.node_ids[i]) + " is not in population '" + pop.name + "'");
    // (compared as a double: a huge time is after the end)
    const double kd = dynamics == Dynamics::Nest ? nest_time::stamp_steps(t, dt) - 1 : std::ceil(t / dt - 1e-9) - 1;
    if (kd >= static_cast<double>(n_steps)) {
      ++s.n_after_end;
      continue;
    }
    const std::int64_t k = static_cast<std::int64_t>(kd);
    if (k >= n_steps) {
      ++s.n_after_end;
      continue;
    }
    ++counts[{k, it->second}];
    ++s.n_spikes;
  }
  s.step_offsets.assign(static_cast<std::size_t>(n_steps + 1), 0);
  for (auto& [key, c] : counts) {
    s.step_offsets[static_cast<std::size_t>(key.first + 1)]++;
    s.source.push_back(static_cast<std::int32_t>(key.second));
    s.count.push_back(static_cast<std::uint16_t>(std::min<std::uint32_t>(c, 65535)));
  }
  for (std::size_t k = 1; k < s.step_offsets.size(); ++k) s.step_offsets[k] += s.step_offsets[k - 1];
  return s;
}

std::vector<CurrentPulse> prepare_current_clamps(const SimulationConfig& cfg, const Network& net) {
  std::vector<CurrentPulse> out;
  for (const InputSpec& in : cfg.inputs) {
    if (in.kind != InputKind::CurrentClamp) continue;
    const std::string sec = "inputs." + in.name;
    std::vector<std::int64_t> neurons;
    if (in.node_set != "all") {
      const Population* pop = net.find_population(in.node_set);
      if (!pop || pop->is_virtual)
        throw InputError(cfg.path, sec, "node_set",
                         "'" + in.node_set + "' is not a simulated population (current clamps drive neurons)");
    }
    for (std::int64_t i = 0; i < net.n_neurons; ++i) {
      const auto& p = net.populations[static_cast<std::size_t>(net.neuron_population[static_cast<std::size_t>(i)])];
      if (in.node_set == "all" || p.name == in.node_set) neurons.push_back(i);
    }
    for (std::size_t q = 0; q < in.amp_pA.size(); ++q) {
      CurrentPulse pulse;
      pulse.name = in.name;
      pulse.neurons = neurons;
      for (std::int64_t i : neurons) pulse.amp.push_back(in.amp_pA[q] / net.neurons[static_cast<std::size_t>(i)].vs);
      pulse.first_step = static_cast<std::int64_t>(std::nearbyint(in.delay_ms[q] / cfg.dt));
      pulse.end_step = static_cast<std::int64_t>(std::nearbyint((in.delay_ms[q] + in.duration_ms[q]) / cfg.dt));
      out.push_back(std::move(pulse));
    }
  }
  return out;
}

std::vector<PreparedInput> prepare_inputs(const SimulationConfig& cfg, const Network& net, std::int64_t n_steps) {
  std::vector<PreparedInput> out;
  std::map<std::string, std::string> used;  // population -> input name
  for (const InputSpec& in : cfg.inputs) {
    const std::string sec = "inputs." + in.name;
    if (in.kind == InputKind::CurrentClamp) continue;
    const Population* pop = net.find_population(in.node_set);
    if (!pop) throw InputError(cfg.path, sec, "node_set", "'" + in.node_set + "' is not a population of the network");
    if (!pop->is_virtual)
      throw InputError(cfg.path, sec, "node_set",
                       "'" + in.node_set + "' is not a virtual population; inputs drive virtual populations only");
    if (used.count(in.node_set))
      throw InputError(cfg.path, sec, "node_set",
                       "population '" + in.node_set + "' already has the input '" + used[in.node_set] + "'");
    used[in.node_set] = in.name;
    PreparedInput p;
    p.name = in.name;
    p.kind = in.kind;
    p.purpose = fnv1a32(in.name);
    p.projection = net.projection_of(in.node_set);
    if (p.projection < 0) {
      log::get()->warn("{}: {}: population '{}' has no edges into the network; the input has no effect", cfg.path, sec,
                       in.node_set);
      continue;
    }
    const std::size_t n = static_cast<std::size_t>(pop->size);
    if (in.kind == InputKind::SpikeFile) {
      if (!std::filesystem::exists(in.file))
        throw InputError(cfg.path, sec, "input_file", "names a spike file that does not exist: " + in.file);
      p.spikes = stamp_spike_file(in.file, *pop, cfg.dt, n_steps, cfg.dynamics);
      if (p.spikes.n_after_end > 0)
        log::get()->info("{}: {} spikes after the end of the run ({} ms) are ignored", in.file, p.spikes.n_after_end,
                         cfg.tstop);
    } else if (in.kind == InputKind::Lgn) {
      p.stimulus = in.stimulus;
      p.lgn = prepare_lgn_input(cfg, in, *pop, n_steps, cfg.dt);
    } else {
      std::vector<double> rates = in.rates_hz;
      if (rates.empty()) rates.assign(n, in.rate_hz);
      if (rates.size() != n)
        throw InputError(cfg.path, sec, "rates",
                         "has " + std::to_string(rates.size()) + " entries but population '" + in.node_set + "' has " +
                             std::to_string(n) + " nodes");
      for (double r : rates) {
        const double lam = r * cfg.dt / 1000.0;
        if (in.kind == InputKind::Rates) {
          p.p.push_back(-std::expm1(-lam));
        } else {
          p.p.push_back(lam);
          p.p0.push_back(std::exp(-lam));
        }
      }
    }
    out.push_back(std::move(p));
  }
  for (std::size_t i = 1; i < net.projections.size(); ++i) {
    const std::string& vp = net.projections[i].source_population;
    if (!used.count(vp)) {
      log::get()->warn("virtual population '{}' has {} edges but no entry in 'inputs': it stays silent", vp,
                       net.projections[i].size());
      PreparedInput p;
      p.projection = static_cast<int>(i);
      p.silent = true;
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace dpointnet
