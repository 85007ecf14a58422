// V1-like SONATA network generator (see docs/generator.md).
//
// Layout written (docs/simulation.md): one nodes file and one node-types CSV per population (v1, lgn, bkg),
// one edges file and one edge-types CSV per projection (v1->v1, lgn->v1, bkg->v1), the GLIF3 and synapse
// component JSONs, a circuit config and a simulation config. Visual networks (options.visual) differ in the V1
// node types and positions (v1_nodes.cpp), the LGN nodes (lgn_nodes.cpp) and the LGN -> V1 rule (lgn_edges.cpp).
//
// Randomness: the generator has its own streams, std::mt19937_64 seeded from (options.seed, purpose) through
// splitmix64; one stream per purpose (node placement, topology and weights of each projection), so that e.g.
// changing a weight constant keeps the topology. All distributions are implemented here (not std::*_distribution,
// whose output is library-specific), so a seed and a set of options give the same network with any standard
// library; only libm's log/exp/sqrt/cos could differ in the last bit between platforms.
//
// Memory: edges are generated target by target into flat columns (source uint32, type uint8, weight and delay
// float64: 21 bytes per edge), then written dataset by dataset; 200,000 x 370 synapses (74 M edges) peaks at
// about 3 GB.
#include "dpointnet/generator/network_generator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <vector>

#include "dpointnet/generator/cell_types.hpp"
#include "dpointnet/generator/edge_files.hpp"
#include "dpointnet/generator/lgn_edges.hpp"
#include "dpointnet/generator/lgn_nodes.hpp"
#include "dpointnet/generator/plan.hpp"
#include "dpointnet/generator/sampling.hpp"
#include "dpointnet/generator/v1_nodes.hpp"
#include "dpointnet/generator/visual_types.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/log.hpp"

namespace dpointnet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace generator;

// How a projection picks the sources of one target.
enum class Topology {
  AllOthers,  // every other neuron independently with p = in_degree / (n - 1) (recurrent, no self-connection)
  Bernoulli,  // every source independently with p = in_degree / n_source
  ExactlyK,   // exactly in_degree distinct sources (Floyd's sampling), sorted
};

struct ProjectionRule {
  EdgeFileSpec file;
  const char* types_csv;
  Purpose topology_purpose, weight_purpose;
  Topology topology;
  double in_degree;
  bool recurrent;  // synapse type by (source, target) E/I and distance-dependent delays; else by target only
};

class SourcePicker {
 public:
  SourcePicker(Topology kind, std::uint64_t n_source, double in_degree)
      : kind_(kind), m_(n_source), k_(static_cast<std::uint64_t>(in_degree)) {
    p_ = kind == Topology::AllOthers ? in_degree / static_cast<double>(n_source - 1)
                                     : in_degree / static_cast<double>(n_source);
    if (kind == Topology::ExactlyK) chosen_.assign(static_cast<std::size_t>(m_), 0);
  }
  // Calls f(source) for the sources of target t, in increasing order.
  template <class F>
  void pick(Rng& rng, std::size_t t, F&& f) {
    if (kind_ == Topology::AllOthers) {
      bernoulli_subset(rng, m_ - 1, p_, [&](std::uint64_t c) { f(c < t ? c : c + 1); });
    } else if (kind_ == Topology::Bernoulli) {
      bernoulli_subset(rng, m_, p_, f);
    } else {
      picks_.clear();
      for (std::uint64_t j = m_ - k_; j < m_; ++j) {
        std::uint64_t c = rng.below(j + 1);
        if (chosen_[c]) c = j;
        chosen_[c] = 1;
        picks_.push_back(static_cast<std::uint32_t>(c));
      }
      std::sort(picks_.begin(), picks_.end());
      for (std::uint32_t s : picks_) {
        chosen_[s] = 0;
        f(s);
      }
    }
  }

