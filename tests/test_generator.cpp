// Tests of `dpointnet generate` (src/generator/network_generator.cpp): reproducibility, counts and structure,
// SONATA index consistency, option validation, and that dpointnet's own config/network readers load the result.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/util/error.hpp"
#include "generator_support.hpp"

namespace fs = std::filesystem;
using namespace dpointnet;

using namespace dpointnet::test;

// (1) Same seed -> identical datasets; another seed -> different network.
TEST_F(GeneratorTest, SameSeedIsIdenticalOtherSeedDiffers) {
  GeneratorOptions a = options("a", 400, 120), b = options("b", 400, 120), c = options("c", 400, 120);
  a.seed = b.seed = 7;
  c.seed = 8;
  generate_network(a);
  generate_network(b);
  generate_network(c);
  for (const auto& ef : kEdgeFiles) {
    const Edges ea = read_edges(fs::path(a.out_dir) / "network" / ef[0], ef[1]);
    const Edges eb = read_edges(fs::path(b.out_dir) / "network" / ef[0], ef[1]);
    const Edges ec = read_edges(fs::path(c.out_dir) / "network" / ef[0], ef[1]);
    ASSERT_GT(ea.size(), 0u) << ef[0];
    EXPECT_EQ(ea.src, eb.src) << ef[0];
    EXPECT_EQ(ea.trg, eb.trg) << ef[0];
    EXPECT_EQ(ea.type, eb.type) << ef[0];
    EXPECT_EQ(ea.group_index, eb.group_index) << ef[0];
    EXPECT_EQ(ea.nsyns, eb.nsyns) << ef[0];
    EXPECT_TRUE(same_bits(ea.weight, eb.weight)) << ef[0];
    EXPECT_TRUE(same_bits(ea.delay, eb.delay)) << ef[0];
    for (const char* idx :
         {"/indices/source_to_target/range_to_edge_id", "/indices/target_to_source/range_to_edge_id"}) {
      auto fa = h5::File::open_read((fs::path(a.out_dir) / "network" / ef[0]).string());
      auto fb = h5::File::open_read((fs::path(b.out_dir) / "network" / ef[0]).string());
      EXPECT_EQ(fa.read_int(std::string("/edges/") + ef[1] + idx), fb.read_int(std::string("/edges/") + ef[1] + idx));
    }
    EXPECT_FALSE(ea.src == ec.src && same_bits(ea.weight, ec.weight)) << ef[0] << " does not depend on the seed";
  }
  // recurrent topology and weights both change with the seed
  const Edges ra = read_edges(fs::path(a.out_dir) / "network/v1_v1_edges.h5", "v1_to_v1");
  const Edges rc = read_edges(fs::path(c.out_dir) / "network/v1_v1_edges.h5", "v1_to_v1");
  EXPECT_NE(ra.src, rc.src);
  EXPECT_FALSE(same_bits(ra.weight, rc.weight));
  // node positions too
  auto na = h5::File::open_read((fs::path(a.out_dir) / "network/v1_nodes.h5").string());
  auto nb = h5::File::open_read((fs::path(b.out_dir) / "network/v1_nodes.h5").string());
  auto nc = h5::File::open_read((fs::path(c.out_dir) / "network/v1_nodes.h5").string());
  EXPECT_TRUE(same_bits(na.read_double("/nodes/v1/0/x"), nb.read_double("/nodes/v1/0/x")));
  EXPECT_FALSE(same_bits(na.read_double("/nodes/v1/0/x"), nc.read_double("/nodes/v1/0/x")));
}

