#include "dpointnet/network/node_attributes.hpp"

#include <cmath>
#include <set>

#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

namespace {
const NodesEntry& entry_of(const SimulationConfig& cfg, const Population& pop) {
  for (const NodesEntry& e : cfg.nodes)
    if (e.nodes_file == pop.nodes_file) return e;
  throw InputError(cfg.path, "population " + pop.name, "nodes_file",
                   "no networks.nodes entry names the population's nodes file " + pop.nodes_file);
}
}  // namespace

NodeAttributes::NodeAttributes(const SimulationConfig& cfg, const Population& pop, std::string purpose)
    : nfile_(entry_of(cfg, pop).nodes_file),
      tfile_(entry_of(cfg, pop).node_types_file),
      base_("/nodes/" + pop.name),
      pop_name_(pop.name),
      purpose_(std::move(purpose)),
      types_(CsvTable::read(tfile_)) {
  const h5::File file = h5::File::open_read(nfile_);
  if (!file.is_group(base_)) throw InputError(nfile_, "population " + pop.name, base_, "group is missing");
  const std::vector<std::int64_t> type_ids = file.read_int(base_ + "/node_type_id");
  const std::size_t n = type_ids.size();
  auto optional_ints = [&](const char* name) {
    std::vector<std::int64_t> v;
    if (file.is_dataset(base_ + "/" + name)) {
      v = file.read_int(base_ + "/" + name);
      if (v.size() != n) throw InputError(nfile_, "population " + pop.name, name, "length differs from node_type_id");
    }
    return v;
  };
  node_id_ = optional_ints("node_id");
  group_id_ = optional_ints("node_group_id");
  group_index_ = optional_ints("node_group_index");
  if (node_id_.empty()) node_id_ = pop.node_ids;
  if (!types_.has_column("node_type_id")) throw InputError(tfile_, "", "node_type_id", "column is missing");
  type_row_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const long row = types_.find_row("node_type_id", type_ids[i]);
    if (row < 0)
      fail(tfile_, i, "node_type_id",
           "node type " + std::to_string(type_ids[i]) + " used in " + nfile_ + " is not listed");
    type_row_[i] = static_cast<std::size_t>(row);
  }
}

std::string NodeAttributes::where(std::size_t row) const {
  const std::int64_t id = row < node_id_.size() ? node_id_[row] : static_cast<std::int64_t>(row);
  return "population " + pop_name_ + " node " + std::to_string(id);
}

void NodeAttributes::fail(const std::string& file, std::size_t row, const std::string& name,
                          const std::string& what) const {
  throw InputError(file, where(row), name, what + (purpose_.empty() ? "" : " " + purpose_));
}

std::vector<double> NodeAttributes::numbers(const std::string& name) const {
  const std::size_t n = size();
  std::vector<double> out(n);
  const h5::File file = h5::File::open_read(nfile_);
  std::map<std::int64_t, std::vector<double>> groups;  // node group id -> its dataset (empty: absent)
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t g = group_id_.empty() ? 0 : group_id_[i];
    auto it = groups.find(g);
    if (it == groups.end()) {
      const std::string ds = base_ + "/" + std::to_string(g) + "/" + name;
      it = groups.emplace(g, file.is_dataset(ds) ? file.read_double(ds) : std::vector<double>{}).first;
    }
    const std::vector<double>& v = it->second;
    if (!v.empty()) {
      const std::int64_t gi = group_index_.empty() ? static_cast<std::int64_t>(i) : group_index_[i];
      if (gi < 0 || static_cast<std::size_t>(gi) >= v.size())
        fail(nfile_, i, "node_group_index",
             std::to_string(gi) + " is outside the " + std::to_string(v.size()) + " values of " + name);
      out[i] = v[static_cast<std::size_t>(gi)];
      if (!std::isfinite(out[i])) fail(nfile_, i, name, "is not a finite number");
      continue;
    }
    const auto t = types_.get_double(type_row_[i], name, where(i));
    if (!t)
      fail(nfile_, i, name,
           "is missing (neither in the node's group in " + nfile_ + " nor in its node type in " + tfile_ + ")");
    if (!std::isfinite(*t)) fail(tfile_, i, name, "is not a finite number");
    out[i] = *t;
  }
  return out;
}

std::vector<std::string> NodeAttributes::strings(const std::string& name) const {
  const std::size_t n = size();
  std::vector<std::string> out(n);
  const h5::File file = h5::File::open_read(nfile_);
  std::set<std::int64_t> checked;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t g = group_id_.empty() ? 0 : group_id_[i];
    if (checked.insert(g).second && file.exists(base_ + "/" + std::to_string(g) + "/" + name))
      fail(nfile_, i, name, "per-node text attributes are not supported: give " + name + " in the node types table");
    const auto v = types_.get(type_row_[i], name);
    if (!v) fail(tfile_, i, name, "is missing from the node's type (node types table " + tfile_ + ")");
    out[i] = *v;
  }
  return out;
}

}  // namespace dpointnet
