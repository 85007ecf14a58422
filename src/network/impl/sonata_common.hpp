// Helpers shared by the SONATA nodes and edges readers.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/simulation_config.hpp"
#include "util/error.hpp"

namespace dpointnet::impl {

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
  if (!std::filesystem::exists(path)) throw InputError(cfg.path, section, key, "names a file that does not exist: " + path);
}

}  // namespace dpointnet::impl
