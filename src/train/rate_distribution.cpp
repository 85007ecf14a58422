#include "dpointnet/train/rate_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "dpointnet/network/v1_cell_types.hpp"
#include "dpointnet/train/losses.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_reader.hpp"

namespace dpointnet {

fields::Table<LossSpec> rate_distribution_fields(const SimulationConfig& cfg, const Network& net) {
  using L = LossSpec;
  using Range = JsonReader::Range;
  return {
      fields::string("group_by", &L::group_by, "node_type_id"),
      fields::check<L>([](const JsonReader& r, const nlohmann::json&, L& s) {
        if (s.group_by.empty()) r.fail("group_by", "must name a node-types column or be \"cell_type\"");
      }),
      fields::required_string("target_file", &L::target_file),
      fields::string("rate_column", &L::rate_column, "rate_hz"),
      fields::boolean("append_zero", &L::append_zero, false),
      fields::choice<L, bool>("targets", &L::sampled_targets, "quantiles", {{"quantiles", false}, {"sampled", true}}),
      fields::integer("seed", &L::seed, 42, 0, 4294967295LL, "must be < 2^32"),
      fields::choice<L, RatePenalty>("penalty", &L::penalty, "squared",
                                     {{"squared", RatePenalty::Squared},
                                      {"huber", RatePenalty::Huber},
                                      {"huber_quantile", RatePenalty::HuberQuantile}}),
      fields::number("delta", &L::delta, 1.0, Range::Positive),
      fields::choice<L, bool>("unit", &L::per_step, "Hz", {{"Hz", false}, {"spikes_per_step", true}}),
      fields::choice<L, bool>("normalize", &L::normalize_neurons, "per_group",
                              {{"per_group", false}, {"neurons", true}}),
      fields::number("core_radius", &L::core_radius, 0.0, Range::NonNegative),
      fields::number("annulus_weight", &L::annulus_weight, 0.0, Range::NonNegative),
      fields::check<L>([&cfg, &net](const JsonReader& r, const nlohmann::json& l, L& s) {
        if (l.contains("core_radius") && s.core_radius <= 0) r.fail("core_radius", "must be > 0 (um)");
        if (s.annulus_weight > 0 && s.core_radius <= 0)
          r.fail("annulus_weight", "needs core_radius (the annulus is the neurons outside the core)");
        if (l.contains("seed") && !s.sampled_targets) r.fail("seed", "is used only with targets \"sampled\"");
        s.group_of_type = node_type_groups(cfg, net, s.group_by, r.section());
        s.observed =
            read_observed_rates(s.target_file, cfg.path, r.section(), s.group_by, s.rate_column, s.group_of_type);
        if (s.core_radius <= 0) return;
        s.core = v1_core_mask(cfg, net, s.core_radius, "(" + r.section() + ".core_radius)");
        const auto in_core = std::count(s.core.begin(), s.core.end(), char(1));
        if (in_core == 0)
          r.fail("core_radius",
                 "no neuron lies within " + std::to_string(s.core_radius) + " um of the axis (x = z = 0)");
        if (s.annulus_weight > 0 && in_core == static_cast<std::ptrdiff_t>(s.core.size()))
          r.fail("annulus_weight", "every neuron lies in the core: the annulus is empty");
      }),
  };
}

namespace {

// cost x (the loss of the core, or of all neurons, + annulus_weight x the loss of the annulus); a part's loss: per
// group, penalty(r_(k) - q_k) of its k-th smallest pooled rate (stable sort: ties keep neuron order) and target
// q_k, summed over ranks and divided by the group's size (per_group, then summed over groups) or by the part's
// neurons (normalize neurons).
class RateDistributionLoss final : public Loss {
 public:
  RateDistributionLoss(const LossSpec& s, const Network& net) : Loss(s) {
    const double to_unit = s.per_step ? net.dt / 1000.0 : 1.0;
    for (int part = 0; part < (s.annulus_weight > 0 ? 2 : 1); ++part) {
      Part p;
      p.weight = part == 0 ? 1.0 : s.annulus_weight;
      const char want = part == 0 ? 1 : 0;
      std::map<std::string, std::vector<std::int64_t>> members;  // by group value, ascending neuron index
      for (std::int64_t i = 0; i < net.n_neurons; ++i)
        if (s.core.empty() || s.core[static_cast<std::size_t>(i)] == want)
          members[s.group_of_type.at(net.node_type_id(i))].push_back(i);
      for (auto& [id, idx] : members) {
        std::vector<double> o = s.observed.at(id);
        if (s.append_zero) o.insert(o.begin(), 0.0);
        for (double& x : o) x *= to_unit;
        Group g;
        g.neurons = idx;
        g.target = s.sampled_targets ? sampled_targets(o, idx.size(), s.seed) : quantile_targets(o, idx.size());
        p.neurons += static_cast<double>(idx.size());
        p.groups.push_back(std::move(g));
      }
      parts_.push_back(std::move(p));
    }
  }

