#include "dpointnet/network/network.hpp"

#include <algorithm>

#include "dpointnet/util/huge_pages.hpp"

namespace dpointnet {

namespace {
// w = w_pA / vs of the target (docs/model.md), for to_normalized and initial_weights
double normalized(double w_pA, double vs) { return w_pA / vs; }
}  // namespace

double Network::to_normalized(std::int64_t target, double w_pA) const {
  return normalized(w_pA, neurons[static_cast<std::size_t>(target)].vs);
}

double Network::to_pA(std::int64_t target, double w) const { return w * neurons[static_cast<std::size_t>(target)].vs; }

std::int64_t Network::node_type_id(std::int64_t i) const {
  const Population& pop = populations[static_cast<std::size_t>(neuron_population[static_cast<std::size_t>(i)])];
  return pop.node_type_ids[static_cast<std::size_t>(i - pop.offset)];
}

std::vector<double> Network::initial_weights(int projection) const {
  const Projection& p = projections[static_cast<std::size_t>(projection)];
  // vs of every neuron in one array (a random read per edge of 8 bytes, not of a DerivedNeuron)
  std::vector<double> vs(neurons.size());
  for (std::size_t i = 0; i < vs.size(); ++i) vs[i] = neurons[i].vs;
  std::vector<double> w;
  w.reserve(p.size());
  advise_huge_pages(w.data(), p.size() * sizeof(double));
  w.resize(p.size());
  for (std::size_t e = 0; e < w.size(); ++e)
    w[e] = normalized(p.weight_pA[e], vs[static_cast<std::size_t>(p.target[e])]);
  return w;
}

void Network::finalize() {
  n_channels = 1;
  for (const auto& d : neurons) n_channels = std::max(n_channels, static_cast<int>(d.syn_decay.size()));
  max_delay = 1;
  for (const auto& pr : projections)
    for (int d : pr.delay_steps) max_delay = std::max(max_delay, d);
}

const Population* Network::find_population(const std::string& name) const {
  for (const auto& p : populations)
    if (p.name == name) return &p;
  return nullptr;
}

int Network::projection_of(const std::string& vpop) const {
  for (std::size_t i = 0; i < projections.size(); ++i)
    if (!projections[i].recurrent && projections[i].source_population == vpop) return static_cast<int>(i);
  return -1;
}

std::size_t Network::n_edges() const {
  std::size_t n = 0;
  for (const auto& p : projections) n += p.size();
  return n;
}

}  // namespace dpointnet
