// Checkpoint files (HDF5, written atomically; distinct from the BPTT segment snapshots in memory): every
// weight (trainable and frozen; normalized and pA), initial weights, Adam moments and step count, RNG key and
// sample counter, config and network hashes. Restore refuses a checkpoint of another network or config.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dpointnet {

struct SurfaceState {
  std::string name;
  bool trainable = false;
  std::vector<double> weight, initial_weight, adam_m, adam_v;  // normalized, read (file) order
  std::vector<double> weight_pA;                               // for people and other tools
};

struct CheckpointState {
  std::int64_t step = 0;         // Adam updates done
  std::int64_t next_sample = 0;  // global index of the next sample to draw
  std::uint32_t seed = 0;        // RNG key
  std::string config_hash, network_hash, precision;
  std::vector<SurfaceState> surfaces;
};

void write_checkpoint_file(const std::string& path, const CheckpointState& c);
CheckpointState read_checkpoint_file(const std::string& path);

}  // namespace dpointnet
