// The LGN cells of a virtual population, built from its SONATA node attributes (docs/visual-input.md).
#pragma once
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/lgn_filters.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

// One LgnCell per row of population `pop` (the nodes file's row order), from the attributes of its node group
// (h5) and node type (the config's node types CSV of the population's nodes entry): pop_name or model_template,
// x, y, spatial_size, kpeaks/weight/delay_dom_0/1, the *_non_dom_* ones, tuning_angle and sf_sep (composite
// classes), spont_fr (optional). A missing, non-finite or out-of-range attribute, or an unknown class, throws
// InputError naming the nodes file, the population, the attribute and the first bad node (its node_id).
std::vector<LgnCell> read_lgn_cells(const SimulationConfig& cfg, const Population& pop);

}  // namespace dpointnet
