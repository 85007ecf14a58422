#include "dpointnet/network/network_builder.hpp"

#include "dpointnet/network/sonata_edges.hpp"
#include "dpointnet/network/sonata_nodes.hpp"
#include "dpointnet/util/error.hpp"

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
