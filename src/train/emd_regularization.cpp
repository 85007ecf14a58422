#include "dpointnet/train/emd_regularization.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
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
  }

  double value(const LossInputs&) const override { return 0.0; }
  bool recurrent_weight_loss() const override { return true; }

  double add_weight_gradient(const std::vector<double>& w, const std::vector<double>& w0,
                             std::vector<double>& grad) const override {
    sort_initial_weights(w0);
    const double G = static_cast<double>(groups_.size());
    double total = 0;
    for (std::size_t q = 0; q < groups_.size(); ++q) {
      const auto& g = groups_[q];  // in read order: tied weights keep it
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
  // The initial weights of each group, sorted: computed again only when w0 changes (a restored checkpoint).
  void sort_initial_weights(const std::vector<double>& w0) const {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the values' bits
    for (double x : w0) {
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      h = (h ^ bits) * 1099511628211ULL;
    }
    if (h == w0_hash_ && w0_sorted_.size() == groups_.size()) return;
    w0_hash_ = h;
    w0_sorted_.assign(groups_.size(), {});
    for (std::size_t q = 0; q < groups_.size(); ++q) {
      for (std::size_t e : groups_[q]) w0_sorted_[q].push_back(w0[e]);
      std::sort(w0_sorted_[q].begin(), w0_sorted_[q].end());
    }
  }
  std::vector<std::vector<std::size_t>> groups_;  // edges (recurrent read order) of each non-empty group
  mutable std::vector<std::vector<double>> w0_sorted_;
  mutable std::uint64_t w0_hash_ = 0;
  mutable std::vector<double> values_;  // one group's weights in read order
  mutable std::vector<std::uint32_t> order_;
  mutable ValueOrderScratch scratch_;
};

}  // namespace

std::unique_ptr<Loss> make_emd_regularization_loss(const LossSpec& s, const Network& net) {
  return std::make_unique<EmdRegularizationLoss>(s, net);
}

}  // namespace dpointnet
