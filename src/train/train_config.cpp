#include "dpointnet/train/train_config.hpp"

#include <cmath>

#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/train/loss_specs.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_fields.hpp"
#include "dpointnet/util/json_reader.hpp"

using nlohmann::json;

namespace dpointnet {

namespace {

using Range = JsonReader::Range;
using Row = fields::Field<TrainConfig>;

// "steps", or "epochs" x "steps_per_epoch".
void read_steps(const JsonReader& r, const json& j, TrainConfig& t) {
  if (j.contains("epochs") || j.contains("steps_per_epoch")) {
    if (j.contains("steps")) r.fail("steps", "give either steps or epochs x steps_per_epoch");
    const std::int64_t e = r.integer(j, "epochs", 1, 1), per = r.integer(j, "steps_per_epoch", 1, 1);
    if (e > (std::int64_t(1) << 40) / per) r.fail("epochs", "epochs x steps_per_epoch is more than 2^40 updates");
    t.steps = e * per;
    t.steps_per_epoch = per;
  } else {
    t.steps = r.integer(j, "steps", 1, 1);
  }
}

// "warmup_ms": a whole number of run.dt steps.
Row warmup(double dt) {
  return fields::custom<TrainConfig>({"warmup_ms"}, [dt](const JsonReader& r, const json& j, TrainConfig& t) {
    t.warmup_ms = r.number(j, "warmup_ms", 0.0, Range::NonNegative);
    const double steps = t.warmup_ms / dt;
    if (steps > 2147483647.0) r.fail("warmup_ms", "is longer than 2^31 steps of run.dt");
    if (std::fabs(steps - std::round(steps)) > 1e-9 * std::max(1.0, steps))
      r.fail("warmup_ms", "must be a whole number of run.dt steps (dt = " + std::to_string(dt) + " ms)");
    t.warmup_steps = static_cast<std::int64_t>(std::llround(steps));
  });
}

// "initial_state": {"type": "from_input", "inputs": {input overrides}} (docs/training.md, "Initial state").
Row initial_state(const SimulationConfig& cfg) {
  return fields::custom<TrainConfig>({"initial_state"}, [&cfg](const JsonReader& r, const json& j, TrainConfig& t) {
    if (!j.contains("initial_state")) return;
    const json& o = j["initial_state"];
    const JsonReader ri = r.at("train.initial_state");
    if (!o.is_object()) r.fail("initial_state", "must be an object {\"type\": \"from_input\", \"inputs\": {...}}");
    for (auto& [key, v] : o.items())
      if (key != "type" && key != "inputs") ri.fail(key, "is not a key of initial_state (type, inputs)");
    const std::string type = ri.string(o, "type", "");
    if (type != "from_input") ri.fail("type", "must be \"from_input\", got \"" + type + "\"");
    if (t.carry_state) r.fail("initial_state", "and carry_state both set the start states: give one of them");
    if (t.warmup_steps > 0) r.fail("initial_state", "replaces warmup_ms (the run from the inputs is the warm-up)");
    t.from_input = true;
    if (o.contains("inputs")) {
      if (!o["inputs"].is_object()) ri.fail("inputs", "must be an object of input name: spec");
      const SimulationConfig cc = cfg.with_input_overrides(o["inputs"], "train.initial_state.inputs");
      for (const auto& in : cc.inputs)
        if (in.kind == InputKind::CurrentClamp && o["inputs"].contains(in.name))
          throw InputError(r.file(), "train.initial_state.inputs", in.name,
                           "is a current clamp: clamps are the same in every run");
      t.from_input_inputs = o["inputs"];
    }
  });
}

// "target_blocks": "auto" or an integer 1..kMaxTargetBlocks.
void read_target_blocks(const JsonReader& r, const json& j, TrainConfig& t) {
  if (!j.contains("target_blocks")) return;
  const json& tb = j["target_blocks"];
  const std::string expected = "must be \"auto\" or an integer 1.." + std::to_string(TrainConfig::kMaxTargetBlocks);
  if (tb.is_string()) {
    if (tb.get<std::string>() != "auto") r.fail("target_blocks", expected + ", got \"" + tb.get<std::string>() + "\"");
    return;
  }
  const std::int64_t n = r.integer(j, "target_blocks", 0, 1);
  if (n > TrainConfig::kMaxTargetBlocks) r.fail("target_blocks", expected + ", got " + std::to_string(n));
  t.target_blocks = static_cast<int>(n);
}

// "trainable": surface name -> bool, over the defaults (recurrent true, every input surface false).
Row trainable(const Network& net) {
  return fields::custom<TrainConfig>({"trainable"}, [&net](const JsonReader& r, const json& j, TrainConfig& t) {
    t.trainable["recurrent"] = true;
    for (const auto& p : net.populations)
      if (p.is_virtual && net.projection_of(p.name) >= 0) t.trainable[p.name] = false;
    if (!j.contains("trainable")) return;
    if (!j["trainable"].is_object()) r.fail("trainable", "must be an object of surface: bool");
    const JsonReader rt = r.at("train.trainable");
    for (auto& [k, v] : j["trainable"].items()) {
      if (!t.trainable.count(k))
        rt.fail(k, "is not a surface of this network (\"recurrent\" or a virtual population with edges)");
      if (!v.is_boolean()) rt.fail(k, "must be true or false");
      t.trainable[k] = v.get<bool>();
    }
  });
}

// "losses": required unless every condition has its own.
Row losses(const SimulationConfig& cfg, const Network& net) {
  return fields::custom<TrainConfig>({"losses"}, [&cfg, &net](const JsonReader& r, const json& j, TrainConfig& t) {
    bool all_own = !t.condition_losses.empty();
    for (const auto& l : t.condition_losses) all_own = all_own && !l.empty();
    if (!j.contains("losses") && all_own) return;
    if (!j.contains("losses") || !j["losses"].is_array() || j["losses"].empty())
      r.fail("losses", "must be a non-empty list (optional only when every condition has its own \"losses\")");
    t.losses = parse_losses(r, "train.losses", j["losses"], cfg, net);
  });
}

// A condition object ({"name", "inputs", "losses"}) rather than input overrides: it has one of these keys.
bool condition_object(const json& c) {
  return c.is_object() && (c.contains("name") || c.contains("inputs") || c.contains("losses"));
}

// "conditions": input overrides, or condition objects, checked against the config's inputs.
Row conditions(const SimulationConfig& cfg, const Network& net) {
  return fields::custom<TrainConfig>({"conditions"}, [&cfg, &net](const JsonReader& r, const json& j, TrainConfig& t) {
    if (!j.contains("conditions")) return;
    const json& cs = j["conditions"];
    if (!cs.is_array() || cs.empty())
      r.fail("conditions", "must be a non-empty list of input overrides (input name: spec) or condition objects");
    for (std::size_t k = 0; k < cs.size(); ++k) {
      const std::string sec = "train.conditions[" + std::to_string(k) + "]";
      const JsonReader rc = r.at(sec);
      json overrides = cs[k];
      std::string name = "condition_" + std::to_string(k);
      std::vector<LossSpec> own;
      if (condition_object(cs[k])) {
        for (auto& [key, v] : cs[k].items())
          if (key != "name" && key != "inputs" && key != "losses")
            rc.fail(key, "is not a key of a condition object (name, inputs, losses)");
        name = rc.string(cs[k], "name", name);
        if (name.empty() || name.find_first_of("/,") != std::string::npos)
          rc.fail("name", "must be non-empty, without '/' or ','");
        for (const auto& other : t.condition_names)
          if (other == name) rc.fail("name", "\"" + name + "\" names two conditions");
        overrides = cs[k].contains("inputs") ? cs[k]["inputs"] : json::object();
        if (!overrides.is_object()) rc.fail("inputs", "must be an object of input name: spec");
        if (cs[k].contains("losses")) {
          if (!cs[k]["losses"].is_array() || cs[k]["losses"].empty()) rc.fail("losses", "must be a non-empty list");
          own = parse_losses(rc, sec + ".losses", cs[k]["losses"], cfg, net);
        }
      }
      const std::string isec = condition_object(cs[k]) ? sec + ".inputs" : sec;
      // (a condition object without inputs runs the base inputs)
      const SimulationConfig cc =
          overrides.empty() && condition_object(cs[k]) ? cfg : cfg.with_input_overrides(overrides, isec);
      for (const auto& in : cc.inputs)
        if (in.kind == InputKind::CurrentClamp && overrides.contains(in.name))
          throw InputError(r.file(), isec, in.name, "is a current clamp: clamps are the same in every condition");
      t.conditions.push_back(overrides);
      t.condition_names.push_back(name);
      t.condition_losses.push_back(std::move(own));
    }
  });
}

// train.optimizer.loss_scale: float16 runs only.
fields::Table<TrainConfig> loss_scale_keys() {
  using T = TrainConfig;
  return {fields::custom<T>({"initial_scale"},
                            [](const JsonReader& r, const json& o, T& t) {
                              const double s = r.number(o, "initial_scale", 32768.0, Range::Positive);
                              int e = 0;
                              if (s < 1 || s > 0x1p60 || std::frexp(s, &e) != 0.5)
                                r.fail("initial_scale",
                                       "must be a power of two in 1 .. 2^60 (scaling and unscaling are then exact)");
                              t.loss_scale_initial = s;
                            }),
          fields::integer("dynamic_growth_steps", &T::loss_scale_growth_steps, 2000, 1)};
}

fields::Table<TrainConfig> optimizer_keys(const SimulationConfig& cfg) {
  using T = TrainConfig;
  return {fields::choice<T, OptimizerKind>("type", &T::optimizer, "adam",
                                           {{"adam", OptimizerKind::Adam}, {"exp_adam", OptimizerKind::ExpAdam}}),
          fields::number("lr", &T::lr, 1e-3, Range::Positive),
          fields::number("beta1", &T::beta1, 0.9, Range::NonNegative),
          fields::number("beta2", &T::beta2, 0.999, Range::NonNegative),
          fields::number("epsilon", &T::epsilon, 1e-11, Range::Positive),
          fields::number("clip_global_norm", &T::clip_global_norm, 0.0, Range::NonNegative),
          fields::object<T>("loss_scale", "train.optimizer.loss_scale", loss_scale_keys()),
          fields::check<T>([&cfg](const JsonReader& r, const json& o, T&) {
            if (o.contains("loss_scale") && cfg.precision != Precision::Float16)
              r.fail("loss_scale", std::string("applies to run.precision \"float16\" only, not \"") +
                                       precision_name(cfg.precision) + "\"");
          }),
          fields::check<T>([](const JsonReader& r, const json&, T& t) {
            if (t.beta1 >= 1) r.fail("beta1", "must be < 1");
            if (t.beta2 >= 1) r.fail("beta2", "must be < 1");
          })};
}

// OrientationSelectivity without `directions` reads each sample's direction of a grating of its condition: an LGN
// input showing a drifting or static grating.
Row osi_gratings(const SimulationConfig& cfg) {
  return fields::check<TrainConfig>([&cfg](const JsonReader& r, const json&, TrainConfig& t) {
    for (int c = 0; c < t.n_conditions(); ++c) {
      const auto& losses = t.losses_of(t.conditions.empty() ? -1 : c);
      for (std::size_t q = 0; q < losses.size(); ++q) {
        if (losses[q].kind != LossKind::OrientationSelectivity || !losses[q].directions.empty()) continue;
        const SimulationConfig cc =
            t.conditions.empty() || t.conditions[static_cast<std::size_t>(c)].empty()
                ? cfg
                : cfg.with_input_overrides(t.conditions[static_cast<std::size_t>(c)], "train.conditions");
        bool grating = false;
        for (const auto& in : cc.inputs)
          grating = grating || (in.kind == InputKind::Lgn && (in.stimulus.type == StimulusType::DriftingGrating ||
                                                              in.stimulus.type == StimulusType::StaticGrating));
        const bool own = !t.condition_losses.empty() && !t.condition_losses[static_cast<std::size_t>(c)].empty();
        const std::string sec = own ? "train.conditions[" + std::to_string(c) + "].losses[" + std::to_string(q) + "]"
                                    : "train.losses[" + std::to_string(q) + "]";
        if (!grating)
          r.at(sec).fail("type",
                         "OrientationSelectivity needs a drifting or static grating (an \"lgn\" input) in " +
                             (t.conditions.empty() ? std::string("the inputs")
                                                   : "condition " + t.condition_names[static_cast<std::size_t>(c)]) +
                             ", or \"directions\"");
      }
    }
  });
}

// The keys of `train`, in the order they are read (docs/training.md).
fields::Table<TrainConfig> train_keys(const SimulationConfig& cfg, const Network& net) {
  using T = TrainConfig;
  return {
      fields::custom<T>({"steps", "epochs", "steps_per_epoch"}, read_steps),
      fields::integer("checkpoint_interval", &T::checkpoint_interval, 25, 1),
      fields::integer("save_checkpoint_every", &T::save_checkpoint_every, 0, 0),
      fields::integer("accumulate", &T::accumulate, 1, 1, 1 << 20, "must be <= 2^20"),
      warmup(cfg.dt),
      fields::boolean("carry_state", &T::carry_state, false),
      initial_state(cfg),
      fields::custom<T>({"target_blocks"}, read_target_blocks),
      conditions(cfg, net),
      fields::choice<T, Approach>("approach", &T::approach, "accumulate",
                                  {{"accumulate", Approach::Accumulate},
                                   {"series", Approach::Series},
                                   {"series_accumulate", Approach::SeriesAccumulate}}),
      fields::integer("log_every", &T::log_every, 1, 1),
      fields::number("voltage_gradient_dampening", &T::voltage_gradient_dampening, 0.5, Range::NonNegative),
      fields::number("recurrent_dampening_factor", &T::recurrent_dampening_factor, 0.1, Range::NonNegative),
      fields::check<T>([](const JsonReader& r, const json&, T& t) {
        if (t.voltage_gradient_dampening > 1) r.fail("voltage_gradient_dampening", "must be in [0, 1]");
      }),
      fields::object<T>(
          "surrogate", "train.surrogate",
          {fields::choice<T, SurrogateKind>("type", &T::surrogate, "triangle",
                                            {{"triangle", SurrogateKind::Triangle}, {"gauss", SurrogateKind::Gauss}}),
           fields::number("dampening_factor", &T::dampening_factor, 0.1, Range::NonNegative),
           fields::number("sigma", &T::sigma, 0.28, Range::Positive)}),
      trainable(net),
      losses(cfg, net),
      osi_gratings(cfg),
      fields::check<T>([](const JsonReader& r, const json&, T& t) {
        for (std::size_t q = 0; q < t.losses.size(); ++q)
          if (t.losses[q].kind == LossKind::EMDWeightRegularization && !t.trainable.at("recurrent"))
            r.at("train.losses[" + std::to_string(q) + "]")
                .fail("type",
                      "EMDWeightRegularization regularizes the recurrent weights, which are not trainable "
                      "(train.trainable.recurrent is false)");
      }),
      fields::object<T>("optimizer", "train.optimizer", optimizer_keys(cfg)),
  };
}

}  // namespace

const char* approach_name(Approach a) {
  return a == Approach::Series ? "series" : a == Approach::SeriesAccumulate ? "series_accumulate" : "accumulate";
}

const char* optimizer_name(OptimizerKind k) { return k == OptimizerKind::ExpAdam ? "exp_adam" : "adam"; }

TrainConfig TrainConfig::parse(const SimulationConfig& cfg, const Network& net) {
  if (!cfg.resolved.contains("train") || !cfg.resolved["train"].is_object())
    throw InputError(cfg.path, "", "train", "section is required for training");
  TrainConfig t;
  fields::read(JsonReader(cfg.path, "train"), cfg.resolved["train"], train_keys(cfg, net), t);
  return t;
}

}  // namespace dpointnet
