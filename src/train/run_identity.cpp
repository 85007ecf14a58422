#include "dpointnet/train/run_identity.hpp"

#include <fstream>
#include <iterator>

#include "dpointnet/util/hash.hpp"

using nlohmann::json;

namespace dpointnet {

std::string config_hash(const SimulationConfig& cfg, int replicas) {
  json j;
  for (const auto& in : cfg.inputs) {
    json e = cfg.resolved["inputs"][in.name];
    if (e.contains("input_file")) {
      std::ifstream f(in.file, std::ios::binary);
      e["input_file"] = fnv1a64_hex(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
    }
    j["inputs"][in.name] = e;
  }
  j["run"] = {{"dt", cfg.dt},
              {"tstop", cfg.tstop},
              {"seed", cfg.seed},
              {"batch_size", static_cast<std::int64_t>(cfg.batch_size) * replicas},
              {"precision", precision_name(cfg.precision)}};
  if (cfg.dynamics == Dynamics::Nest) j["run"]["dynamics"] = "nest";  // (discrete runs keep their old hash)
  json t = cfg.resolved["train"];
  // files read by the losses count by their contents, like input files
  auto hash_files = [](json& losses) {
    if (!losses.is_array()) return;
    for (auto& l : losses)
      if (l.is_object() && l.contains("target_file") && l["target_file"].is_string()) {
        std::ifstream f(l["target_file"].get<std::string>(), std::ios::binary);
        l["target_file"] =
            fnv1a64_hex(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
      }
  };
  if (t.contains("losses")) hash_files(t["losses"]);
  if (t.contains("conditions") && t["conditions"].is_array())  // condition objects' own losses
    for (auto& c : t["conditions"])
      if (c.is_object() && c.contains("losses")) hash_files(c["losses"]);
  for (const char* k :
       {"steps", "epochs", "steps_per_epoch", "checkpoint_interval", "save_checkpoint_every", "log_every"})
    t.erase(k);
  j["train"] = t;
  return fnv1a64_hex(j.dump());
}

std::string network_hash(const Network& net) {
  std::string bytes = std::to_string(net.n_neurons) + ";" + std::to_string(net.dt) + ";";
  auto append = [&bytes](const auto& vec) {
    bytes.append(reinterpret_cast<const char*>(vec.data()), vec.size() * sizeof(vec[0]));
  };
  for (const auto& d : net.neurons) {
    const std::vector<double> v = {
        d.vs,          d.E_L,         d.decay,        d.current_factor, d.v_reset, double(d.t_ref_steps),
        d.asc_amps[0], d.asc_amps[1], d.asc_decay[0], d.asc_decay[1]};
    append(v);
    append(d.syn_decay);
    // glif_psc_double_alpha: the ports and the slow amplitudes (psc_initial) too. Only for neurons with slow
    // channels, so that the hashes of other networks (and their checkpoints) stay as they were.
    if (d.n_receptors > 0 && static_cast<std::size_t>(d.n_receptors) < d.syn_decay.size()) {
      bytes += "ports " + std::to_string(d.n_receptors) + ";";
      append(d.psc_initial);
    }
  }
  for (const auto& p : net.projections) {
    bytes += p.source_population + ":" + std::to_string(p.size()) + ";";
    append(p.weight_pA);
    append(p.target);
    append(p.source);
    append(p.channel);
    append(p.delay_steps);
  }
  return fnv1a64_hex(bytes);
}

}  // namespace dpointnet
