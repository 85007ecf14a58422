// The earth mover's distance weight regularizer (docs/training.md, "Losses"): the recurrent edges grouped by the
// (source, target) pair of their neurons' groups (V1 cell types with the L5 subclasses kept, or a node-types
// column), and per group the 1-D Wasserstein-1 distance between the current and the initial weights.
#pragma once
#include <memory>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/util/json_fields.hpp"

namespace dpointnet {

class Loss;

// The keys of an EMDWeightRegularization loss (group_by, default "cell_type"), read into a LossSpec with the
// group of every simulated node type.
fields::Table<LossSpec> emd_regularization_fields(const SimulationConfig& cfg, const Network& net);

std::unique_ptr<Loss> make_emd_regularization_loss(const LossSpec& s, const Network& net);

}  // namespace dpointnet