// (2) Counts and structure for N = 1000.
TEST_F(GeneratorTest, CountsAndStructure) {
  GeneratorOptions o = options("net", 1000, 370);
  o.n_bkg = 100;
  o.bkg_per_neuron = 4;
  o.lgn_per_neuron = 30;
  generate_network(o);
  const fs::path net = fs::path(o.out_dir) / "network";
  const std::int64_t N = 1000;

  // nodes
  auto nf = h5::File::open_read((net / "v1_nodes.h5").string());
  EXPECT_EQ(nf.read_attr_int("/", "magic"), std::vector<std::int64_t>{0x0A7A});
  const auto node_id = nf.read_int("/nodes/v1/node_id");
  const auto node_type = nf.read_int("/nodes/v1/node_type_id");
  const auto group_id = nf.read_int("/nodes/v1/node_group_id");
  const auto group_index = nf.read_int("/nodes/v1/node_group_index");
  const auto x = nf.read_double("/nodes/v1/0/x"), z = nf.read_double("/nodes/v1/0/z");
  ASSERT_EQ(node_id.size(), static_cast<std::size_t>(N));
  ASSERT_EQ(node_type.size(), static_cast<std::size_t>(N));
  ASSERT_EQ(x.size(), static_cast<std::size_t>(N));
  EXPECT_EQ(nf.read_double("/nodes/v1/0/tuning_angle").size(), static_cast<std::size_t>(N));
  std::vector<bool> exc(N);
  std::int64_t n_exc = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    EXPECT_EQ(node_id[i], i);
    EXPECT_EQ(group_id[i], 0);
    EXPECT_EQ(group_index[i], i);
    ASSERT_GE(node_type[i], 100);
    ASSERT_LE(node_type[i], 104);
    exc[i] = node_type[i] <= 102;
    n_exc += exc[i] ? 1 : 0;
    EXPECT_LE(x[i] * x[i] + z[i] * z[i], 400.0 * 400.0 + 1e-6);
  }
  EXPECT_EQ(n_exc, 800);
  for (int t = 100; t <= 104; ++t) EXPECT_GT(std::count(node_type.begin(), node_type.end(), t), 0) << t;
  EXPECT_EQ(population_size(net / "lgn_nodes.h5", "lgn"), 250u);  // automatic: N / 4
  EXPECT_EQ(population_size(net / "bkg_nodes.h5", "bkg"), 100u);

  // recurrent
  const Edges r = read_edges(net / "v1_v1_edges.h5", "v1_to_v1");
  EXPECT_EQ(r.src_pop, "v1");
  EXPECT_EQ(r.trg_pop, "v1");
  ASSERT_EQ(r.trg.size(), r.size());
  std::vector<std::int64_t> in_degree(N, 0);
  for (std::size_t i = 0; i < r.size(); ++i) {
    ASSERT_GE(r.src[i], 0);
    ASSERT_LT(r.src[i], N);
    ASSERT_GE(r.trg[i], 0);
    ASSERT_LT(r.trg[i], N);
    ASSERT_NE(r.src[i], r.trg[i]) << "self-connection at edge " << i;
    if (i > 0) {
      ASSERT_LE(r.trg[i - 1], r.trg[i]) << "not sorted by target at edge " << i;
      if (r.trg[i - 1] == r.trg[i]) {
        ASSERT_LT(r.src[i - 1], r.src[i]) << "duplicate or unsorted pair at edge " << i;
      }
    }
    ++in_degree[r.trg[i]];
    const bool se = exc[r.src[i]], te = exc[r.trg[i]];
    const int expected_type = 100 + 2 * (se ? 0 : 1) + (te ? 0 : 1);
    EXPECT_EQ(r.type[i], expected_type);
    if (se) {
      EXPECT_GT(r.weight[i], 0.0);
    } else {
      EXPECT_LT(r.weight[i], 0.0);
    }
    EXPECT_GE(r.delay[i], 1.0);
    EXPECT_LE(r.delay[i], 5.0);
    EXPECT_EQ(r.nsyns[i], 1);
    EXPECT_EQ(r.group_id[i], 0);
    EXPECT_EQ(r.group_index[i], static_cast<std::int64_t>(i));
  }
  const double mean_in = static_cast<double>(r.size()) / static_cast<double>(N);
  EXPECT_NEAR(mean_in, 370.0, 0.05 * 370.0);
  EXPECT_GT(*std::min_element(in_degree.begin(), in_degree.end()), 0);

  // LGN
  const Edges l = read_edges(net / "lgn_v1_edges.h5", "lgn_to_v1");
  EXPECT_EQ(l.src_pop, "lgn");
  EXPECT_EQ(l.trg_pop, "v1");
  for (std::size_t i = 0; i < l.size(); ++i) {
    ASSERT_LT(l.src[i], 250);
    ASSERT_LT(l.trg[i], N);
    if (i > 0) {
      ASSERT_LE(l.trg[i - 1], l.trg[i]);
      if (l.trg[i - 1] == l.trg[i]) {
        ASSERT_LT(l.src[i - 1], l.src[i]);
      }
    }
    EXPECT_GT(l.weight[i], 0.0);
    EXPECT_GT(l.delay[i], 0.0);
  }
  EXPECT_NEAR(static_cast<double>(l.size()) / N, 30.0, 0.1 * 30.0);

  // background: exactly bkg_per_neuron distinct sources per neuron
  const Edges bk = read_edges(net / "bkg_v1_edges.h5", "bkg_to_v1");
  EXPECT_EQ(bk.src_pop, "bkg");
  ASSERT_EQ(bk.size(), static_cast<std::size_t>(N * 4));
  std::vector<std::set<std::int64_t>> bsrc(N);
  for (std::size_t i = 0; i < bk.size(); ++i) {
    ASSERT_LT(bk.src[i], 100);
    ASSERT_LT(bk.trg[i], N);
    bsrc[bk.trg[i]].insert(bk.src[i]);
    EXPECT_GT(bk.weight[i], 0.0);
    EXPECT_DOUBLE_EQ(bk.delay[i], 1.0);
  }
  for (std::int64_t t = 0; t < N; ++t) EXPECT_EQ(bsrc[t].size(), 4u) << "target " << t;

  // components and configs exist
  for (const char* f :
       {"components/cell_models/593618144_glif_lif_asc_psc.json",
        "components/cell_models/480124551_glif_lif_asc_psc.json",
        "components/cell_models/318808427_glif_lif_asc_psc.json",
        "components/cell_models/478958894_glif_lif_asc_psc.json",
        "components/cell_models/487667205_glif_lif_asc_psc.json", "components/synaptic_models/e2e.json",
        "components/synaptic_models/e2i.json", "components/synaptic_models/i2e.json",
        "components/synaptic_models/i2i.json", "config.circuit.json", "config.simulation.json",
        "network/v1_node_types.csv", "network/lgn_node_types.csv", "network/bkg_node_types.csv",
        "network/v1_v1_edge_types.csv", "network/lgn_v1_edge_types.csv", "network/bkg_v1_edge_types.csv"})
    EXPECT_TRUE(fs::exists(fs::path(o.out_dir) / f)) << f;
}

