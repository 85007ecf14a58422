#include "train/rate_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "io/csv_table.hpp"
#include "io/hdf5_file.hpp"
#include "train/losses.hpp"
#include "train/train_config.hpp"
#include "util/error.hpp"
#include "util/json_reader.hpp"
#include "util/log.hpp"

namespace dpointnet {

std::map<std::int64_t, std::vector<double>> read_observed_rates(const std::string& file, const std::string& config,
                                                                const std::string& section, const Network& net) {
  if (!std::filesystem::is_regular_file(file))
    throw InputError(config, section, "target_file", "'" + file + "' does not exist or is not a file");
  std::vector<std::int64_t> type;
  std::vector<double> rate;
  const bool h5 = file.size() > 3 && (file.compare(file.size() - 3, 3, ".h5") == 0 ||
                                      (file.size() > 5 && file.compare(file.size() - 5, 5, ".hdf5") == 0));
  if (h5) {
    auto f = h5::File::open_read(file);
    for (const char* ds : {"/node_type_id", "/rate_hz"})
      if (!f.is_dataset(ds)) throw InputError(file, "", ds, "dataset is missing (target_file of " + section + ")");
    type = f.read_int("/node_type_id");
    rate = f.read_double("/rate_hz");
    if (type.size() != rate.size())
      throw InputError(file, "", "rate_hz",
                       std::to_string(rate.size()) + " rates for " + std::to_string(type.size()) + " node_type_ids");
  } else {
    const CsvTable t = CsvTable::read(file);
    for (const char* c : {"node_type_id", "rate_hz"})
      if (!t.has_column(c))
        throw InputError(file, "", c, "column is missing (space-separated table: node_type_id rate_hz)");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      const std::string label = "row " + std::to_string(r + 1);
      const auto id = t.get_double(r, "node_type_id", label), hz = t.get_double(r, "rate_hz", label);
      if (!id || !hz) throw InputError(file, label, !id ? "node_type_id" : "rate_hz", "is empty");
      if (*id != std::floor(*id)) throw InputError(file, label, "node_type_id", "is not an integer");
      type.push_back(static_cast<std::int64_t>(*id));
      rate.push_back(*hz);
    }
  }
  std::map<std::int64_t, std::vector<double>> obs;
  for (std::size_t k = 0; k < type.size(); ++k) {
    if (!std::isfinite(rate[k]) || rate[k] < 0)
      throw InputError(file, "row " + std::to_string(k + 1), "rate_hz", "must be a finite rate >= 0 (Hz)");
    obs[type[k]].push_back(rate[k]);
  }
  for (auto& [id, v] : obs) std::sort(v.begin(), v.end());
  for (const auto& p : net.populations) {
    if (p.is_virtual) continue;
    for (std::int64_t id : p.node_type_ids)
      if (!obs.count(id))
        throw InputError(config, section, "target_file",
                         "'" + file + "' has no observed rates of node type " + std::to_string(id) + " (population '" +
                             p.name + "')");
  }
  return obs;
}

void parse_rate_distribution(const nlohmann::json& l, const std::string& config, const std::string& section,
                             const Network& net, LossSpec& s) {
  const JsonReader r(config, section);
  r.reject_unknown(l, {"type", "cost", "target_file", "penalty", "delta", "group_by"});
  const std::string group = r.string(l, "group_by", "node_type_id");
  if (group != "node_type_id")
    throw InputError(config, section, "group_by", "\"" + group + "\" is not supported (node_type_id)");
  s.target_file = r.required_string(l, "target_file");
  const std::string penalty = r.string(l, "penalty", "squared");
  if (penalty == "huber")
    s.huber = true;
  else if (penalty != "squared")
    throw InputError(config, section, "penalty", "\"" + penalty + "\" is not supported (squared or huber)");
  s.delta = r.number(l, "delta", 1.0, JsonReader::Range::Positive);
  s.observed = read_observed_rates(s.target_file, config, section, net);
  s.sample_separable = false;
}

