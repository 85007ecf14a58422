#include "train/train_config.hpp"

#include <cmath>

#include "inputs/input_schedule.hpp"
#include "train/rate_distribution.hpp"
#include "util/error.hpp"
#include "util/json_reader.hpp"

using nlohmann::json;

namespace dpointnet {

TrainConfig TrainConfig::parse(const SimulationConfig& cfg, const Network& net) {
  TrainConfig t;
  const std::string& f = cfg.path;
  if (!cfg.resolved.contains("train") || !cfg.resolved["train"].is_object())
    throw InputError(f, "", "train", "section is required for training");
  const json& j = cfg.resolved["train"];
  JsonReader(f, "train")
      .reject_unknown(
          j, {"steps", "epochs", "steps_per_epoch", "checkpoint_interval", "surrogate", "voltage_gradient_dampening",
              "recurrent_dampening_factor", "trainable", "losses", "optimizer", "save_checkpoint_every", "log_every",
              "accumulate", "warmup_ms", "conditions", "carry_state", "target_blocks"});
  const JsonReader r(f, "train");
  if (j.contains("epochs") || j.contains("steps_per_epoch")) {
    if (j.contains("steps")) throw InputError(f, "train", "steps", "give either steps or epochs x steps_per_epoch");
    const std::int64_t e = r.integer(j, "epochs", 1, 1), per = r.integer(j, "steps_per_epoch", 1, 1);
    if (e > (std::int64_t(1) << 40) / per)
      throw InputError(f, "train", "epochs", "epochs x steps_per_epoch is more than 2^40 updates");
    t.steps = e * per;
  } else {
    t.steps = r.integer(j, "steps", 1, 1);
  }
  t.checkpoint_interval = static_cast<int>(r.integer(j, "checkpoint_interval", 25, 1));
  t.save_checkpoint_every = r.integer(j, "save_checkpoint_every", 0, 0);
  t.accumulate = static_cast<int>(r.integer(j, "accumulate", 1, 1));
  if (r.integer(j, "accumulate", 1, 1) > (1 << 20)) throw InputError(f, "train", "accumulate", "must be <= 2^20");
  t.warmup_ms = r.number(j, "warmup_ms", 0.0, JsonReader::Range::NonNegative);
  {
    const double steps = t.warmup_ms / cfg.dt;
    if (steps > 2147483647.0) throw InputError(f, "train", "warmup_ms", "is longer than 2^31 steps of run.dt");
    if (std::fabs(steps - std::round(steps)) > 1e-9 * std::max(1.0, steps))
      throw InputError(f, "train", "warmup_ms",
                       "must be a whole number of run.dt steps (dt = " + std::to_string(cfg.dt) + " ms)");
    t.warmup_steps = static_cast<std::int64_t>(std::llround(steps));
  }
  t.carry_state = r.boolean(j, "carry_state", false);
  if (j.contains("target_blocks")) {
    const json& tb = j["target_blocks"];
    if (tb.is_string()) {
      if (tb.get<std::string>() != "auto")
        throw InputError(f, "train", "target_blocks",
                         "must be \"auto\" or an integer 1.." + std::to_string(kMaxTargetBlocks) + ", got \"" +
                             tb.get<std::string>() + "\"");
    } else {
      const std::int64_t n = r.integer(j, "target_blocks", 0, 1);
      if (n > kMaxTargetBlocks)
        throw InputError(
            f, "train", "target_blocks",
            "must be \"auto\" or an integer 1.." + std::to_string(kMaxTargetBlocks) + ", got " + std::to_string(n));
      t.target_blocks = static_cast<int>(n);
    }
  }
  if (j.contains("conditions")) {
    const json& cs = j["conditions"];
    if (!cs.is_array() || cs.empty())
      throw InputError(f, "train", "conditions", "must be a non-empty list of input overrides (input name: spec)");
    for (std::size_t k = 0; k < cs.size(); ++k) {
      const std::string sec = "train.conditions[" + std::to_string(k) + "]";
      const SimulationConfig cc = cfg.with_input_overrides(cs[k], sec);
      for (const auto& in : cc.inputs)
        if (in.kind == InputKind::CurrentClamp && cs[k].contains(in.name))
          throw InputError(f, sec, in.name, "is a current clamp: clamps are the same in every condition");
      t.conditions.push_back(cs[k]);
    }
  }
  t.log_every = r.integer(j, "log_every", 1, 1);
  t.voltage_gradient_dampening = r.number(j, "voltage_gradient_dampening", 0.5, JsonReader::Range::NonNegative);
  t.recurrent_dampening_factor = r.number(j, "recurrent_dampening_factor", 0.1, JsonReader::Range::NonNegative);
  if (t.voltage_gradient_dampening > 1) throw InputError(f, "train", "voltage_gradient_dampening", "must be in [0, 1]");
  if (j.contains("surrogate")) {
    const json& s = j["surrogate"];
    const JsonReader rs(f, "train.surrogate");
    JsonReader(f, "train.surrogate").reject_unknown(s, {"type", "dampening_factor", "sigma"});
    const std::string type = rs.string(s, "type", "triangle");
    if (type == "gauss")
      t.surrogate = SurrogateKind::Gauss;
    else if (type != "triangle")
      throw InputError(f, "train.surrogate", "type", "\"" + type + "\" is not supported (triangle or gauss)");
    t.dampening_factor = rs.number(s, "dampening_factor", 0.1, JsonReader::Range::NonNegative);
    t.sigma = rs.number(s, "sigma", 0.28, JsonReader::Range::Positive);
  }
  // trainable surfaces
  t.trainable["recurrent"] = true;
  for (const auto& p : net.populations)
    if (p.is_virtual && net.projection_of(p.name) >= 0) t.trainable[p.name] = false;
  if (j.contains("trainable")) {
    if (!j["trainable"].is_object()) throw InputError(f, "train", "trainable", "must be an object of surface: bool");
    for (auto& [k, v] : j["trainable"].items()) {
      if (!t.trainable.count(k))
        throw InputError(f, "train.trainable", k,
                         "is not a surface of this network (\"recurrent\" or a virtual population with edges)");
      if (!v.is_boolean()) throw InputError(f, "train.trainable", k, "must be true or false");
      t.trainable[k] = v.get<bool>();
    }
  }
  // losses
  if (!j.contains("losses") || !j["losses"].is_array() || j["losses"].empty())
    throw InputError(f, "train", "losses", "must be a non-empty list");
  std::map<std::string, int> seen;
  for (std::size_t q = 0; q < j["losses"].size(); ++q) {
    const json& l = j["losses"][q];
    const std::string sec = "train.losses[" + std::to_string(q) + "]";
    const JsonReader rl(f, sec);
    if (!l.is_object()) throw InputError(f, sec, "", "must be an object");
    LossSpec s;
    const std::string type = rl.string(l, "type", "");
    if (type == "TargetFiringRate") {
      s.kind = LossKind::TargetFiringRate;
      JsonReader(f, sec).reject_unknown(l, {"type", "cost", "target", "target_by_node_type", "unit"});
      s.target = rl.number(l, "target", 0.0, JsonReader::Range::NonNegative);
      const std::string unit = rl.string(l, "unit", "Hz");
      if (unit == "spikes_per_step")
        s.per_step = true;
      else if (unit != "Hz")
        throw InputError(f, sec, "unit", "\"" + unit + "\" is not supported (Hz or spikes_per_step)");
      if (l.contains("target_by_node_type")) {
        for (auto& [k, v] : l["target_by_node_type"].items()) {
          if (!v.is_number() || v.get<double>() < 0)
            throw InputError(f, sec, "target_by_node_type", "target of node type " + k + " must be a number >= 0");
          try {
            s.target_by_type[std::stoll(k)] = v.get<double>();
          } catch (const std::exception&) {
            throw InputError(f, sec, "target_by_node_type", "key '" + k + "' is not a node_type_id");
          }
        }
        if (!l.contains("target")) {  // then every simulated node type needs its own target
          for (const auto& p : net.populations) {
            if (p.is_virtual) continue;
            for (std::int64_t type : p.node_type_ids)
              if (!s.target_by_type.count(type))
                throw InputError(f, sec, "target_by_node_type",
                                 "has no target for node type " + std::to_string(type) + " of population '" + p.name +
                                     "' (list every type, or give \"target\" as the default)");
          }
        }
      } else if (!l.contains("target")) {
        throw InputError(f, sec, "target", "is required (or target_by_node_type)");
      }
    } else if (type == "VoltageRegularization") {
      s.kind = LossKind::VoltageRegularization;
      JsonReader(f, sec).reject_unknown(l, {"type", "cost", "mode"});
      const std::string mode = rl.string(l, "mode", "range");
      if (mode == "threshold")
        s.threshold_mode = true;
      else if (mode != "range")
        throw InputError(f, sec, "mode", "\"" + mode + "\" is not supported (range or threshold)");
    } else if (type == "WeightRegularization") {
      s.kind = LossKind::WeightRegularization;
      JsonReader(f, sec).reject_unknown(l, {"type", "cost"});
    } else if (type == "RateDistribution") {
      s.kind = LossKind::RateDistribution;
      parse_rate_distribution(l, cfg, sec, net, s);
    } else {
      throw InputError(f, sec, "type",
                       "\"" + type +
                           "\" is not a known loss (TargetFiringRate, VoltageRegularization, "
                           "WeightRegularization, RateDistribution)");
    }
    if (!l.contains("cost")) throw InputError(f, sec, "cost", "is required");
    s.cost = rl.number(l, "cost", 1.0, JsonReader::Range::NonNegative);
    const int n = ++seen[type];
    s.name = n == 1 ? type : type + "_" + std::to_string(n);
    if (n == 2) {  // rename the first one too, so names are unambiguous
      for (auto& o : t.losses)
        if (o.name == type) o.name = type + "_1";
    }
    t.losses.push_back(s);
  }
  if (j.contains("optimizer")) {
    const json& o = j["optimizer"];
    const JsonReader ro(f, "train.optimizer");
    JsonReader(f, "train.optimizer").reject_unknown(o, {"type", "lr", "beta1", "beta2", "epsilon", "clip_global_norm"});
    const std::string type = ro.string(o, "type", "adam");
    if (type != "adam") throw InputError(f, "train.optimizer", "type", "\"" + type + "\" is not supported (adam)");
    t.lr = ro.number(o, "lr", 1e-3, JsonReader::Range::Positive);
    t.beta1 = ro.number(o, "beta1", 0.9, JsonReader::Range::NonNegative);
    t.beta2 = ro.number(o, "beta2", 0.999, JsonReader::Range::NonNegative);
    t.epsilon = ro.number(o, "epsilon", 1e-11, JsonReader::Range::Positive);
    t.clip_global_norm = ro.number(o, "clip_global_norm", 0.0, JsonReader::Range::NonNegative);
    if (t.beta1 >= 1) throw InputError(f, "train.optimizer", "beta1", "must be < 1");
    if (t.beta2 >= 1) throw InputError(f, "train.optimizer", "beta2", "must be < 1");
  }
  return t;
}

}  // namespace dpointnet