// In-degree is capped at N - 1 (all-to-all without self-connections).
TEST_F(GeneratorTest, InDegreeCappedAtNMinusOne) {
  GeneratorOptions o = options("tiny", 10, 370);
  generate_network(o);
  const Edges r = read_edges(fs::path(o.out_dir) / "network/v1_v1_edges.h5", "v1_to_v1");
  ASSERT_EQ(r.size(), 90u);
  for (std::size_t i = 0; i < r.size(); ++i) EXPECT_NE(r.src[i], r.trg[i]);
  EXPECT_EQ(population_size(fs::path(o.out_dir) / "network/lgn_nodes.h5", "lgn"), 10u);
}

// (3) The SONATA index datasets agree with the edge arrays (recomputed independently).
TEST_F(GeneratorTest, IndicesConsistentWithEdges) {
  GeneratorOptions o = options("idx", 500, 60);
  o.n_bkg = 20;
  o.bkg_per_neuron = 3;
  o.n_lgn = 40;
  generate_network(o);
  const fs::path net = fs::path(o.out_dir) / "network";
  const std::size_t n_v1 = population_size(net / "v1_nodes.h5", "v1");
  const std::pair<std::string, std::size_t> sources[3] = {{"v1", n_v1},
                                                          {"lgn", population_size(net / "lgn_nodes.h5", "lgn")},
                                                          {"bkg", population_size(net / "bkg_nodes.h5", "bkg")}};
  for (int k = 0; k < 3; ++k) {
    const fs::path file = net / kEdgeFiles[k][0];
    const std::string pop = kEdgeFiles[k][1];
    const Edges e = read_edges(file, pop);
    EXPECT_EQ(e.src_pop, sources[k].first);
    auto f = h5::File::open_read(file.string());
    for (int dir = 0; dir < 2; ++dir) {
      const std::string g = "/edges/" + pop + (dir == 0 ? "/indices/source_to_target" : "/indices/target_to_source");
      const std::vector<std::int64_t>& key = dir == 0 ? e.src : e.trg;
      const std::size_t n_nodes = dir == 0 ? sources[k].second : n_v1;
      ASSERT_EQ(f.dataset_shape(g + "/node_id_to_range"), (std::vector<std::size_t>{n_nodes, 2})) << g;
      const auto shape = f.dataset_shape(g + "/range_to_edge_id");
      ASSERT_EQ(shape.size(), 2u);
      ASSERT_EQ(shape[1], 2u);
      const auto n2r = f.read_int(g + "/node_id_to_range");
      const auto r2e = f.read_int(g + "/range_to_edge_id");
      const auto n_ranges = static_cast<std::int64_t>(shape[0]);
      // expected edges per node, straight from the arrays
      std::vector<std::vector<std::int64_t>> expected(n_nodes);
      for (std::size_t i = 0; i < e.size(); ++i)
        expected[static_cast<std::size_t>(key[i])].push_back(static_cast<std::int64_t>(i));
      std::vector<char> seen(e.size(), 0);
      for (std::size_t n = 0; n < n_nodes; ++n) {
        const std::int64_t a = n2r[2 * n], b = n2r[2 * n + 1];
        ASSERT_LE(a, b) << g << " node " << n;
        ASSERT_GE(a, 0);
        ASSERT_LE(b, n_ranges);
        std::vector<std::int64_t> got;
        for (std::int64_t r = a; r < b; ++r) {
          const std::int64_t e0 = r2e[2 * r], e1 = r2e[2 * r + 1];
          ASSERT_LT(e0, e1) << g << " range " << r;
          ASSERT_LE(e1, static_cast<std::int64_t>(e.size()));
          for (std::int64_t i = e0; i < e1; ++i) {
            ASSERT_FALSE(seen[i]) << g << ": edge " << i << " listed twice";
            seen[i] = 1;
            got.push_back(i);
          }
        }
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, expected[n]) << g << " node " << n;
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(e.size())) << g;
      if (dir == 1) {  // sorted by target: one range per target with edges
        std::int64_t with_edges = 0;
        for (const auto& v : expected) with_edges += v.empty() ? 0 : 1;
        EXPECT_EQ(n_ranges, with_edges) << g;
      }
    }
  }
}

