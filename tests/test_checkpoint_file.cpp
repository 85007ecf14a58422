// Checkpoint files against their documented layout (docs/training.md "Outputs", docs/reliability.md "Checkpoint
// files": root attributes format, format_version 2; /step, /rng/seed, /rng/next_sample, /schedule/*,
// /surfaces/<name>/{weight, initial_weight, weight_pA (units pA), adam_m, adam_v}, /carried_state; a "checksum"
// attribute on every dataset: FNV-1a 64 of its values). Files are built here by hand through the HDF5 layer with
// checksums of this file's own FNV-1a 64, and the documented refusals are checked by their messages. The h5py side
// (files written by h5py, and dpointnet's files read by h5py) is tests/test_checkpoint_h5py.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/train/checkpoint_file.hpp"
#include "dpointnet/util/error.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using dpointnet::test::input_error;
using dpointnet::test::TempDir;

namespace {

// FNV-1a 64 (Fowler/Noll/Vo): offset basis 0xcbf29ce484222325, prime 0x100000001b3, over the bytes of the values
// in native byte order, as 16 lowercase hex digits.
std::string fnv64(const void* data, std::size_t n) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t k = 0; k < n; ++k) {
    h ^= static_cast<const unsigned char*>(data)[k];
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}
template <class T>
std::string fnv64(const std::vector<T>& v) {
  return fnv64(v.data(), v.size() * sizeof(T));
}

// A format-2 checkpoint written field by field; `bad_checksum` names a dataset whose checksum is wrong.
struct HandMade {
  std::uint32_t version = 2;
  std::string bad_checksum, format = "dpointnet-checkpoint";
  bool checksums = true;
  std::vector<double> adam_m = {0.01, 0.02, 0.03};
  void write(const std::string& path) const {
    auto f = h5::File::create(path, true);
    f.write_attr_string("/", "format", format);
    f.write_attr_uint32("/", "format_version", {version});
    f.write_attr_string("/", "config_hash", "00112233445566ff");
    f.write_attr_string("/", "network_hash", "a0b1c2d3e4f50617");
    f.write_attr_string("/", "precision", "float32");
    auto sum = [&](const std::string& ds, const std::string& value) {
      if (checksums) f.write_attr_string(ds, "checksum", ds == bad_checksum ? "0000000000000000" : value);
    };
    auto ints = [&](const std::string& ds, std::vector<std::int64_t> v) {
      f.write_int64(ds, v);
      sum(ds, fnv64(v));
    };
    auto doubles = [&](const std::string& ds, std::vector<double> v) {
      f.write_double(ds, v);
      sum(ds, fnv64(v));
    };
    ints("/step", {6});
    ints("/rng/next_sample", {48});
    ints("/rng/seed", {4242});
    ints("/schedule/global_batch", {8});
    ints("/schedule/replicas", {2});
    ints("/schedule/batch_size", {4});
    f.create_group("/surfaces/recurrent");
    f.write_attr_string("/surfaces/recurrent", "trainable", "true");
    doubles("/surfaces/recurrent/weight", {0.5, -0.25, 0.0});
    doubles("/surfaces/recurrent/initial_weight", {0.4, -0.3, 0.1});
    doubles("/surfaces/recurrent/weight_pA", {50.0, -25.0, 0.0});
    doubles("/surfaces/recurrent/adam_m", adam_m);
    doubles("/surfaces/recurrent/adam_v", {1e-4, 2e-4, 3e-4});
    f.create_group("/surfaces/lgn");
    f.write_attr_string("/surfaces/lgn", "trainable", "false");
    doubles("/surfaces/lgn/weight", {1.5});
    doubles("/surfaces/lgn/initial_weight", {1.5});
    doubles("/surfaces/lgn/weight_pA", {150.0});
  }
};

bool has(const std::string& m, const std::string& part) { return m.find(part) != std::string::npos; }

}  // namespace

TEST(CheckpointFile, OwnFnv64MatchesThePublishedTestVectors) {
  // Fowler/Noll/Vo FNV-1a 64 test vectors: "" -> cbf29ce484222325, "a" -> af63dc4c8601ec8c,
  // "foobar" -> 85944171f73967e8
  EXPECT_EQ(fnv64("", 0), "cbf29ce484222325");
  EXPECT_EQ(fnv64("a", 1), "af63dc4c8601ec8c");
  EXPECT_EQ(fnv64("foobar", 6), "85944171f73967e8");
}

