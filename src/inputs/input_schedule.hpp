// Host-side preparation of the inputs of virtual populations (docs/model.md section 6).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/lgn_input.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

// A spike file stamped onto the step grid, per step a list of (row, count). The spike at t ms acts like a neuron
// spike emitted in step k: discrete k = ceil(t/dt - 1e-9) - 1; nest k = fromstamp(t) - 1, the first grid point
// at or after t after truncation to microsecond tics (NEST's spike_generator with precise_times, as BMTK sets it).
struct StampedSpikes {
  std::vector<std::int64_t> step_offsets;  // [n_steps + 1]
  std::vector<std::int32_t> source;        // row in the virtual population
  std::vector<std::uint16_t> count;
  std::int64_t n_spikes = 0, n_after_end = 0;
};

StampedSpikes stamp_spike_file(const std::string& file, const Population& pop, double dt, std::int64_t n_steps,
                               Dynamics dynamics = Dynamics::Discrete);

// One prepared input per virtual population that has edges.
struct PreparedInput {
  std::string name;  // the config's input name ("" when the population has no input)
  InputKind kind = InputKind::SpikeFile;
  int projection = -1;        // index into Network::projections
  std::uint32_t purpose = 0;  // fnv1a32(name)
  StampedSpikes spikes;
  std::vector<double> p;   // Bernoulli p, or Poisson lam, per source row
  std::vector<double> p0;  // Poisson exp(-lam)
  bool silent = false;     // no input configured for this population
  StimulusSpec stimulus;   // Lgn: the stimulus and the cells' tables (and movie)
  LgnInput lgn;
};

// Validates the config's inputs against the network (node_set must be a virtual population with edges, at
// most one input per population) and prepares them. Virtual populations with edges but no input are silent
// and reported with a warning.
// A current pulse (normalized by each target's threshold gap) active in steps [first_step, end_step).
struct CurrentPulse {
  std::string name;
  std::vector<std::int64_t> neurons;  // global indices
  std::vector<double> amp;            // amp_pA / vs per neuron
  std::int64_t first_step = 0, end_step = 0;
};

// Current clamps of the config (input_type current_clamp) on simulated populations ("all" for every one).
// A pulse with delay t0 and duration L covers steps round(t0/dt) .. round((t0+L)/dt) - 1.
std::vector<CurrentPulse> prepare_current_clamps(const SimulationConfig& cfg, const Network& net);

std::vector<PreparedInput> prepare_inputs(const SimulationConfig& cfg, const Network& net, std::int64_t n_steps);

}  // namespace dpointnet
