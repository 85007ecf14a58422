// read_lgn_cells: LGN cells of a SONATA population from its nodes file (node groups) and node types table, with
// FilterNet's precedence (a node group's value over the node type's) and errors that name the first bad node.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dpointnet/inputs/lgn_cells.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "lgn_reference.hpp"
#include "test_support.hpp"

namespace dpointnet {
namespace {

using Columns = std::map<std::string, std::vector<double>>;

// Population "lgn": group 0 holds nodes 496 (sON_TF1) and 15476 (sONsOFF_001) of FilterNet's
// tools/example_nodes.csv and node 7 (sOFF_TF4, spont_fr and an overridden x in its node type), as the V1 model
// stores them (NaN where a class has no value); group 1 holds node 20 (tOFF_TF8), whose size and filter come from
// its node type.
struct LgnFiles {
  test::TempDir dir;
  std::string types =
      "node_type_id model_type pop_name model_template spont_fr x spatial_size kpeaks_dom_0 kpeaks_dom_1 "
      "weight_dom_0 weight_dom_1 delay_dom_0 delay_dom_1\n"
      "100 virtual sON_TF1 NONE NONE NONE NONE NONE NONE NONE NONE NONE NONE\n"
      "101 virtual sONsOFF_001 lgnmodel:sONsOFF_001 NONE NONE NONE NONE NONE NONE NONE NONE NONE\n"
      "102 virtual sOFF_TF4 NONE 6.5 999 NONE NONE NONE NONE NONE NONE NONE\n"
      "103 virtual tOFF_TF8 NONE NONE NONE 4.5 8.524645232832142 23.246816713624384 4.21848979193672 "
      "-2.404989833331929 0 0\n";
  std::vector<std::int64_t> node_id = {496, 15476, 7, 20}, type_id = {100, 101, 102, 103}, group_id = {0, 0, 0, 1},
                            group_index = {0, 1, 2, 0};
  std::map<int, Columns> groups = {{0,
                                    {{"x", {57.976549427962546, 7.230526772985226, 30.5}},
                                     {"y", {7.4241088454892825, 30.871746653070126, 40.25}},
                                     {"spatial_size", {5.184736301530137, 6.0, 3.0}},
                                     {"kpeaks_dom_0", {55.40483168168431, 22.25121195307872, 22.246197660260687}},
                                     {"kpeaks_dom_1", {134.49877791191807, 55.39399908338737, 56.10036268151849}},
                                     {"weight_dom_0", {1.0009541157920274, 3.1822557417186004, 3.229814878308509}},
                                     {"weight_dom_1", {-0.44549420763922487, -1.632482734971737, -1.6587975171052909}},
                                     {"delay_dom_0", {0, 0, 0}},
                                     {"delay_dom_1", {14.867648948779896, 15.20119489804419, 15.0}},
                                     {"kpeaks_non_dom_0", {NAN, 30.833082152762593, NAN}},
                                     {"kpeaks_non_dom_1", {NAN, 59.50929748156345, NAN}},
                                     {"weight_non_dom_0", {NAN, 3.6402200786519603, NAN}},
                                     {"weight_non_dom_1", {NAN, -1.8559059787644414, NAN}},
                                     {"delay_non_dom_0", {NAN, 0.0, NAN}},
                                     {"delay_non_dom_1", {NAN, 24.633200214930287, NAN}},
                                     {"tuning_angle", {NAN, 215.80006425451538, NAN}},
                                     {"sf_sep", {NAN, 6.037390534008838, NAN}}}},
                                   {1, {{"x", {100.0}}, {"y", {10.0}}}}};
  SimulationConfig cfg;
  Population pop;

