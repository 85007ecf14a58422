#include "dpointnet/network/neuron_model.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dpointnet/network/nest_time.hpp"
#include "dpointnet/util/error.hpp"

using nlohmann::json;

namespace dpointnet {

namespace {

struct P {
  const json& j;
  const std::string& file;
  const std::string& label;
  bool has(const char* k) const { return j.contains(k) && !j[k].is_null(); }
  double num(const char* k) const {
    if (!has(k)) throw InputError(file, label, k, "is required");
    if (!j[k].is_number()) throw InputError(file, label, k, "must be a number, got " + j[k].dump());
    double v = j[k].get<double>();
    if (!std::isfinite(v)) throw InputError(file, label, k, "must be finite");
    return v;
  }
  double num_or(const char* k, double d) const { return has(k) ? num(k) : d; }
  std::vector<double> vec(const char* k) const {
    if (!has(k)) throw InputError(file, label, k, "is required");
    std::vector<double> out;
    const json& v = j[k];
    if (v.is_number()) return {num(k)};
    if (!v.is_array()) throw InputError(file, label, k, "must be a list of numbers");
    for (const json& x : v) {
      if (!x.is_number() || !std::isfinite(x.get<double>()))
        throw InputError(file, label, k, "must be a list of finite numbers, got " + v.dump());
      out.push_back(x.get<double>());
    }
    return out;
  }
  bool flag(const char* k, bool d) const {
    if (!has(k)) return d;
    if (!j[k].is_boolean()) throw InputError(file, label, k, "must be true or false");
    return j[k].get<bool>();
  }
  void positive(const char* k, double v) const {
    if (!(v > 0)) throw InputError(file, label, k, "must be > 0, got " + std::to_string(v));
  }
};

}  // namespace

NeuronParams parse_neuron_params(const std::string& model, const json& params, const std::string& file,
                                 const std::string& label) {
  if (!params.is_object()) throw InputError(file, label, "", "dynamics_params must be a JSON object");
  P p{params, file, label};
  NeuronParams n;
  if (model == "glif_psc" || model == "glif_psc_double_alpha") {
    if (params.contains("type") && params["type"].is_string() && params["type"].get<std::string>() == "GLIF")
      throw InputError(file, label, "type",
                       "raw Allen Cell Types GLIF configs are not supported; convert them to NEST glif_psc "
                       "parameters first (BMTK convert_aibs2nest)");
    n.kind = model == "glif_psc" ? ModelKind::GlifPsc : ModelKind::GlifPscDoubleAlpha;
    n.V_th = p.num("V_th");
    n.E_L = p.num("E_L");
    n.V_reset = p.num("V_reset");
    n.g = p.num("g");
    n.C_m = p.num("C_m");
    n.t_ref = p.num("t_ref");
    if (n.kind == ModelKind::GlifPsc) {
      n.tau_syn = p.vec("tau_syn");
      if (n.tau_syn.empty()) throw InputError(file, label, "tau_syn", "must list at least one receptor time constant");
      n.psc_amp.assign(n.tau_syn.size(), 1.0);
    } else {  // NEST glif_psc_double_alpha: tau_syn_fast, tau_syn_slow, amp_slow per receptor port
      const auto fast = p.vec("tau_syn_fast"), slow = p.vec("tau_syn_slow"), amp = p.vec("amp_slow");
      if (fast.empty()) throw InputError(file, label, "tau_syn_fast", "must list at least one receptor time constant");
      if (slow.size() != fast.size() || amp.size() != fast.size())
        throw InputError(file, label, slow.size() != fast.size() ? "tau_syn_slow" : "amp_slow",
                         "must have as many entries as tau_syn_fast (" + std::to_string(fast.size()) + ")");
      for (double a : amp) p.positive("amp_slow", a);
      for (double t : slow) p.positive("tau_syn_slow", t);
      n.tau_syn = fast;
      n.tau_syn.insert(n.tau_syn.end(), slow.begin(), slow.end());
      n.psc_amp.assign(fast.size(), 1.0);
      n.psc_amp.insert(n.psc_amp.end(), amp.begin(), amp.end());
    }
    n.n_receptors = static_cast<int>(n.kind == ModelKind::GlifPsc ? n.tau_syn.size() : n.tau_syn.size() / 2);
    if (p.flag("spike_dependent_threshold", false))
      throw InputError(file, label, "spike_dependent_threshold", "GLIF2/4/5 (true) are not supported; only GLIF1/3");
    if (p.flag("adapting_threshold", false))
      throw InputError(file, label, "adapting_threshold", "GLIF5 (true) is not supported; only GLIF1/3");
    if (p.flag("after_spike_currents", true)) {
      auto amps = p.vec("asc_amps");
      auto dec = p.vec("asc_decay");
      if (amps.size() != dec.size())
        throw InputError(file, label, "asc_amps", "must have as many entries as asc_decay");
      if (amps.size() > static_cast<std::size_t>(kNumAsc))
        throw InputError(file, label, "asc_amps", "at most 2 after-spike currents are supported");
      for (std::size_t k = 0; k < amps.size(); ++k) {
        p.positive("asc_decay", dec[k]);
        n.asc_amps[k] = amps[k];
        n.asc_decay[k] = dec[k];
      }
      if (p.has("asc_r")) {  // NEST: 0 <= asc_r <= 1, one per ASC (glif_psc.cpp l.220-238)
        const auto r = p.vec("asc_r");
        if (r.size() != amps.size()) throw InputError(file, label, "asc_r", "must have as many entries as asc_amps");
        for (std::size_t k = 0; k < r.size(); ++k) {
          if (!(r[k] >= 0 && r[k] <= 1)) throw InputError(file, label, "asc_r", "must be in [0, 1]");
          n.asc_r[k] = r[k];
        }
      }
    }
  } else if (model == "iaf_psc_alpha") {
    n.kind = ModelKind::IafPscAlpha;
    n.E_L = p.num_or("E_L", -70.0);
    n.V_th = p.num_or("V_th", -55.0);
    n.V_reset = p.num_or("V_reset", -70.0);
    n.C_m = p.num_or("C_m", 250.0);
    const double tau_m = p.num_or("tau_m", 10.0);
    p.positive("tau_m", tau_m);
    n.g = n.C_m / tau_m;
    n.t_ref = p.num_or("t_ref", 2.0);
    n.tau_m = tau_m;
    n.tau_syn = {p.num_or("tau_syn_ex", 2.0), p.num_or("tau_syn_in", 2.0)};
    n.psc_amp = {1.0, 1.0};
    n.n_receptors = 2;
    n.I_e = p.num_or("I_e", 0.0);  // refused by the discrete model (check_model_for_dynamics)
    if (p.has("V_min")) {
      n.has_V_min = true;
      n.V_min = p.num("V_min");
    }
  } else {
    throw InputError(file, label, "model_template",
                     "model \"nest:" + model +
                         "\" is not supported (nest:glif_psc, nest:glif_psc_double_alpha, nest:iaf_psc_alpha)");
  }
  if (p.has("V_m")) {  // NEST's initial state (run.dynamics "nest"); the discrete model starts at E_L
    n.has_V_m = true;
    n.V_m = p.num("V_m");
  }
  p.positive("C_m", n.C_m);
  p.positive("g", n.g);
  p.positive("t_ref", n.t_ref);
  for (double t : n.tau_syn)
    p.positive(n.kind == ModelKind::GlifPsc              ? "tau_syn"
               : n.kind == ModelKind::GlifPscDoubleAlpha ? "tau_syn_fast"
                                                         : "tau_syn_ex/tau_syn_in",
               t);
  if (!(n.V_th > n.E_L))
    throw InputError(file, label, "V_th",
                     "must be above E_L (V_th = " + std::to_string(n.V_th) + ", E_L = " + std::to_string(n.E_L) + ")");
  if (!(n.V_reset < n.V_th)) throw InputError(file, label, "V_reset", "must be below V_th");
  return n;
}

bool reads_parameter(const std::string& model, const std::string& key, bool* is_flag) {
  static const std::vector<std::string> glif = {"V_th",  "E_L",      "V_reset",   "g",     "C_m",
                                                "t_ref", "asc_amps", "asc_decay", "asc_r", "V_m"};
  static const std::vector<std::string> flags = {"spike_dependent_threshold", "adapting_threshold",
                                                 "after_spike_currents"};
  static const std::vector<std::string> iaf = {"E_L",        "V_th",       "V_reset", "C_m",   "tau_m", "t_ref",
                                               "tau_syn_ex", "tau_syn_in", "I_e",     "V_min", "V_m"};
  auto in = [&key](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), key) != v.end(); };
  if (is_flag) *is_flag = false;
  if (model == "iaf_psc_alpha") return in(iaf);
  if (model != "glif_psc" && model != "glif_psc_double_alpha") return false;
  if (in(flags)) {
    if (is_flag) *is_flag = true;
    return true;
  }
  if (model == "glif_psc") return in(glif) || key == "tau_syn";
  return in(glif) || key == "tau_syn_fast" || key == "tau_syn_slow" || key == "amp_slow";
}

