// Harness: the SONATA nodes and edges readers (src/network/sonata_nodes.*, sonata_edges.*, build_network) at the
// level of dataset contents. The input is decoded by h5_builder into v1_nodes.h5, lgn_nodes.h5, v1_v1_edges.h5
// and lgn_v1_edges.h5 (groups, datasets of any dtype/shape/layout/values, node_population attributes, soft
// links); the types tables and dynamics_params are the vendored BMTK example's (tests/data/bmtk), so node and
// edge type ids 100..106 are known. First byte: run.dt. An accepted network is checked for consistency.
#include <cmath>
#include <cstdlib>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "fuzz_support.hpp"
#include "h5_builder.hpp"

using namespace dpointnet;
using namespace dpointnet::fuzz;

namespace {

const H5Tables& tables() {
  static const H5Tables t{
      {"v1_nodes.h5", "lgn_nodes.h5", "v1_v1_edges.h5", "lgn_v1_edges.h5"},
      {"/nodes", "/nodes/v1", "/nodes/lgn", "/nodes/v1/0", "/nodes/v1/0/dynamics_params", "/edges", "/edges/v1_to_v1",
       "/edges/lgn_to_v1", "/edges/v1_to_v1/0", "/edges/lgn_to_v1/0", "/", "/edges/v1_to_v1/1"},
      {"node_type_id", "node_id", "node_group_id", "node_group_index", "source_node_id", "target_node_id",
       "edge_type_id", "edge_group_id", "edge_group_index", "syn_weight", "delay", "nsyns", "n_syns_", "x", "0"},
      {"node_population", "units", "magic"},
      {"v1", "lgn", "", "bkg", "v1 "}};
  return t;
}

std::string bmtk_dir() {
  const char* env = std::getenv("DPOINTNET_TEST_DATA_DIR");
  return (env && *env ? std::string(env) : std::string(DPOINTNET_SOURCE_DIR) + "/tests/data") + "/bmtk";
}

void check_network(const Network& net) {
  const char* h = "sonata_network";
  const auto n = static_cast<std::size_t>(net.n_neurons);
  check(net.n_neurons > 0, h, "accepted a network without simulated neurons");
  check(net.neurons.size() == n && net.neuron_population.size() == n && net.neuron_node_id.size() == n, h,
        "per-neuron arrays differ from n_neurons");
  for (const auto& d : net.neurons) check(d.vs > 0 && std::isfinite(d.vs), h, "threshold gap vs not > 0");
  for (const auto& p : net.populations)
    check(p.node_ids.size() == static_cast<std::size_t>(p.size) && p.node_type_ids.size() == p.node_ids.size(), h,
          "population arrays differ from its size");
  check(!net.projections.empty() && net.projections[0].recurrent, h, "projection 0 is not the recurrent one");
  for (const auto& pr : net.projections) {
    const std::size_t e = pr.size();
    check(pr.target.size() == e && pr.channel.size() == e && pr.delay_steps.size() == e && pr.weight_pA.size() == e &&
              pr.nsyns.size() == e && pr.edge_row.size() == e,
          h, "projection arrays differ in length");
    for (std::size_t i = 0; i < e; ++i) {
      check(pr.source[i] >= 0 && pr.source[i] < pr.n_sources, h, "edge source out of range");
      check(pr.target[i] >= 0 && pr.target[i] < net.n_neurons, h, "edge target out of range");
      check(pr.channel[i] >= 0 && pr.channel[i] < net.n_channels, h, "edge channel out of range");
      check(pr.delay_steps[i] >= 1 && pr.delay_steps[i] <= net.max_delay && pr.delay_steps[i] <= 65535, h,
            "edge delay out of range");
      check(std::isfinite(pr.weight_pA[i]), h, "edge weight not finite");
    }
  }
}

}  // namespace

DPOINTNET_FUZZ_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clear_scratch();
  Bytes in(data, size);
  static const double kDt[] = {0.1, 1.0, 0.25, 1e-3};
  const double dt = kDt[in.pick(4)];
  const std::vector<std::string> h5 = build_h5_files(in, tables());
  const std::string net_dir = bmtk_dir() + "/point_450glifs/network/";
  SimulationConfig cfg;
  cfg.path = scratch_dir() + "/config.json";
  cfg.dt = dt;
  cfg.point_neuron_models_dir = bmtk_dir() + "/point_components/cell_models";
  cfg.synaptic_models_dir = bmtk_dir() + "/point_components/synaptic_models";
  cfg.nodes = {{h5[0], net_dir + "v1_node_types.csv"}, {h5[1], net_dir + "lgn_node_types.csv"}};
  cfg.edges = {{h5[2], net_dir + "v1_v1_edge_types.csv"}, {h5[3], net_dir + "lgn_v1_edge_types.csv"}};
  run_one("sonata_network", [&] { check_network(build_network(cfg)); });
  return 0;
}
