// Predicted device memory of a `simulate` or `train` run, from the network and the config alone (before
// anything is allocated): the same sizes the simulator and the trainer allocate, item by item.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/train_config.hpp"

namespace dpointnet {

struct MemoryItem {
  std::string name;
  double bytes = 0;
};

struct MemoryPlan {
  std::vector<MemoryItem> items;
  double total() const;
  double per_edge = 0;           // bytes of device edge data per edge (all projections)
  double per_neuron_sample = 0;  // bytes per (neuron, sample) of everything that scales with N x B
};

// tc null: a `simulate` run (records v when the config has voltage reports). replicas: trainers in this
// process (mirrored mode), each with its own copy.
MemoryPlan plan_memory(const Network& net, const std::vector<PreparedInput>& inputs, const SimulationConfig& cfg,
                       const TrainConfig* tc, int replicas = 1);

// Bytes free for allocations on the default execution space's memory (host: MemAvailable; CUDA: free device
// memory); 0 when unknown.
double available_device_bytes();

// Throws InputError naming run.batch_size and train.checkpoint_interval when the plan does not fit.
void require_fits(const MemoryPlan& plan, const SimulationConfig& cfg, bool training);

// The plan as a table (one line per item, totals, per-edge and per-(neuron, sample) bytes).
std::string describe(const MemoryPlan& plan);

}  // namespace dpointnet