TEST(CheckpointFile, ReadsAHandMadeFormat2File) {
  TempDir d;
  HandMade().write(d.file("c.h5"));
  const CheckpointState c = read_checkpoint_file(d.file("c.h5"));
  EXPECT_EQ(c.step, 6);
  EXPECT_EQ(c.next_sample, 48);
  EXPECT_EQ(c.seed, 4242u);
  EXPECT_EQ(c.config_hash, "00112233445566ff");
  EXPECT_EQ(c.network_hash, "a0b1c2d3e4f50617");
  EXPECT_EQ(c.precision, "float32");
  EXPECT_EQ(c.global_batch, 8);
  EXPECT_EQ(c.replicas, 2);
  EXPECT_EQ(c.batch_size, 4);
  ASSERT_EQ(c.surfaces.size(), 2u);
  const SurfaceState* rec = c.surfaces[0].name == "recurrent" ? &c.surfaces[0] : &c.surfaces[1];
  const SurfaceState* lgn = c.surfaces[0].name == "lgn" ? &c.surfaces[0] : &c.surfaces[1];
  ASSERT_EQ(rec->name, "recurrent");
  ASSERT_EQ(lgn->name, "lgn");
  EXPECT_TRUE(rec->trainable);
  EXPECT_EQ(rec->weight, (std::vector<double>{0.5, -0.25, 0.0}));
  EXPECT_EQ(rec->initial_weight, (std::vector<double>{0.4, -0.3, 0.1}));
  EXPECT_EQ(rec->weight_pA, (std::vector<double>{50.0, -25.0, 0.0}));
  EXPECT_EQ(rec->adam_m, (std::vector<double>{0.01, 0.02, 0.03}));
  EXPECT_EQ(rec->adam_v, (std::vector<double>{1e-4, 2e-4, 3e-4}));
  EXPECT_FALSE(lgn->trainable);
  EXPECT_EQ(lgn->weight, (std::vector<double>{1.5}));
  EXPECT_TRUE(lgn->adam_m.empty());
  EXPECT_TRUE(c.carried.empty()) << "no /carried_state";
}

