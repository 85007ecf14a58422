// Tests of the LGN -> V1 rule of `dpointnet generate --visual` (src/generator/lgn_edges.cpp): the properties that
// select_lgn_sources_powerlaw (AllenInstitute/biorealistic-v1-model edge_funcs.py) states, with its constants
// (40 degree candidate radius, 0.07 / 0.04 degrees per um, 15 degree orientation window, 2.5 degree subfield
// offset) and the per-type parameters of its lgn_params.json, and loading with dpointnet's readers.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "generator_support.hpp"

namespace fs = std::filesystem;
using namespace dpointnet;
using namespace dpointnet::test;

namespace {

// Per V1 pop_name: sON_ratio and yuleParameter (lgn_params.json), and the sources per cell,
// round(500 x synapse_ratio_against_e4 x (yule - 1) / yule) as numpy rounds it (half to even: 262.5 -> 262).
struct TypeRule {
  double son_ratio, yule;
  int k;
};
const std::map<std::string, TypeRule> kRule = {
    {"i1Htr3a", {0.75, 4.1, 37}},  {"e23Cux2", {0.90, 2.8, 193}}, {"i23Pvalb", {0.75, 2.4, 262}},
    {"i23Sst", {0.75, 3.6, 90}},   {"i23Vip", {0.75, 4.1, 159}},  {"e4Scnn1a", {0.90, 3.1, 339}},
    {"i4Pvalb", {0.75, 2.4, 805}}, {"i4Sst", {0.75, 3.6, 347}},   {"i4Vip", {0.75, 4.1, 295}},
    {"e5Rbp4", {0.50, 4.0, 131}},  {"i5Pvalb", {0.50, 2.4, 414}}, {"i5Sst", {0.50, 3.6, 177}},
    {"i5Vip", {0.50, 4.1, 102}},   {"e6Ntsr1", {0.90, 3.4, 39}},  {"i6Pvalb", {0.75, 2.4, 58}},
    {"i6Sst", {0.75, 3.6, 29}},    {"i6Vip", {0.75, 4.1, 9}},
};
constexpr double kPi = 3.141592653589793;

struct Visual {
  std::vector<std::string> v1_pop, lgn_pop;
  std::vector<double> vx, vz, vta, lx, ly, lta;
  Edges e;
};

Visual load(const GeneratorOptions& o) {
  const fs::path net = fs::path(o.out_dir) / "network";
  Visual v;
  v.v1_pop = node_pop_names(net, "v1");
  v.lgn_pop = node_pop_names(net, "lgn");
  auto fv = h5::File::open_read((net / "v1_nodes.h5").string());
  v.vx = fv.read_double("/nodes/v1/0/x");
  v.vz = fv.read_double("/nodes/v1/0/z");
  v.vta = fv.read_double("/nodes/v1/0/tuning_angle");
  auto fl = h5::File::open_read((net / "lgn_nodes.h5").string());
  v.lx = fl.read_double("/nodes/lgn/0/x");
  v.ly = fl.read_double("/nodes/lgn/0/y");
  v.lta = fl.read_double("/nodes/lgn/0/tuning_angle");
  v.e = read_edges(net / "lgn_v1_edges.h5", "lgn_to_v1");
  return v;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// The candidate rule every edge obeys: RF centre within 40 degrees of the cell's visual-field position.
void expect_within_pool(const Visual& v) {
  for (std::size_t i = 0; i < v.e.size(); ++i) {
    const auto s = static_cast<std::size_t>(v.e.src[i]), t = static_cast<std::size_t>(v.e.trg[i]);
    const double cx = 60.0 + 0.07 * v.vx[t], cy = 40.0 + 0.04 * v.vz[t];
    ASSERT_LE(std::hypot(v.lx[s] - cx, v.ly[s] - cy), 40.0 + 1e-9) << "edge " << i;
  }
}

}  // namespace

TEST_F(GeneratorTest, VisualLgnRuleProperties) {
  GeneratorOptions o = options("rule", 1500, 50);
  o.visual = true;
  o.seed = 11;
  generate_network(o);
  const Visual v = load(o);
  const Edges& e = v.e;
  const std::size_t n = v.v1_pop.size();
  expect_within_pool(v);
  std::vector<std::size_t> first(n + 1, e.size());
  for (std::size_t i = e.size(); i-- > 0;) first[static_cast<std::size_t>(e.trg[i])] = i;
  for (std::size_t t = n; t-- > 0;) first[t] = std::min(first[t], first[t + 1]);
  std::map<double, std::pair<int, int>> on_cells;  // sON_ratio -> (cells with an ON subfield, cells with either)
  std::map<double, std::pair<long, long>> single;  // yule -> (edges with 1 synapse, edges)
  double cos_sum = 0, near_multi = 0, near_single = 0;
  long n_axis = 0, n_multi = 0, n_single = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const TypeRule& r = kRule.at(v.v1_pop[t]);
    ASSERT_EQ(static_cast<int>(first[t + 1] - first[t]), r.k) << v.v1_pop[t] << " cell " << t;
    bool son = false, soff = false;
    double sx = 0, sy = 0, tx = 0, ty = 0;
    int ns = 0, nt = 0;
    for (std::size_t i = first[t]; i < first[t + 1]; ++i) {
      const std::string& p = v.lgn_pop[static_cast<std::size_t>(e.src[i])];
      const auto s = static_cast<std::size_t>(e.src[i]);
      son |= starts(p, "sON_");
      soff |= starts(p, "sOFF_");
      if (starts(p, "sON_") || starts(p, "sOFF_")) {
        sx += v.lx[s];
        sy += v.ly[s];
        ++ns;
      }
      if (starts(p, "tOFF_")) {
        tx += v.lx[s];
        ty += v.ly[s];
        ++nt;
      }
      const bool composite = p == "sONsOFF_001" || p == "sONtOFF_001";
      if (composite) {
        const double d = std::fabs(std::fmod(std::fabs(v.lta[s] - v.vta[t] - 90.0), 180.0) - 90.0);
        EXPECT_LT(d, 15.0) << "composite source " << s << " of cell " << t;
      }
      EXPECT_GE(e.nsyns[i], 1);
      auto& c = single[r.yule];
      c.first += e.nsyns[i] == 1 ? 1 : 0;
      ++c.second;
      EXPECT_DOUBLE_EQ(e.delay[i], 1.7);
      EXPECT_GT(e.weight[i], 0.0);
      EXPECT_DOUBLE_EQ(e.weight[i], e.weight[first[t]]);
      EXPECT_EQ(e.type[i], v.v1_pop[t][0] == 'e' ? 200 : 201);
    }
    EXPECT_FALSE(son && soff) << "cell " << t << " has both sON and sOFF sources";
    if (son || soff) {
      on_cells[r.son_ratio].first += son ? 1 : 0;
      ++on_cells[r.son_ratio].second;
    }
    if (ns >= 3 && nt >= 3) {  // sustained subfield at c + 2.5 u, transient at c - 2.5 u, u = +-tuning direction
      const double dx = sx / ns - tx / nt, dy = sy / ns - ty / nt, th = v.vta[t] * kPi / 180.0;
      cos_sum += std::fabs(dx * std::cos(th) + dy * std::sin(th)) / std::hypot(dx, dy);
      ++n_axis;
    }
    if (son != soff) {  // the subfield sign is known: distances as the rule measures them
      const double th = v.vta[t] * kPi / 180.0, ux = (son ? 1 : -1) * std::cos(th), uy = (son ? 1 : -1) * std::sin(th);
      const double cx = 60.0 + 0.07 * v.vx[t], cy = 40.0 + 0.04 * v.vz[t];
      for (std::size_t i = first[t]; i < first[t + 1]; ++i) {
        const auto s = static_cast<std::size_t>(e.src[i]);
        const std::string& p = v.lgn_pop[s];
        const bool composite = p == "sONsOFF_001" || p == "sONtOFF_001";
        const double shift = starts(p, "tOFF_") ? 2.5 : composite ? 0.0 : -2.5;
        const double rx = v.lx[s] + shift * ux - cx, ry = v.ly[s] + shift * uy - cy;
        const double a = (rx * ux + ry * uy) * std::sqrt(1.5), b = (ry * ux - rx * uy) / std::sqrt(1.5);
        (e.nsyns[i] > 1 ? near_multi : near_single) += std::hypot(a, b);
        ++(e.nsyns[i] > 1 ? n_multi : n_single);
      }
    }
  }
  // the sustained-transient axis follows the tuning angle
  ASSERT_GT(n_axis, 1000);
  EXPECT_GT(cos_sum / static_cast<double>(n_axis), 0.9);
  // ON or OFF sustained subfield with probability sON_ratio (4 sigma)
  for (const auto& [ratio, c] : on_cells) {
    const double f = static_cast<double>(c.first) / c.second, sd = std::sqrt(ratio * (1 - ratio) / c.second);
    EXPECT_NEAR(f, ratio, 4 * sd) << "sON_ratio " << ratio << " over " << c.second << " cells";
  }
  // synapses per connection ~ Yule-Simon(rho): P(1) = rho / (rho + 1)
  for (const auto& [rho, c] : single) {
    const double p = rho / (rho + 1), f = static_cast<double>(c.first) / c.second;
    EXPECT_NEAR(f, p, 4 * std::sqrt(p * (1 - p) / c.second) + 1e-3) << "yule " << rho;
  }
  // connections with several synapses are the nearer ones
  EXPECT_LT(near_multi / n_multi, near_single / n_single);
}

