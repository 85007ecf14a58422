// SONATA edges (h5 + edge types CSV + synaptic dynamics_params) into a Network's projections.
#pragma once
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/network/neuron_model.hpp"

namespace dpointnet {

// Builds projection 0 (recurrent) and one projection per virtual source population. params: per simulated
// neuron (receptor ports are checked against the target's model). Throws InputError naming file and field.
void read_sonata_edges(const SimulationConfig& cfg, Network& net, const std::vector<NeuronParams>& params);

}  // namespace dpointnet