double nest_expm1(double x) {
  if (x == 0) return 0;
  if (std::abs(x) > std::log(2.0)) return std::exp(x) - 1;
  double sum = x, term = x * x / 2;
  long n = 2;
  while (std::abs(term) > std::abs(sum) * std::numeric_limits<double>::epsilon()) {
    sum += term;
    ++n;
    term *= x / static_cast<double>(n);
  }
  return sum;
}

namespace {

// IAFPropagatorAlpha(tau_syn, tau_m, c_m).evaluate(h) of NEST 3.8 (libnestutil/iaf_propagator.cpp): the effect
// of an alpha PSC's (y1, y2) at the start of a step on V at its end, with the singular limits tau_m == tau_syn.
void nest_alpha_propagator(double tau_syn, double tau_m, double c_m, double h, double& P31, double& P32) {
  const double h_min_regular = 1e-7 * tau_m * tau_m / std::abs(tau_m - tau_syn);
  const double beta = tau_syn * tau_m / (tau_m - tau_syn);
  const double gamma = beta / c_m;
  const double inv_tau_syn = 1 / tau_syn, inv_tau_m = 1 / tau_m, inv_c_m = 1 / c_m;
  const double inv_beta = (tau_m - tau_syn) / (tau_syn * tau_m);
  const double exp_h_tau_syn = std::exp(-h * inv_tau_syn);
  const double expm1_h_tau = nest_expm1(h * inv_beta);
  P32 = gamma * exp_h_tau_syn * expm1_h_tau;
  if (!(std::isnormal(P32) && P32 > 0)) P32 = h * inv_c_m * std::exp(-h * inv_tau_m);
  if (h > h_min_regular)
    P31 = gamma * exp_h_tau_syn * (beta * expm1_h_tau - h);
  else
    P31 = 0.5 * h * h * inv_c_m * std::exp(-h * inv_tau_m);
}

// NEST's constants (glif_psc.cpp / iaf_psc_alpha.cpp pre_run_hook), in dpointnet's normalized units: V and
// currents divided by vs, so the propagators themselves are unchanged.
void derive_nest(const NeuronParams& p, double dt, DerivedNeuron& d) {
  const double h = nest_time::step_ms(dt);
  d.nest.iaf = p.kind == ModelKind::IafPscAlpha;
  const double Tau = d.nest.iaf ? p.tau_m : p.C_m / p.g;
  if (d.nest.iaf) {
    d.decay = nest_expm1(-h / Tau);  // V' = P30 (I + I_e) + sum(P31 y1 + P32 y2) + expm1 V + V
    d.current_factor = -Tau / p.C_m * nest_expm1(-h / Tau);
  } else {
    d.decay = std::exp(-h / Tau);  // P33
    d.current_factor = 1 / p.C_m * (1 - d.decay) * Tau;
  }
  d.t_ref_steps = static_cast<int>(std::min<std::int64_t>(nest_time::ms_to_steps_up(p.t_ref, dt), 2147483647));
  for (int k = 0; k < kNumAsc; ++k) {
    if (d.nest.iaf || p.asc_decay[k] <= 0) continue;  // (no ASC: amps 0, the constants unused)
    d.asc_decay[k] = std::exp(-p.asc_decay[k] * h);
    d.nest.asc_stable[k] = ((1.0 / p.asc_decay[k]) / h) * (1.0 - d.asc_decay[k]);
    d.nest.asc_refr[k] = p.asc_r[k] * std::exp(-p.asc_decay[k] * p.t_ref);
  }
  d.nest.p31.clear();
  d.nest.p32.clear();
  for (std::size_t c = 0; c < p.tau_syn.size(); ++c) {
    d.syn_decay[c] = std::exp(-h / p.tau_syn[c]);
    // PSCInitialValues (glif_psc_double_alpha.cpp l.513-514: the slow one is 1.0 * e / tau_slow * amp_slow)
    const double e_tau = 1.0 * std::exp(1.0) / p.tau_syn[c];
    d.psc_initial[c] = static_cast<int>(c) < d.n_receptors ? e_tau : e_tau * p.psc_amp[c];
    double P31 = 0, P32 = 0;
    nest_alpha_propagator(p.tau_syn[c], Tau, p.C_m, h, P31, P32);
    d.nest.p31.push_back(P31);
    d.nest.p32.push_back(P32);
  }
  const double V_m = p.has_V_m ? p.V_m : (d.nest.iaf ? -70.0 : -78.85);  // the models' defaults (State_ ctor)
  d.nest.v_init = (V_m - p.E_L) / d.vs;
  d.nest.i_e = p.I_e / d.vs;
  d.nest.v_min = p.has_V_min ? (p.V_min - p.E_L) / d.vs : -std::numeric_limits<double>::infinity();
}

}  // namespace

