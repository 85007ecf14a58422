// Tests of `dpointnet generate --visual` (docs/generator.md, "Visual networks"): the LGN units (classes, counts per
// tile, attribute ranges) and the V1 cells (the 17 cell types, layers, column). Expected numbers come from the
// V1 model's files as the project's shared data and specification give them (data/lgn/README.md, lgn_models.csv;
// spec/V1-PAPER.md sections 2.1 and 3), not from the generator's tables.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "generator_support.hpp"

namespace fs = std::filesystem;
using namespace dpointnet;
using namespace dpointnet::test;

namespace {

// lgn_models.csv: class, N per 8 x 8 degree tile, min_size, max_size.
struct ClassRow {
  const char* name;
  int per_tile;
  double min_size, max_size;
};
const ClassRow kClasses[14] = {
    {"sON_TF1", 7, 2, 9},     {"sON_TF2", 5, 2, 9},     {"sON_TF4", 7, 2, 9},   {"sON_TF8", 15, 2, 9},
    {"sOFF_TF1", 8, 2, 9},    {"sOFF_TF2", 8, 2, 9},    {"sOFF_TF4", 15, 2, 9}, {"sOFF_TF8", 8, 2, 9},
    {"sOFF_TF15", 7, 2, 9},   {"tOFF_TF4", 10, 2, 9},   {"tOFF_TF8", 5, 2, 9},  {"tOFF_TF15", 8, 2, 9},
    {"sONsOFF_001", 8, 6, 6}, {"sONtOFF_001", 5, 9, 9},
};

// V1-PAPER 2.1: nominal w0, w1, kpeak0, kpeak1, delay0, delay1 of a fitted filter.
struct Fit {
  double w0, w1, k0, k1, d0, d1;
};
const std::map<std::string, Fit> kFits = {
    {"sON_TF1", {1.0000309, -0.4461606, 56.525576, 137.440933, 0, 15}},
    {"sON_TF2", {4.2823315, -1.4275451, 31.208438, 137.062397, 0, 5}},
    {"sON_TF4", {3.5940406, -1.8145831, 30.758869, 58.358460, 0, 25}},
    {"sON_TF8", {3.7052597, -1.7538397, 12.941033, 28.278077, 0, 25}},
    {"sOFF_TF1", {2.1142403, -1.2215256, 54.480704, 127.921155, 0, 5}},
    {"sOFF_TF2", {3.1825794, -1.1407120, 19.845617, 92.023607, 0, 25}},
    {"sOFF_TF4", {3.2298149, -1.6587975, 22.246198, 56.100363, 0, 15}},
    {"sOFF_TF8", {3.2506479, -1.6838099, 18.034006, 51.215374, 0, 15}},
    {"sOFF_TF15", {10.0, -3.2605712, 4.736240, 21.597076, 0, 5}},
    {"tOFF_TF4", {3.3459808, -2.1819898, 29.157972, 59.362680, 0, 15}},
    {"tOFF_TF8", {4.2184898, -2.4049898, 8.524645, 23.246817, 0, 0}},
    {"tOFF_TF15", {3.4416604, -2.1155995, 8.269734, 19.991488, 0, 0}},
};

// v in [0.975, 1.025] x nominal (the nominal values are rounded to 7-8 digits).
void expect_jittered(double v, double nominal, const std::string& what) {
  const double lo = std::min(0.975 * nominal, 1.025 * nominal), hi = std::max(0.975 * nominal, 1.025 * nominal);
  const double slack = 1e-6 * std::fabs(nominal) + 1e-12;
  EXPECT_TRUE(v >= lo - slack && v <= hi + slack) << what << " = " << v << ", nominal " << nominal;
}

// V1-PAPER 3: pop_name -> cell type (layer from the second character, 2 -> 2/3; class by marker, else Exc).
std::string cell_type(const std::string& pop) {
  if (pop.size() < 2) return "?";
  const char l = pop[1];
  if (l == '1') return "L1 Htr3a";
  const std::string layer = l == '2' ? "L2/3" : std::string("L") + l;
  const auto has = [&](const char* s) { return pop.find(s) != std::string::npos; };
  if (has("Pvalb")) return layer + " PV";
  if (has("Sst")) return layer + " SST";
  if (has("Vip") || has("Htr3a")) return layer + " VIP";
  return layer + " Exc";
}

void check_lgn(const fs::path& net, int tiles_x, int tiles_y) {
  const std::vector<std::string> pop = node_pop_names(net, "lgn");
  auto f = h5::File::open_read((net / "lgn_nodes.h5").string());
  auto col = [&](const char* name) { return f.read_double(std::string("/nodes/lgn/0/") + name); };
  const auto x = col("x"), y = col("y"), size = col("spatial_size"), ta = col("tuning_angle"), sf = col("sf_sep");
  const char* dom[6] = {"weight_dom_0", "weight_dom_1", "kpeaks_dom_0", "kpeaks_dom_1", "delay_dom_0", "delay_dom_1"};
  const char* nd[6] = {"weight_non_dom_0", "weight_non_dom_1", "kpeaks_non_dom_0",
                       "kpeaks_non_dom_1", "delay_non_dom_0",  "delay_non_dom_1"};
  std::vector<std::vector<double>> d, n;
  for (int k = 0; k < 6; ++k) {
    d.push_back(col(dom[k]));
    n.push_back(col(nd[k]));
  }
  const int tiles = tiles_x * tiles_y;
  ASSERT_EQ(pop.size(), static_cast<std::size_t>(116 * tiles));
  ASSERT_EQ(x.size(), pop.size());
  const double x0 = 60.0 - 4.0 * tiles_x, y0 = 40.0 - 4.0 * tiles_y;  // the block of tiles centred on (60, 40)
  std::map<std::string, int> per_class;
  std::map<std::pair<std::string, int>, int> per_tile;
  for (std::size_t u = 0; u < pop.size(); ++u) {
    const std::string& p = pop[u];
    ++per_class[p];
    ASSERT_TRUE(x[u] >= x0 && x[u] <= x0 + 8.0 * tiles_x) << u << " x " << x[u];
    ASSERT_TRUE(y[u] >= y0 && y[u] <= y0 + 8.0 * tiles_y) << u << " y " << y[u];
    ++per_tile[{p, static_cast<int>((x[u] - x0) / 8.0) * 100 + static_cast<int>((y[u] - y0) / 8.0)}];
    const ClassRow* row = nullptr;
    for (const ClassRow& r : kClasses)
      if (p == r.name) row = &r;
    ASSERT_NE(row, nullptr) << p;
    if (row->min_size == row->max_size) {
      EXPECT_EQ(size[u], row->min_size) << p;
    } else {
      EXPECT_TRUE(size[u] >= row->min_size && size[u] <= row->max_size) << p << " size " << size[u];
    }
    const bool composite = p.rfind("sON", 0) == 0 && p.find("OFF") != std::string::npos;
    const Fit& fd = kFits.at(p == "sONsOFF_001" ? "sOFF_TF4" : p == "sONtOFF_001" ? "tOFF_TF8" : p);
    const double nom_d[6] = {fd.w0, fd.w1, fd.k0, fd.k1, fd.d0, fd.d1};
    for (int k = 0; k < 6; ++k) expect_jittered(d[k][u], nom_d[k], p + " " + dom[k]);
    if (composite) {
      const Fit& fn = kFits.at("sON_TF4");
      const double nom_n[6] = {fn.w0, fn.w1, fn.k0, fn.k1, fn.d0, fn.d1};
      for (int k = 0; k < 6; ++k) expect_jittered(n[k][u], nom_n[k], p + " " + nd[k]);
      EXPECT_TRUE(ta[u] >= 0 && ta[u] < 360) << p << " tuning_angle " << ta[u];
      expect_jittered(sf[u], p == "sONsOFF_001" ? 6.0 : 4.0, p + " sf_sep");
    } else {
      for (int k = 0; k < 6; ++k) EXPECT_TRUE(std::isnan(n[k][u])) << p << " " << nd[k];
      EXPECT_TRUE(std::isnan(ta[u]) && std::isnan(sf[u])) << p;
    }
  }
  // N per tile x tiles per class, and so the classes' proportions N / 116
  for (const ClassRow& r : kClasses) {
    EXPECT_EQ(per_class[r.name], r.per_tile * tiles) << r.name;
    for (int i = 0; i < tiles_x; ++i)
      for (int j = 0; j < tiles_y; ++j) EXPECT_EQ((per_tile[{r.name, i * 100 + j}]), r.per_tile) << r.name;
  }
  EXPECT_EQ(per_class.size(), 14u);
}

}  // namespace

