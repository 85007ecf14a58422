#include "dpointnet/train/observed_rates.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "dpointnet/io/csv_table.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/network/v1_cell_types.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

namespace {
const NodesEntry& nodes_entry(const SimulationConfig& cfg, const Population& p, const std::string& section) {
  for (const auto& e : cfg.nodes)
    if (e.nodes_file == p.nodes_file) return e;
  throw InputError(cfg.path, section, "group_by", "no node types table for population " + p.name);
}
}  // namespace

std::map<std::int64_t, std::string> node_type_groups(const SimulationConfig& cfg, const Network& net,
                                                     const std::string& column, const std::string& section,
                                                     bool merge_l5) {
  std::map<std::int64_t, std::string> groups;
  if (column == "node_type_id") {
    for (const auto& p : net.populations)
      if (!p.is_virtual)
        for (std::int64_t id : p.node_type_ids) groups[id] = std::to_string(id);
    return groups;
  }
  const bool cell_type = column == "cell_type";
  const std::string read = cell_type ? "pop_name" : column;
  for (const auto& p : net.populations) {
    if (p.is_virtual) continue;
    const NodesEntry& entry = nodes_entry(cfg, p, section);
    const CsvTable t = CsvTable::read(entry.node_types_file);
    if (!t.has_column(read))
      throw InputError(entry.node_types_file, "", read,
                       "column is missing (" + section + ".group_by " +
                           (cell_type ? "\"cell_type\" maps each node type's pop_name" : "names a column") +
                           " of the node types tables)");
    for (std::int64_t id : p.node_type_ids) {
      if (groups.count(id)) continue;
      const long row = t.find_row("node_type_id", id);
      const auto v = row < 0 ? std::nullopt : t.get(static_cast<std::size_t>(row), read);
      const std::string where = "node_type_id " + std::to_string(id);
      if (!v)
        throw InputError(entry.node_types_file, where, read,
                         "is empty (" + section + ".group_by needs a value for every simulated node type)");
      if (cell_type) {
        const auto ct = v1_cell_type(*v, merge_l5);
        if (!ct)
          throw InputError(entry.node_types_file, where, "pop_name",
                           "\"" + *v +
                               "\" is not a V1 population name (e or i, a layer digit 1-6 with 23 for 2/3, "
                               "a class, e.g. e4Rorb, i23Pvalb; " +
                               section + ".group_by \"cell_type\")");
        groups[id] = *ct;
      } else {
        groups[id] = *v;
      }
    }
  }
  return groups;
}

std::string observed_link_name(const std::string& group) {
  std::string out;
  for (char c : group) out += c == '/' ? std::string("%2F") : c == '%' ? std::string("%25") : std::string(1, c);
  return out;
}

std::string observed_group_name(const std::string& link) {
  std::string out;
  for (std::size_t k = 0; k < link.size(); ++k) {
    if (link[k] == '%' && link.compare(k, 3, "%2F") == 0) {
      out += '/';
      k += 2;
    } else if (link[k] == '%' && link.compare(k, 3, "%25") == 0) {
      out += '%';
      k += 2;
    } else {
      out += link[k];
    }
  }
  return out;
}

