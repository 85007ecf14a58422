#include "network/network_builder.hpp"

#include "network/sonata_edges.hpp"
#include "network/sonata_nodes.hpp"
#include "util/error.hpp"

namespace dpointnet {

Network build_network(const SimulationConfig& cfg) {
  Network net;
  net.dt = cfg.dt;
  net.dynamics = cfg.dynamics;
  std::vector<NeuronParams> params;
  read_sonata_nodes(cfg, net, params);
  if (net.n_neurons == 0) throw InputError(cfg.path, "networks", "nodes", "no simulated (non-virtual) neurons");
  read_sonata_edges(cfg, net, params);
  net.finalize();
  return net;
}

}  // namespace dpointnet