TEST(CheckpointFile, WrittenFileHasTheDocumentedLayoutAndChecksums) {
  TempDir d;
  CheckpointState c;
  c.step = 3, c.next_sample = 24, c.seed = 7, c.global_batch = 8, c.replicas = 1, c.batch_size = 8;
  c.config_hash = "0123456789abcdef", c.network_hash = "fedcba9876543210", c.precision = "float64";
  SurfaceState s;
  s.name = "recurrent", s.trainable = true;
  s.weight = {1, 2}, s.initial_weight = {1.5, 2.5}, s.weight_pA = {10, 20}, s.adam_m = {0.1, 0.2};
  s.adam_v = {0.01, 0.02};
  SurfaceState frozen;
  frozen.name = "bkg", frozen.weight = {3}, frozen.initial_weight = {3}, frozen.weight_pA = {30};
  c.surfaces = {s, frozen};
  c.carried.slots = 2, c.carried.record_size = 3, c.carried.end_step = 40;
  c.carried.records = {1, 2, 3, 4, 5, 6};
  write_checkpoint_file(d.file("step_3.h5"), c);
  EXPECT_FALSE(std::filesystem::exists(d.file("step_3.h5.tmp"))) << "written through .tmp and renamed";

  const auto f = h5::File::open_read(d.file("step_3.h5"));
  EXPECT_EQ(f.read_attr_string("/", "format"), "dpointnet-checkpoint");
  EXPECT_EQ(f.read_attr_int("/", "format_version"), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(f.read_attr_string("/", "config_hash"), "0123456789abcdef");
  EXPECT_EQ(f.read_attr_string("/", "precision"), "float64");
  auto int_ds = [&](const std::string& ds, std::int64_t want) {
    const auto v = f.read_int(ds);
    EXPECT_EQ(v, (std::vector<std::int64_t>{want})) << ds;
    EXPECT_EQ(f.read_attr_string(ds, "checksum"), fnv64(v)) << ds;
  };
  int_ds("/step", 3);
  int_ds("/rng/next_sample", 24);
  int_ds("/rng/seed", 7);
  int_ds("/schedule/global_batch", 8);
  int_ds("/schedule/replicas", 1);
  int_ds("/schedule/batch_size", 8);
  int_ds("/carried_state/end_step", 40);
  auto double_ds = [&](const std::string& ds, const std::vector<double>& want) {
    const auto v = f.read_double(ds);
    EXPECT_EQ(v, want) << ds;
    EXPECT_EQ(f.read_attr_string(ds, "checksum"), fnv64(want)) << ds;
  };
  EXPECT_EQ(f.read_attr_string("/surfaces/recurrent", "trainable"), "true");
  EXPECT_EQ(f.read_attr_string("/surfaces/bkg", "trainable"), "false");
  double_ds("/surfaces/recurrent/weight", {1, 2});
  double_ds("/surfaces/recurrent/initial_weight", {1.5, 2.5});
  double_ds("/surfaces/recurrent/weight_pA", {10, 20});
  EXPECT_EQ(f.read_attr_string("/surfaces/recurrent/weight_pA", "units"), "pA");
  double_ds("/surfaces/recurrent/adam_m", {0.1, 0.2});
  double_ds("/surfaces/recurrent/adam_v", {0.01, 0.02});
  double_ds("/surfaces/bkg/weight", {3});
  EXPECT_FALSE(f.exists("/surfaces/bkg/adam_m")) << "frozen surfaces have no Adam state";
  EXPECT_EQ(f.dataset_shape("/carried_state/records"), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(f.read_attr_string("/carried_state/records", "checksum"), fnv64(c.carried.records));

  const CheckpointState back = read_checkpoint_file(d.file("step_3.h5"));
  EXPECT_EQ(back.carried.slots, 2);
  EXPECT_EQ(back.carried.record_size, 3);
  EXPECT_EQ(back.carried.end_step, 40);
  EXPECT_EQ(back.carried.records, c.carried.records);
}

TEST(CheckpointFile, ChangedValuesAreRefusedNamingTheFileAndTheDataset) {
  // docs/reliability.md: a corrupted checkpoint is refused naming the file and what is wrong
  TempDir d;
  HandMade h;
  h.bad_checksum = "/surfaces/recurrent/adam_m";
  h.write(d.file("c.h5"));
  const std::string m = input_error([&] { read_checkpoint_file(d.file("c.h5")); });
  EXPECT_EQ(m.rfind(d.file("c.h5") + ": /surfaces/recurrent/adam_m: field 'checksum': ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "corrupt")) << m;
}

TEST(CheckpointFile, MissingChecksumOfFormat2IsRefused) {
  TempDir d;
  HandMade h;
  h.checksums = false;
  h.write(d.file("c.h5"));
  const std::string m = input_error([&] { read_checkpoint_file(d.file("c.h5")); });
  EXPECT_EQ(m.rfind(d.file("c.h5") + ": /step: field 'checksum': ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "missing")) << m;
}

TEST(CheckpointFile, Format1WithoutChecksumsStillLoads) {
  // docs/reliability.md: "a file of version 1 (no checksums) loads with a warning"
  TempDir d;
  HandMade h;
  h.version = 1;
  h.checksums = false;
  h.write(d.file("c.h5"));
  EXPECT_EQ(read_checkpoint_file(d.file("c.h5")).step, 6);
}

TEST(CheckpointFile, FutureFormatAndOtherFilesAreRefused) {
  TempDir d;
  HandMade future;
  future.version = 3;
  future.write(d.file("future.h5"));
  std::string m = input_error([&] { read_checkpoint_file(d.file("future.h5")); });
  EXPECT_EQ(m.rfind(d.file("future.h5") + ": field 'format_version': ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "is 3")) << m;
  EXPECT_TRUE(has(m, "newer")) << m;

  HandMade other;
  other.format = "something-else";
  other.write(d.file("other.h5"));
  m = input_error([&] { read_checkpoint_file(d.file("other.h5")); });
  EXPECT_EQ(m, d.file("other.h5") + ": field 'format': not a dpointnet checkpoint");

  d.write("text.h5", "not HDF5\n");
  m = input_error([&] { read_checkpoint_file(d.file("text.h5")); });
  EXPECT_TRUE(has(m, d.file("text.h5"))) << m;
}

TEST(CheckpointFile, AdamMomentsOfTheWrongLengthAreRefused) {
  TempDir d;
  HandMade h;
  h.adam_m = {0.01, 0.02};
  h.write(d.file("c.h5"));
  const std::string m = input_error([&] { read_checkpoint_file(d.file("c.h5")); });
  EXPECT_EQ(m.rfind(d.file("c.h5") + ": /surfaces/recurrent: field 'adam_m': ", 0), 0u) << m;
}

TEST(CheckpointFile, UnwritableDirectoryIsAnOutputErrorNamingTheFile) {
  // docs/reliability.md: a failed write names the file and leaves nothing behind
  TempDir d;
  const std::string path = d.file("missing_dir/step_1.h5");
  try {
    write_checkpoint_file(path, CheckpointState{});
    FAIL() << "expected OutputError";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}
