// Tests of `dpointnet generate`: option validation (nothing written on error), and that dpointnet's own
// config/network readers load the result.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
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

// (4) Invalid options throw InputError naming the option, before anything is written.
TEST_F(GeneratorTest, InvalidOptionsThrowAndWriteNothing) {
  struct Case {
    const char* option;
    std::function<void(GeneratorOptions&)> mutate;
  };
  const std::vector<Case> cases = {
      {"n_neurons", [](GeneratorOptions& o) { o.n_neurons = 9; }},
      {"n_neurons", [](GeneratorOptions& o) { o.n_neurons = 200001; }},
      {"synapses_per_neuron", [](GeneratorOptions& o) { o.synapses_per_neuron = 0; }},
      {"synapses_per_neuron", [](GeneratorOptions& o) { o.synapses_per_neuron = std::nan(""); }},
      {"n_lgn", [](GeneratorOptions& o) { o.n_lgn = -1; }},
      {"lgn_per_neuron", [](GeneratorOptions& o) { o.lgn_per_neuron = -3; }},
      {"n_bkg", [](GeneratorOptions& o) { o.n_bkg = 0; }},
      {"bkg_per_neuron", [](GeneratorOptions& o) { o.bkg_per_neuron = 0; }},
      {"bkg_per_neuron",
       [](GeneratorOptions& o) {
         o.n_bkg = 10;
         o.bkg_per_neuron = 11;
       }},
      {"dt", [](GeneratorOptions& o) { o.dt = 0; }},
      {"dt", [](GeneratorOptions& o) { o.dt = -1; }},
      {"tstop", [](GeneratorOptions& o) { o.tstop = 0; }},
      {"tstop",
       [](GeneratorOptions& o) {
         o.dt = 1.0;
         o.tstop = 10.5;
       }},
      {"lgn_rate_hz", [](GeneratorOptions& o) { o.lgn_rate_hz = 0; }},
      {"bkg_rate_hz", [](GeneratorOptions& o) { o.bkg_rate_hz = -250; }},
      {"out_dir", [](GeneratorOptions& o) { o.out_dir.clear(); }},
      {"column_radius", [](GeneratorOptions& o) { o.column_radius = 300; }},  // not visual
      {"n_lgn",
       [](GeneratorOptions& o) {
         o.visual = true;
         o.n_lgn = 100;
       }},
      {"lgn_tiles_x",
       [](GeneratorOptions& o) {
         o.visual = true;
         o.lgn_tiles_x = 16;
       }},
      {"lgn_tiles_x",
       [](GeneratorOptions& o) {
         o.visual = true;
         o.lgn_tiles_x = 0;
       }},
      {"lgn_tiles_y",
       [](GeneratorOptions& o) {
         o.visual = true;
         o.lgn_tiles_y = 11;
       }},
      {"column_radius",
       [](GeneratorOptions& o) {
         o.visual = true;
         o.column_radius = 900;  // 15 x 10 tiles cover 60 / 0.07 = 857 um
       }},
      {"column_radius",
       [](GeneratorOptions& o) {
         o.visual = true;
         o.lgn_tiles_x = 2;
         o.column_radius = 200;  // 2 tiles cover 8 / 0.07 = 114 um
       }},
  };
  int k = 0;
  for (const Case& c : cases) {
    GeneratorOptions o = options("bad" + std::to_string(k++), 100, 50);
    c.mutate(o);
    try {
      generate_network(o);
      ADD_FAILURE() << "no exception for bad " << c.option;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.option), std::string::npos)
          << "message does not name " << c.option << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError for " << c.option << ": " << e.what();
    }
    if (!o.out_dir.empty()) {
      EXPECT_FALSE(fs::exists(o.out_dir)) << "directory left behind for " << c.option;
    }
  }
  // Nothing at all was created under the test root.
  EXPECT_TRUE(fs::is_empty(root_));

  // An existing non-empty directory is refused unless overwrite is set; its content is left alone.
  const fs::path busy = root_ / "busy";
  fs::create_directories(busy);
  { std::ofstream(busy / "keep.txt") << "keep\n"; }
  GeneratorOptions o = options("busy", 50, 20);
  try {
    generate_network(o);
    ADD_FAILURE() << "non-empty out_dir accepted without overwrite";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("out_dir"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(busy / "keep.txt"));
  EXPECT_FALSE(fs::exists(busy / "network"));
  o.overwrite = true;
  EXPECT_NO_THROW(generate_network(o));
  EXPECT_TRUE(fs::exists(busy / "network/v1_v1_edges.h5"));
  EXPECT_TRUE(fs::exists(busy / "keep.txt"));

  // out_dir naming a file
  const fs::path file = root_ / "a_file";
  { std::ofstream(file) << "x"; }
  GeneratorOptions of = options("a_file", 50, 20);
  of.overwrite = true;
  try {
    generate_network(of);
    ADD_FAILURE() << "a file accepted as out_dir";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("out_dir"), std::string::npos) << e.what();
  }
}