// A small LGN (2 x 2 tiles): the column shrinks to its field; sources stay within the pool, and a type needing
// more sources than there are candidates gets all of them (fewer than its number).
TEST_F(GeneratorTest, VisualLgnRuleSmallField) {
  GeneratorOptions o = options("small", 600, 50);
  o.visual = true;
  o.lgn_tiles_x = 2;
  o.lgn_tiles_y = 2;
  generate_network(o);
  const Visual v = load(o);
  ASSERT_EQ(v.lgn_pop.size(), 464u);
  expect_within_pool(v);
  std::vector<int> indeg(v.v1_pop.size(), 0);
  for (std::int64_t t : v.e.trg) ++indeg[static_cast<std::size_t>(t)];
  for (std::size_t t = 0; t < indeg.size(); ++t) {
    const int k = kRule.at(v.v1_pop[t]).k;
    EXPECT_LE(indeg[t], k) << v.v1_pop[t];
    EXPECT_LT(indeg[t], 464) << v.v1_pop[t];
    if (k <= 39) EXPECT_EQ(indeg[t], k) << v.v1_pop[t];  // i6Vip, i6Sst, i1Htr3a, e6Ntsr1: enough candidates
    if (k == 805) EXPECT_LT(indeg[t], k);                // i4Pvalb: capped at the candidates
  }
}

// dpointnet's readers load a visual network; LGN weights are syn_weight x nsyns.
TEST_F(GeneratorTest, VisualLoadsWithDpointnetReaders) {
  GeneratorOptions o = options("load", 300, 60);
  o.visual = true;
  o.lgn_tiles_x = 6;
  o.lgn_tiles_y = 4;
  generate_network(o);
  const SimulationConfig cfg = SimulationConfig::load((fs::path(o.out_dir) / "config.simulation.json").string());
  const Network net = build_network(cfg);
  EXPECT_EQ(net.n_neurons, 300);
  const Edges lgn = read_edges(fs::path(o.out_dir) / "network/lgn_v1_edges.h5", "lgn_to_v1");
  const Projection* p = nullptr;
  for (const Projection& q : net.projections)
    if (q.source_population == "lgn") p = &q;
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->size(), lgn.size());
  for (std::size_t i = 0; i < p->size(); ++i) {
    const auto row = static_cast<std::size_t>(p->edge_row[i]);
    ASSERT_DOUBLE_EQ(p->weight_pA[i], lgn.weight[row] * static_cast<double>(lgn.nsyns[row]));
  }
}
