// Spike files: legacy and current layouts, units, gzip, and the stamping rule of docs/model.md section 10
// (k = ceil(t/dt - 1e-9) - 1), with expected steps worked out by hand.
#include <gtest/gtest.h>

#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/io/spike_file.hpp"
#include "dpointnet/util/error.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {
Population lgn(int n) {
  Population p;
  p.name = "lgn";
  p.is_virtual = true;
  p.size = n;
  for (int i = 0; i < n; ++i) p.node_ids.push_back(i);
  return p;
}
std::vector<std::int64_t> steps_of(const StampedSpikes& s, std::int32_t source) {
  std::vector<std::int64_t> out;
  for (std::size_t k = 0; k + 1 < s.step_offsets.size(); ++k)
    for (std::int64_t q = s.step_offsets[k]; q < s.step_offsets[k + 1]; ++q)
      if (s.source[static_cast<std::size_t>(q)] == source)
        for (int c = 0; c < s.count[static_cast<std::size_t>(q)]; ++c) out.push_back(static_cast<std::int64_t>(k));
  return out;
}
}  // namespace

TEST(SpikeFiles, LegacyLayoutInSecondsWithGzip) {
  TempDir d;
  {
    auto f = h5::File::create(d.file("legacy.h5"), false);
    f.write_uint64("/spikes/gids", {0, 0, 1, 1, 1}, true);
    f.write_double("/spikes/timestamps", {0.001, 0.0025, 0.0005, 0.002, 0.0020000001}, true);
    f.write_attr_string("/spikes/timestamps", "units", "s");
  }
  // dt = 0.5 ms: 1 ms ends step 1; 2.5 ms ends step 4; 0.5 ms ends step 0; 2 ms ends step 3;
  // 2.0001 ms belongs to the step ending at 2.5 ms, step 4.
  auto s = stamp_spike_file(d.file("legacy.h5"), lgn(2), 0.5, 10);
  EXPECT_EQ(steps_of(s, 0), (std::vector<std::int64_t>{1, 4}));
  EXPECT_EQ(steps_of(s, 1), (std::vector<std::int64_t>{0, 3, 4}));
}

TEST(SpikeFiles, CurrentLayoutCountsDuplicatesAndIgnoresLateSpikes) {
  TempDir d;
  std::map<std::string, SpikeTrains> pops;
  pops["lgn"] = SpikeTrains{"lgn", {2, 2, 0, 1}, {3.0, 2.4, 10.5, 2.999999999999}};
  write_spike_file(d.file("s.h5"), false, pops);
  // dt = 1 ms, 10 steps: 3.0 -> step 2; 2.4 -> step 2 (same step, counts twice); 10.5 -> step 10, after the
  // end; 2.999999999999 -> step 2 (within the 1e-9 guard of the grid point 3).
  auto s = stamp_spike_file(d.file("s.h5"), lgn(3), 1.0, 10);
  EXPECT_EQ(steps_of(s, 2), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(steps_of(s, 1), (std::vector<std::int64_t>{2}));
  EXPECT_TRUE(steps_of(s, 0).empty());
  EXPECT_EQ(s.n_after_end, 1);
  EXPECT_EQ(s.n_spikes, 3);
}

TEST(SpikeFiles, ChoosesThePopulationByNameOrRefusesAmbiguity) {
  TempDir d;
  std::map<std::string, SpikeTrains> pops;
  pops["a"] = SpikeTrains{"a", {0}, {1.0}};
  pops["b"] = SpikeTrains{"b", {0, 0}, {1.0, 2.0}};
  write_spike_file(d.file("two.h5"), false, pops);
  EXPECT_EQ(read_spike_file(d.file("two.h5"), "b").times_ms.size(), 2u);
  try {
    read_spike_file(d.file("two.h5"), "lgn");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("two.h5"), std::string::npos);
  }
}

// A units attribute that holds two strings overflowed the one-string read buffer (found by tests/fuzz).
TEST(SpikeFiles, RefusesAUnitsAttributeOfSeveralStrings) {
  TempDir d;
  {
    auto f = h5::File::create(d.file("units2.h5"), false);
    f.write_int64("/spikes/lgn/node_ids", {0, 1});
    f.write_double("/spikes/lgn/timestamps", {1.0, 2.0});
    h5::Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(t.id(), H5T_VARIABLE);
    const hsize_t two = 2;
    h5::Handle sp(H5Screate_simple(1, &two, nullptr), H5Sclose);
    h5::Handle a(H5Acreate_by_name(f.id(), "/spikes/lgn/timestamps", "units", t.id(), sp.id(), H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT),
                 H5Aclose);
    const char* v[2] = {"ms", "s"};
    ASSERT_GE(H5Awrite(a.id(), t.id(), v), 0);
  }
  try {
    read_spike_file(d.file("units2.h5"), "lgn");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("units2.h5"), std::string::npos) << m;
    EXPECT_NE(m.find("attribute 'units' holds 2 values"), std::string::npos) << m;
  }
}
