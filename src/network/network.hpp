// The assembled network on the host (neurons in normalized units, docs/model.md), ready to go to the device.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dpointnet/network/neuron_model.hpp"

namespace dpointnet {

struct Population {
  std::string name;
  bool is_virtual = false;
  std::int64_t size = 0;
  std::int64_t offset = -1;            // first global neuron index (recurrent populations)
  std::vector<std::int64_t> node_ids;  // row -> node_id
  std::vector<std::int64_t> node_type_ids;
  std::string nodes_file;
};

// All edges from one source population (a virtual population, or every recurrent population together for the
// recurrent projection) into recurrent neurons, in the order they were read.
struct Projection {
  std::string source_population;  // population name ("" for the recurrent projection)
  bool recurrent = false;
  std::int64_t n_sources = 0;        // recurrent: n_neurons; virtual: population size
  std::vector<std::int64_t> source;  // source index (global neuron index, or row in the virtual population)
  std::vector<std::int64_t> target;  // global neuron index
  std::vector<int> channel;
  std::vector<int> delay_steps;
  std::vector<double> weight_pA;  // initial weights as read: syn_weight * nsyns (the live weights are on the device)
  std::vector<double> nsyns;      // multiplicity (1 when absent), for export
  // provenance, for export: the SONATA edge population and row of every edge
  std::vector<int> edge_population;
  std::vector<std::int64_t> edge_row;
  std::size_t size() const { return source.size(); }
};

struct EdgePopulationInfo {
  std::string name, file, source_population, target_population;
  std::int64_t n_edges = 0;
};

struct Network {
  double dt = 1.0;
  Dynamics dynamics = Dynamics::Discrete;  // run.dynamics: which time step the simulator runs
  std::vector<Population> populations;
  std::int64_t n_neurons = 0;          // recurrent neurons over all recurrent populations
  int n_channels = 1;                  // R: the largest channel count of any neuron
  int max_delay = 1;                   // D, in steps, over all projections
  std::vector<DerivedNeuron> neurons;  // per global neuron
  std::vector<int> neuron_population;  // population index per global neuron
  std::vector<std::int64_t> neuron_node_id;
  std::vector<Projection> projections;  // [0] is the recurrent projection (possibly empty)
  std::vector<EdgePopulationInfo> edge_populations;

  // The one conversion between pA and normalized weights: w = w_pA / vs of the target (docs/model.md).
  double to_normalized(std::int64_t target, double w_pA) const;
  double to_pA(std::int64_t target, double w) const;
  // SONATA node_type_id of global neuron i.
  std::int64_t node_type_id(std::int64_t i) const;
  // A projection's initial weights, normalized, in read order.
  std::vector<double> initial_weights(int projection) const;
  // Derived sizes once neurons and projections are in: n_channels (R) and max_delay (D).
  void finalize();

  const Population* find_population(const std::string& name) const;
  int projection_of(const std::string& virtual_population) const;  // -1 if none
  std::size_t n_edges() const;
};

}  // namespace dpointnet
