#include "dpointnet/config/simulation_config.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

#include "dpointnet/config/json_config.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_fields.hpp"
#include "dpointnet/util/json_reader.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace dpointnet {

const char* precision_name(const Precision p) {
  switch (p) {
    case Precision::Float64:
      return "float64";
    case Precision::BFloat16:
      return "bfloat16";
    case Precision::Float16:
      return "float16";
    default:
      return "float32";
  }
}

namespace {

using Range = JsonReader::Range;
using C = SimulationConfig;

// run.distribution (when given), its keys read in the order the unknown-key error lists them; then
// run.global_batch_size.
fields::Table<DistributionSpec> distribution_keys() {
  using D = DistributionSpec;
  return {
      fields::check<D>([](const JsonReader& r, const json& dj, D&) {
        if (!dj.contains("mode") || !dj["mode"].is_string()) r.fail("mode", "is required: \"mpi\" or \"mirrored\"");
      }),
      fields::choice<D, DistributionMode>("mode", &D::mode, "",
                                          {{"mpi", DistributionMode::Mpi}, {"mirrored", DistributionMode::Mirrored}}),
      fields::custom<D>({"devices"},
                        [](const JsonReader& r, const json& dj, D& d) {
                          if (!dj.contains("devices")) return;
                          if (!dj["devices"].is_array() || dj["devices"].empty())
                            r.fail("devices", "must be a non-empty list");
                          for (const json& x : dj["devices"])
                            d.devices.push_back(x.is_string() ? x.get<std::string>() : x.dump());
                        }),
      fields::integer_in("replicas", &D::replicas_requested, 0, 1, std::numeric_limits<int>::max(),
                         "must be an integer >= 1 (at most 2147483647)"),
      fields::number("timeout_s", &D::timeout_s, 1800, Range::Positive),
  };
}

fields::Field<C> distribution() {
  const fields::Field<DistributionSpec> global_batch =
      fields::integer_in("global_batch_size", &DistributionSpec::global_batch_size, 0, 1,
                         std::numeric_limits<long long>::max(), "must be an integer >= 1");
  return fields::custom<C>({"distribution", "global_batch_size"},
                           [global_batch](const JsonReader& r, const json& run, C& c) {
                             if (run.contains("distribution")) {
                               c.distribution.present = true;
                               if (!run["distribution"].is_object()) r.fail("distribution", "must be an object");
                               fields::read(r.at("run.distribution"), run["distribution"], distribution_keys(),
                                            c.distribution, fields::Unknown::RejectListingKeys);
                             }
                             global_batch.read(r, run, c.distribution);
                           });
}

// run.dt (> 0) and run.tstop or run.duration: a whole number of steps.
void read_dt(const JsonReader& r, const json& run, C& c) {
  if (!run.contains("dt")) r.fail("dt", "is required");
  c.dt = r.required_number(run, "dt");
  if (!(c.dt > 0)) r.fail("dt", "must be > 0, got " + run["dt"].dump());
}

void read_tstop(const JsonReader& r, const json& run, C& c) {
  if (run.contains("duration"))
    c.tstop = r.required_number(run, "duration");
  else if (run.contains("tstop"))
    c.tstop = r.required_number(run, "tstop");
  else
    r.fail("tstop", "is required (or run.duration)");
  if (!(c.tstop > 0)) r.fail("tstop", "must be > 0");
  const double steps = std::round(c.tstop / c.dt);
  if (steps > static_cast<double>(std::numeric_limits<int>::max()))
    r.fail("tstop", "is more than 2^31 - 1 steps of run.dt");
  if (steps < 1) r.fail("tstop", "is shorter than one step of run.dt");
  if (std::fabs(steps * c.dt - c.tstop) > 1e-6 * c.dt) r.fail("tstop", "must be a whole number of steps of dt");
  c.n_steps = static_cast<std::int64_t>(steps);
}

// NEST's clock counts microsecond tics: the resolution must be a whole number of them (nest_time.cpp).
void check_nest_dt(const JsonReader& r, const json& run, C& c) {
  if (c.dynamics != Dynamics::Nest) return;
  const double tics = c.dt * 1000.0;
  if (std::fabs(tics - std::round(tics)) > 1e-9 * tics || std::round(tics) < 1)
    r.fail("dt", "must be a whole number of microseconds with run.dynamics = \"nest\" (NEST's tic), got " +
                     run["dt"].dump() + " ms");
}

// The keys of `run` that dpointnet reads, in that order (others are ignored: docs/simulation.md).
fields::Table<C> run_keys() {
  return {
      fields::custom<C>({"dt"}, read_dt),
      fields::custom<C>({"duration", "tstop"}, read_tstop),
      fields::integer_in("seed", &C::seed, 0, 0, 4294967295LL, "must be an integer in 0..4294967295"),
      fields::integer_in("batch_size", &C::batch_size, 1, 1, std::numeric_limits<int>::max(),
                         "must be an integer >= 1 (at most 2147483647)", true),
      fields::choice<C, Precision>("precision", &C::precision, "float32",
                                   {{"float32", Precision::Float32},
                                    {"float", Precision::Float32},
                                    {"float64", Precision::Float64},
                                    {"double", Precision::Float64},
                                    {"bfloat16", Precision::BFloat16},
                                    {"float16", Precision::Float16}},
                                   [](const std::string& p) {
                                     return "must be \"float32\", \"float64\", \"bfloat16\" or \"float16\", got \"" +
                                            p + "\"";
                                   }),
      fields::choice<C, Dynamics>(
          "dynamics", &C::dynamics, "discrete", {{"discrete", Dynamics::Discrete}, {"nest", Dynamics::Nest}},
          [](const std::string& d) { return "must be \"discrete\" or \"nest\", got \"" + d + "\""; }),
      fields::check<C>(check_nest_dt),
      distribution(),
  };
}

void read_networks(const std::string& path, const json& j, C& c) {
  if (!j.contains("networks") || !j["networks"].is_object())
    throw InputError(path, "", "networks", "section is required (directly or through \"network\")");
  const json& nets = j["networks"];
  if (!nets.contains("nodes") || !nets["nodes"].is_array() || nets["nodes"].empty())
    throw InputError(path, "networks", "nodes", "must be a non-empty list");
  const JsonReader rn(path, "networks.nodes"), re(path, "networks.edges");
  for (const json& n : nets["nodes"])
    c.nodes.push_back({rn.required_string(n, "nodes_file"), rn.required_string(n, "node_types_file")});
  if (!nets.contains("edges")) return;
  for (const json& e : nets["edges"]) {
    if (e.contains("enabled") && e["enabled"].is_boolean() && !e["enabled"].get<bool>()) continue;
    c.edges.push_back({re.required_string(e, "edges_file"), re.required_string(e, "edge_types_file")});
  }
}

// `output`: file names relative to output_dir (default: output/ beside the config); overwrite_output_dir from
// run, then from output (output wins).
fields::Table<C> output_keys(const json& run, const std::string& default_dir) {
  auto file = [](const std::string& key, const std::string& dflt, std::string C::*m) {
    return fields::custom<C>({key}, [=](const JsonReader& r, const json& out, C& c) {
      const std::string v = r.string(out, key, dflt);
      c.*m = fs::path(v).is_absolute() ? v : (fs::path(c.output_dir) / v).lexically_normal().string();
    });
  };
  return {
      fields::string("output_dir", &C::output_dir, default_dir),
      file("spikes_file", "spikes.h5", &C::spikes_file),
      file("log_file", "log.txt", &C::log_file),
      fields::custom<C>({"input_spikes_file"},
                        [](const JsonReader& r, const json& out, C& c) {
                          if (!out.contains("input_spikes_file")) return;
                          const std::string v = r.string(out, "input_spikes_file", "");
                          if (v.empty()) r.fail("input_spikes_file", "must name a file (e.g. input_spikes.h5)");
                          c.input_spikes_file =
                              fs::path(v).is_absolute() ? v : (fs::path(c.output_dir) / v).lexically_normal().string();
                        }),
      fields::custom<C>({"lgn_rates"},
                        [](const JsonReader& r, const json& out, C& c) {
                          if (!out.contains("lgn_rates")) return;
                          const json& o = out["lgn_rates"];
                          const JsonReader rr = r.at(r.section() + ".lgn_rates");
                          if (!o.is_object()) r.fail("lgn_rates", "must be an object {\"samples\": [0, ...]}");
                          rr.reject_unknown(o, {"samples"});
                          if (!o.contains("samples") || !o["samples"].is_array() || o["samples"].empty())
                            rr.fail("samples", "must be a non-empty list of sample indices");
                          for (const json& v : o["samples"]) {
                            if (!v.is_number_integer() || v.get<long long>() < 0)
                              rr.fail("samples", "must hold integers >= 0");
                            c.lgn_rates_samples.push_back(v.get<int>());
                          }
                          c.lgn_rates_file = (fs::path(c.output_dir) / "lgn_rates.h5").string();
                        }),
      fields::custom<C>(
          {"overwrite_output_dir"},
          [&run](const JsonReader& r, const json& out, C& c) {
            for (const auto& [sec, o] : {std::pair<const char*, const json*>{"run", &run}, {"output", &out}}) {
              if (!o->contains("overwrite_output_dir")) continue;
              if (!(*o)["overwrite_output_dir"].is_boolean())
                r.at(sec).fail("overwrite_output_dir", "must be true or false");
              c.overwrite_output = (*o)["overwrite_output_dir"].get<bool>();
            }
          }),
  };
}

// One membrane-potential report of `reports`.
fields::Table<VoltageReport> report_keys(const std::string& output_dir) {
  using V = VoltageReport;
  return {
      fields::custom<V>({"module"},
                        [](const JsonReader& r, const json& rep, V&) {
                          const std::string module = r.required_string(rep, "module");
                          if (module != "membrane_report" && module != "multimeter_report")
                            r.fail("module", "\"" + module + "\" is not supported (membrane_report)");
                        }),
      fields::one_of<V>("variable_name", "V_m", {"V_m"}, [](const std::string&) { return "only V_m can be recorded"; }),
      fields::string("cells", &V::node_set, "all"),
      fields::custom<V>({"file_name"},
                        [output_dir](const JsonReader& r, const json& rep, V& vr) {
                          const std::string fname = r.string(rep, "file_name", vr.name + ".h5");
                          vr.file = fs::path(fname).is_absolute() ? fname : (fs::path(output_dir) / fname).string();
                        }),
  };
}

void read_reports(const json& j, C& c) {
  if (!j.contains("reports")) return;
  for (auto& [name, rep] : j["reports"].items()) {
    if (rep.contains("enabled") && rep["enabled"].is_boolean() && !rep["enabled"].get<bool>()) continue;
    VoltageReport vr;
    vr.name = name;
    fields::read(JsonReader(c.path, "reports." + name), rep, report_keys(c.output_dir), vr, fields::Unknown::Accept);
    c.voltage_reports.push_back(vr);
  }
}

}  // namespace

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
  if (!j.contains("run") || !j["run"].is_object()) throw InputError(c.path, "", "run", "section is required");
  const json& run = j["run"];
  fields::read(JsonReader(c.path, "run"), run, run_keys(), c, fields::Unknown::Accept);
  if (j.contains("components"))
    fields::read(JsonReader(c.path, "components"), j["components"],
                 {fields::string("point_neuron_models_dir", &C::point_neuron_models_dir, ""),
                  fields::string("synaptic_models_dir", &C::synaptic_models_dir, "")},
                 c, fields::Unknown::Accept);
  read_networks(c.path, j, c);
  if (j.contains("inputs")) c.inputs = parse_input_specs(c.path, j["inputs"], "inputs.");
  refuse_nest_clamps(c, "inputs.");
  const json out = j.contains("output") ? j["output"] : json::object();
  fields::read(JsonReader(c.path, "output"), out,
               output_keys(run, (fs::path(c.path).parent_path() / "output").string()), c, fields::Unknown::Accept);
  read_reports(j, c);
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
