#include "dpointnet/train/loss_specs.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "dpointnet/train/emd_regularization.hpp"
#include "dpointnet/train/orientation_selectivity.hpp"
#include "dpointnet/train/rate_distribution.hpp"
#include "dpointnet/train/synchronization.hpp"
#include "dpointnet/util/json_fields.hpp"

using nlohmann::json;

namespace dpointnet {

namespace {

using Range = JsonReader::Range;

// TargetFiringRate's "target_by_node_type" (node_type_id -> target); without "target", every simulated node type
// needs its own.
fields::Field<LossSpec> target_by_node_type(const Network& net) {
  return fields::custom<LossSpec>({"target_by_node_type"}, [&net](const JsonReader& r, const json& l, LossSpec& s) {
    if (!l.contains("target_by_node_type")) {
      if (!l.contains("target")) r.fail("target", "is required (or target_by_node_type)");
      return;
    }
    for (auto& [k, v] : l["target_by_node_type"].items()) {
      if (!v.is_number() || v.get<double>() < 0)
        r.fail("target_by_node_type", "target of node type " + k + " must be a number >= 0");
      try {
        s.target_by_type[std::stoll(k)] = v.get<double>();
      } catch (const std::exception&) {
        r.fail("target_by_node_type", "key '" + k + "' is not a node_type_id");
      }
    }
    if (l.contains("target")) return;
    for (const auto& p : net.populations) {
      if (p.is_virtual) continue;
      for (std::int64_t type : p.node_type_ids)
        if (!s.target_by_type.count(type))
          r.fail("target_by_node_type", "has no target for node type " + std::to_string(type) + " of population '" +
                                            p.name + "' (list every type, or give \"target\" as the default)");
    }
  });
}

// "pre_ms", "post_ms": whole numbers of run.dt steps trimmed from the start and the end of the BPTT window.
fields::Field<LossSpec> window(const SimulationConfig& cfg) {
  return fields::custom<LossSpec>({"pre_ms", "post_ms"}, [&cfg](const JsonReader& r, const json& l, LossSpec& s) {
    auto steps = [&](const char* key, double& ms, std::int64_t& out) {
      ms = r.number(l, key, 0.0, Range::NonNegative);
      const double x = ms / cfg.dt;
      if (x > 2147483647.0 || std::fabs(x - std::round(x)) > 1e-9 * std::max(1.0, x))
        r.fail(key, "must be a whole number of run.dt steps (dt = " + std::to_string(cfg.dt) + " ms)");
      out = static_cast<std::int64_t>(std::llround(x));
    };
    steps("pre_ms", s.pre_ms, s.pre_steps);
    steps("post_ms", s.post_ms, s.post_steps);
    if (s.pre_steps + s.post_steps >= cfg.n_steps)
      r.fail(l.contains("post_ms") ? "post_ms" : "pre_ms",
             "pre_ms + post_ms leaves no step of the window (run.tstop is " + std::to_string(cfg.n_steps) +
                 " steps of " + std::to_string(cfg.dt) + " ms)");
  });
}

// The loss types: name, kind, whether a mean of per-sample terms, and the keys besides "type" and "cost".
struct LossType {
  std::string name;
  LossKind kind;
  bool sample_separable;
  fields::Table<LossSpec> keys;
};

fields::Table<LossSpec> with(fields::Table<LossSpec> t, fields::Field<LossSpec> f) {
  t.push_back(std::move(f));
  return t;
}
fields::Table<LossSpec> after(fields::Field<LossSpec> f, fields::Table<LossSpec> t) {
  t.insert(t.begin(), std::move(f));
  return t;
}

std::vector<LossType> loss_types(const SimulationConfig& cfg, const Network& net) {
  using L = LossSpec;
  return {
      {"TargetFiringRate",
       LossKind::TargetFiringRate,
       true,
       {fields::number("target", &L::target, 0.0, Range::NonNegative),
        fields::choice<L, bool>("unit", &L::per_step, "Hz", {{"Hz", false}, {"spikes_per_step", true}}),
        target_by_node_type(net), window(cfg)}},
      {"VoltageRegularization",
       LossKind::VoltageRegularization,
       true,
       {fields::choice<L, bool>("mode", &L::threshold_mode, "range", {{"range", false}, {"threshold", true}})}},
      {"WeightRegularization", LossKind::WeightRegularization, true, {}},
      {"RateDistribution", LossKind::RateDistribution, false, with(rate_distribution_fields(cfg, net), window(cfg))},
      {"EMDWeightRegularization", LossKind::EMDWeightRegularization, true, emd_regularization_fields(cfg, net)},
      {"Synchronization", LossKind::Synchronization, false, after(window(cfg), synchronization_fields(cfg, net))},
      {"OrientationSelectivity", LossKind::OrientationSelectivity, false,
       with(orientation_selectivity_fields(cfg, net), window(cfg))},
  };
}

// One entry of "losses": its type's keys, then the cost (required).
LossSpec parse_loss(const JsonReader& r, const json& l, const std::vector<LossType>& types) {
  if (!l.is_object()) r.fail("", "must be an object");
  const std::string type = r.string(l, "type", "");
  const LossType* lt = fields::find_kind(types, type);
  if (!lt)
    r.fail("type",
           "\"" + type + "\" is not a known loss (" + fields::join(fields::kind_names(types), ", ", ", ") + ")");
  LossSpec s;
  s.name = lt->name;
  s.kind = lt->kind;
  s.sample_separable = lt->sample_separable;
  fields::Table<LossSpec> table{fields::custom<LossSpec>({"type"}, [](const JsonReader&, const json&, LossSpec&) {})};
  table.insert(table.end(), lt->keys.begin(), lt->keys.end());
  table.push_back(fields::custom<LossSpec>({"cost"}, [](const JsonReader& rl, const json& o, LossSpec& spec) {
    if (!o.contains("cost")) rl.fail("cost", "is required");
    spec.cost = rl.number(o, "cost", 1.0, Range::NonNegative);
  }));
  fields::read(r, l, table, s);
  return s;
}

// A list of loss entries (`section`: "train.losses", ...), named by type, suffixed _1, _2, ... when a type repeats.
}  // namespace

std::vector<LossSpec> parse_losses(const JsonReader& r, const std::string& section, const json& list,
                                   const SimulationConfig& cfg, const Network& net) {
  const std::vector<LossType> types = loss_types(cfg, net);
  std::vector<LossSpec> out;
  std::map<std::string, int> seen;
  for (std::size_t q = 0; q < list.size(); ++q) {
    LossSpec s = parse_loss(r.at(section + "[" + std::to_string(q) + "]"), list[q], types);
    const std::string type = s.name;
    const int n = ++seen[type];
    s.name = n == 1 ? type : type + "_" + std::to_string(n);
    if (n == 2) {  // rename the first one too, so names are unambiguous
      for (auto& o : out)
        if (o.name == type) o.name = type + "_1";
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace dpointnet
