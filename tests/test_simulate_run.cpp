// The `simulate` run end to end on BMTK's 450-cell example: outputs, layout, refusal to overwrite.
#include <gtest/gtest.h>

#include "dpointnet/app/simulate_run.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/io/spike_file.hpp"
#include "dpointnet/util/error.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {
std::string config(const TempDir& d, int batch, bool overwrite) {
  const std::string base = bmtk450_dir();
  d.write("sim.json",
          "{\"network\": \"" + base +
              "/config.circuit.json\", \"run\": {\"dt\": 1.0, \"tstop\": 50.0, "
              "\"batch_size\": " +
              std::to_string(batch) +
              ", \"precision\": \"float64\"}, "
              "\"inputs\": {\"LGN\": {\"input_type\": \"spikes\", \"input_file\": \"" +
              base +
              "/inputs/lgn_spikes.h5\", \"node_set\": \"lgn\"}}, \"reports\": {\"vm\": {\"module\": "
              "\"membrane_report\", \"variable_name\": \"V_m\", \"cells\": \"v1\", \"file_name\": \"vm.h5\"}},"
              "\"output\": {\"output_dir\": \"out\", \"overwrite_output_dir\": " +
              (overwrite ? "true" : "false") + "}}");
  return d.file("sim.json");
}
}  // namespace

TEST(SimulateRun, WritesBmtkLayoutSpikesAndVoltageReport) {
  DPOINTNET_REQUIRE_TEST_DATA();
  TempDir d;
  SimulateCommand cmd;
  cmd.config = config(d, 1, false);
  cmd.progress = false;
  run_simulate(cmd);
  auto f = h5::File::open_read(d.file("out/spikes.h5"));
  EXPECT_EQ(f.read_attr_int("/", "magic")[0], 0x0A7A);
  EXPECT_EQ(f.read_attr_int("/", "version"), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(f.read_attr_string("/spikes/v1", "sorting"), "by_time");
  EXPECT_EQ(f.read_attr_string("/spikes/v1/timestamps", "units"), "ms");
  auto ts = f.read_double("/spikes/v1/timestamps");
  ASSERT_FALSE(ts.empty());
  for (std::size_t i = 1; i < ts.size(); ++i) ASSERT_LE(ts[i - 1], ts[i]);
  for (double t : ts) ASSERT_EQ(t, std::round(t)) << "spike times are step ends, multiples of dt = 1 ms";
  // Voltage report: [50 steps, 450 cells]. The first LGN spike (1.176 ms) is in step 1, arrives with a 2-step
  // delay in step 3 and moves v from step 5 on: until then every V_m equals its E_L (from the cell JSONs).
  auto r = h5::File::open_read(d.file("out/vm.h5"));
  EXPECT_EQ(r.dataset_shape("/report/v1/data"), (std::vector<std::size_t>{50, 450}));
  auto data = r.read_double("/report/v1/data");
  auto ids = r.read_int("/report/v1/mapping/node_ids");
  ASSERT_EQ(ids.size(), 450u);
  // node 0 is type 100 (593618144_glif_lif_asc_psc.json: E_L = -69.4755859375 mV); node 300 is type 105
  // (IntFire1_exc_point.json: E_L = -75 mV)
  for (int k = 0; k < 5; ++k) {
    EXPECT_NEAR(data[static_cast<std::size_t>(k) * 450 + 0], -69.4755859375, 1e-4) << "step " << k;
    EXPECT_NEAR(data[static_cast<std::size_t>(k) * 450 + 300], -75.0, 1e-4) << "step " << k;
  }
  EXPECT_NE(data[5 * 450 + 300] + 0.0, data[4 * 450 + 300] + 0.0);
  EXPECT_TRUE(std::filesystem::exists(d.file("out/simulation_config.resolved.json")));
  EXPECT_TRUE(std::filesystem::exists(d.file("out/log.txt")));
  // a second run without overwrite is refused before writing; the first output stays
  const auto before = std::filesystem::last_write_time(d.file("out/spikes.h5"));
  EXPECT_THROW(run_simulate(cmd), InputError);
  EXPECT_EQ(std::filesystem::last_write_time(d.file("out/spikes.h5")), before);
}

TEST(SimulateRun, BatchWritesOneFilePerSampleAndSpikeFileInputIsTheSameForAll) {
  DPOINTNET_REQUIRE_TEST_DATA();
  TempDir d;
  SimulateCommand cmd;
  cmd.config = config(d, 3, true);
  cmd.progress = false;
  run_simulate(cmd);
  auto a = read_spike_file(d.file("out/spikes_sample0.h5"), "v1");
  auto c = read_spike_file(d.file("out/spikes_sample2.h5"), "v1");
  EXPECT_FALSE(std::filesystem::exists(d.file("out/spikes.h5")));
  EXPECT_GT(a.node_ids.size(), 0u);
  EXPECT_EQ(a.node_ids, c.node_ids);
  EXPECT_EQ(a.times_ms, c.times_ms);
}
