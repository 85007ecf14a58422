#include "dpointnet/network/sonata_nodes.hpp"

#include <deque>
#include <map>
#include <set>

#include "dpointnet/io/csv_table.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/network/allen_glif.hpp"
#include "dpointnet/network/detail/sonata_common.hpp"
#include "dpointnet/network/node_dynamics.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_reader.hpp"
#include "dpointnet/util/log.hpp"

using nlohmann::json;

namespace dpointnet {

using detail::join;

namespace {

struct NodeTypeInfo {
  bool is_virtual = false;
  NeuronParams params;
  DerivedNeuron derived;
  std::string model, dp_path, label;  // for per-node overrides: the model, its JSON file and node type label
  json params_json;                   // (NEST names: an Allen config is converted)
};

// Model parameters from a JSON object, with the checks every neuron gets; errors name `file` and `label`.
void finish_neuron(NodeTypeInfo& info, const json& pj, const SimulationConfig& cfg, const std::string& file,
                   const std::string& label) {
  info.params = parse_neuron_params(info.model, pj, file, label);
  check_model_for_dynamics(info.params, cfg.dynamics, file, label);
  info.derived = derive_neuron(info.params, cfg.dt, cfg.dynamics);
  check_derived_neuron(info.derived, file, label);
  if (info.derived.t_ref_steps > 32767)  // the simulator counts refractory steps in 16 bits
    throw InputError(file, label, "t_ref",
                     "t_ref = " + std::to_string(info.params.t_ref) +
                         " ms is more than 32767 steps of run.dt = " + std::to_string(cfg.dt) + " ms");
}

std::string join_names(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

void read_sonata_nodes(const SimulationConfig& cfg, Network& net, std::vector<NeuronParams>& params_out) {
  for (std::size_t ni = 0; ni < cfg.nodes.size(); ++ni) {
    const auto& entry = cfg.nodes[ni];
    auto pair =
        detail::open_sonata_pair(cfg, "networks.nodes[" + std::to_string(ni) + "]", "nodes_file", entry.nodes_file,
                                 "node_types_file", entry.node_types_file, "node_type_id", "/nodes");
    h5::File& file = pair.h5;
    CsvTable& types = pair.types;
    std::map<std::int64_t, NodeTypeInfo> type_cache;
    for (const std::string& pname : file.children("/nodes")) {
      const std::string base = "/nodes/" + pname;
      if (!file.is_group(base)) continue;
      const std::string where = "population '" + pname + "'";
      if (net.find_population(pname))
        throw InputError(entry.nodes_file, where, "", "a population of this name was already loaded");
      Population pop;
      pop.name = pname;
      pop.nodes_file = entry.nodes_file;
      pop.node_type_ids = file.read_int(base + "/node_type_id");
      const std::size_t n = pop.node_type_ids.size();
      pop.size = static_cast<std::int64_t>(n);
      if (file.is_dataset(base + "/node_id")) {
        pop.node_ids = file.read_int(base + "/node_id");
        if (pop.node_ids.size() != n)
          throw InputError(
              entry.nodes_file, where, "node_id",
              "has " + std::to_string(pop.node_ids.size()) + " entries but node_type_id has " + std::to_string(n));
      } else {
        pop.node_ids.resize(n);
        for (std::size_t i = 0; i < n; ++i) pop.node_ids[i] = static_cast<std::int64_t>(i);
      }
      std::vector<std::int64_t> gid, gidx;
      if (file.is_dataset(base + "/node_group_id")) {
        gid = file.read_int(base + "/node_group_id");
        if (gid.size() != n)
          throw InputError(entry.nodes_file, where, "node_group_id", "length differs from node_type_id");
      }
      if (file.is_dataset(base + "/node_group_index")) {
        gidx = file.read_int(base + "/node_group_index");
        if (gidx.size() != n)
          throw InputError(entry.nodes_file, where, "node_group_index", "length differs from node_type_id");
      }
      // per-node dynamics_params of each group (node_group_id values are the group names)
      std::map<std::string, NodeDynamicsOverrides> overrides;
      for (const std::string& g : file.children(base))
        if (file.is_group(base + "/" + g)) {
          auto o = read_node_dynamics(file, base + "/" + g, where + " group " + g);
          if (!o.empty()) overrides.emplace(g, std::move(o));
        }
      std::deque<NodeTypeInfo> per_node_owned;            // neurons with their own parameters
      std::map<std::string, std::size_t> overridden;      // group -> nodes
      std::map<std::string, std::set<std::string>> used;  // group -> keys applied to some node
      int n_virtual = 0;
      std::vector<const NodeTypeInfo*> per_node(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t t = pop.node_type_ids[i];
        auto it = type_cache.find(t);
        if (it == type_cache.end()) {
          const std::string tlabel = where + " node type " + std::to_string(t);
          const long row = types.find_row("node_type_id", t);
          if (row < 0)
            throw InputError(entry.node_types_file, tlabel, "node_type_id",
                             "node type " + std::to_string(t) + " used in " + entry.nodes_file + " is not listed");
          NodeTypeInfo info;
          auto mtype = types.get(static_cast<std::size_t>(row), "model_type");
          if (!mtype) throw InputError(entry.node_types_file, tlabel, "model_type", "is missing");
          info.is_virtual = (*mtype == "virtual");
          if (!info.is_virtual) {
            if (*mtype != "point_neuron" && *mtype != "point_process" && *mtype != "point_soma")
              throw InputError(entry.node_types_file, tlabel, "model_type",
                               "\"" + *mtype + "\" is not supported (point_neuron, point_process or virtual)");
            auto tmpl = types.get(static_cast<std::size_t>(row), "model_template");
            if (!tmpl) throw InputError(entry.node_types_file, tlabel, "model_template", "is missing");
            std::string model = *tmpl;
            auto colon = model.find(':');
            if (colon != std::string::npos) {
              if (model.substr(0, colon) != "nest")
                throw InputError(
                    entry.node_types_file, tlabel, "model_template",
                    "\"" + *tmpl +
                        "\" is not supported (nest:glif_psc, nest:glif_psc_double_alpha, nest:iaf_psc_alpha)");
              model = model.substr(colon + 1);
            }
            auto dp = types.get(static_cast<std::size_t>(row), "dynamics_params");
            if (!dp) throw InputError(entry.node_types_file, tlabel, "dynamics_params", "is missing");
            const std::string dp_path = join(cfg.point_neuron_models_dir, *dp);
            const bool legacy = is_legacy_glif_template(model);
            if (model != "glif_psc" && model != "glif_psc_double_alpha" && model != "iaf_psc_alpha" && !legacy)
              throw InputError(
                  entry.node_types_file, tlabel, "model_template",
                  "model \"" + *tmpl +
                      "\" is not supported (nest:glif_psc, nest:glif_psc_double_alpha, nest:iaf_psc_alpha; "
                      "legacy nest:glif_lif_psc, nest:glif_lif_asc_psc)");
            json pj = read_json_file(dp_path, entry.node_types_file, tlabel, "dynamics_params");
            if (legacy) {  // BMTK's legacy names of GLIF1/GLIF3: glif_psc, from an Allen config converted as BMTK does
              const bool allen = is_allen_glif_config(pj);
              if (allen) pj = convert_allen_glif(model, pj, dp_path, tlabel);
              log::get()->info("{}: {}: model_template {} read as nest:glif_psc{}", entry.node_types_file, tlabel,
                               *tmpl, allen ? " (Allen GLIF config converted with BMTK's formulas)" : "");
              model = "glif_psc";
            }
            info.model = model;
            info.dp_path = dp_path;
            info.label = tlabel;
            finish_neuron(info, pj, cfg, dp_path, tlabel);
            info.params_json = std::move(pj);
          }
          it = type_cache.emplace(t, std::move(info)).first;
        }
        per_node[i] = &it->second;
        if (it->second.is_virtual) ++n_virtual;
        const std::string g = gid.empty() ? std::string("0") : std::to_string(gid[i]);
        const auto ov = overrides.find(g);
        if (ov == overrides.end()) continue;
        const std::string gw = where + " group " + g;
        if (it->second.is_virtual)
          throw InputError(entry.nodes_file, gw, "dynamics_params",
                           "virtual nodes (node type " + std::to_string(t) + ") have no dynamics to override");
        if (gidx.empty())
          throw InputError(entry.nodes_file, where, "node_group_index",
                           "is missing: it says which row of group " + g + "'s dynamics_params each node takes");
        if (gidx[i] < 0) throw InputError(entry.nodes_file, where, "node_group_index", "holds a negative row");
        NodeTypeInfo own = it->second;
        const std::string label = gw + " row " + std::to_string(gidx[i]) + " (node " + std::to_string(pop.node_ids[i]) +
                                  ", node type " + std::to_string(t) + ")";
        const json pj = ov->second.apply(it->second.model, it->second.params_json, static_cast<std::size_t>(gidx[i]),
                                         entry.nodes_file, label, used[g]);
        finish_neuron(own, pj, cfg, entry.nodes_file, label);
        own.params_json = json();  // kept per node type only
        per_node_owned.push_back(std::move(own));
        per_node[i] = &per_node_owned.back();
        ++overridden[g];
      }
      for (const auto& [g, o] : overrides) {
        const std::string k = o.unused(used[g]);
        if (!k.empty())
          throw InputError(entry.nodes_file, where + " group " + g, "dynamics_params/" + k,
                           "is read by the model of none of the group's nodes (docs/model.md lists each model's "
                           "parameters), so overriding it would change nothing");
      }
      for (const auto& [g, count] : overridden)
        log::get()->info("{}: {} group {}: per-node dynamics_params ({}) override the node types' values of {} node(s)",
                         entry.nodes_file, where, g, join_names(overrides.at(g).names()), count);
      if (n_virtual != 0 && static_cast<std::size_t>(n_virtual) != n)
        throw InputError(entry.nodes_file, where, "model_type",
                         "the population mixes virtual and simulated nodes, which is not supported");
      pop.is_virtual = (n > 0 && n_virtual > 0);
      const int pidx = static_cast<int>(net.populations.size());
      if (!pop.is_virtual) {
        pop.offset = net.n_neurons;
        for (std::size_t i = 0; i < n; ++i) {
          net.neurons.push_back(per_node[i]->derived);
          params_out.push_back(per_node[i]->params);
          net.neuron_population.push_back(pidx);
          net.neuron_node_id.push_back(pop.node_ids[i]);
        }
        net.n_neurons += pop.size;
      }
      net.populations.push_back(std::move(pop));
    }
  }
}

}  // namespace dpointnet