  std::vector<LgnCell> read() {
    const std::string h5_path = dir.file("lgn_nodes.h5"), csv_path = dir.file("lgn_node_types.csv");
    {
      auto f = h5::File::create(h5_path, true);
      f.create_group("/nodes/lgn");
      f.write_int64("/nodes/lgn/node_id", node_id);
      f.write_int64("/nodes/lgn/node_type_id", type_id);
      f.write_int64("/nodes/lgn/node_group_id", group_id);
      f.write_int64("/nodes/lgn/node_group_index", group_index);
      for (const auto& [g, cols] : groups) {
        f.create_group("/nodes/lgn/" + std::to_string(g));
        for (const auto& [name, v] : cols) f.write_double("/nodes/lgn/" + std::to_string(g) + "/" + name, v);
      }
    }
    dir.write("lgn_node_types.csv", types);
    cfg.path = dir.file("config.json");
    cfg.nodes = {NodesEntry{h5_path, csv_path}};
    pop.name = "lgn";
    pop.is_virtual = true;
    pop.nodes_file = h5_path;
    pop.node_ids = node_id;
    pop.node_type_ids = type_id;
    pop.size = static_cast<std::int64_t>(node_id.size());
    return read_lgn_cells(cfg, pop);
  }
  std::string error() {
    return test::input_error([&] { read(); });
  }
  void replace_type(const std::string& from, const std::string& to) {
    const auto at = types.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    types.replace(at, from.size(), to);
  }
};

TEST(LgnCells, ReadsNodeGroupsAndNodeTypes) {
  LgnFiles files;
  const std::vector<LgnCell> cells = files.read();
  ASSERT_EQ(cells.size(), 4u);
  // node 496: FilterNet's OnUnit, transfer Heaviside(s+5.2)*(s+5.2)
  EXPECT_EQ(cells[0].model, "sON_TF1");
  ASSERT_EQ(cells[0].subunits.size(), 1u);
  EXPECT_EQ(cells[0].subunits[0].amplitude, 1.0);
  EXPECT_EQ(cells[0].subunits[0].spont, 5.2);
  EXPECT_EQ(cells[0].subunits[0].x, 57.976549427962546);
  test::expect_kernel(cells[0].subunits[0].kernel, test::kLgnNodeKernels[0]);
  // node 15476: the class from model_template; FilterNet's dominant amplitude and non-dominant centre
  EXPECT_EQ(cells[1].model, "sONsOFF_001");
  ASSERT_EQ(cells[1].subunits.size(), 2u);
  EXPECT_NEAR(cells[1].subunits[0].amplitude, -2.262427256250421, 1e-12);
  EXPECT_NEAR(cells[1].subunits[1].x, 2.3338217102880874, 1e-12);
  EXPECT_NEAR(cells[1].subunits[1].y, 27.340123231880412, 1e-12);
  test::expect_kernel(cells[1].subunits[0].kernel, test::kLgnNodeKernels[1]);
  test::expect_kernel(cells[1].subunits[1].kernel, test::kLgnNodeKernels[2]);
  // node 7: spont_fr of its node type; the group's x overrides the node type's 999
  EXPECT_EQ(cells[2].subunits[0].amplitude, -1.0);
  EXPECT_EQ(cells[2].subunits[0].spont, 6.5);
  EXPECT_EQ(cells[2].subunits[0].x, 30.5);
  EXPECT_EQ(cells[2].subunits[0].sigma, 1.0);
  // node 20: size and the nominal tOFF_TF8 filter from its node type
  EXPECT_EQ(cells[3].subunits[0].amplitude, -1.0);
  EXPECT_EQ(cells[3].subunits[0].spont, 2.4377777777777867);
  EXPECT_EQ(cells[3].subunits[0].sigma, 1.5);
  EXPECT_EQ(cells[3].subunits[0].x, 100.0);
  test::expect_kernel(cells[3].subunits[0].kernel, test::kLgnNominalKernels[11]);  // tOFF_TF8
}

TEST(LgnCells, OptionalAttributesFilterNetAccepts) {
  LgnFiles files;
  files.groups[0]["spatial_rotation"] = {0, 0, 0};
  files.groups[0]["jitter_lower"] = {1, 1, 1};
  files.groups[0]["jitter_upper"] = {1, 1, 1};
  files.groups[1]["spont_fr"] = {NAN};      // NaN: not given
  files.groups[1]["delays_dom_0"] = {3.5};  // FilterNet's other spelling, preferred to delay_dom_0/1
  files.groups[1]["delays_dom_1"] = {10};
  const auto cells = files.read();
  EXPECT_EQ(cells[3].subunits[0].spont, 2.4377777777777867);
  EXPECT_EQ(cells[3].subunits[0].kernel.size(), 603u);
}

TEST(LgnCells, ErrorsNameTheFirstBadNode) {
  const std::string nodes = "lgn_nodes.h5: population lgn node ", types = "lgn_node_types.csv: population lgn node ";
  auto has = [](const std::string& msg, const std::string& part) {
    EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
  };
  {
    LgnFiles f;  // a NaN in two nodes: the first is named
    f.groups[0]["kpeaks_dom_0"][0] = NAN;
    f.groups[0]["kpeaks_dom_0"][2] = NAN;
    const std::string m = f.error();
    has(m, nodes + "496: field 'kpeaks_dom_0': is missing or not finite");
  }
  {
    LgnFiles f;
    f.replace_type("4.21848979193672", "NONE");
    has(f.error(), nodes + "20: field 'weight_dom_0': is missing");
  }
  {
    LgnFiles f;
    f.replace_type("103 virtual tOFF_TF8 NONE NONE NONE 4.5", "103 virtual tOFF_TF8 NONE NONE NONE -4.5");
    has(f.error(), types + "20: field 'spatial_size': must be > 0");
  }
  {
    LgnFiles f;
    f.groups[0]["spatial_size"][2] = 0;
    has(f.error(), nodes + "7: field 'spatial_size': must be > 0");
  }
  {
    LgnFiles f;
    f.groups[0]["kpeaks_dom_1"][2] = 20;
    has(f.error(), nodes + "7: field 'kpeaks_dom_1': must be greater than kpeaks_dom_0");
  }
  {
    LgnFiles f;
    f.groups[0]["weight_dom_0"][1] = -3;
    has(f.error(), nodes + "15476: field 'weight_dom_0': must be > 0");
  }
  {
    LgnFiles f;  // FilterNet would draw a random angle
    f.groups[0]["tuning_angle"][1] = NAN;
    has(f.error(), nodes + "15476: field 'tuning_angle': is required for the composite class sONsOFF_001");
  }
  {
    LgnFiles f;
    f.groups[0].erase("sf_sep");
    has(f.error(), nodes + "15476: field 'sf_sep': is missing");
  }
  {
    LgnFiles f;
    f.groups[0]["spatial_rotation"] = {0, 0, 15};
    has(f.error(), nodes + "7: field 'spatial_rotation': is 15 deg: rotated receptive fields are not supported");
  }
  {
    LgnFiles f;
    f.groups[0]["jitter_lower"] = {1, 1, 1};
    has(f.error(), nodes + "496: field 'jitter_upper': is missing");
  }
  {
    LgnFiles f;
    f.groups[0]["jitter_lower"] = {1, 0.9, 1};
    f.groups[0]["jitter_upper"] = {1, 1.1, 1};
    has(f.error(), nodes + "15476: field 'jitter_lower': is 0.9: FilterNet draws");
  }
  {
    LgnFiles f;
    f.replace_type("102 virtual sOFF_TF4 NONE", "102 virtual foo NONE");
    has(f.error(), types + "7: field 'pop_name': class \"foo\" is not an LGN class");
  }
  {
    LgnFiles f;
    f.replace_type("lgnmodel:sONsOFF_001", "nest:glif_psc");
    has(f.error(), types + "15476: field 'model_template': \"nest:glif_psc\" is not \"lgnmodel:NAME\"");
  }
  {
    LgnFiles f;
    f.groups[1]["weights"] = {1.0};
    has(f.error(), "lgn_nodes.h5: population lgn group 1: field 'weights': is not supported");
  }
  {
    LgnFiles f;
    f.group_index[3] = 1;
    has(f.error(), nodes + "20: field 'node_group_index': 1 is outside the node group's 1 rows");
  }
  {
    LgnFiles f;
    f.read();
    f.pop.nodes_file = "other.h5";
    has(test::input_error([&] { read_lgn_cells(f.cfg, f.pop); }),
        "config.json: population lgn: field 'nodes_file': no networks.nodes entry");
  }
}

}  // namespace
}  // namespace dpointnet
