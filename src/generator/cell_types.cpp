#include "dpointnet/generator/cell_types.hpp"

namespace dpointnet::generator {

const CellType kCellTypes[kNumCellTypes] = {
    {100, "Scnn1a", 'e', "593618144_glif_lif_asc_psc.json",
     R"json({
  "V_m": -69.4755859375,
  "V_th": -46.40370561385434,
  "g": 5.875377136608159,
  "E_L": -69.4755859375,
  "C_m": 58.60769058316611,
  "t_ref": 2.6000000000000005,
  "V_reset": -69.4755859375,
  "asc_init": [
    0.0,
    0.0
  ],
  "asc_decay": [
    0.1,
    0.3
  ],
  "asc_amps": [
    -36.93387266,
    -65.30848816
  ],
  "tau_syn": [
    5.5,
    8.5,
    2.8,
    5.8
  ],
  "spike_dependent_threshold": false,
  "after_spike_currents": true,
  "adapting_threshold": false
}
)json"},
    {101, "Rorb", 'e', "480124551_glif_lif_asc_psc.json",
     R"json({
  "V_m": -73.30062357584633,
  "V_th": -37.57837016608795,
  "g": 6.846284605100222,
  "E_L": -73.30062357584633,
  "C_m": 52.353697808027725,
  "t_ref": 3.2,
  "V_reset": -73.30062357584633,
  "asc_init": [0.0, 0.0], "asc_decay": [0.003, 0.1  ], "asc_amps": [ -10.17435274, -119.53883788], "tau_syn": [5.5, 8.5, 2.8, 5.8], "spike_dependent_threshold": false, "after_spike_currents": true, "adapting_threshold": false}
)json"},
    {102, "Nr5a1", 'e', "318808427_glif_lif_asc_psc.json",
     R"json({
  "V_m": -76.1691640218099,
  "V_th": -40.8824438029048,
  "g": 3.93819351064843,
  "E_L": -76.1691640218099,
  "C_m": 68.14035162092856,
  "t_ref": 2.4000000000000004,
  "V_reset": -76.1691640218099,
  "asc_init": [
    0.0,
    0.0
  ],
  "asc_decay": [
    0.003,
    0.1
  ],
  "asc_amps": [
    -13.00889622,
    -200.00774016
  ],
  "tau_syn": [
    5.5,
    8.5,
    2.8,
    5.8
  ],
  "spike_dependent_threshold": false,
  "after_spike_currents": true,
  "adapting_threshold": false
}
)json"},
    {103, "PV1", 'i', "478958894_glif_lif_asc_psc.json",
     R"json({
  "V_m": -70.45950889587401,
  "V_th": -44.23152364988978,
  "g": 9.195230009748064,
  "E_L": -70.45950889587401,
  "C_m": 81.21058405283176,
  "t_ref": 1.5,
  "V_reset": -70.45950889587401,
  "asc_init": [
    0.0,
    0.0
  ],
  "asc_decay": [
    0.003,
    0.3
  ],
  "asc_amps": [
    -4.08182729,
    -291.97668209
  ],
  "tau_syn": [
    5.5,
    8.5,
    2.8,
    5.8
  ],
  "spike_dependent_threshold": false,
  "after_spike_currents": true,
  "adapting_threshold": false
}
)json"},
    {104, "PV2", 'i', "487667205_glif_lif_asc_psc.json",
     R"json({"V_m": -72.08961296081546, "V_th": -45.793386052222445, "g": 7.5964352092785585, "E_L": -72.08961296081546, "C_m": 64.02349624649017, "t_ref": 1.4, "V_reset": -72.08961296081546, "asc_init": [0.0, 0.0], "asc_decay": [0.003, 0.3  ], "asc_amps": [-3.28747057, 63.80635645], "tau_syn": [5.5, 8.5, 2.8, 5.8], "spike_dependent_threshold": false, "after_spike_currents": true, "adapting_threshold": false}
)json"},
};

// Recurrent: index = 2 * (source is I) + (target is I).
const SynType kRecurrentTypes[4] = {
    {100, "ei=='e'", "ei=='e'", "e2e.json", 1, 1.0, 2.8},
    {101, "ei=='i'", "ei=='e'", "e2i.json", 3, 2.0, 2.8},
    {102, "ei=='e'", "ei=='i'", "i2e.json", 2, -5.0, 2.8},
    {103, "ei=='i'", "ei=='i'", "i2i.json", 4, -4.0, 2.8},
};

// Inputs: index = (target is I).
const SynType kLgnTypes[2] = {
    {200, "ei=='e'", "*", "LGN_to_GLIF.json", 1, 16.0, 1.7},
    {201, "ei=='i'", "*", "LGN_to_GLIF.json", 1, 13.0, 1.7},
};

const SynType kBkgTypes[2] = {
    {300, "ei=='e'", "*", "BKG_to_GLIF.json", 1, 10.0, 1.0},
    {301, "ei=='i'", "*", "BKG_to_GLIF.json", 1, 8.0, 1.0},
};

}  // namespace dpointnet::generator