// The full LGN: 15 x 10 tiles of the 120 x 80 degree screen, 17,400 units.
TEST_F(GeneratorTest, VisualLgnFullScreen) {
  GeneratorOptions o = options("full", 100, 50);
  o.visual = true;
  generate_network(o);
  const fs::path net = fs::path(o.out_dir) / "network";
  check_lgn(net, 15, 10);
  const auto types = read_types_csv(net / "lgn_node_types.csv");
  EXPECT_EQ(types.size(), 14u);
  for (const auto& [id, row] : types) {
    EXPECT_EQ(row.at("model_type"), "virtual") << id;
    EXPECT_EQ(row.at("ei"), "e") << id;
  }
}

// A scaled LGN keeps the per-tile counts (class proportions) and sits on the screen centre.
TEST_F(GeneratorTest, VisualLgnScaled) {
  GeneratorOptions o = options("scaled", 100, 50);
  o.visual = true;
  o.lgn_tiles_x = 3;
  o.lgn_tiles_y = 2;
  generate_network(o);
  check_lgn(fs::path(o.out_dir) / "network", 3, 2);
}

// V1 cells: pop_names onto the papers' 17 types, layers by depth, the column, E/I split.
TEST_F(GeneratorTest, VisualV1CellTypes) {
  GeneratorOptions o = options("v1", 3000, 50);
  o.visual = true;
  generate_network(o);
  const fs::path net = fs::path(o.out_dir) / "network";
  // the 17 cell_type names of data/neuropixels/OSI_DSI_neuropixels_v4.csv
  const std::set<std::string> papers = {"L1 Htr3a", "L2/3 Exc", "L2/3 PV", "L2/3 SST", "L2/3 VIP", "L4 Exc",
                                        "L4 PV",    "L4 SST",   "L4 VIP",  "L5 Exc",   "L5 PV",    "L5 SST",
                                        "L5 VIP",   "L6 Exc",   "L6 PV",   "L6 SST",   "L6 VIP"};
  const auto types = read_types_csv(net / "v1_node_types.csv");
  std::set<std::string> mapped;
  for (const auto& [id, row] : types) {
    const std::string c = cell_type(row.at("pop_name"));
    EXPECT_TRUE(papers.count(c)) << row.at("pop_name") << " -> " << c;
    EXPECT_EQ(row.at("ei"), c.find("Exc") != std::string::npos ? "e" : "i") << row.at("pop_name");
    EXPECT_TRUE(fs::exists(fs::path(o.out_dir) / "components/cell_models" / row.at("dynamics_params")));
    mapped.insert(c);
  }
  EXPECT_EQ(mapped, papers);
  const std::vector<std::string> pop = node_pop_names(net, "v1");
  auto f = h5::File::open_read((net / "v1_nodes.h5").string());
  const auto x = f.read_double("/nodes/v1/0/x"), y = f.read_double("/nodes/v1/0/y"), z = f.read_double("/nodes/v1/0/z");
  const auto ta = f.read_double("/nodes/v1/0/tuning_angle");
  ASSERT_EQ(pop.size(), 3000u);
  // layer depths of docs/generator.md (um below the pia)
  const std::map<char, std::pair<double, double>> depth = {
      {'1', {0, 100}}, {'2', {100, 310}}, {'4', {310, 430}}, {'5', {430, 650}}, {'6', {650, 850}}};
  std::map<std::string, int> count;
  int n_exc = 0;
  for (std::size_t i = 0; i < pop.size(); ++i) {
    const std::string c = cell_type(pop[i]);
    ++count[c];
    n_exc += c.find("Exc") != std::string::npos ? 1 : 0;
    const auto [top, bottom] = depth.at(pop[i][1]);
    EXPECT_TRUE(-y[i] >= top && -y[i] <= bottom) << pop[i] << " depth " << -y[i];
    EXPECT_LE(x[i] * x[i] + z[i] * z[i], 400.0 * 400.0 + 1e-6);
    EXPECT_TRUE(ta[i] >= 0 && ta[i] < 360);
  }
  EXPECT_EQ(n_exc, 2400);  // 80 % E, as in the default mode
  for (const std::string& c : papers) EXPECT_GT(count[c], 0) << c;
  EXPECT_GT(count["L2/3 Exc"], count["L4 Exc"]);  // thickness-proportional: 210 um vs 120 um
}

