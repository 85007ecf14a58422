#include "dpointnet/network/sonata_edges.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "dpointnet/io/csv_table.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/network/detail/sonata_common.hpp"
#include "dpointnet/network/nest_time.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_reader.hpp"
#include "dpointnet/util/log.hpp"

using nlohmann::json;

namespace dpointnet {

using detail::IdIndex;
using detail::join;

namespace {

struct EdgeTypeInfo {
  std::optional<double> syn_weight, delay, nsyns;
  int receptor = 0;
  bool warned = false;
};

}  // namespace

void read_sonata_edges(const SimulationConfig& cfg, Network& net, const std::vector<NeuronParams>& params) {
  std::vector<IdIndex> index;
  for (const auto& p : net.populations) index.emplace_back(p.node_ids);
  auto pop_index = [&](const std::string& name) -> int {
    for (std::size_t i = 0; i < net.populations.size(); ++i)
      if (net.populations[i].name == name) return static_cast<int>(i);
    return -1;
  };
  // projection 0: recurrent
  net.projections.clear();
  Projection rec;
  rec.recurrent = true;
  rec.n_sources = net.n_neurons;
  net.projections.push_back(std::move(rec));

  for (std::size_t ei = 0; ei < cfg.edges.size(); ++ei) {
    const auto& entry = cfg.edges[ei];
    auto pair =
        detail::open_sonata_pair(cfg, "networks.edges[" + std::to_string(ei) + "]", "edges_file", entry.edges_file,
                                 "edge_types_file", entry.edge_types_file, "edge_type_id", "/edges");
    h5::File& file = pair.h5;
    CsvTable& types = pair.types;
    for (const std::string& ename : file.children("/edges")) {
      const std::string base = "/edges/" + ename;
      if (!file.is_group(base)) continue;
      const std::string where = "edge population '" + ename + "'";
      const std::string src_ds = base + "/source_node_id", trg_ds = base + "/target_node_id";
      const std::string src_name = file.read_attr_string(src_ds, "node_population");
      const std::string trg_name = file.read_attr_string(trg_ds, "node_population");
      const int sp = pop_index(src_name), tp = pop_index(trg_name);
      if (sp < 0)
        throw InputError(entry.edges_file, where, "source_node_id",
                         "source population '" + src_name + "' is not among the loaded node files");
      if (tp < 0)
        throw InputError(entry.edges_file, where, "target_node_id",
                         "target population '" + trg_name + "' is not among the loaded node files");
      if (net.populations[static_cast<std::size_t>(tp)].is_virtual)
        throw InputError(entry.edges_file, where, "target_node_id",
                         "edges into the virtual population '" + trg_name + "' are not allowed");
      const auto src = file.read_int(src_ds);
      const auto trg = file.read_int(trg_ds);
      const auto etype = file.read_int(base + "/edge_type_id");
      const std::size_t ne = src.size();
      auto check_len = [&](const std::vector<std::int64_t>& v, const char* f) {
        if (v.size() != ne)
          throw InputError(entry.edges_file, where, f,
                           "has " + std::to_string(v.size()) + " entries but source_node_id has " + std::to_string(ne));
      };
      check_len(trg, "target_node_id");
      check_len(etype, "edge_type_id");
      std::vector<std::int64_t> egid(ne, 0), egidx(ne);
      for (std::size_t i = 0; i < ne; ++i) egidx[i] = static_cast<std::int64_t>(i);
      if (file.is_dataset(base + "/edge_group_id")) {
        egid = file.read_int(base + "/edge_group_id");
        check_len(egid, "edge_group_id");
      }
      if (file.is_dataset(base + "/edge_group_index")) {
        egidx = file.read_int(base + "/edge_group_index");
        check_len(egidx, "edge_group_index");
      }
      // per-group optional per-edge columns
      struct GroupCols {
        std::vector<double> syn_weight, delay, nsyns;
      };
      std::map<std::int64_t, GroupCols> groups;
      for (std::size_t i = 0; i < ne; ++i) {
        if (groups.count(egid[i])) continue;
        GroupCols gc;
        const std::string g = base + "/" + std::to_string(egid[i]);
        if (file.is_group(g)) {
          if (file.is_dataset(g + "/syn_weight")) gc.syn_weight = file.read_double(g + "/syn_weight");
          if (file.is_dataset(g + "/delay")) gc.delay = file.read_double(g + "/delay");
          if (file.is_dataset(g + "/nsyns"))
            gc.nsyns = file.read_double(g + "/nsyns");
          else if (file.is_dataset(g + "/n_syns_"))
            gc.nsyns = file.read_double(g + "/n_syns_");
        }
        groups.emplace(egid[i], std::move(gc));
      }
      std::map<std::int64_t, EdgeTypeInfo> tcache;
      auto type_info = [&](std::int64_t t) -> EdgeTypeInfo& {
        auto it = tcache.find(t);
        if (it != tcache.end()) return it->second;
        const std::string tlabel = where + " edge type " + std::to_string(t);
        const long row = types.find_row("edge_type_id", t);
        if (row < 0)
          throw InputError(entry.edge_types_file, tlabel, "edge_type_id",
                           "edge type " + std::to_string(t) + " used in " + entry.edges_file + " is not listed");
        const std::size_t r = static_cast<std::size_t>(row);
        EdgeTypeInfo info;
        info.syn_weight = types.get_double(r, "syn_weight", tlabel);
        info.delay = types.get_double(r, "delay", tlabel);
        info.nsyns = types.get_double(r, "nsyns", tlabel);
        if (auto dp = types.get(r, "dynamics_params")) {
          const std::string path = join(cfg.synaptic_models_dir, *dp);
          json sj = read_json_file(path, entry.edge_types_file, tlabel, "dynamics_params");
          if (sj.contains("receptor_type")) {
            if (!sj["receptor_type"].is_number_integer())
              throw InputError(path, tlabel, "receptor_type", "must be an integer");
            info.receptor = sj["receptor_type"].get<int>();
          }
        }
        if (types.get(r, "weight_function"))
          log::get()->warn("{}: {}: weight_function '{}' cannot be executed; using syn_weight * nsyns",
                           entry.edge_types_file, tlabel, *types.get(r, "weight_function"));
        return tcache.emplace(t, info).first->second;
      };

      const bool recurrent = !net.populations[static_cast<std::size_t>(sp)].is_virtual;
      int proj_idx = 0;
      if (!recurrent) {
        proj_idx = net.projection_of(src_name);
        if (proj_idx < 0) {
          Projection p;
          p.source_population = src_name;
          p.n_sources = net.populations[static_cast<std::size_t>(sp)].size;
          net.projections.push_back(std::move(p));
          proj_idx = static_cast<int>(net.projections.size()) - 1;
        }
      }
      Projection& proj = net.projections[static_cast<std::size_t>(proj_idx)];
      const int epop = static_cast<int>(net.edge_populations.size());
      net.edge_populations.push_back({ename, entry.edges_file, src_name, trg_name, static_cast<std::int64_t>(ne)});
      const Population& SP = net.populations[static_cast<std::size_t>(sp)];
      const Population& TP = net.populations[static_cast<std::size_t>(tp)];
      for (std::size_t i = 0; i < ne; ++i) {
        const std::string elabel = where + " edge " + std::to_string(i);
        const std::int64_t srow = index[static_cast<std::size_t>(sp)].row(src[i]);
        const std::int64_t trow = index[static_cast<std::size_t>(tp)].row(trg[i]);
        if (srow < 0)
          throw InputError(entry.edges_file, elabel, "source_node_id",
                           "node id " + std::to_string(src[i]) + " is not in population '" + src_name + "'");
        if (trow < 0)
          throw InputError(entry.edges_file, elabel, "target_node_id",
                           "node id " + std::to_string(trg[i]) + " is not in population '" + trg_name + "'");
        EdgeTypeInfo& ti = type_info(etype[i]);
        const GroupCols& gc = groups[egid[i]];
        const std::size_t gi = static_cast<std::size_t>(egidx[i]);
        auto pick = [&](const std::vector<double>& col, const std::optional<double>& csv, const char* f, bool required,
                        double dflt) -> double {
          if (!col.empty()) {
            if (gi >= col.size())
              throw InputError(entry.edges_file, elabel, "edge_group_index",
                               "index " + std::to_string(gi) + " is outside the group's " + f + " dataset");
            return col[gi];
          }
          if (csv) return *csv;
          if (required)
            throw InputError(entry.edge_types_file, where + " edge type " + std::to_string(etype[i]), f,
                             "is missing (neither in the edges file nor in the edge types table)");
          return dflt;
        };
        const double syn_weight = pick(gc.syn_weight, ti.syn_weight, "syn_weight", true, 0);
        const double delay_ms = pick(gc.delay, ti.delay, "delay", true, 0);
        const double nsyns = pick(gc.nsyns, ti.nsyns, "nsyns", false, 1.0);
        const double w = syn_weight * nsyns;
        if (!std::isfinite(w)) throw InputError(entry.edges_file, elabel, "syn_weight", "is not finite");
        if (!std::isfinite(delay_ms)) throw InputError(entry.edges_file, elabel, "delay", "is not finite");
        // discrete: round half to even; nest: NEST's delay_ms_to_steps (half up), 0 steps is its BadDelay
        const double dsteps = cfg.dynamics == Dynamics::Nest ? nest_time::delay_steps(delay_ms, cfg.dt)
                                                             : std::nearbyint(delay_ms / cfg.dt);
        if (dsteps < 1)
          throw InputError(entry.edges_file, elabel, "delay",
                           "delay " + std::to_string(delay_ms) + " ms rounds to " +
                               std::to_string(static_cast<long long>(std::max(dsteps, -1e18))) +
                               " steps of dt = " + std::to_string(cfg.dt) + " ms; at least 1 step is required");
        if (dsteps > 65535)
          throw InputError(entry.edges_file, elabel, "delay",
                           "delay " + std::to_string(delay_ms) + " ms is more than 65535 steps of dt");
        const std::int64_t tgt = TP.offset + trow;
        const NeuronParams& np = params[static_cast<std::size_t>(tgt)];
        int channel = 0;
        if (np.kind != ModelKind::IafPscAlpha) {
          const int nr = np.n_receptors;
          if (ti.receptor < 1 || ti.receptor > nr)
            throw InputError(entry.edge_types_file, where + " edge type " + std::to_string(etype[i]), "receptor_type",
                             "receptor port " + std::to_string(ti.receptor) + " is outside 1.." + std::to_string(nr) +
                                 (np.kind == ModelKind::GlifPsc ? " (len(tau_syn))" : " (len(tau_syn_fast))") +
                                 " of target node type " +
                                 std::to_string(TP.node_type_ids[static_cast<std::size_t>(trow)]));
          channel = ti.receptor - 1;
        } else {
          if (ti.receptor != 0)
            throw InputError(entry.edge_types_file, where + " edge type " + std::to_string(etype[i]), "receptor_type",
                             "must be 0 for iaf_psc_alpha targets, got " + std::to_string(ti.receptor));
          // NEST's iaf_psc_alpha::handle: weight > 0 excitatory, else (0 too) inhibitory; discrete: 0 excitatory
          channel = (cfg.dynamics == Dynamics::Nest ? w > 0 : w >= 0) ? 0 : 1;
        }
        proj.source.push_back(recurrent ? SP.offset + srow : srow);
        proj.target.push_back(tgt);
        proj.channel.push_back(channel);
        proj.delay_steps.push_back(static_cast<int>(dsteps));
        proj.weight_pA.push_back(w);
        proj.nsyns.push_back(nsyns);
        proj.edge_population.push_back(epop);
        proj.edge_row.push_back(static_cast<std::int64_t>(i));
      }
    }
  }
}

}  // namespace dpointnet
