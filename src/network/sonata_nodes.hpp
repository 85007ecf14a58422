// SONATA nodes (h5 + node types CSV + dynamics_params JSON) into a Network's populations and neurons.
#pragma once
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/network/neuron_model.hpp"

namespace dpointnet {

// Appends every population of cfg.nodes; params_out gets the model parameters of each simulated neuron
// (global index order). Throws InputError naming the file, population/node type and field.
void read_sonata_nodes(const SimulationConfig& cfg, Network& net, std::vector<NeuronParams>& params_out);

}  // namespace dpointnet
