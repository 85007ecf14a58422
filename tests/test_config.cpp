// SONATA config handling (docs/simulation.md): expected values are written by hand from the spec.
#include <gtest/gtest.h>

#include "dpointnet/config/json_config.hpp"
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/hash.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

TEST(Config, ManifestVariablesResolveIterativelyAndPathsAnchorToTheirFile) {
  TempDir d;
  d.write("sim/config.json", R"({
    "manifest": {"$BASE": "${configdir}/..", "$NET": "$BASE/circuit", "$OUT": "$BASE/results", "$DT": 0.5},
    "network": "$NET/circuit.json",
    "run": {"dt": "$DT", "duration": 100.0, "tstop": 5.0},
    "output": {"output_dir": "$OUT", "spikes_file": "s.h5", "log_file": "/abs/log.txt"},
    "inputs": {"a": {"input_type": "spikes", "input_file": "in/spk.h5", "node_set": "lgn"}}
  })");
  d.write("circuit/circuit.json", R"({
    "manifest": {"$D": "."},
    "components": {"point_neuron_models_dir": "$D/cells"},
    "networks": {"nodes": [{"nodes_file": "n.h5", "node_types_file": "$D/t.csv"}], "edges": []},
    "run": {"dt": 99}
  })");
  auto j = load_sonata_config(d.file("sim/config.json"));
  const std::string root = std::filesystem::path(d.str()).lexically_normal().string();
  EXPECT_EQ(j["run"]["dt"], 99) << "child keys win in the shallow merge";
  EXPECT_EQ(j["components"]["point_neuron_models_dir"], root + "/circuit/cells");
  EXPECT_EQ(j["networks"]["nodes"][0]["nodes_file"], root + "/circuit/n.h5");
  EXPECT_EQ(j["networks"]["nodes"][0]["node_types_file"], root + "/circuit/t.csv");
  EXPECT_EQ(j["output"]["output_dir"], root + "/results");
  EXPECT_EQ(j["output"]["spikes_file"], root + "/results/s.h5");
  EXPECT_EQ(j["output"]["log_file"], "/abs/log.txt");
  EXPECT_EQ(j["inputs"]["a"]["input_file"], root + "/sim/in/spk.h5");
}

TEST(Config, SingleVariableKeepsItsTypeAndDurationWinsOverTstop) {
  TempDir d;
  d.write("c.json", R"({
    "manifest": {"$DT": 0.25},
    "run": {"dt": "$DT", "duration": 10.0, "tstop": 5.0, "seed": 7, "batch_size": 3},
    "networks": {"nodes": [{"nodes_file": "n.h5", "node_types_file": "t.csv"}]}
  })");
  auto c = SimulationConfig::load(d.file("c.json"));
  EXPECT_DOUBLE_EQ(c.dt, 0.25);
  EXPECT_DOUBLE_EQ(c.tstop, 10.0);
  EXPECT_EQ(c.n_steps, 40);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.batch_size, 3);
}

TEST(Config, ManifestCycleIsAnErrorNamingTheVariables) {
  TempDir d;
  d.write("c.json", R"({"manifest": {"$A": "$B/x", "$B": "$A/y"}, "run": {"dt": 1, "tstop": 1}})");
  try {
    load_sonata_config(d.file("c.json"));
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("c.json"), std::string::npos) << m;
    EXPECT_NE(m.find("$A"), std::string::npos) << m;
    EXPECT_NE(m.find("$B"), std::string::npos) << m;
  }
}

TEST(Config, FnvHashMatchesPublishedTestVectors) {
  // FNV-1a 32-bit reference values (Fowler/Noll/Vo test suite): "" -> 0x811c9dc5, "a" -> 0xe40c292c,
  // "foobar" -> 0xbf9cf968.
  EXPECT_EQ(fnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(fnv1a32("foobar"), 0xbf9cf968u);
}

// Inputs the fuzzer (tests/fuzz, docs/reliability.md#fuzzing) turned up: each was undefined behaviour, a silently
// truncated integer or an "internal error"; each is now refused naming the file and the field.
TEST(Config, FuzzFindingsAreRefusedNamingTheField) {
  const std::string nodes = R"("networks": {"nodes": [{"nodes_file": "n.h5", "node_types_file": "t.csv"}]})";
  std::string expansion = R"({"manifest": {"$A0": "x")";
  for (int i = 1; i < 30; ++i)
    expansion +=
        ", \"$A" + std::to_string(i) + "\": \"$A" + std::to_string(i - 1) + "$A" + std::to_string(i - 1) + "\"";
  expansion += R"(}, "run": {"dt": 1, "tstop": 3, "x": "$A29"}, )" + nodes + "}";
  const struct {
    std::string json, field;
  } cases[] = {
      {R"({"run": {"dt": 1, "tstop": 1e300}, )" + nodes + "}", "'tstop': is more than 2^31 - 1 steps"},
      {R"({"run": {"dt": 42949672951.0, "tstop": 20}, )" + nodes + "}", "'tstop': is shorter than one step"},
      {R"({"run": {"dt": 1, "tstop": 3, "batch_size": 4294967296}, )" + nodes + "}", "'batch_size'"},
      {R"({"run": {"dt": 1, "tstop": 3, "distribution": {"mode": "mirrored", "replicas": 4294967297}}, )" + nodes + "}",
       "'replicas': must be an integer >= 1 (at most 2147483647)"},
      {R"({"run": {"dt": 1, "tstop": 3}, "output": {"overwrite_output_dir": 1}, )" + nodes + "}",
       "output: field 'overwrite_output_dir': must be true or false"},
      {R"({"run": {"dt": 1, "tstop": 3, "overwrite_output_dir": "yes"}, )" + nodes + "}",
       "run: field 'overwrite_output_dir'"},
      {R"({"network": ")" + std::string(300, 'a') + R"(", "run": {"dt": 1, "tstop": 3}, )" + nodes + "}",
       "field 'network': names a config file that does not exist"},
      {expansion, "manifest: substituting the manifest variables gives more than 16 MiB"},
      {R"({"network": "${configdir}", "run": {"dt": 1, "tstop": 3}, )" + nodes + "}",
       "field 'network': names a directory, not a config file"},
  };
  for (const auto& c : cases) {
    TempDir d;
    d.write("c.json", c.json);
    try {
      SimulationConfig::load(d.file("c.json"));
      ADD_FAILURE() << "accepted: " << c.json.substr(0, 200);
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("c.json"), std::string::npos) << m;
      EXPECT_NE(m.find(c.field), std::string::npos) << m;
    }
  }
}
