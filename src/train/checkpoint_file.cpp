#include "train/checkpoint_file.hpp"

#include <filesystem>
#include <stdexcept>

#include "io/hdf5_file.hpp"
#include "util/error.hpp"

namespace dpointnet {

void write_checkpoint_file(const std::string& path, const CheckpointState& c) {
  const std::string tmp = path + ".tmp";
  {
    auto f = h5::File::create(tmp, true);
    f.write_attr_string("/", "format", "dpointnet-checkpoint");
    f.write_attr_uint32("/", "format_version", {1});
    f.write_attr_string("/", "config_hash", c.config_hash);
    f.write_attr_string("/", "network_hash", c.network_hash);
    f.write_attr_string("/", "precision", c.precision);
    f.write_int64("/step", {c.step});
    f.write_int64("/rng/next_sample", {c.next_sample});
    f.write_int64("/rng/seed", {static_cast<std::int64_t>(c.seed)});
    for (const auto& s : c.surfaces) {
      const std::string g = "/surfaces/" + s.name;
      f.create_group(g);
      f.write_attr_string(g, "trainable", s.trainable ? "true" : "false");
      f.write_double(g + "/weight", s.weight);
      f.write_double(g + "/initial_weight", s.initial_weight);
      f.write_double(g + "/weight_pA", s.weight_pA);
      f.write_attr_string(g + "/weight_pA", "units", "pA");
      if (s.trainable) {
        f.write_double(g + "/adam_m", s.adam_m);
        f.write_double(g + "/adam_v", s.adam_v);
      }
    }
    if (!c.carried.empty()) {
      const auto& k = c.carried;
      if (k.records.size() != static_cast<std::size_t>(k.slots * k.record_size))
        throw std::logic_error("carried state: " + std::to_string(k.records.size()) + " values for " +
                               std::to_string(k.slots) + " slots of " + std::to_string(k.record_size));
      f.create_group("/carried_state");
      f.write_double_2d("/carried_state/records", k.records, static_cast<std::size_t>(k.slots),
                        static_cast<std::size_t>(k.record_size));
      f.write_attr_string("/carried_state/records", "layout",
                          "per slot: v[N] r[N] asc[2][N] psc_rise[R][N] psc[R][N] z_ring[D][N] input rings[D][n_src] "
                          "(ring slot s mod D holds step s; normalized units)");
      f.write_int64("/carried_state/end_step", {k.end_step});
    }
    f.flush();
  }
  std::filesystem::rename(tmp, path);  // atomic on one file system: a reader never sees a partial checkpoint
}

CheckpointState read_checkpoint_file(const std::string& path) {
  auto f = h5::File::open_read(path);
  if (!f.has_attr("/", "format") || f.read_attr_string("/", "format") != "dpointnet-checkpoint")
    throw InputError(path, "", "format", "not a dpointnet checkpoint");
  CheckpointState c;
  c.config_hash = f.read_attr_string("/", "config_hash");
  c.network_hash = f.read_attr_string("/", "network_hash");
  c.precision = f.read_attr_string("/", "precision");
  c.step = f.read_int("/step").at(0);
  c.next_sample = f.read_int("/rng/next_sample").at(0);
  c.seed = static_cast<std::uint32_t>(f.read_int("/rng/seed").at(0));
  for (const auto& name : f.children("/surfaces")) {
    SurfaceState s;
    const std::string g = "/surfaces/" + name;
    s.name = name;
    s.trainable = f.read_attr_string(g, "trainable") == "true";
    s.weight = f.read_double(g + "/weight");
    s.initial_weight = f.read_double(g + "/initial_weight");
    s.weight_pA = f.read_double(g + "/weight_pA");
    if (s.trainable) {
      s.adam_m = f.read_double(g + "/adam_m");
      s.adam_v = f.read_double(g + "/adam_v");
    }
    c.surfaces.push_back(std::move(s));
  }
  if (f.exists("/carried_state")) {
    const std::string ds = "/carried_state/records";
    if (!f.is_dataset(ds) || f.dataset_shape(ds).size() != 2)
      throw InputError(path, "carried_state", "records", "must be a two-dimensional dataset [slots][record]");
    const auto shape = f.dataset_shape(ds);
    c.carried.slots = static_cast<std::int64_t>(shape[0]);
    c.carried.record_size = static_cast<std::int64_t>(shape[1]);
    c.carried.records = f.read_double(ds);
    c.carried.end_step = f.read_int("/carried_state/end_step").at(0);
  }
  return c;
}

}  // namespace dpointnet
