#include "dpointnet/train/rate_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "dpointnet/io/csv_table.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/train/losses.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_reader.hpp"
#include "dpointnet/util/log.hpp"

namespace dpointnet {

std::map<std::int64_t, std::string> node_type_groups(const SimulationConfig& cfg, const Network& net,
                                                     const std::string& column, const std::string& section) {
  std::map<std::int64_t, std::string> groups;
  if (column == "node_type_id") {
    for (const auto& p : net.populations)
      if (!p.is_virtual)
        for (std::int64_t id : p.node_type_ids) groups[id] = std::to_string(id);
    return groups;
  }
  for (const auto& p : net.populations) {
    if (p.is_virtual) continue;
    const NodesEntry* entry = nullptr;
    for (const auto& e : cfg.nodes)
      if (e.nodes_file == p.nodes_file) entry = &e;
    if (!entry) throw InputError(cfg.path, section, "group_by", "no node types table for population " + p.name);
    const CsvTable t = CsvTable::read(entry->node_types_file);
    if (!t.has_column(column))
      throw InputError(entry->node_types_file, "", column,
                       "column is missing (" + section + ".group_by names a column of the node types tables)");
    for (std::int64_t id : p.node_type_ids) {
      if (groups.count(id)) continue;
      const long row = t.find_row("node_type_id", id);
      const auto v = row < 0 ? std::nullopt : t.get(static_cast<std::size_t>(row), column);
      if (!v)
        throw InputError(entry->node_types_file, "node_type_id " + std::to_string(id), column,
                         "is empty (" + section + ".group_by needs a value for every simulated node type)");
      if (v->find('/') != std::string::npos || *v == "." || *v == "..")
        throw InputError(entry->node_types_file, "node_type_id " + std::to_string(id), column,
                         "\"" + *v + "\" cannot name an HDF5 dataset (rates.h5 /observed/<value>): no '/'");
      groups[id] = *v;
    }
  }
  return groups;
}

namespace {
bool is_hdf5(const std::string& file) {
  auto ends = [&](const char* x) {
    const std::string e(x);
    return file.size() > e.size() && file.compare(file.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".h5") || ends(".hdf5");
}

// Observed (group value, rate) pairs of an HDF5 target file.
void read_observed_hdf5(const std::string& file, const std::string& section, const std::string& group_by,
                        std::vector<std::string>& key, std::vector<double>& rate) {
  auto f = h5::File::open_read(file);
  if (f.is_group("/observed")) {  // one dataset per group value
    for (const auto& name : f.children("/observed")) {
      const auto v = f.read_double("/observed/" + name);
      key.insert(key.end(), v.size(), name);
      rate.insert(rate.end(), v.begin(), v.end());
    }
  } else {
    if (group_by != "node_type_id")
      throw InputError(
          file, "", "/observed",
          "group is missing: with group_by \"" + group_by + "\" the HDF5 target file holds /observed/<value> datasets");
    for (const char* ds : {"/node_type_id", "/rate_hz"})
      if (!f.is_dataset(ds)) throw InputError(file, "", ds, "dataset is missing (target_file of " + section + ")");
    const auto type = f.read_int("/node_type_id");
    rate = f.read_double("/rate_hz");
    if (type.size() != rate.size())
      throw InputError(file, "", "rate_hz",
                       std::to_string(rate.size()) + " rates for " + std::to_string(type.size()) + " node_type_ids");
    for (auto id : type) key.push_back(std::to_string(id));
  }
}

// Observed (group value, rate) pairs of a space-separated target table.
void read_observed_table(const std::string& file, const std::string& group_by, std::vector<std::string>& key,
                         std::vector<double>& rate) {
  const CsvTable t = CsvTable::read(file);
  for (const std::string& c : {group_by, std::string("rate_hz")})
    if (!t.has_column(c))
      throw InputError(file, "", c, "column is missing (space-separated table: " + group_by + " rate_hz)");
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const std::string label = "row " + std::to_string(r + 1);
    const auto hz = t.get_double(r, "rate_hz", label);
    if (!hz) throw InputError(file, label, "rate_hz", "is empty");
    if (group_by == "node_type_id") {
      const auto id = t.get_double(r, "node_type_id", label);
      if (!id) throw InputError(file, label, "node_type_id", "is empty");
      if (*id != std::floor(*id) || std::fabs(*id) > 9.0e18)
        throw InputError(file, label, "node_type_id", "is not an integer (of at most 64 bits)");
      key.push_back(std::to_string(static_cast<std::int64_t>(*id)));
    } else {
      const auto v = t.get(r, group_by);
      if (!v) throw InputError(file, label, group_by, "is empty");
      key.push_back(*v);
    }
    rate.push_back(*hz);
  }
}
}  // namespace

std::map<std::string, std::vector<double>> read_observed_rates(const std::string& file, const std::string& config,
                                                               const std::string& section, const std::string& group_by,
                                                               const std::map<std::int64_t, std::string>& groups) {
  if (!std::filesystem::is_regular_file(file))
    throw InputError(config, section, "target_file", "'" + file + "' does not exist or is not a file");
  std::vector<std::string> key;
  std::vector<double> rate;
  if (is_hdf5(file))
    read_observed_hdf5(file, section, group_by, key, rate);
  else
    read_observed_table(file, group_by, key, rate);
  std::map<std::string, std::vector<double>> obs;
  for (std::size_t k = 0; k < key.size(); ++k) {
    if (!std::isfinite(rate[k]) || rate[k] < 0)
      throw InputError(file, "row " + std::to_string(k + 1), "rate_hz", "must be a finite rate >= 0 (Hz)");
    obs[key[k]].push_back(rate[k]);
  }
  for (auto& [id, v] : obs) std::sort(v.begin(), v.end());
  for (const auto& [type, g] : groups)
    if (!obs.count(g))
      throw InputError(
          config, section, "target_file",
          "'" + file + "' has no observed rates of " +
              (group_by == "node_type_id" ? "node type " + g
                                          : group_by + " \"" + g + "\" (node type " + std::to_string(type) + ")"));
  return obs;
}

fields::Table<LossSpec> rate_distribution_fields(const SimulationConfig& cfg, const Network& net) {
  using L = LossSpec;
  return {
      fields::string("group_by", &L::group_by, "node_type_id"),
      fields::check<L>([](const JsonReader& r, const nlohmann::json&, L& s) {
        if (s.group_by.empty()) r.fail("group_by", "must name a node-types column");
      }),
      fields::required_string("target_file", &L::target_file),
      fields::choice<L, bool>("penalty", &L::huber, "squared", {{"squared", false}, {"huber", true}}),
      fields::number("delta", &L::delta, 1.0, JsonReader::Range::Positive),
      fields::check<L>([&cfg, &net](const JsonReader& r, const nlohmann::json&, L& s) {
        s.group_of_type = node_type_groups(cfg, net, s.group_by, r.section());
        s.observed = read_observed_rates(s.target_file, cfg.path, r.section(), s.group_by, s.group_of_type);
      }),
  };
}

namespace {

// cost x sum over groups (node types, or values of the group_by column) of the mean over the group's n neurons of
// penalty(r_(k) - q_k): r_(k) the type's pooled rates in ascending order (stable: ties keep neuron order), q_k the
// observed distribution's quantile at (k + 0.5) / n (linear interpolation between order statistics, position p (m - 1)
// of m observations).
class RateDistributionLoss final : public Loss {
 public:
  RateDistributionLoss(const LossSpec& s, const Network& net) : Loss(s) {
    std::map<std::string, std::vector<std::int64_t>> members;  // by group value (node types sharing it pool)
    for (std::int64_t i = 0; i < net.n_neurons; ++i) members[s.group_of_type.at(net.node_type_id(i))].push_back(i);
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
