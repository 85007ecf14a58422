#include "network/sonata_nodes.hpp"

#include <map>

#include "io/csv_table.hpp"
#include "io/hdf5_file.hpp"
#include "network/allen_glif.hpp"
#include "network/impl/sonata_common.hpp"
#include "util/error.hpp"
#include "util/json_reader.hpp"
#include "util/log.hpp"

using nlohmann::json;

namespace dpointnet {

using impl::join;

namespace {

struct NodeTypeInfo {
  bool is_virtual = false;
  NeuronParams params;
  DerivedNeuron derived;
};

}  // namespace

void read_sonata_nodes(const SimulationConfig& cfg, Network& net, std::vector<NeuronParams>& params_out) {
  for (std::size_t ni = 0; ni < cfg.nodes.size(); ++ni) {
    const auto& entry = cfg.nodes[ni];
    auto pair =
        impl::open_sonata_pair(cfg, "networks.nodes[" + std::to_string(ni) + "]", "nodes_file", entry.nodes_file,
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
      // Per-node dynamics_params overrides are not supported: refuse rather than ignore them.
      for (const std::string& g : file.children(base)) {
        const std::string dp = base + "/" + g + "/dynamics_params";
        if (file.is_group(dp) && !file.children(dp).empty())
          throw InputError(entry.nodes_file, where + " group " + g, "dynamics_params",
                           "per-node dynamics_params overrides are not supported");
      }
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
                throw InputError(entry.node_types_file, tlabel, "model_template",
                                 "\"" + *tmpl + "\" is not supported (nest:glif_psc, nest:iaf_psc_alpha)");
              model = model.substr(colon + 1);
            }
            auto dp = types.get(static_cast<std::size_t>(row), "dynamics_params");
            if (!dp) throw InputError(entry.node_types_file, tlabel, "dynamics_params", "is missing");
            const std::string dp_path = join(cfg.point_neuron_models_dir, *dp);
            const bool legacy = is_legacy_glif_template(model);
            if (model != "glif_psc" && model != "iaf_psc_alpha" && !legacy)
              throw InputError(entry.node_types_file, tlabel, "model_template",
                               "model \"" + *tmpl +
                                   "\" is not supported (nest:glif_psc, nest:iaf_psc_alpha; legacy nest:glif_lif_psc, "
                                   "nest:glif_lif_asc_psc)");
            json pj = read_json_file(dp_path, entry.node_types_file, tlabel, "dynamics_params");
            if (legacy) {  // BMTK's legacy names of GLIF1/GLIF3: glif_psc, from an Allen config converted as BMTK does
              const bool allen = is_allen_glif_config(pj);
              if (allen) pj = convert_allen_glif(model, pj, dp_path, tlabel);
              log::get()->info("{}: {}: model_template {} read as nest:glif_psc{}", entry.node_types_file, tlabel,
                               *tmpl, allen ? " (Allen GLIF config converted with BMTK's formulas)" : "");
              model = "glif_psc";
            }
            info.params = parse_neuron_params(model, pj, dp_path, tlabel);
            info.derived = derive_neuron(info.params, cfg.dt);
            check_derived_neuron(info.derived, dp_path, tlabel);
            if (info.derived.t_ref_steps > 32767)  // the simulator counts refractory steps in 16 bits
              throw InputError(dp_path, tlabel, "t_ref",
                               "t_ref = " + std::to_string(info.params.t_ref) +
                                   " ms is more than 32767 steps of run.dt = " + std::to_string(cfg.dt) + " ms");
          }
          it = type_cache.emplace(t, std::move(info)).first;
        }
        per_node[i] = &it->second;
        if (it->second.is_virtual) ++n_virtual;
      }
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
