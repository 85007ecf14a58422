// The `train` section of a simulation config (docs/training.md lists every key with its default).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

enum class SurrogateKind { Triangle, Gauss };
enum class LossKind {
  TargetFiringRate,
  VoltageRegularization,
  WeightRegularization,
  RateDistribution,
  EMDWeightRegularization,
  Synchronization,
  OrientationSelectivity
};
enum class RatePenalty { Squared, Huber, HuberQuantile };
// train.approach (docs/training-update.md, "Approaches"): how the stimulus conditions make optimizer steps.
enum class Approach { Accumulate, Series, SeriesAccumulate };
enum class OptimizerKind { Adam, ExpAdam };
const char* approach_name(Approach a);
const char* optimizer_name(OptimizerKind k);

struct LossSpec {
  LossKind kind = LossKind::TargetFiringRate;
  std::string name;  // "TargetFiringRate", ... (suffixed _1, _2 when a type repeats)
  double cost = 1.0;
  // TargetFiringRate
  double target = 0.0;                            // Hz (or spikes per step)
  std::map<std::int64_t, double> target_by_type;  // node_type_id -> target
  bool per_step = false;                          // unit "spikes_per_step" (also RateDistribution)
  // TargetFiringRate, RateDistribution: the steps [pre_steps, T - post_steps) of the BPTT window are read
  double pre_ms = 0, post_ms = 0;
  std::int64_t pre_steps = 0, post_steps = 0;
  // VoltageRegularization
  bool threshold_mode = false;  // mode "threshold" (else "range")
  // RateDistribution: neurons grouped by a node-types column (group_by, default node_type_id) or by V1 cell type
  // ("cell_type", from the node type's pop_name): the group value of every simulated node type, and the observed rates
  // (Hz) per group, sorted (with an extra 0 when append_zero); targets the observed quantiles at (k + 0.5) / n, or
  // sampled through the empirical quantile function with `seed`; penalty squared, Huber or Huber-quantile with delta;
  // the sum over groups of their means, or over all neurons divided by their number (normalize_neurons); optionally
  // only the neurons of the core (core_radius > 0, um), plus annulus_weight x the same loss on the others.
  // EMDWeightRegularization: groups of recurrent edges by the (source, target) values of group_by.
  std::string target_file;
  std::string group_by = "node_type_id";
  std::string rate_column = "rate_hz";
  std::map<std::int64_t, std::string> group_of_type;
  std::map<std::string, std::vector<double>> observed;
  RatePenalty penalty = RatePenalty::Squared;
  double delta = 1.0;
  bool append_zero = false, sampled_targets = false, normalize_neurons = false;
  std::uint32_t seed = 42;
  double core_radius = 0, annulus_weight = 0;
  std::vector<char> core;  // per recurrent neuron (core_radius > 0)
  // Synchronization: Fano targets per bin size, bin sizes (steps), the plan's samples, the pool (neurons,
  // ascending)
  std::vector<double> fano_targets;
  std::vector<int> fano_bins;
  std::int64_t n_samples = 50;
  std::vector<std::int32_t> pool;
  // OrientationSelectivity: per recurrent neuron its cell type's index (-1: none), tuning angle (deg); per type
  // index the name and the targets; directions per global sample (cycled; empty: the condition's grating)
  std::vector<int> type_index;
  std::vector<double> tuning_deg;
  std::vector<std::string> type_names;
  std::vector<double> target_osi, target_dsi;
  std::vector<double> directions;
  double ema_decay = 0.95;
  // Whether the loss is a mean of per-sample terms; RateDistribution is not (it pools the counts of all the
  // update's samples, reduced over replicas and micro-batches before it is evaluated).
  bool sample_separable = true;
};

