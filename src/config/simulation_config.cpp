#include "config/simulation_config.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

#include "config/json_config.hpp"
#include "util/error.hpp"
#include "util/json_reader.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace dpointnet {

namespace {

DistributionSpec parse_distribution(const std::string& f, const json& run) {
  DistributionSpec d;
  if (run.contains("distribution")) {
    d.present = true;
    const json& dj = run["distribution"];
    if (!dj.is_object()) throw InputError(f, "run", "distribution", "must be an object");
    const JsonReader r(f, "run.distribution");
    r.reject_unknown(dj, {"mode", "devices", "replicas", "timeout_s"}, "(mode, devices, replicas, timeout_s)");
    if (!dj.contains("mode") || !dj["mode"].is_string()) r.fail("mode", "is required: \"mpi\" or \"mirrored\"");
    const std::string mode = dj["mode"].get<std::string>();
    if (mode == "mpi")
      d.mode = DistributionMode::Mpi;
    else if (mode == "mirrored")
      d.mode = DistributionMode::Mirrored;
    else
      r.fail("mode", "\"" + mode + "\" is not supported (mpi or mirrored)");
    if (dj.contains("replicas")) {
      if (!dj["replicas"].is_number_integer() || dj["replicas"].get<long long>() < 1 ||
          dj["replicas"].get<long long>() > std::numeric_limits<int>::max())
        r.fail("replicas", "must be an integer >= 1 (at most 2147483647)");
      d.replicas_requested = dj["replicas"].get<int>();
    }
    d.timeout_s = r.number(dj, "timeout_s", d.timeout_s, JsonReader::Range::Positive);
    if (dj.contains("devices")) {
      if (!dj["devices"].is_array() || dj["devices"].empty()) r.fail("devices", "must be a non-empty list");
      for (const json& x : dj["devices"]) d.devices.push_back(x.is_string() ? x.get<std::string>() : x.dump());
    }
  }
  if (run.contains("global_batch_size")) {
    if (!run["global_batch_size"].is_number_integer() || run["global_batch_size"].get<long long>() < 1)
      throw InputError(f, "run", "global_batch_size", "must be an integer >= 1");
    d.global_batch_size = run["global_batch_size"].get<long long>();
  }
  return d;
}

}  // namespace

