#include "dpointnet/train/checkpoint_file.hpp"

#include <filesystem>
#include <stdexcept>

#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/hash.hpp"
#include "dpointnet/util/log.hpp"

namespace dpointnet {

namespace {

constexpr std::uint32_t kFormatVersion = 2;  // 2: per-dataset checksums, carried states

// Every dataset carries the FNV-1a 64 hash of its values (native byte order) as the attribute "checksum".
template <class T>
std::string checksum(const std::vector<T>& v) {
  return fnv1a64_hex(v.data(), v.size() * sizeof(T));
}

class Writer {
 public:
  explicit Writer(h5::File& f) : f_(f) {}
  void doubles(const std::string& ds, const std::vector<double>& v) {
    f_.write_double(ds, v);
    f_.write_attr_string(ds, "checksum", checksum(v));
  }
  void doubles_2d(const std::string& ds, const std::vector<double>& v, std::size_t rows, std::size_t cols) {
    f_.write_double_2d(ds, v, rows, cols);
    f_.write_attr_string(ds, "checksum", checksum(v));
  }
  void ints(const std::string& ds, const std::vector<std::int64_t>& v) {
    f_.write_int64(ds, v);
    f_.write_attr_string(ds, "checksum", checksum(v));
  }

 private:
  h5::File& f_;
};

// Reads and verifies (format 2 on) a dataset; a mismatch names the file and the dataset.
class Reader {
 public:
  Reader(const h5::File& f, std::string path, bool verify) : f_(f), path_(std::move(path)), verify_(verify) {}
  std::vector<double> doubles(const std::string& ds) const { return check(ds, f_.read_double(ds)); }
  std::vector<std::int64_t> ints(const std::string& ds) const { return check(ds, f_.read_int(ds)); }
  std::int64_t one_int(const std::string& ds) const {
    const auto v = ints(ds);
    if (v.size() != 1) throw InputError(path_, ds, "", "must hold one value, holds " + std::to_string(v.size()));
    return v[0];
  }