// Same seed, same visual network; the column shrinks to what a small LGN covers.
TEST_F(GeneratorTest, VisualDeterministicAndFitted) {
  GeneratorOptions a = options("a", 300, 50), b = options("b", 300, 50);
  a.visual = b.visual = true;
  a.lgn_tiles_x = b.lgn_tiles_x = 4;
  a.lgn_tiles_y = b.lgn_tiles_y = 3;
  generate_network(a);
  generate_network(b);
  for (const char* file : {"lgn_nodes.h5", "v1_nodes.h5"}) {
    const std::string pop = file[0] == 'l' ? "lgn" : "v1";
    auto fa = h5::File::open_read((fs::path(a.out_dir) / "network" / file).string());
    auto fb = h5::File::open_read((fs::path(b.out_dir) / "network" / file).string());
    EXPECT_TRUE(same_bits(fa.read_double("/nodes/" + pop + "/0/x"), fb.read_double("/nodes/" + pop + "/0/x")));
    EXPECT_TRUE(same_bits(fa.read_double("/nodes/" + pop + "/0/y"), fb.read_double("/nodes/" + pop + "/0/y")));
  }
  const Edges ea = read_edges(fs::path(a.out_dir) / "network/lgn_v1_edges.h5", "lgn_to_v1");
  const Edges eb = read_edges(fs::path(b.out_dir) / "network/lgn_v1_edges.h5", "lgn_to_v1");
  EXPECT_EQ(ea.src, eb.src);
  EXPECT_EQ(ea.nsyns, eb.nsyns);
  EXPECT_TRUE(same_bits(ea.weight, eb.weight));
  // 4 x 3 tiles cover +-16 x +-12 degrees: radius min(400, 16 / 0.07, 12 / 0.04) = 228.57 um
  auto f = h5::File::open_read((fs::path(a.out_dir) / "network/v1_nodes.h5").string());
  const auto x = f.read_double("/nodes/v1/0/x"), z = f.read_double("/nodes/v1/0/z");
  double r_max = 0;
  for (std::size_t i = 0; i < x.size(); ++i) r_max = std::max(r_max, std::hypot(x[i], z[i]));
  EXPECT_LE(r_max, 16.0 / 0.07 + 1e-9);
  EXPECT_GT(r_max, 0.9 * 16.0 / 0.07);
}
