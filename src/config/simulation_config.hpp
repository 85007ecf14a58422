// The typed, validated view of a SONATA simulation config that dpointnet runs.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpointnet/config/dynamics.hpp"
#include "dpointnet/config/stimulus_spec.hpp"

namespace dpointnet {

struct NodesEntry {
  std::string nodes_file, node_types_file;
};
struct EdgesEntry {
  std::string edges_file, edge_types_file;
};

enum class InputKind { SpikeFile, Rates, Poisson, CurrentClamp, Lgn };

struct InputSpec {
  std::string name;  // key in the `inputs` section; also the RNG purpose (hashed)
  InputKind kind = InputKind::SpikeFile;
  std::string node_set;          // a virtual population
  std::string file;              // spike file (SpikeFile)
  double rate_hz = 0;            // Rates / Poisson: one rate for every node
  std::vector<double> rates_hz;  // Rates: optional per-node rates
  // CurrentClamp (BMTK IClamp): pulses of amp pA from delay ms for duration ms, on a simulated population
  std::vector<double> amp_pA, delay_ms, duration_ms;
  StimulusSpec stimulus;  // Lgn: what the screen shows
};

struct VoltageReport {
  std::string name, node_set, file;  // node_set: a population name or "all"
};

// run.distribution and run.global_batch_size as written; checked against the launcher by the parallel layer.
enum class DistributionMode { None, Mpi, Mirrored };
struct DistributionSpec {
  bool present = false;  // run.distribution given
  DistributionMode mode = DistributionMode::None;
  std::vector<std::string> devices;  // mirrored: one replica per entry
  int replicas_requested = 0;        // run.distribution.replicas (0: not given)
  long long global_batch_size = 0;   // run.global_batch_size (0: not given)
  double timeout_s = 1800;           // run.distribution.timeout_s: collective watchdog (PyTorch's default)
};

// run.precision. BFloat16 and Float16: float32 arithmetic, state, weights and gradients; the drive adjoint ring that
// the backward pass gathers stored in 16 bits (docs/training-update.md "Storage types"; Float16 with loss scaling);
// the forward pass is the float32 one.
enum class Precision { Float32, Float64, BFloat16, Float16 };
inline bool sixteen_bit(const Precision p) { return p == Precision::BFloat16 || p == Precision::Float16; }
const char* precision_name(Precision p);

struct SimulationConfig {
  std::string path;  // the top config file
  nlohmann::json resolved;

  double dt = 1.0;
  double tstop = 0.0;
  std::int64_t n_steps = 0;
  std::uint32_t seed = 0;
  int batch_size = 1;
  Precision precision = Precision::Float32;  // run.precision
  bool double_precision() const { return precision == Precision::Float64; }
  Dynamics dynamics = Dynamics::Discrete;  // run.dynamics: "discrete" (default) or "nest"
  DistributionSpec distribution;

  std::string point_neuron_models_dir, synaptic_models_dir;
  std::vector<NodesEntry> nodes;
  std::vector<EdgesEntry> edges;
  std::vector<InputSpec> inputs;

  std::string output_dir, spikes_file, log_file;
  bool overwrite_output = false;
  std::vector<VoltageReport> voltage_reports;
  std::vector<int> lgn_rates_samples;  // output.lgn_rates.samples: LGN inputs' rates of these samples
  std::string lgn_rates_file;          // <output_dir>/lgn_rates.h5 when asked for
  std::string input_spikes_file;       // output.input_spikes_file: the input populations' spikes (empty: none)

  // Loads and validates; every error names the config file and the key.
  static SimulationConfig load(const std::string& path);
  // This config with some inputs replaced (a stimulus condition, train.conditions[k]): `overrides` maps input
  // names of `inputs` to complete input specs on the same node_set; errors name `section` and the input.
  SimulationConfig with_input_overrides(const nlohmann::json& overrides, const std::string& section) const;
};

// The `inputs` section (or a condition's version of it): one InputSpec per enabled input; errors name the
// section `prefix` + input name.
std::vector<InputSpec> parse_input_specs(const std::string& path, const nlohmann::json& inputs,
                                         const std::string& prefix);

}  // namespace dpointnet