 private:
  template <class T>
  std::vector<T> check(const std::string& ds, std::vector<T> v) const {
    if (!verify_) return v;
    if (!f_.has_attr(ds, "checksum"))
      throw InputError(path_, ds, "checksum", "is missing (the checkpoint file is damaged or was edited)");
    const std::string want = f_.read_attr_string(ds, "checksum"), got = checksum(v);
    if (want != got)
      throw InputError(
          path_, ds, "checksum",
          "does not match the values (stored " + want + ", computed " + got + "): the checkpoint file is corrupted");
    return v;
  }
  const h5::File& f_;
  std::string path_;
  bool verify_;
};

std::vector<unsigned char> contents(const std::string& path, const CheckpointState& c) {
  auto f = h5::File::create_in_memory(path);
  Writer w(f);
  f.write_attr_string("/", "format", "dpointnet-checkpoint");
  f.write_attr_uint32("/", "format_version", {kFormatVersion});
  f.write_attr_string("/", "config_hash", c.config_hash);
  f.write_attr_string("/", "network_hash", c.network_hash);
  f.write_attr_string("/", "precision", c.precision);
  w.ints("/step", {c.step});
  f.write_attr_string("/", "optimizer", c.optimizer);
  f.write_attr_string("/", "approach", c.approach);
  w.ints("/optimizer_iterations", {c.optimizer_iterations >= 0 ? c.optimizer_iterations : c.step});
  w.ints("/rng/next_sample", {c.next_sample});
  w.ints("/rng/seed", {static_cast<std::int64_t>(c.seed)});
  w.ints("/schedule/global_batch", {c.global_batch});
  w.ints("/schedule/replicas", {c.replicas});
  w.ints("/schedule/batch_size", {c.batch_size});
  for (const auto& s : c.surfaces) {
    const std::string g = "/surfaces/" + s.name;
    f.create_group(g);
    f.write_attr_string(g, "trainable", s.trainable ? "true" : "false");
    w.doubles(g + "/weight", s.weight);
    w.doubles(g + "/initial_weight", s.initial_weight);
    w.doubles(g + "/weight_pA", s.weight_pA);
    f.write_attr_string(g + "/weight_pA", "units", "pA");
    if (s.trainable) {
      w.doubles(g + "/adam_m", s.adam_m);
      w.doubles(g + "/adam_v", s.adam_v);
    }
  }
  if (!c.loss_state.empty()) w.doubles("/loss_state", c.loss_state);
  if (!c.loss_scale.empty()) w.doubles("/loss_scale", c.loss_scale);
  if (!c.carried.empty()) {
    const auto& k = c.carried;
    if (k.records.size() != static_cast<std::size_t>(k.slots * k.record_size))
      throw std::logic_error("carried state: " + std::to_string(k.records.size()) + " values for " +
                             std::to_string(k.slots) + " slots of " + std::to_string(k.record_size));
    f.create_group("/carried_state");
    w.doubles_2d("/carried_state/records", k.records, static_cast<std::size_t>(k.slots),
                 static_cast<std::size_t>(k.record_size));
    f.write_attr_string("/carried_state/records", "layout",
                        "per slot: v[N] r[N] asc[2][N] psc_rise[R][N] psc[R][N] z_ring[D][N] input rings[D][n_src] "
                        "(ring slot s mod D holds step s; normalized units)");
    w.ints("/carried_state/end_step", {k.end_step});
  }
  return f.image();
}

}  // namespace

void write_checkpoint_file(const std::string& path, const CheckpointState& c) {
  // Built in memory, then written through path.tmp with every write checked, fsync'ed and renamed into place: a
  // reader never sees a partial checkpoint, and a full or read-only file system leaves nothing behind.
  const std::vector<unsigned char> bytes = contents(path, c);
  try {
    h5::write_file_atomically(path, bytes);
  } catch (const std::exception& e) {
    throw OutputError(path,
                      std::string("cannot write the checkpoint file (earlier checkpoints are intact): ") + e.what());
  }
}

CheckpointState read_checkpoint_file(const std::string& path) {
  auto f = h5::File::open_read(path);
  if (!f.has_attr("/", "format") || f.read_attr_string("/", "format") != "dpointnet-checkpoint")
    throw InputError(path, "", "format", "not a dpointnet checkpoint");
  const auto version =
      f.has_attr("/", "format_version") ? f.read_attr_int("/", "format_version") : std::vector<std::int64_t>{};
  if (version.size() != 1 || version[0] < 1) throw InputError(path, "", "format_version", "is missing or invalid");
  if (version[0] > kFormatVersion)
    throw InputError(path, "", "format_version",
                     "is " + std::to_string(version[0]) + ": written by a newer dpointnet (this one reads up to " +
                         std::to_string(kFormatVersion) + ")");
  if (version[0] < 2)
    log::get()->warn("{}: checkpoint format version {} carries no checksums; its values are not verified", path,
                     version[0]);
  const Reader r(f, path, version[0] >= 2);
  CheckpointState c;
  c.config_hash = f.read_attr_string("/", "config_hash");
  c.network_hash = f.read_attr_string("/", "network_hash");
  c.precision = f.read_attr_string("/", "precision");
  c.step = r.one_int("/step");
  // (files without them come from Adam runs accumulating over their conditions)
  if (f.has_attr("/", "optimizer")) c.optimizer = f.read_attr_string("/", "optimizer");
  if (f.has_attr("/", "approach")) c.approach = f.read_attr_string("/", "approach");
  c.optimizer_iterations = f.exists("/optimizer_iterations") ? r.one_int("/optimizer_iterations") : c.step;
  c.next_sample = r.one_int("/rng/next_sample");
  c.seed = static_cast<std::uint32_t>(r.one_int("/rng/seed"));
  if (f.exists("/schedule")) {
    c.global_batch = r.one_int("/schedule/global_batch");
    c.replicas = r.one_int("/schedule/replicas");
    c.batch_size = r.one_int("/schedule/batch_size");
  }
  for (const auto& name : f.children("/surfaces")) {
    SurfaceState s;
    const std::string g = "/surfaces/" + name;
    s.name = name;
    s.trainable = f.read_attr_string(g, "trainable") == "true";
    s.weight = r.doubles(g + "/weight");
    s.initial_weight = r.doubles(g + "/initial_weight");
    s.weight_pA = r.doubles(g + "/weight_pA");
    if (s.weight.size() != s.initial_weight.size() || s.weight.size() != s.weight_pA.size())
      throw InputError(path, g, "weight", "weight, initial_weight and weight_pA differ in length");
    if (s.trainable) {
      s.adam_m = r.doubles(g + "/adam_m");
      s.adam_v = r.doubles(g + "/adam_v");
      if (s.adam_m.size() != s.weight.size() || s.adam_v.size() != s.weight.size())
        throw InputError(path, g, "adam_m", "the Adam moments differ in length from the weights");
    }
    c.surfaces.push_back(std::move(s));
  }
  if (f.exists("/loss_state")) c.loss_state = r.doubles("/loss_state");
  if (f.exists("/loss_scale")) {
    c.loss_scale = r.doubles("/loss_scale");
    if (c.loss_scale.size() != 4 || !(c.loss_scale[0] >= 1) || c.loss_scale[1] < 0 || c.loss_scale[2] < 0 ||
        c.loss_scale[3] < 0)
      throw InputError(path, "", "loss_scale",
                       "must hold 4 values: a scale >= 1, good_steps, skipped_run and skipped_total >= 0");
  }
  if (f.exists("/carried_state")) {
    const std::string ds = "/carried_state/records";
    if (!f.is_dataset(ds) || f.dataset_shape(ds).size() != 2)
      throw InputError(path, "carried_state", "records", "must be a two-dimensional dataset [slots][record]");
    const auto shape = f.dataset_shape(ds);
    c.carried.slots = static_cast<std::int64_t>(shape[0]);
    c.carried.record_size = static_cast<std::int64_t>(shape[1]);
    c.carried.records = r.doubles(ds);
    c.carried.end_step = r.one_int("/carried_state/end_step");
  }
  return c;
}

}  // namespace dpointnet