// The `inputs` section (or a condition's version of it): one InputSpec per enabled input; errors name the section
// `prefix` + input name.
std::vector<InputSpec> parse_input_specs(const std::string& path, const json& inputs, const std::string& prefix) {
  std::vector<InputSpec> out;
  {
    for (auto& item : inputs.items()) {
      const std::string name = item.key();
      const json& in = item.value();
      const std::string sec = prefix + name;
      if (in.contains("enabled") && in["enabled"].is_boolean() && !in["enabled"].get<bool>()) continue;
      InputSpec s;
      s.name = name;
      s.node_set = JsonReader(path, sec).required_string(in, "node_set");
      const std::string type = JsonReader(path, sec).required_string(in, "input_type");
      if (type == "spikes") {
        s.kind = InputKind::SpikeFile;
        const std::string module =
            in.contains("module") ? JsonReader(path, sec).required_string(in, "module") : "sonata";
        if (module != "sonata" && module != "h5" && module != "hdf5")
          throw InputError(path, sec, "module",
                           "spike input module \"" + module + "\" is not supported (use sonata, h5 or hdf5)");
        s.file = JsonReader(path, sec).required_string(in, "input_file");
      } else if (type == "rates" || type == "poisson") {
        s.kind = type == "rates" ? InputKind::Rates : InputKind::Poisson;
        s.rate_hz = type == "poisson" ? 250.0 : 0.0;
        if (in.contains("rate")) s.rate_hz = JsonReader(path, sec).required_number(in, "rate");
        if (in.contains("rates")) {
          if (type != "rates" || !in["rates"].is_array())
            throw InputError(path, sec, "rates", "must be a list of rates (Hz), only for input_type rates");
          for (const json& v : in["rates"]) {
            if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
              throw InputError(path, sec, "rates", "every rate must be a finite number >= 0");
            s.rates_hz.push_back(v.get<double>());
          }
        } else if (type == "rates" && !in.contains("rate")) {
          throw InputError(path, sec, "rate", "is required (Hz) for input_type rates (or give \"rates\")");
        }
        if (s.rate_hz < 0) throw InputError(path, sec, "rate", "must be >= 0");
      } else if (type == "current_clamp") {
        s.kind = InputKind::CurrentClamp;
        auto list = [&](const char* key) {
          std::vector<double> v;
          if (!in.contains(key)) throw InputError(path, sec, key, "is required for input_type current_clamp");
          const json& x = in[key];
          if (x.is_number())
            v.push_back(JsonReader(path, sec).required_number(in, key));
          else if (x.is_array()) {
            for (const json& e : x) {
              if (!e.is_number() || !std::isfinite(e.get<double>()))
                throw InputError(path, sec, key, "must be a number or a list of finite numbers");
              v.push_back(e.get<double>());
            }
          } else
            throw InputError(path, sec, key, "must be a number or a list of numbers");
          return v;
        };
        s.amp_pA = list("amp");
        s.delay_ms = list("delay");
        s.duration_ms = list("duration");
        if (s.amp_pA.size() != s.delay_ms.size() || s.amp_pA.size() != s.duration_ms.size())
          throw InputError(path, sec, "amp", "amp, delay and duration must have the same number of entries");
        for (std::size_t q = 0; q < s.amp_pA.size(); ++q) {
          if (s.delay_ms[q] < 0) throw InputError(path, sec, "delay", "must be >= 0");
          if (s.duration_ms[q] < 0) throw InputError(path, sec, "duration", "must be >= 0");
        }
      } else {
        throw InputError(path, sec, "input_type",
                         "\"" + type + "\" is not supported (spikes, rates, poisson or current_clamp)");
      }
      out.push_back(std::move(s));
    }
  }

  return out;
}

namespace {
// run.dynamics = "nest" has no current clamps: NEST's step_current_generator timing is not reproduced.
void refuse_nest_clamps(const SimulationConfig& c, const std::string& prefix) {
  if (c.dynamics != Dynamics::Nest) return;
  for (const InputSpec& in : c.inputs)
    if (in.kind == InputKind::CurrentClamp)
      throw InputError(c.path, prefix + in.name, "input_type",
                       "current clamps are not supported with run.dynamics = \"nest\" (the timing of NEST's "
                       "step_current_generator is not reproduced; docs/model-nest.md)");
}
}  // namespace

