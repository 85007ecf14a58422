// The `inputs` section: one table row per input_type (its InputKind and its keys).
#include <cmath>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/util/json_fields.hpp"
#include "dpointnet/util/json_reader.hpp"

using nlohmann::json;

namespace dpointnet {

namespace {

using Row = fields::Field<InputSpec>;

// "rates": per-node rates (Hz), only for input_type rates, which needs "rate" or "rates".
Row rates_list(bool allowed) {
  return fields::custom<InputSpec>({"rates"}, [allowed](const JsonReader& r, const json& in, InputSpec& s) {
    if (in.contains("rates")) {
      if (!allowed || !in["rates"].is_array())
        r.fail("rates", "must be a list of rates (Hz), only for input_type rates");
      for (const json& v : in["rates"]) {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
          r.fail("rates", "every rate must be a finite number >= 0");
        s.rates_hz.push_back(v.get<double>());
      }
    } else if (allowed && !in.contains("rate")) {
      r.fail("rate", "is required (Hz) for input_type rates (or give \"rates\")");
    }
  });
}

Row rate_not_negative() {
  return fields::check<InputSpec>([](const JsonReader& r, const json&, InputSpec& s) {
    if (s.rate_hz < 0) r.fail("rate", "must be >= 0");
  });
}

// A current clamp's "amp", "delay" or "duration": a number or a list of finite numbers (required).
Row clamp_list(const std::string& key, std::vector<double> InputSpec::*m) {
  return fields::custom<InputSpec>({key}, [key, m](const JsonReader& r, const json& in, InputSpec& s) {
    std::vector<double>& v = s.*m;
    if (!in.contains(key)) r.fail(key, "is required for input_type current_clamp");
    const json& x = in[key];
    if (x.is_number()) {
      v.push_back(r.required_number(in, key));
    } else if (x.is_array()) {
      for (const json& e : x) {
        if (!e.is_number() || !std::isfinite(e.get<double>()))
          r.fail(key, "must be a number or a list of finite numbers");
        v.push_back(e.get<double>());
      }
    } else {
      r.fail(key, "must be a number or a list of numbers");
    }
  });
}

Row clamp_pulses_agree() {
  return fields::check<InputSpec>([](const JsonReader& r, const json&, InputSpec& s) {
    if (s.amp_pA.size() != s.delay_ms.size() || s.amp_pA.size() != s.duration_ms.size())
      r.fail("amp", "amp, delay and duration must have the same number of entries");
    for (std::size_t q = 0; q < s.amp_pA.size(); ++q) {
      if (s.delay_ms[q] < 0) r.fail("delay", "must be >= 0");
      if (s.duration_ms[q] < 0) r.fail("duration", "must be >= 0");
    }
  });
}

// The input types: input_type, kind, and its keys besides node_set and input_type (other keys are ignored).
struct InputType {
  std::string name;
  InputKind kind;
  fields::Table<InputSpec> keys;
};

const std::vector<InputType>& input_types() {
  using S = InputSpec;
  static const std::vector<InputType> types = {
      {"spikes",
       InputKind::SpikeFile,
       {fields::one_of<S>("module", "sonata", {"sonata", "h5", "hdf5"},
                          [](const std::string& v) {
                            return "spike input module \"" + v + "\" is not supported (use sonata, h5 or hdf5)";
                          }),
        fields::required_string("input_file", &S::file)}},
      {"rates",
       InputKind::Rates,
       {fields::present_number("rate", &S::rate_hz, 0.0), rates_list(true), rate_not_negative()}},
      {"poisson",
       InputKind::Poisson,
       {fields::present_number("rate", &S::rate_hz, 250.0), rates_list(false), rate_not_negative()}},
      {"current_clamp",
       InputKind::CurrentClamp,
       {clamp_list("amp", &S::amp_pA), clamp_list("delay", &S::delay_ms), clamp_list("duration", &S::duration_ms),
        clamp_pulses_agree()}},
      {"lgn",
       InputKind::Lgn,
       {fields::custom<S>(
           {"stimulus", "direction_convention"},
           [](const JsonReader& r, const json& in, InputSpec& s) { s.stimulus = parse_stimulus(r, in); })}},
  };
  return types;
}

}  // namespace

std::vector<InputSpec> parse_input_specs(const std::string& path, const json& inputs, const std::string& prefix) {
  std::vector<InputSpec> out;
  for (auto& item : inputs.items()) {
    const json& in = item.value();
    if (in.contains("enabled") && in["enabled"].is_boolean() && !in["enabled"].get<bool>()) continue;
    const JsonReader r(path, prefix + item.key());
    InputSpec s;
    s.name = item.key();
    s.node_set = r.required_string(in, "node_set");
    const std::string type = r.required_string(in, "input_type");
    const InputType* t = fields::find_kind(input_types(), type);
    if (!t) r.fail("input_type", fields::unsupported(type, fields::kind_names(input_types())));
    s.kind = t->kind;
    fields::read(r, in, t->keys, s, fields::Unknown::Accept);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace dpointnet
