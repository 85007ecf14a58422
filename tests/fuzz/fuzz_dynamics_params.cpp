// Harness: the dynamics_params reader (src/network/neuron_model.*): a node type's JSON file read as the nodes
// reader reads it (read_json_file), parsed for a NEST model and turned into checked per-step constants. First byte:
// the model (nest:glif_psc, nest:iaf_psc_alpha, nest:glif_psc_double_alpha or an unsupported one), second: run.dt; the
// rest is the JSON file. Accepted parameters must give finite constants.
#include <cmath>
#include <nlohmann/json.hpp>

#include "dpointnet/network/neuron_model.hpp"
#include "dpointnet/util/json_reader.hpp"
#include "fuzz_support.hpp"

using namespace dpointnet;
using namespace dpointnet::fuzz;

DPOINTNET_FUZZ_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  static const char* const kModels[] = {"glif_psc", "iaf_psc_alpha", "glif_psc_double_alpha", "iaf_psc_delta"};
  const std::string model = kModels[in.pick(4)];
  static const double kDt[] = {0.1, 1.0, 0.25, 1e-3};
  const double dt = kDt[in.pick(4)];
  const std::size_t skip = size < 2 ? size : 2;
  const std::string path =
      write_scratch("params.json", std::string(reinterpret_cast<const char*>(data) + skip, size - skip));
  run_one("dynamics_params", [&] {
    const nlohmann::json j = read_json_file(path, "node_types.csv", "node type 100", "dynamics_params");
    const NeuronParams p = parse_neuron_params(model, j, path, "node type 100");
    const DerivedNeuron d = derive_neuron(p, dt);
    check_derived_neuron(d, path, "node type 100");  // as the nodes reader does
    const char* h = "dynamics_params";
    check(num_channels(p) >= 1, h, "no synaptic channel");
    check(d.vs > 0 && std::isfinite(d.vs), h, "V_th - E_L not a finite positive gap");
    check(std::isfinite(d.decay) && d.decay >= 0 && d.decay <= 1, h, "membrane decay outside [0, 1]");
    check(std::isfinite(d.current_factor) && std::isfinite(d.v_reset), h, "current factor or reset not finite");
    check(d.t_ref_steps >= 1, h, "refractory period under one step");
    for (int k = 0; k < kNumAsc; ++k)
      check(std::isfinite(d.asc_amps[k]) && std::isfinite(d.asc_decay[k]), h, "after-spike constants not finite");
    for (std::size_t r = 0; r < d.syn_decay.size(); ++r)
      check(std::isfinite(d.syn_decay[r]) && std::isfinite(d.psc_initial[r]), h, "synaptic constants not finite");
  });
  return 0;
}
