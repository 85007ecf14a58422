// Helpers shared by the SONATA nodes and edges readers.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/io/csv_table.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet::detail {

inline std::string join(const std::string& dir, const std::string& file) {
  if (std::filesystem::path(file).is_absolute() || dir.empty()) return file;
  return (std::filesystem::path(dir) / file).string();
}

// id -> row map for a population (identity when node ids are 0..N-1).
struct IdIndex {
  bool identity = true;
  std::int64_t n = 0;
  std::unordered_map<std::int64_t, std::int64_t> map;
  explicit IdIndex(const std::vector<std::int64_t>& ids) : n(static_cast<std::int64_t>(ids.size())) {
    for (std::int64_t i = 0; i < n; ++i)
      if (ids[static_cast<std::size_t>(i)] != i) identity = false;
    if (!identity)
      for (std::int64_t i = 0; i < n; ++i) map[ids[static_cast<std::size_t>(i)]] = i;
  }
  std::int64_t row(std::int64_t id) const {
    if (identity) return (id >= 0 && id < n) ? id : -1;
    auto it = map.find(id);
    return it == map.end() ? -1 : it->second;
  }
};

inline void require_file(const SimulationConfig& cfg, const std::string& section, const std::string& key,
                         const std::string& path) {
  if (!std::filesystem::exists(path))
    throw InputError(cfg.path, section, key, "names a file that does not exist: " + path);
}

// A SONATA h5 file and its types table, as named by cfg.<section> (networks.nodes[i] or networks.edges[i]):
// both must exist, the table must have `id_column` and the h5 file the group `root`.
struct SonataPair {
  h5::File h5;
  CsvTable types;
};
inline SonataPair open_sonata_pair(const SimulationConfig& cfg, const std::string& section, const char* file_key,
                                   const std::string& file, const char* types_key, const std::string& types_file,
                                   const char* id_column, const char* root) {
  require_file(cfg, section, file_key, file);
  require_file(cfg, section, types_key, types_file);
  SonataPair p{h5::File::open_read(file), CsvTable::read(types_file)};
  if (!p.types.has_column(id_column)) throw InputError(types_file, "", id_column, "column is missing");
  if (!p.h5.is_group(root)) throw InputError(file, "", root, "group is missing");
  return p;
}

}  // namespace dpointnet::detail
