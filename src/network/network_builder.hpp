// Reads the SONATA circuit named by a simulation config into a Network (docs/simulation.md).
#pragma once
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

// Throws InputError naming the file, population/node type/edge type and field for every malformed input.
Network build_network(const SimulationConfig& cfg);

}  // namespace dpointnet
