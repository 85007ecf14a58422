#include "dpointnet/network/allen_glif.hpp"

#include <vector>

#include "dpointnet/util/error.hpp"

using nlohmann::json;

namespace dpointnet {

bool is_legacy_glif_template(const std::string& model) {
  return model == "glif_lif_psc" || model == "glif_lif_asc_psc";
}

bool is_allen_glif_config(const json& params) {
  return params.is_object() && params.contains("type") && params["type"].is_string() &&
         params["type"].get<std::string>() == "GLIF";
}

namespace {
struct Reader {
  const json& o;
  const std::string& file;
  const std::string& label;
  const std::string prefix;
  const json& at(const std::string& key) const {
    if (!o.contains(key)) throw InputError(file, label, prefix + key, "is missing (Allen GLIF config)");
    return o[key];
  }
  double num(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number()) throw InputError(file, label, prefix + key, "must be a number, got " + v.dump());
    return v.get<double>();
  }
  std::vector<double> vec(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) throw InputError(file, label, prefix + key, "must be a list of numbers");
    std::vector<double> out;
    for (const json& x : v) {
      if (!x.is_number()) throw InputError(file, label, prefix + key, "must be a list of numbers, got " + v.dump());
      out.push_back(x.get<double>());
    }
    return out;
  }
};
}  // namespace

// The expressions are BMTK's, in its order of operations (so the same doubles come out).
json convert_allen_glif(const std::string& model, const json& config, const std::string& file,
                        const std::string& label) {
  const Reader c{config, file, label, ""};
  if (!c.at("coeffs").is_object()) throw InputError(file, label, "coeffs", "must be an object (Allen GLIF config)");
  const Reader k{config["coeffs"], file, label, "coeffs."};
  json p;
  p["V_m"] = c.num("El") * 1.0e03 + c.num("El_reference") * 1.0e03;
  p["V_th"] = k.num("th_inf") * c.num("th_inf") * 1.0e03 + c.num("El_reference") * 1.0e03;
  p["g"] = k.num("G") / c.num("R_input") * 1.0e09;
  p["E_L"] = c.num("El") * 1.0e03 + c.num("El_reference") * 1.0e03;
  p["C_m"] = k.num("C") * c.num("C") * 1.0e12;
  p["t_ref"] = c.num("spike_cut_length") * c.num("dt") * 1.0e03;
  p["V_reset"] = c.num("El_reference") * 1.0e03;
  p["tau_syn"] = {5.5, 8.5, 2.8, 5.8};  // BMTK's fixed receptor time constants (ms)
  p["spike_dependent_threshold"] = false;
  p["adapting_threshold"] = false;
  p["after_spike_currents"] = model == "glif_lif_asc_psc";
  if (model == "glif_lif_asc_psc") {
    const auto init = c.vec("init_AScurrents"), tau = c.vec("asc_tau_array"), amp = c.vec("asc_amp_array"),
               kamp = k.vec("asc_amp_array");
    if (tau.size() != amp.size() || kamp.size() != amp.size() || init.size() != amp.size())
      throw InputError(file, label, "asc_amp_array",
                       "init_AScurrents, asc_tau_array, asc_amp_array and coeffs.asc_amp_array differ in length");
    json ai = json::array(), ad = json::array(), aa = json::array();
    for (std::size_t q = 0; q < amp.size(); ++q) {
      if (!(tau[q] > 0)) throw InputError(file, label, "asc_tau_array", "must be > 0");
      ai.push_back(init[q] * 1.0e12);
      ad.push_back(1.0 / tau[q] * 1.0e-03);
      aa.push_back(amp[q] * kamp[q] * 1.0e12);
    }
    p["asc_init"] = ai;
    p["asc_decay"] = ad;
    p["asc_amps"] = aa;
  }
  return p;
}

}  // namespace dpointnet
