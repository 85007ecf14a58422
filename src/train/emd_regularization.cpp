#include "dpointnet/train/emd_regularization.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "dpointnet/train/losses.hpp"
#include "dpointnet/train/observed_rates.hpp"

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
// cost / (G n_g) sign(sort(w_g)_i - sort(w0_g)_i) to the edge of rank i (stable sort: tied weights keep read
// order; sign(0) = 0).
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
    const double G = static_cast<double>(groups_.size());
    double total = 0;
    std::vector<std::size_t> a, b;
    for (const auto& g : groups_) {
      a = g;
      b = g;
      std::stable_sort(a.begin(), a.end(), [&](std::size_t x, std::size_t y) { return w[x] < w[y]; });
      std::stable_sort(b.begin(), b.end(), [&](std::size_t x, std::size_t y) { return w0[x] < w0[y]; });
      const double scale = spec_.cost / (G * static_cast<double>(g.size()));
      double sum = 0;
      for (std::size_t k = 0; k < g.size(); ++k) {
        const double d = w[a[k]] - w0[b[k]];
        sum += std::fabs(d);
        grad[a[k]] += scale * static_cast<double>((d > 0) - (d < 0));
      }
      total += sum / static_cast<double>(g.size());
    }
    return spec_.cost * total / G;
  }

 private:
  std::vector<std::vector<std::size_t>> groups_;  // edges (recurrent read order) of each non-empty group
};

}  // namespace

std::unique_ptr<Loss> make_emd_regularization_loss(const LossSpec& s, const Network& net) {
  return std::make_unique<EmdRegularizationLoss>(s, net);
}

}  // namespace dpointnet