SimulationConfig SimulationConfig::load(const std::string& path) {
  SimulationConfig c;
  c.resolved = load_sonata_config(path);
  c.path = c.resolved["_config_path"].get<std::string>();
  const json& j = c.resolved;

  // run
  if (!j.contains("run") || !j["run"].is_object()) throw InputError(c.path, "", "run", "section is required");
  const json& run = j["run"];
  if (!run.contains("dt")) throw InputError(c.path, "run", "dt", "is required");
  c.dt = JsonReader(c.path, "run").required_number(run, "dt");
  if (!(c.dt > 0)) throw InputError(c.path, "run", "dt", "must be > 0, got " + run["dt"].dump());
  if (run.contains("duration")) {
    c.tstop = JsonReader(c.path, "run").required_number(run, "duration");
  } else if (run.contains("tstop")) {
    c.tstop = JsonReader(c.path, "run").required_number(run, "tstop");
  } else {
    throw InputError(c.path, "run", "tstop", "is required (or run.duration)");
  }
  if (!(c.tstop > 0)) throw InputError(c.path, "run", "tstop", "must be > 0");
  const double steps = std::round(c.tstop / c.dt);
  if (steps > static_cast<double>(std::numeric_limits<int>::max()))
    throw InputError(c.path, "run", "tstop", "is more than 2^31 - 1 steps of run.dt");
  if (steps < 1) throw InputError(c.path, "run", "tstop", "is shorter than one step of run.dt");
  if (std::fabs(steps * c.dt - c.tstop) > 1e-6 * c.dt)
    throw InputError(c.path, "run", "tstop", "must be a whole number of steps of dt");
  c.n_steps = static_cast<std::int64_t>(steps);
  if (run.contains("seed")) {
    const json& s = run["seed"];
    if (!s.is_number_integer() || s.get<long long>() < 0 ||
        s.get<long long>() > static_cast<long long>(std::numeric_limits<std::uint32_t>::max()))
      throw InputError(c.path, "run", "seed", "must be an integer in 0..4294967295");
    c.seed = s.get<std::uint32_t>();
  }
  if (run.contains("batch_size")) {
    const json& b = run["batch_size"];
    if (!b.is_number_integer() || b.get<long long>() < 1 || b.get<long long>() > std::numeric_limits<int>::max())
      throw InputError(c.path, "run", "batch_size", "must be an integer >= 1 (at most 2147483647), got " + b.dump());
    c.batch_size = b.get<int>();
  }
  if (run.contains("precision")) {
    std::string p = JsonReader(c.path, "run").required_string(run, "precision");
    if (p == "float64" || p == "double") {
      c.double_precision = true;
    } else if (p != "float32" && p != "float") {
      throw InputError(c.path, "run", "precision", "must be \"float32\" or \"float64\", got \"" + p + "\"");
    }
  }
  if (run.contains("dynamics")) {
    const std::string d = JsonReader(c.path, "run").required_string(run, "dynamics");
    if (d == "nest") {
      c.dynamics = Dynamics::Nest;
    } else if (d != "discrete") {
      throw InputError(c.path, "run", "dynamics", "must be \"discrete\" or \"nest\", got \"" + d + "\"");
    }
  }
  if (c.dynamics == Dynamics::Nest) {
    // NEST's clock counts microsecond tics: the resolution must be a whole number of them (nest_time.cpp)
    const double tics = c.dt * 1000.0;
    if (std::fabs(tics - std::round(tics)) > 1e-9 * tics || std::round(tics) < 1)
      throw InputError(c.path, "run", "dt",
                       "must be a whole number of microseconds with run.dynamics = \"nest\" (NEST's tic), got " +
                           run["dt"].dump() + " ms");
  }
  c.distribution = parse_distribution(c.path, run);

  // components and networks
  if (j.contains("components")) {
    const json& comp = j["components"];
    if (comp.contains("point_neuron_models_dir"))
      c.point_neuron_models_dir = JsonReader(c.path, "components").required_string(comp, "point_neuron_models_dir");
    if (comp.contains("synaptic_models_dir"))
      c.synaptic_models_dir = JsonReader(c.path, "components").required_string(comp, "synaptic_models_dir");
  }
  if (!j.contains("networks") || !j["networks"].is_object())
    throw InputError(c.path, "", "networks", "section is required (directly or through \"network\")");
  const json& nets = j["networks"];
  if (!nets.contains("nodes") || !nets["nodes"].is_array() || nets["nodes"].empty())
    throw InputError(c.path, "networks", "nodes", "must be a non-empty list");
  for (const json& n : nets["nodes"])
    c.nodes.push_back({JsonReader(c.path, "networks.nodes").required_string(n, "nodes_file"),
                       JsonReader(c.path, "networks.nodes").required_string(n, "node_types_file")});
  if (nets.contains("edges")) {
    for (const json& e : nets["edges"]) {
      if (e.contains("enabled") && e["enabled"].is_boolean() && !e["enabled"].get<bool>()) continue;
      c.edges.push_back({JsonReader(c.path, "networks.edges").required_string(e, "edges_file"),
                         JsonReader(c.path, "networks.edges").required_string(e, "edge_types_file")});
    }
  }

  // inputs
  if (j.contains("inputs")) c.inputs = parse_input_specs(c.path, j["inputs"], "inputs.");
  refuse_nest_clamps(c, "inputs.");

  // output
  const json out = j.contains("output") ? j["output"] : json::object();
  c.output_dir = out.contains("output_dir") ? JsonReader(c.path, "output").required_string(out, "output_dir")
                                            : (fs::path(c.path).parent_path() / "output").string();
  auto out_file = [&](const char* key, const char* dflt) {
    std::string v = out.contains(key) ? JsonReader(c.path, "output").required_string(out, key) : std::string(dflt);
    fs::path p(v);
    return p.is_absolute() ? v : (fs::path(c.output_dir) / p).lexically_normal().string();
  };
  c.spikes_file = out_file("spikes_file", "spikes.h5");
  c.log_file = out_file("log_file", "log.txt");
  for (const auto& [sec, o] : {std::pair<const char*, const json*>{"run", &run}, {"output", &out}}) {
    if (!o->contains("overwrite_output_dir")) continue;  // output wins over run: it comes second
    if (!(*o)["overwrite_output_dir"].is_boolean())
      throw InputError(c.path, sec, "overwrite_output_dir", "must be true or false");
    c.overwrite_output = (*o)["overwrite_output_dir"].get<bool>();
  }

  if (j.contains("reports")) {
    for (auto& [name, rep] : j["reports"].items()) {
      const std::string sec = "reports." + name;
      if (rep.contains("enabled") && rep["enabled"].is_boolean() && !rep["enabled"].get<bool>()) continue;
      std::string module = JsonReader(c.path, sec).required_string(rep, "module");
      if (module != "membrane_report" && module != "multimeter_report")
        throw InputError(c.path, sec, "module", "\"" + module + "\" is not supported (membrane_report)");
      std::string var =
          rep.contains("variable_name") ? JsonReader(c.path, sec).required_string(rep, "variable_name") : "V_m";
      if (var != "V_m") throw InputError(c.path, sec, "variable_name", "only V_m can be recorded");
      VoltageReport vr;
      vr.name = name;
      vr.node_set = rep.contains("cells") ? JsonReader(c.path, sec).required_string(rep, "cells") : "all";
      std::string fname =
          rep.contains("file_name") ? JsonReader(c.path, sec).required_string(rep, "file_name") : name + ".h5";
      vr.file = fs::path(fname).is_absolute() ? fname : (fs::path(c.output_dir) / fname).string();
      c.voltage_reports.push_back(vr);
    }
  }
  return c;
}

SimulationConfig SimulationConfig::with_input_overrides(const json& overrides, const std::string& section) const {
  if (!overrides.is_object() || overrides.empty())
    throw InputError(path, section, "", "must be a non-empty object of input name: input spec");
  SimulationConfig c = *this;
  json inputs = resolved.contains("inputs") ? resolved["inputs"] : json::object();
  for (auto& [name, spec] : overrides.items()) {
    if (!inputs.contains(name))
      throw InputError(path, section, name, "is not an input of the config's `inputs` section");
    if (!spec.is_object()) throw InputError(path, section, name, "must be an input spec (an object)");
    const json base_set = inputs[name].value("node_set", json()), set = spec.value("node_set", json());
    if (set != base_set)
      throw InputError(path, section + "." + name, "node_set",
                       "must be the node_set of inputs." + name + " (" + base_set.dump() +
                           "): a condition changes what arrives, not where");
    inputs[name] = spec;
  }
  c.resolved["inputs"] = inputs;
  c.inputs = parse_input_specs(path, inputs, section + ".");
  refuse_nest_clamps(c, section + ".");
  return c;
}

}  // namespace dpointnet
