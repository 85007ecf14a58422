// What identifies a training run, so that a checkpoint file resumes only the run it came from.
#pragma once
#include <string>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

// run (dt, tstop, seed, batch, precision), inputs (spike files by content, not by path) and the train section
// without the keys that only say how long or how often (steps/epochs, checkpoint_interval, save/log
// intervals), nor where files are: those may change on resume. The batch counted is the job's
// (run.batch_size x `replicas`), so a checkpoint resumes on another number of replicas that keeps the global
// batch (elastic resume); for a serial run it is run.batch_size.
std::string config_hash(const SimulationConfig& cfg, int replicas = 1);
// Neuron constants and, per projection, sources, targets, channels, delays and initial weights (pA).
std::string network_hash(const Network& net);

}  // namespace dpointnet
