// The crowd orientation- and direction-selectivity loss of the V1 papers (docs/training.md,
// "OrientationSelectivity"): per cell type, the batch mean of the crowd OSI and DSI (train/crowd_selectivity.hpp)
// of the rates normalised by a per-neuron running mean, against the Neuropixels means per type.
#pragma once
#include <memory>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/util/json_fields.hpp"

namespace dpointnet {

class Loss;

// The keys of an OrientationSelectivity loss (target_file, core_radius, annulus_weight, directions, ema_decay),
// read into a LossSpec with the neurons' cell types and tuning angles and the targets per type.
fields::Table<LossSpec> orientation_selectivity_fields(const SimulationConfig& cfg, const Network& net);

std::unique_ptr<Loss> make_orientation_selectivity_loss(const LossSpec& s);

}  // namespace dpointnet