namespace {

// cost x sum over node types of the mean over the type's n neurons of penalty(r_(k) - q_k): r_(k) the type's
// pooled rates in ascending order (stable: ties keep neuron order), q_k the observed distribution's quantile at
// (k + 0.5) / n (linear interpolation between order statistics, position p (m - 1) of m observations).
class RateDistributionLoss final : public Loss {
 public:
  RateDistributionLoss(const LossSpec& s, const Network& net) : Loss(s) {
    std::map<std::int64_t, std::vector<std::int64_t>> members;
    for (std::int64_t i = 0; i < net.n_neurons; ++i) members[net.node_type_id(i)].push_back(i);
    for (auto& [id, idx] : members) {
      const std::vector<double>& o = s.observed.at(id);
      Group g;
      g.neurons = idx;
      const double n = static_cast<double>(idx.size()), m = static_cast<double>(o.size());
      for (std::size_t k = 0; k < idx.size(); ++k) {
        const double pos = (static_cast<double>(k) + 0.5) / n * (m - 1);
        const auto lo = static_cast<std::size_t>(std::floor(pos));
        const std::size_t hi = std::min(lo + 1, o.size() - 1);
        g.quantile.push_back(o[lo] + (pos - static_cast<double>(lo)) * (o[hi] - o[lo]));
      }
      groups_.push_back(std::move(g));
    }
  }

  double pooled_value(const PooledCounts& pc) const override {
    double v = 0;
    for_sorted(pc, [&](const Group& g, std::size_t, std::int64_t, double d) {
      v += penalty(d) / static_cast<double>(g.neurons.size());
    });
    return spec_.cost * v;
  }

  void add_pooled_gradient(const PooledCounts& pc, int B, std::vector<double>& rate_grad) const override {
    const double per_count = hz_per_count(pc);
    for_sorted(pc, [&](const Group& g, std::size_t, std::int64_t i, double d) {
      const double gr = spec_.cost * dpenalty(d) / static_cast<double>(g.neurons.size()) * per_count;
      for (int b = 0; b < B; ++b) rate_grad[static_cast<std::size_t>(b * pc.N + i)] += gr;
    });
  }

  double value(const LossInputs&) const override { return 0.0; }

 private:
  struct Group {
    std::vector<std::int64_t> neurons;  // ascending global index
    std::vector<double> quantile;       // target of the k-th smallest rate
  };
  static double hz_per_count(const PooledCounts& pc) {
    return 1000.0 / (pc.samples * static_cast<double>(pc.T) * pc.dt);
  }
  // f(group, rank k, neuron, rate_(k) - q_k) for every neuron, in rank order within each group
  template <class F>
  void for_sorted(const PooledCounts& pc, F&& f) const {
    const double per = hz_per_count(pc);
    std::vector<std::size_t> order;
    for (const Group& g : groups_) {
      order.resize(g.neurons.size());
      std::iota(order.begin(), order.end(), std::size_t(0));
      auto rate = [&](std::size_t q) { return pc.counts[static_cast<std::size_t>(g.neurons[q])] * per; };
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rate(a) < rate(b); });
      for (std::size_t k = 0; k < order.size(); ++k) f(g, k, g.neurons[order[k]], rate(order[k]) - g.quantile[k]);
    }
  }
  double penalty(double d) const {
    if (!spec_.huber) return d * d;
    const double a = std::fabs(d);
    return a <= spec_.delta ? 0.5 * d * d : spec_.delta * (a - 0.5 * spec_.delta);
  }
  double dpenalty(double d) const {
    if (!spec_.huber) return 2.0 * d;
    return std::fabs(d) <= spec_.delta ? d : (d > 0 ? spec_.delta : -spec_.delta);
  }
  std::vector<Group> groups_;
};

}  // namespace

std::unique_ptr<Loss> make_rate_distribution_loss(const LossSpec& s, const Network& net) {
  return std::make_unique<RateDistributionLoss>(s, net);
}

}  // namespace dpointnet