// The default (non-visual) output is pinned, as the generator wrote it before the visual mode existed (checked
// equal dataset by dataset then): a hash of the integer datasets and the text files, and sums of the floating-point
// datasets (to 1e-12 relative, so that a last-bit difference of another libm does not fail it).
TEST_F(GeneratorTest, DefaultOutputPinned) {
  GeneratorOptions o = options("pinned", 100, 40);
  o.seed = 5;
  generate_network(o);
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 0x100000001b3ull;
  };
  auto ints = [&](const std::vector<std::int64_t>& v) { mix(v.data(), v.size() * sizeof(std::int64_t)); };
  std::vector<double> sums;
  auto sum = [&](const std::vector<double>& v) {
    double a = 0;
    for (double x : v) a += x;
    sums.push_back(a);
  };
  const fs::path out(o.out_dir), net = out / "network";
  for (const char* pop : {"v1", "lgn", "bkg"}) {
    auto f = h5::File::open_read((net / (std::string(pop) + "_nodes.h5")).string());
    ints(f.read_int(std::string("/nodes/") + pop + "/node_type_id"));
    if (std::string(pop) == "v1")
      for (const char* a : {"x", "y", "z", "tuning_angle"}) sum(f.read_double(std::string("/nodes/v1/0/") + a));
  }
  for (const auto& ef : kEdgeFiles) {
    const Edges e = read_edges(net / ef[0], ef[1]);
    for (const auto* v : {&e.src, &e.trg, &e.type, &e.nsyns}) ints(*v);
    sum(e.weight);
    sum(e.delay);
    auto f = h5::File::open_read((net / ef[0]).string());
    for (const char* idx : {"source_to_target", "target_to_source"})
      ints(f.read_int(std::string("/edges/") + ef[1] + "/indices/" + idx + "/range_to_edge_id"));
  }
  for (const char* text : {"config.circuit.json", "config.simulation.json", "network/v1_node_types.csv",
                           "network/lgn_node_types.csv", "network/bkg_node_types.csv", "network/v1_v1_edge_types.csv",
                           "network/lgn_v1_edge_types.csv", "network/bkg_v1_edge_types.csv"}) {
    std::ifstream in(out / text, std::ios::binary);
    const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    mix(s.data(), s.size());
  }
  EXPECT_EQ(h, 0xbeab6afa1919ea64ull) << std::hex << h;
  // v1 x, y, z, tuning_angle; weight and delay of v1_to_v1, lgn_to_v1, bkg_to_v1
  const std::vector<double> expected = {
      1421.947640903858,  -32629.80464524395, -977.0466593072658, 18630.908245382496, 426.0310855457137,
      11500.457567640271, 36459.949224420605, 4249.999999999804,  3703.626259890844,  400.0};
  ASSERT_EQ(sums.size(), expected.size());
  for (std::size_t i = 0; i < sums.size(); ++i)
    EXPECT_NEAR(sums[i], expected[i], 1e-12 * std::fabs(expected[i]))
        << "sum " << i << std::setprecision(17) << " = " << sums[i];
}
