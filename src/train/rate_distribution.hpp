// The rate-distribution loss (docs/training.md, "Losses"): per group of neurons (a node type, the node types
// sharing a node-types column value, or a V1 cell type), the sorted firing rates of the group's neurons, pooled
// over every sample of the update (global batch, all micro-batches) and the loss's window, against targets drawn
// from an observed rate distribution read from a file. It is not a mean of per-sample terms, so the trainer pools
// the spike counts (and the parallel layer reduces them over replicas) before it is evaluated.
#pragma once
#include <memory>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/observed_rates.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/util/json_fields.hpp"

namespace dpointnet {

class Loss;

// The keys of a RateDistribution loss (group_by, target_file, rate_column, append_zero, targets, seed, penalty,
// delta, unit, normalize, core_radius, annulus_weight), read into a LossSpec with the observed rates of every
// group (and the core mask).
fields::Table<LossSpec> rate_distribution_fields(const SimulationConfig& cfg, const Network& net);

std::unique_ptr<Loss> make_rate_distribution_loss(const LossSpec& s, const Network& net);

}  // namespace dpointnet