struct TrainConfig {
  std::int64_t steps = 1;  // updates
  int checkpoint_interval = 25;
  int accumulate = 1;  // micro-batches of batch_size samples whose gradients make one update
  // Stimulus conditions: input overrides (input name -> spec), one set per condition; every update runs
  // accumulate micro-batches per condition (conditions in order), combined by `approach`.
  std::vector<nlohmann::json> conditions;
  std::vector<std::string> condition_names;             // "condition_0", ... unless named
  std::vector<std::vector<LossSpec>> condition_losses;  // per condition: its own losses (empty: `losses`)
  Approach approach = Approach::Accumulate;
  int n_conditions() const { return conditions.empty() ? 1 : static_cast<int>(conditions.size()); }
  // The loss specs of condition c (c < 0 or no conditions: `losses`).
  const std::vector<LossSpec>& losses_of(int c) const {
    return c >= 0 && c < static_cast<int>(condition_losses.size()) &&
                   !condition_losses[static_cast<std::size_t>(c)].empty()
               ? condition_losses[static_cast<std::size_t>(c)]
               : losses;
  }
  // Every condition uses `losses` (or there are none).
  bool single_loss_set() const {
    for (const auto& l : condition_losses)
      if (!l.empty()) return false;
    return true;
  }
  // Pooled losses pool every sample of the update (approach accumulate with one loss set), else each
  // condition's samples.
  bool shared_pool() const { return approach == Approach::Accumulate && single_loss_set(); }
  // Optimizer steps per update: one per condition for "series", else one.
  int steps_per_update() const { return approach == Approach::Series ? n_conditions() : 1; }
  int micro_batches() const { return accumulate * n_conditions(); }
  int condition_of(int micro_batch) const { return conditions.empty() ? -1 : micro_batch / accumulate; }
  double warmup_ms = 0;           // run from rest without gradient before the BPTT window
  std::int64_t warmup_steps = 0;  // warmup_ms / run.dt (a whole number of steps)
  // Each sample slot of the global batch (per micro-batch) starts the next update from the final state of this
  // update's sample in that slot; the first update starts from rest (after the warm-up).
  bool carry_state = false;
  // train.initial_state "from_input": every update of an epoch (train.steps_per_epoch updates; the whole run without
  // epochs) starts each sample slot from the end state of a run of run.tstop without gradient of these inputs (input
  // overrides, like a condition's) from rest, regenerated at each epoch's start and shared by every condition.
  bool from_input = false;
  nlohmann::json from_input_inputs = nlohmann::json::object();
  std::int64_t steps_per_epoch = 0;  // 0: one epoch
  SurrogateKind surrogate = SurrogateKind::Triangle;
  double dampening_factor = 0.1;  // gamma
  double sigma = 0.28;
  double voltage_gradient_dampening = 0.5;
  double recurrent_dampening_factor = 0.1;
  std::map<std::string, bool> trainable;  // "recurrent" or a virtual population name
  std::vector<LossSpec> losses;           // may be empty when every condition has its own
  OptimizerKind optimizer = OptimizerKind::Adam;
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-11;
  double clip_global_norm = 0.0;  // 0: off
  // run.precision "float16": train.optimizer.loss_scale (train/loss_scale.hpp; Keras' LossScaleOptimizer defaults)
  double loss_scale_initial = 32768.0;          // initial_scale: a power of two >= 1
  std::int64_t loss_scale_growth_steps = 2000;  // dynamic_growth_steps
  std::int64_t save_checkpoint_every = 0;       // 0: only at the end
  std::int64_t log_every = 1;
  // Host backends: the recurrent edges in this many target blocks for the spike adjoint (1: unblocked); 0
  // ("auto"): the fastest of a few counts, timed before the first update (device/target_blocks.hpp).
  int target_blocks = 0;
  static constexpr int kMaxTargetBlocks = 64;

  // Steps every sample runs: the warm-up, then the window of run.tstop (what the inputs must cover).
  std::int64_t total_steps(const SimulationConfig& cfg) const { return warmup_steps + cfg.n_steps; }

  // Parses and validates cfg.resolved["train"]; surfaces are checked against the network.
  static TrainConfig parse(const SimulationConfig& cfg, const Network& net);
};

}  // namespace dpointnet
