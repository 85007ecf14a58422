// Checkpoint files (HDF5, written atomically; distinct from the BPTT segment snapshots in memory): every
// weight (trainable and frozen; normalized and pA), initial weights, Adam moments, step and optimizer step counts,
// optimizer type and approach, RNG key and sample counter, config and network hashes; with train.carry_state the
// carried state of every sample slot. Restore refuses a checkpoint of another network or config.
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

// train.carry_state: the start state of every sample slot of the global batch (slot = the sample's position in
// an update's samples, SampleSchedule::slot), one record of record_size values each (Trainer's carried-record
// layout), in ring-slot order as of step end_step. Empty when the run carries no state.
struct CarriedState {
  std::int64_t slots = 0, record_size = 0, end_step = 0;
  std::vector<double> records;  // [slots][record_size]
  bool empty() const { return records.empty(); }
};

struct CheckpointState {
  std::int64_t step = 0;  // updates done (train.steps counts them)
  // train.optimizer.type, train.approach, and the optimizer's steps done (its bias-correction t; "series": one per
  // condition and update). A resume must keep the optimizer and the approach.
  std::string optimizer = "adam", approach = "accumulate";
  std::int64_t optimizer_iterations = -1;  // -1: not set (written as step)
  std::int64_t next_sample = 0;            // global index of the next sample to draw
  std::uint32_t seed = 0;                  // RNG key
  std::string config_hash, network_hash, precision;
  // the job that wrote it: samples per update, replicas and samples per replica and micro-batch (0: not stored,
  // format 1). A resume may change replicas and batch_size, not global_batch (elastic resume).
  std::int64_t global_batch = 0, replicas = 0, batch_size = 0;
  std::vector<SurfaceState> surfaces;
  CarriedState carried;
  // the losses' states kept from update to update (OrientationSelectivity's running mean), concatenated in
  // (condition, loss) order; empty when no loss keeps one
  std::vector<double> loss_state;
  // float16 runs: the dynamic loss scale (train/loss_scale.hpp): scale, good_steps, skipped_run, skipped_total;
  // empty otherwise
  std::vector<double> loss_scale;
};

void write_checkpoint_file(const std::string& path, const CheckpointState& c);
CheckpointState read_checkpoint_file(const std::string& path);

}  // namespace dpointnet
