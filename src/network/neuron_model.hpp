// Neuron models (docs/model.md sections 1, 2, 10): NEST parameters in, normalized per-step constants out.
#pragma once
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "dpointnet/config/dynamics.hpp"

namespace dpointnet {

inline constexpr int kNumAsc = 2;  // after-spike currents per neuron

// GlifPscDoubleAlpha: glif_psc whose receptor ports each drive a fast and a slow alpha channel.
enum class ModelKind { GlifPsc, GlifPscDoubleAlpha, IafPscAlpha };

// Parameters in NEST units (mV, nS, pF, ms, pA, 1/ms).
struct NeuronParams {
  ModelKind kind = ModelKind::GlifPsc;
  double V_th = 0, E_L = 0, V_reset = 0, g = 0, C_m = 0, t_ref = 0;
  double asc_amps[kNumAsc] = {0, 0};
  double asc_decay[kNumAsc] = {1, 1};
  // Channels. glif_psc: one per receptor port; iaf_psc_alpha: {tau_syn_ex, tau_syn_in}; glif_psc_double_alpha:
  // tau_syn_fast of the K ports, then their tau_syn_slow (channel K + k is port k + 1's slow component).
  std::vector<double> tau_syn;
  std::vector<double> psc_amp;  // per channel, the PSC amplitude factor: 1, amp_slow for slow channels
  int n_receptors = 0;          // receptor ports (edges' receptor_type 1..n_receptors); channels for iaf
  // Read for run.dynamics = "nest" (docs/model-nest.md); the discrete model refuses I_e != 0 and V_min.
  bool has_V_m = false;
  double V_m = 0;  // initial membrane potential (mV); NEST's default when absent: -78.85 glif, -70 iaf
  double I_e = 0;  // iaf_psc_alpha constant current (pA)
  double V_min = -std::numeric_limits<double>::infinity();  // iaf_psc_alpha lower bound of V_m (mV)
  bool has_V_min = false;
  double asc_r[kNumAsc] = {1, 1};  // glif_psc: ASC values kept at a spike, before the refractory decay
  double tau_m = 0;                // iaf_psc_alpha tau_m as given (NEST's propagators use it, not C_m/g)
};

// Per-neuron constants in normalized units (docs/model.md section 2).
// What NEST's exact integration (run.dynamics = "nest", docs/model-nest.md) needs beside the shared constants.
struct NestNeuron {
  bool iaf = false;                     // iaf_psc_alpha: V summed in NEST's iaf order, spike at v >= 1 (else > 1)
  std::vector<double> p31, p32;         // per channel: the alpha PSC's exact effect on V (normalized per pA)
  double asc_stable[kNumAsc] = {0, 0};  // the ASC's mean over a step per start value: ((1/k)/h)(1 - e^{-kh})
  double asc_refr[kNumAsc] = {1, 1};    // asc_r e^{-k t_ref}: the part of the ASC kept at a spike
  double v_init = 0;                    // (V_m - E_L) / vs
  double i_e = 0;                       // I_e / vs
  double v_min = -std::numeric_limits<double>::infinity();  // (V_min - E_L) / vs
};

struct DerivedNeuron {
  double vs = 1;                       // V_th - E_L (mV)
  double E_L = 0;                      // mV, to convert v back to V_m
  double decay = 0;                    // exp(-dt / tau_m)
  double current_factor = 0;           // (1 - decay) / g, applied to normalized current
  double v_reset = 0;                  // (V_reset - E_L) / vs
  int t_ref_steps = 1;                 // max(1, ceil(t_ref/dt - 1e-9))
  double asc_amps[kNumAsc] = {0, 0};   // asc_amps / vs
  double asc_decay[kNumAsc] = {1, 1};  // exp(-dt * k)
  std::vector<double> syn_decay;       // exp(-dt / tau_r)
  std::vector<double> psc_initial;     // amp_r * e / tau_r
  int n_receptors = 0;                 // channels >= n_receptors are slow ones, driven by channel c - n_receptors
  // run.dynamics = "nest" only (docs/model-nest.md); then decay is NEST's P33 (glif) or expm1(-h/tau_m) (iaf),
  // current_factor its P30 and t_ref_steps NEST's refractory count (ceil of round(t_ref in tics) / tics per step).
  NestNeuron nest;
};

// Parses a dynamics_params JSON for the NEST model `model` (the part after "nest:"). `label` names the node
// type and `file` the JSON file in error messages. Refuses unknown models and invalid values.
NeuronParams parse_neuron_params(const std::string& model, const nlohmann::json& params, const std::string& file,
                                 const std::string& label);

// The dynamics_params keys parse_neuron_params reads for `model` (a per-node override of any other key would have
// no effect); *is_flag tells whether the key is a true/false one.
bool reads_parameter(const std::string& model, const std::string& key, bool* is_flag = nullptr);

DerivedNeuron derive_neuron(const NeuronParams& p, double dt, Dynamics dynamics = Dynamics::Discrete);

// NEST 3.8's numerics::expm1 (libnestutil/numerics.h, used because NEST's HAVE_EXPM1 check never passes): a
// series for |x| <= ln 2, exp(x) - 1 beyond. Bitwise agreement with NEST's propagators needs it.
double nest_expm1(double x);

// Refuses what the chosen dynamics cannot compute: the discrete model has no I_e, V_min or asc_r != 1.
void check_model_for_dynamics(const NeuronParams& p, Dynamics dynamics, const std::string& file,
                              const std::string& label);

// Refuses parameters whose per-step constants are not finite (e.g. V_th - E_L beyond the double range, or a
// time constant of 1e-320), naming `file`, `label` and the parameter.
void check_derived_neuron(const DerivedNeuron& d, const std::string& file, const std::string& label);

// Number of synaptic channels of a model instance.
inline int num_channels(const NeuronParams& p) { return static_cast<int>(p.tau_syn.size()); }

}  // namespace dpointnet