 private:
  Topology kind_;
  std::uint64_t m_, k_;
  double p_ = 0;
  std::vector<char> chosen_;
  std::vector<std::uint32_t> picks_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void generate_network(const GeneratorOptions& opt) {
  const Plan plan = make_plan(opt);  // throws before anything is written
  const auto t_start = std::chrono::steady_clock::now();
  auto logger = log::get();

  // Parse the embedded cell models (rheobase scaling of the weights) before touching the disk.
  double rheobase[kNumCellTypes];
  double rheobase_mean = 0;
  for (int t = 0; t < kNumCellTypes; ++t) {
    const json j = json::parse(kCellTypes[t].json_text);
    rheobase[t] = j.at("g").get<double>() * (j.at("V_th").get<double>() - j.at("E_L").get<double>());
    rheobase_mean += rheobase[t] / kNumCellTypes;
  }
  double weight_scale[kNumCellTypes];
  for (int t = 0; t < kNumCellTypes; ++t) weight_scale[t] = rheobase[t] / rheobase_mean;

  const fs::path out(opt.out_dir);
  std::error_code ec;
  const bool created_out = !fs::exists(out, ec);
  try {
    const fs::path net_dir = out / "network";
    const fs::path cell_dir = out / "components" / "cell_models";
    const fs::path syn_dir = out / "components" / "synaptic_models";
    for (const fs::path& d : {net_dir, cell_dir, syn_dir}) {
      fs::create_directories(d, ec);
      if (ec) throw InputError(d.string(), "", "", "cannot create directory: " + ec.message());
    }
    const std::int64_t n = plan.n;
    const std::size_t nz = static_cast<std::size_t>(n);
    logger->info("generate: {} neurons ({} E, {} I), {} LGN, {} background sources, seed {} -> {}", n, plan.n_exc,
                 n - plan.n_exc, plan.n_lgn, plan.n_bkg, opt.seed, out.string());
    if (plan.visual)
      logger->info("generate: visual: 17 V1 cell types in a column of radius {} um, LGN {} x {} tiles of 8 degrees",
                   plan.column_radius, plan.lgn_tiles_x, plan.lgn_tiles_y);
    if (plan.k_rec < opt.synapses_per_neuron)
      logger->warn("generate: synapses_per_neuron {} capped at n_neurons - 1 = {}", opt.synapses_per_neuron,
                   plan.k_rec);
    if (!plan.visual && plan.k_lgn < opt.lgn_per_neuron)
      logger->warn("generate: lgn_per_neuron {} capped at the number of LGN nodes {}", opt.lgn_per_neuron, plan.k_lgn);

    // ---- components
    for (const CellType& c : kCellTypes) write_text(cell_dir / c.file, c.json_text);
    auto write_syn = [&](const SynType& s) {
      write_text(syn_dir / s.dynamics_params, "{\n  \"receptor_type\": " + std::to_string(s.receptor) + "\n}\n");
    };
    for (const SynType& s : kRecurrentTypes) write_syn(s);
    write_syn(kLgnTypes[0]);
    write_syn(kBkgTypes[0]);

    // ---- v1 nodes: type blocks, positions in the column, tuning angles
    V1Nodes v1 = place_v1_nodes(plan, opt.seed);
    write_nodes_file(net_dir / "v1_nodes.h5", "v1", v1.node_type_id,
                     {{"x", v1.x}, {"y", v1.y}, {"z", v1.z}, {"tuning_angle", v1.tuning}}, opt.overwrite);
    write_text(net_dir / "v1_node_types.csv", v1_node_types_csv(plan.visual));
    std::vector<std::uint64_t>().swap(v1.node_type_id);
    LgnNodes lgn;
    if (plan.visual) {
      lgn = make_lgn_nodes(plan.lgn_tiles_x, plan.lgn_tiles_y, opt.seed);
      write_nodes_file(net_dir / "lgn_nodes.h5", "lgn", lgn_node_type_ids(lgn), lgn_attribute_columns(lgn),
                       opt.overwrite);
      write_text(net_dir / "lgn_node_types.csv", lgn_node_types_csv());
    } else {
      write_nodes_file(net_dir / "lgn_nodes.h5", "lgn",
                       std::vector<std::uint64_t>(static_cast<std::size_t>(plan.n_lgn), kLgnNodeType), {},
                       opt.overwrite);
      write_text(net_dir / "lgn_node_types.csv",
                 "node_type_id model_type pop_name ei\n" + std::to_string(kLgnNodeType) + " virtual lgn e\n");
    }
    write_nodes_file(net_dir / "bkg_nodes.h5", "bkg",
                     std::vector<std::uint64_t>(static_cast<std::size_t>(plan.n_bkg), kBkgNodeType), {}, opt.overwrite);
    write_text(net_dir / "bkg_node_types.csv",
               "node_type_id model_type pop_name ei\n" + std::to_string(kBkgNodeType) + " virtual bkg e\n");

    const WeightSampler sampler(kWeightCv, kWeightTruncation);
    auto is_inh = [&](std::size_t node) { return v1.inhibitory(node) ? 1 : 0; };
    const auto& x = v1.x;
    const auto& y = v1.y;
    const auto& z = v1.z;
    // The projections as a table of rules; one loop builds each, target by target, and writes it.
    const auto nu = static_cast<std::uint64_t>(n);
    const ProjectionRule rules[] = {
        {{"v1_v1_edges.h5", "v1_to_v1", "v1", "v1", nu, nu, kRecurrentTypes, 4},
         "v1_v1_edge_types.csv",
         kPurposeRecurrentTopology,
         kPurposeRecurrentWeights,
         Topology::AllOthers,
         plan.k_rec,
         true},
        {{"lgn_v1_edges.h5", "lgn_to_v1", "lgn", "v1", static_cast<std::uint64_t>(plan.n_lgn), nu,
          plan.visual ? kVisualLgnTypes : kLgnTypes, 2},
         "lgn_v1_edge_types.csv",
         kPurposeLgnTopology,
         kPurposeLgnWeights,
         Topology::Bernoulli,
         plan.k_lgn,
         false},
        {{"bkg_v1_edges.h5", "bkg_to_v1", "bkg", "v1", static_cast<std::uint64_t>(plan.n_bkg), nu, kBkgTypes, 2},
         "bkg_v1_edge_types.csv",
         kPurposeBkgTopology,
         kPurposeBkgWeights,
         Topology::ExactlyK,
         static_cast<double>(plan.k_bkg),
         false},
    };
    // The edges of a rule's projection, target by target, in flat columns.
    auto build_edges = [&](const ProjectionRule& rule) {
      const EdgeFileSpec& pr = rule.file;
      EdgeSet e;
      e.reserve(rule.topology == Topology::ExactlyK ? nz * static_cast<std::size_t>(plan.k_bkg)
                                                    : reserve_estimate(static_cast<double>(n), rule.in_degree),
                nz);
      Rng topo(opt.seed, rule.topology_purpose), wrng(opt.seed, rule.weight_purpose);
      const double fixed_delay = std::max(pr.types[0].delay_ms, plan.min_delay);
      SourcePicker picker(rule.topology, pr.n_source, rule.in_degree);
      for (std::size_t t = 0; t < nz; ++t) {
        const int t_inh = is_inh(t);
        const double scale = weight_scale[v1.glif[t]];
        picker.pick(topo, t, [&](std::uint64_t s) {
          const int k = rule.recurrent ? 2 * is_inh(s) + t_inh : t_inh;
          const SynType& st = pr.types[k];
          const double w = std::copysign(sampler.draw(wrng, std::fabs(st.weight_pA) * scale), st.weight_pA);
          double d = fixed_delay;
          if (rule.recurrent) {
            const double dx = x[s] - x[t], dy = y[s] - y[t], dz = z[s] - z[t];
            d = 1.0 + std::sqrt(dx * dx + dy * dy + dz * dz) / kAxonVelocity + kDelayJitter * wrng.uniform();
            d = std::min(std::max(d, plan.min_delay), std::max(kMaxDelay, plan.min_delay));
          }
          e.push(static_cast<std::uint32_t>(s), static_cast<std::uint8_t>(k), w, d);
        });
        e.end_target();
      }
      return e;
    };
    for (const ProjectionRule& rule : rules) {
      const auto t0 = std::chrono::steady_clock::now();
      const EdgeFileSpec& pr = rule.file;
      EdgeSet e;
      if (plan.visual && rule.topology_purpose == kPurposeLgnTopology) {
        std::size_t capped = 0;
        e = connect_lgn_to_v1(lgn, v1, plan, opt.seed, weight_scale, &capped);
        if (capped > 0)
          logger->warn(
              "generate: {} V1 cells got fewer LGN sources than their type's number (fewer candidate LGN "
              "units within {} degrees; more --lgn-tiles-x/-y or a smaller --column-radius help)",
              capped, kLgnPoolRadius);
      } else {
        e = build_edges(rule);
      }
      const std::size_t n_edges = e.size();
      write_edges_file(net_dir / pr.file, pr, e, opt.overwrite, opt.gzip);
      write_text(net_dir / rule.types_csv, edge_types_csv(pr.types, pr.n_types));
      logger->info("generate: {}: {} edges (mean in-degree {:.1f}) in {:.1f} s", pr.population, n_edges,
                   static_cast<double>(n_edges) / static_cast<double>(n), seconds_since(t0));
    }

    // ---- configs
    json circuit = {
        {"manifest",
         {{"$BASE_DIR", "${configdir}"},
          {"$NETWORK_DIR", "$BASE_DIR/network"},
          {"$COMPONENTS_DIR", "$BASE_DIR/components"}}},
        {"components",
         {{"point_neuron_models_dir", "$COMPONENTS_DIR/cell_models"},
          {"synaptic_models_dir", "$COMPONENTS_DIR/synaptic_models"}}},
        {"networks", {{"nodes", json::array()}, {"edges", json::array()}}},
    };
    for (const char* pop : {"v1", "lgn", "bkg"})
      circuit["networks"]["nodes"].push_back(
          {{"nodes_file", std::string("$NETWORK_DIR/") + pop + "_nodes.h5"},
           {"node_types_file", std::string("$NETWORK_DIR/") + pop + "_node_types.csv"}});
    for (const char* src : {"v1", "lgn", "bkg"})
      circuit["networks"]["edges"].push_back(
          {{"edges_file", std::string("$NETWORK_DIR/") + src + "_v1_edges.h5"},
           {"edge_types_file", std::string("$NETWORK_DIR/") + src + "_v1_edge_types.csv"}});
    write_text(out / "config.circuit.json", circuit.dump(2) + "\n");

    json sim = {
        {"network", "config.circuit.json"},
        {"target_simulator", "NEST"},
        {"run", {{"dt", opt.dt}, {"tstop", opt.tstop}, {"seed", opt.seed}}},
        {"inputs",
         {{"LGN", {{"input_type", "rates"}, {"node_set", "lgn"}, {"rate", opt.lgn_rate_hz}}},
          {"BKG", {{"input_type", "poisson"}, {"node_set", "bkg"}, {"rate", opt.bkg_rate_hz}}}}},
        {"output",
         {{"output_dir", "output"},
          {"spikes_file", "spikes.h5"},
          {"log_file", "log.txt"},
          {"overwrite_output_dir", true}}},
    };
    // a network that can see: drifting gratings of 8 directions, one per sample, on the V1 model's screen, whose
    // elevation points up (FilterNet's y_dir "up" in the V1 model's config: the dpointnet convention)
    if (opt.visual)
      sim["inputs"]["LGN"] = {{"input_type", "lgn"},
                              {"node_set", "lgn"},
                              {"direction_convention", "dpointnet"},
                              {"stimulus",
                               {{"type", "drifting_grating"},
                                {"direction", {0, 45, 90, 135, 180, 225, 270, 315}},
                                {"temporal_frequency", 2.0},
                                {"spatial_frequency", 0.04},
                                {"contrast", 0.8}}}};
    write_text(out / "config.simulation.json", sim.dump(2) + "\n");
    logger->info("generate: wrote {} in {:.1f} s", (out / "config.simulation.json").string(), seconds_since(t_start));
  } catch (...) {
    // Leave nothing half-written behind in a directory that this call created.
    if (created_out) fs::remove_all(out, ec);
    throw;
  }
}

}  // namespace dpointnet