// The generated configs load with dpointnet's own config and network readers.
TEST_F(GeneratorTest, LoadsWithDpointnetReaders) {
  GeneratorOptions o = options("load", 200, 80);
  o.seed = 3;
  o.dt = 0.5;
  o.tstop = 200;
  o.lgn_rate_hz = 12;
  o.bkg_rate_hz = 200;
  generate_network(o);
  const SimulationConfig cfg = SimulationConfig::load((fs::path(o.out_dir) / "config.simulation.json").string());
  EXPECT_DOUBLE_EQ(cfg.dt, 0.5);
  EXPECT_EQ(cfg.n_steps, 400);
  EXPECT_EQ(cfg.seed, 3u);
  ASSERT_EQ(cfg.nodes.size(), 3u);
  ASSERT_EQ(cfg.edges.size(), 3u);
  for (const auto& n : cfg.nodes) EXPECT_TRUE(fs::exists(n.nodes_file)) << n.nodes_file;
  for (const auto& e : cfg.edges) EXPECT_TRUE(fs::exists(e.edges_file)) << e.edges_file;
  EXPECT_TRUE(fs::is_directory(cfg.point_neuron_models_dir)) << cfg.point_neuron_models_dir;
  EXPECT_TRUE(fs::is_directory(cfg.synaptic_models_dir)) << cfg.synaptic_models_dir;
  ASSERT_EQ(cfg.inputs.size(), 2u);
  for (const auto& in : cfg.inputs) {
    if (in.name == "LGN") {
      EXPECT_EQ(in.kind, InputKind::Rates);
      EXPECT_EQ(in.node_set, "lgn");
      EXPECT_DOUBLE_EQ(in.rate_hz, 12.0);
    } else {
      EXPECT_EQ(in.name, "BKG");
      EXPECT_EQ(in.kind, InputKind::Poisson);
      EXPECT_EQ(in.node_set, "bkg");
      EXPECT_DOUBLE_EQ(in.rate_hz, 200.0);
    }
  }
  EXPECT_EQ(fs::path(cfg.output_dir).lexically_normal(), (fs::path(o.out_dir) / "output").lexically_normal());

  const Network net = build_network(cfg);
  EXPECT_EQ(net.n_neurons, 200);
  std::size_t expected_edges = 0;
  for (const auto& ef : kEdgeFiles) expected_edges += read_edges(fs::path(o.out_dir) / "network" / ef[0], ef[1]).size();
  EXPECT_EQ(net.n_edges(), expected_edges);
  EXPECT_EQ(net.n_channels, 4);
  EXPECT_LE(net.max_delay, 10);  // 5 ms at dt = 0.5
  ASSERT_FALSE(net.projections.empty());
  const Projection& rec = net.projections[0];
  ASSERT_TRUE(rec.recurrent);
  for (std::size_t i = 0; i < rec.size(); ++i) {
    ASSERT_GE(rec.channel[i], 0);
    ASSERT_LE(rec.channel[i], 3);
    ASSERT_GE(rec.delay_steps[i], 2);  // >= 1 ms
  }
}