namespace {
bool is_hdf5(const std::string& file) {
  auto ends = [&](const char* x) {
    const std::string e(x);
    return file.size() > e.size() && file.compare(file.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".h5") || ends(".hdf5");
}

// Observed (group value, rate) pairs of an HDF5 target file.
void read_observed_hdf5(const std::string& file, const std::string& section, const std::string& group_by,
                        std::vector<std::string>& key, std::vector<double>& rate) {
  auto f = h5::File::open_read(file);
  if (f.is_group("/observed")) {  // one dataset per group value
    for (const auto& name : f.children("/observed")) {
      const auto v = f.read_double("/observed/" + name);
      key.insert(key.end(), v.size(), observed_group_name(name));
      rate.insert(rate.end(), v.begin(), v.end());
    }
  } else {
    if (group_by != "node_type_id")
      throw InputError(
          file, "", "/observed",
          "group is missing: with group_by \"" + group_by + "\" the HDF5 target file holds /observed/<value> datasets");
    for (const char* ds : {"/node_type_id", "/rate_hz"})
      if (!f.is_dataset(ds)) throw InputError(file, "", ds, "dataset is missing (target_file of " + section + ")");
    const auto type = f.read_int("/node_type_id");
    rate = f.read_double("/rate_hz");
    if (type.size() != rate.size())
      throw InputError(file, "", "rate_hz",
                       std::to_string(rate.size()) + " rates for " + std::to_string(type.size()) + " node_type_ids");
    for (auto id : type) key.push_back(std::to_string(id));
  }
}

// Observed (group value, rate) pairs of a space-separated target table; NaN rates skipped.
void read_observed_table(const std::string& file, const std::string& group_by, const std::string& rate_column,
                         std::vector<std::string>& key, std::vector<double>& rate) {
  const CsvTable t = CsvTable::read(file);
  const std::string gcol = group_by;
  for (const std::string& c : {gcol, rate_column})
    if (!t.has_column(c))
      throw InputError(file, "", c, "column is missing (space-separated table: " + gcol + " " + rate_column + ")");
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const std::string label = "row " + std::to_string(r + 1);
    const auto hz = t.get_double(r, rate_column, label);
    if (!hz) throw InputError(file, label, rate_column, "is empty");
    if (std::isnan(*hz)) continue;
    if (!std::isfinite(*hz) || *hz < 0) throw InputError(file, label, rate_column, "must be a finite rate >= 0 (Hz)");
    if (group_by == "node_type_id") {
      const auto id = t.get_double(r, "node_type_id", label);
      if (!id) throw InputError(file, label, "node_type_id", "is empty");
      if (*id != std::floor(*id) || std::fabs(*id) > 9.0e18)
        throw InputError(file, label, "node_type_id", "is not an integer (of at most 64 bits)");
      key.push_back(std::to_string(static_cast<std::int64_t>(*id)));
    } else {
      const auto v = t.get(r, gcol);
      if (!v) throw InputError(file, label, gcol, "is empty");
      key.push_back(*v);
    }
    rate.push_back(*hz);
  }
}
}  // namespace

std::map<std::string, std::vector<double>> read_observed_rates(const std::string& file, const std::string& config,
                                                               const std::string& section, const std::string& group_by,
                                                               const std::string& rate_column,
                                                               const std::map<std::int64_t, std::string>& groups) {
  if (!std::filesystem::is_regular_file(file))
    throw InputError(config, section, "target_file", "'" + file + "' does not exist or is not a file");
  std::vector<std::string> key;
  std::vector<double> rate;
  if (is_hdf5(file)) {
    read_observed_hdf5(file, section, group_by, key, rate);
    for (std::size_t k = 0; k < key.size(); ++k)
      if (!std::isfinite(rate[k]) || rate[k] < 0)
        throw InputError(file, "/observed/" + observed_link_name(key[k]), "rate_hz", "must be a finite rate >= 0 (Hz)");
  } else {
    read_observed_table(file, group_by, rate_column, key, rate);
  }
  std::map<std::string, std::vector<double>> obs;
  for (std::size_t k = 0; k < key.size(); ++k) obs[key[k]].push_back(rate[k]);
  for (auto& [id, v] : obs) std::sort(v.begin(), v.end());
  for (const auto& [type, g] : groups)
    if (!obs.count(g))
      throw InputError(
          config, section, "target_file",
          "'" + file + "' has no observed rates of " +
              (group_by == "node_type_id" ? "node type " + g
                                          : group_by + " \"" + g + "\" (node type " + std::to_string(type) + ")"));
  return obs;
}

namespace {
// Interpolation between the m sorted observations at position p (m - 1), p in [0, 1].
double interpolate(const std::vector<double>& o, double p) {
  const double pos = p * static_cast<double>(o.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, o.size() - 1);
  return o[lo] + (pos - static_cast<double>(lo)) * (o[hi] - o[lo]);
}
}  // namespace

std::vector<double> quantile_targets(const std::vector<double>& observed, std::size_t n) {
  std::vector<double> q(n);
  for (std::size_t k = 0; k < n; ++k)
    q[k] = interpolate(observed, (static_cast<double>(k) + 0.5) / static_cast<double>(n));
  return q;
}

std::vector<double> sampled_targets(const std::vector<double>& observed, std::size_t n, std::uint32_t seed) {
  // numpy's RandomState(seed): MT19937 seeded by init_genrand; a double from two words, 53 random bits
  std::mt19937 mt(seed);
  std::vector<double> q(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double a = static_cast<double>(mt() >> 5), b = static_cast<double>(mt() >> 6);
    q[k] = interpolate(observed, (a * 67108864.0 + b) / 9007199254740992.0);
  }
  std::sort(q.begin(), q.end());
  return q;
}

}  // namespace dpointnet
