// Neuron models (docs/model.md sections 1, 2, 10): NEST parameters in, normalized per-step constants out.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

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
};

// Per-neuron constants in normalized units (docs/model.md section 2).
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
};

// Parses a dynamics_params JSON for the NEST model `model` (the part after "nest:"). `label` names the node
// type and `file` the JSON file in error messages. Refuses unknown models and invalid values.
NeuronParams parse_neuron_params(const std::string& model, const nlohmann::json& params, const std::string& file,
                                 const std::string& label);

// The dynamics_params keys parse_neuron_params reads for `model` (a per-node override of any other key would have
// no effect); *is_flag tells whether the key is a true/false one.
bool reads_parameter(const std::string& model, const std::string& key, bool* is_flag = nullptr);

DerivedNeuron derive_neuron(const NeuronParams& p, double dt);

// Refuses parameters whose per-step constants are not finite (e.g. V_th - E_L beyond the double range, or a
// time constant of 1e-320), naming `file`, `label` and the parameter.
void check_derived_neuron(const DerivedNeuron& d, const std::string& file, const std::string& label);

// Number of synaptic channels of a model instance.
inline int num_channels(const NeuronParams& p) { return static_cast<int>(p.tau_syn.size()); }

}  // namespace dpointnet