  double pooled_value(const PooledCounts& pc) const override {
    double v = 0;
    for_sorted(pc, [&](const Part& p, const Group& g, std::size_t k, std::int64_t, double d) {
      v += p.weight * penalty(d, tau(g, k)) * norm(p, g);
    });
    return spec_.cost * v;
  }

  void add_pooled_gradient(const PooledCounts& pc, int B, std::vector<double>& rate_grad) const override {
    const double per_count = rate_per_count(pc);
    for_sorted(pc, [&](const Part& p, const Group& g, std::size_t k, std::int64_t i, double d) {
      const double gr = spec_.cost * p.weight * dpenalty(d, tau(g, k)) * norm(p, g) * per_count;
      for (int b = 0; b < B; ++b) rate_grad[static_cast<std::size_t>(b * pc.N + i)] += gr;
    });
  }

  double value(const LossInputs&) const override { return 0.0; }

 private:
  struct Group {
    std::vector<std::int64_t> neurons;  // ascending global index
    std::vector<double> target;         // target of the k-th smallest rate, in the loss's unit
  };
  struct Part {
    std::vector<Group> groups;
    double weight = 1, neurons = 0;
  };
  double norm(const Part& p, const Group& g) const {
    return 1.0 / (spec_.normalize_neurons ? p.neurons : static_cast<double>(g.neurons.size()));
  }
  static double tau(const Group& g, std::size_t k) {
    return static_cast<double>(k + 1) / static_cast<double>(g.neurons.size());
  }
  double rate_per_count(const PooledCounts& pc) const {
    const double per_step = 1.0 / (pc.samples * static_cast<double>(pc.T));
    return spec_.per_step ? per_step : per_step * 1000.0 / pc.dt;
  }
  // f(part, group, rank k, neuron, rate_(k) - q_k) for every neuron, in rank order within each group
  template <class F>
  void for_sorted(const PooledCounts& pc, F&& f) const {
    const double per = rate_per_count(pc);
    std::vector<std::size_t> order;
    for (const Part& p : parts_)
      for (const Group& g : p.groups) {
        order.resize(g.neurons.size());
        std::iota(order.begin(), order.end(), std::size_t(0));
        auto rate = [&](std::size_t q) { return pc.counts[static_cast<std::size_t>(g.neurons[q])] * per; };
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rate(a) < rate(b); });
        for (std::size_t k = 0; k < order.size(); ++k) f(p, g, k, g.neurons[order[k]], rate(order[k]) - g.target[k]);
      }
  }
  double penalty(double d, double t) const {
    const double a = std::fabs(d), dl = spec_.delta;
    switch (spec_.penalty) {
      case RatePenalty::Squared:
        return d * d;
      case RatePenalty::Huber:
        return a <= dl ? 0.5 * d * d : dl * (a - 0.5 * dl);
      case RatePenalty::HuberQuantile:
        return std::fabs(t - (d <= 0 ? 1.0 : 0.0)) * (a <= dl ? d * d / (2 * dl) : a - 0.5 * dl);
    }
    return 0;
  }
  double dpenalty(double d, double t) const {
    const double dl = spec_.delta, clipped = std::fabs(d) <= dl ? d : (d > 0 ? dl : -dl);
    switch (spec_.penalty) {
      case RatePenalty::Squared:
        return 2.0 * d;
      case RatePenalty::Huber:
        return clipped;
      case RatePenalty::HuberQuantile:
        return std::fabs(t - (d <= 0 ? 1.0 : 0.0)) * clipped / dl;
    }
    return 0;
  }
  std::vector<Part> parts_;
};

}  // namespace

std::unique_ptr<Loss> make_rate_distribution_loss(const LossSpec& s, const Network& net) {
  return std::make_unique<RateDistributionLoss>(s, net);
}

}  // namespace dpointnet