DerivedNeuron derive_neuron(const NeuronParams& p, double dt, Dynamics dynamics) {
  DerivedNeuron d;
  d.vs = p.V_th - p.E_L;
  d.E_L = p.E_L;
  const double tau_m = p.C_m / p.g;
  d.decay = std::exp(-dt / tau_m);
  d.current_factor = (1.0 - d.decay) / p.g;
  d.v_reset = (p.V_reset - p.E_L) / d.vs;
  // (a t_ref of more steps than an int holds never ends within a run: clamped, not converted out of range)
  d.t_ref_steps = std::max(1, static_cast<int>(std::min(std::ceil(p.t_ref / dt - 1e-9), 2147483647.0)));
  for (int k = 0; k < kNumAsc; ++k) {
    d.asc_amps[k] = p.asc_amps[k] / d.vs;
    d.asc_decay[k] = std::exp(-dt * p.asc_decay[k]);
  }
  for (std::size_t c = 0; c < p.tau_syn.size(); ++c) {
    d.syn_decay.push_back(std::exp(-dt / p.tau_syn[c]));
    d.psc_initial.push_back((c < p.psc_amp.size() ? p.psc_amp[c] : 1.0) * std::exp(1.0) / p.tau_syn[c]);
  }
  d.n_receptors = p.n_receptors > 0 ? p.n_receptors : static_cast<int>(p.tau_syn.size());
  if (dynamics == Dynamics::Nest) derive_nest(p, dt, d);
  return d;
}

