// The entries of `train.losses` (and of a condition's `losses`): each loss type's keys, read into LossSpecs
// (docs/training.md, "Losses").
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/util/json_reader.hpp"

namespace dpointnet {

// A list of loss entries (`section`: "train.losses", ...), named by type, suffixed _1, _2, ... when a type repeats.
// Errors name the config file, the entry and the key.
std::vector<LossSpec> parse_losses(const JsonReader& r, const std::string& section, const nlohmann::json& list,
                                   const SimulationConfig& cfg, const Network& net);

}  // namespace dpointnet
