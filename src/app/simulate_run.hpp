// `dpointnet simulate`: forward run of a SONATA simulation config, writing BMTK-layout outputs.
#pragma once
#include <string>

namespace dpointnet {

struct SimulateCommand {
  std::string config;
  bool overwrite = false;  // also allowed by output.overwrite_output_dir
  int batch_size = 0;      // 0: run.batch_size
  std::string precision;   // "" : run.precision
  bool progress = true;
};

struct SimulateSummary {
  std::int64_t n_spikes = 0;
  double mean_rate_hz = 0;
  double wall_s = 0;  // the simulation loop (run)
  // wall time of reading the network and inputs, building the simulator (device set-up, reset), writing outputs
  double load_s = 0, build_s = 0, write_s = 0;
  int window = 1;  // steps per min-delay window
};

// Everything is validated (config, network, inputs, outputs that would be overwritten) before the first output
// is written. Throws InputError for bad input.
SimulateSummary run_simulate(const SimulateCommand& cmd);

// Output file of sample b in a batch of B: the file itself when B == 1, else <stem>_sample<b><ext>.
std::string per_sample_path(const std::string& file, int b, int batch);

}  // namespace dpointnet
