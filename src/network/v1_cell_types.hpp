// The V1 papers' cell types (docs/training.md, "Cell types and core masks"): a recurrent neuron's SONATA pop_name
// mapped onto "L<layer> <class>" (17 types, or 19 with the L5 excitatory subclasses kept), and the core mask of
// the neurons within a radius of the column's axis (node attributes x and z, in um).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

// pop_name -> cell type: the 2nd character is the layer ("2" means 2/3, followed by "3"); layer 1 is "L1 Htr3a";
// the rest is the class: Pvalb -> PV, Sst -> SST, Vip or Htr3a -> VIP, anything else excitatory ("Exc", or with
// merge_l5 false in layer 5 the class itself, e.g. e5ET -> "L5 ET"). nullopt when the name has no layer digit
// 1-6 where expected (not a V1 population name).
std::optional<std::string> v1_cell_type(const std::string& pop_name, bool merge_l5);

// The 17 merged types in the papers' order (L1 Htr3a, L2/3 Exc, PV, SST, VIP, ..., L6 VIP).
const std::vector<std::string>& v1_cell_type_order();

// The cell type of every recurrent neuron (global index order), from its node type's pop_name. A missing pop_name
// or one that is not a V1 population name is an InputError naming the node types file, the node and `purpose`.
std::vector<std::string> v1_cell_types(const SimulationConfig& cfg, const Network& net, bool merge_l5,
                                       const std::string& purpose);

// Per recurrent neuron: whether sqrt(x^2 + z^2) < radius (um), x and z its node attributes. A missing or
// non-finite coordinate is an InputError naming the nodes file, the node and `purpose`.
std::vector<char> v1_core_mask(const SimulationConfig& cfg, const Network& net, double radius,
                               const std::string& purpose);

}  // namespace dpointnet