void check_model_for_dynamics(const NeuronParams& p, Dynamics dynamics, const std::string& file,
                              const std::string& label) {
  if (dynamics == Dynamics::Nest) {
    return;
  }
  const std::string hint = " (run.dynamics = \"nest\" supports it; docs/model-nest.md)";
  if (p.I_e != 0.0) throw InputError(file, label, "I_e", "a non-zero constant current is not supported" + hint);
  if (p.has_V_min) throw InputError(file, label, "V_min", "a lower bound of V_m is not supported" + hint);
  for (int k = 0; k < kNumAsc; ++k)
    if (p.asc_r[k] != 1.0) throw InputError(file, label, "asc_r", "values other than 1 are not supported" + hint);
}

void check_derived_neuron(const DerivedNeuron& d, const std::string& file, const std::string& label) {
  auto finite = [&](double v, const char* field) {
    if (!std::isfinite(v))
      throw InputError(file, label, field,
                       "gives a per-step model constant that is not finite (a value too large or too small)");
  };
  finite(d.vs, "V_th");
  finite(d.v_reset, "V_reset");
  finite(d.current_factor, "g");
  for (int k = 0; k < kNumAsc; ++k) finite(d.asc_amps[k], "asc_amps");
  for (double x : d.psc_initial) finite(x, "tau_syn (tau_syn_fast, tau_syn_slow, amp_slow)");
}

}  // namespace dpointnet
