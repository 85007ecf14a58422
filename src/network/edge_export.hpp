// Trained weights as SONATA edge files with the input's layout, so the directory is a drop-in replacement.
#pragma once
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

// weights_pA[k]: the weights of projection k in read order, pA. Every edge file of the network is copied to
// `dir` with syn_weight = weight_pA / nsyns (so that syn_weight * nsyns is the trained weight), and the edge
// types tables go along.
void export_edges(const Network& net, const SimulationConfig& cfg, const std::vector<std::vector<double>>& weights_pA,
                  const std::string& dir);

}  // namespace dpointnet
