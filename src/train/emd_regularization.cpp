#include "dpointnet/train/emd_regularization.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dpointnet/train/losses.hpp"
#include "dpointnet/train/observed_rates.hpp"
#include "dpointnet/util/value_order.hpp"

namespace dpointnet {

fields::Table<LossSpec> emd_regularization_fields(const SimulationConfig& cfg, const Network& net) {
  using L = LossSpec;
  return {
      fields::string("group_by", &L::group_by, "cell_type"),
      fields::check<L>([&cfg, &net](const JsonReader& r, const nlohmann::json&, L& s) {
        if (s.group_by.empty()) r.fail("group_by", "must name a node-types column or be \"cell_type\"");
        if (net.projections.empty() || net.projections[0].size() == 0)
          r.fail("type", "EMDWeightRegularization needs recurrent edges; the network has none");
        s.group_of_type = node_type_groups(cfg, net, s.group_by, r.section(), false);
      }),
  };
}

namespace {

// cost x (1 / G) x sum over the G non-empty groups g of (1 / n_g) sum_i |sort(w_g)_i - sort(w0_g)_i|; gradient
// cost / (G n_g) sign(sort(w_g)_i - sort(w0_g)_i) to the edge of rank i (tied weights in read order; sign(0) = 0).
class EmdRegularizationLoss final : public Loss {
 public:
  EmdRegularizationLoss(const LossSpec& s, const Network& net) : Loss(s) {
    const Projection& p = net.projections[0];
    std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> by_pair;
    for (std::size_t e = 0; e < p.size(); ++e)
      by_pair[{s.group_of_type.at(net.node_type_id(p.source[e])), s.group_of_type.at(net.node_type_id(p.target[e]))}]
          .push_back(e);
    for (auto& [key, edges] : by_pair) groups_.push_back(std::move(edges));
    n_edges_ = p.size();
  }

  double value(const LossInputs&) const override { return 0.0; }
  bool recurrent_weight_loss() const override { return true; }

  // Each group's edges as positions in the bound order, still listed in read order (ties keep it).
  void bind_edge_order(const std::vector<std::int64_t>& read_index) override {
    if (read_index.size() != n_edges_)
      throw std::logic_error("EMDWeightRegularization: an edge order of " + std::to_string(read_index.size()) +
                             " positions for " + std::to_string(n_edges_) + " recurrent edges");
    std::vector<std::size_t> position(n_edges_);
    for (std::size_t k = 0; k < n_edges_; ++k) position[static_cast<std::size_t>(read_index[k])] = k;
    for (auto& g : groups_)
      for (auto& e : g) e = position[e];
  }

  void set_initial_weights(const std::vector<double>& w0) override {
    w0_sorted_.assign(groups_.size(), {});
    for (std::size_t q = 0; q < groups_.size(); ++q) {
      for (std::size_t e : groups_[q]) w0_sorted_[q].push_back(w0[e]);
      std::sort(w0_sorted_[q].begin(), w0_sorted_[q].end());
    }
  }

  double add_weight_gradient(const std::vector<double>& w, std::vector<double>& grad) const override {
    if (w0_sorted_.size() != groups_.size())
      throw std::logic_error("EMDWeightRegularization: the initial weights were not set");
    const double G = static_cast<double>(groups_.size());
    double total = 0;
    for (std::size_t q = 0; q < groups_.size(); ++q) {
      const auto& g = groups_[q];
      const auto& b = w0_sorted_[q];
      values_.resize(g.size());
      for (std::size_t k = 0; k < g.size(); ++k) values_[k] = w[g[k]];
      value_order(values_.data(), values_.size(), order_, scratch_);
      const double scale = spec_.cost / (G * static_cast<double>(g.size()));
      double sum = 0;
      for (std::size_t k = 0; k < g.size(); ++k) {
        const double d = values_[order_[k]] - b[k];
        sum += std::fabs(d);
        grad[g[order_[k]]] += scale * static_cast<double>((d > 0) - (d < 0));
      }
      total += sum / static_cast<double>(g.size());
    }
    return spec_.cost * total / G;
  }

 private:
  std::vector<std::vector<std::size_t>> groups_;  // each non-empty group's edges (positions), in read order
  std::size_t n_edges_ = 0;
  std::vector<std::vector<double>> w0_sorted_;  // each group's initial weights, sorted
  mutable std::vector<double> values_;          // one group's weights
  mutable std::vector<std::uint32_t> order_;
  mutable ValueOrderScratch scratch_;
};

}  // namespace

std::unique_ptr<Loss> make_emd_regularization_loss(const LossSpec& s, const Network& net) {
  return std::make_unique<EmdRegularizationLoss>(s, net);
}

}  // namespace dpointnet
