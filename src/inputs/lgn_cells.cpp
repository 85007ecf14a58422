#include "dpointnet/inputs/lgn_cells.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>

#include "dpointnet/io/csv_table.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

namespace {

// The numeric attributes read (FilterNet's names of the V1 model, and the spellings FilterNet also accepts for
// them: delays_dom_0/1 before delay_dom_0/1, sigma after spatial_size).
const char* const kNumeric[] = {"x",
                                "y",
                                "spatial_size",
                                "sigma",
                                "kpeaks_dom_0",
                                "kpeaks_dom_1",
                                "weight_dom_0",
                                "weight_dom_1",
                                "delay_dom_0",
                                "delay_dom_1",
                                "delays_dom_0",
                                "delays_dom_1",
                                "kpeaks_non_dom_0",
                                "kpeaks_non_dom_1",
                                "weight_non_dom_0",
                                "weight_non_dom_1",
                                "delay_non_dom_0",
                                "delay_non_dom_1",
                                "tuning_angle",
                                "sf_sep",
                                "spont_fr",
                                "spatial_rotation",
                                "jitter_lower",
                                "jitter_upper"};

// Attributes FilterNet prefers to the ones above (lists, or another cell processor): refused rather than ignored.
const char* const kUnsupported[] = {
    "weights",    "opt_wts",    "weights_dom",     "kpeaks",         "opt_kpeaks",     "kpeaks_dom",      "delays",
    "opt_delays", "delays_dom", "weights_non_dom", "kpeaks_non_dom", "delays_non_dom", "model_processing"};

struct Group {
  std::map<std::string, std::vector<double>> values;
  std::size_t size = 0;  // rows of its shortest dataset read
  bool has_strings = false;
};

bool is_composite(const std::string& m) {
  return m == "sONsOFF_001" || m == "sONsOFF" || m == "sONtOFF_001" || m == "sONtOFF";
}

// One node's attributes: its node group's value (NaN kept: FilterNet reads it as given), else its node type's.
struct NodeView {
  const Group& grp;
  std::size_t gi;
  const CsvTable& types;
  std::size_t row;
  const std::string &nfile, &tfile, &where;

  bool in_group(const std::string& name) const { return grp.values.count(name) > 0; }
  bool has(const std::string& name) const { return in_group(name) || types.get(row, name).has_value(); }
  double value(const std::string& name) const {
    auto it = grp.values.find(name);
    if (it != grp.values.end()) return it->second[gi];
    return types.get_double(row, name, where).value_or(LgnNodeAttributes::kAbsent);
  }
  // the file an attribute comes from (the nodes file for one that is absent)
  const std::string& source(const std::string& name) const {
    return in_group(name) || !types.get(row, name) ? nfile : tfile;
  }
  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    throw InputError(source(name), where, name, what);
  }
};

// The names read where FilterNet accepts two spellings.
struct Spellings {
  std::string size = "spatial_size", delay = "delay_dom_";
};

LgnNodeAttributes node_attributes(const NodeView& v, Spellings& names) {
  LgnNodeAttributes a;
  if (auto t = v.types.get(v.row, "model_template")) {
    const auto colon = t->find(':');
    if (colon == std::string::npos || t->substr(0, colon) != "lgnmodel")
      v.fail("model_template", "\"" + *t + "\" is not \"lgnmodel:NAME\"");
    a.model = t->substr(colon + 1);
  } else if (auto p = v.types.get(v.row, "pop_name")) {
    a.model = *p;
  } else {
    throw InputError(v.tfile, v.where, "pop_name",
                     "is missing (neither pop_name nor model_template \"lgnmodel:NAME\")");
  }
  const bool composite = is_composite(a.model);
  if (!v.has("spatial_size") && v.has("sigma")) names.size = "sigma";  // FilterNet's sigma is a size too (3 sigma)
  if (v.has("delays_dom_0") && v.has("delays_dom_1")) names.delay = "delays_dom_";
  std::vector<std::string> required = {"x", "y", names.size};
  a.x = v.value("x");
  a.y = v.value("y");
  a.spatial_size = v.value(names.size);
  for (int k = 0; k < 2; ++k) {
    const std::string s = std::to_string(k);
    a.kpeaks_dom[k] = v.value("kpeaks_dom_" + s);
    a.weight_dom[k] = v.value("weight_dom_" + s);
    a.delay_dom[k] = v.value(names.delay + s);
    a.kpeaks_non_dom[k] = v.value("kpeaks_non_dom_" + s);
    a.weight_non_dom[k] = v.value("weight_non_dom_" + s);
    a.delay_non_dom[k] = v.value("delay_non_dom_" + s);
    for (const std::string& r : {"kpeaks_dom_" + s, "weight_dom_" + s, names.delay + s}) required.push_back(r);
    if (composite)
      for (const std::string& r : {"kpeaks_non_dom_" + s, "weight_non_dom_" + s, "delay_non_dom_" + s})
        required.push_back(r);
  }
  a.tuning_angle = v.value("tuning_angle");
  a.sf_sep = v.value("sf_sep");
  a.spont_fr = v.value("spont_fr");
  if (composite) {
    if (std::isnan(a.tuning_angle))
      v.fail("tuning_angle", "is required for the composite class " + a.model +
                                 " (FilterNet would draw a random angle; dpointnet does not)");
    required.push_back("sf_sep");
  }
  for (const std::string& r : required)
    if (!v.has(r))
      v.fail(r, "is missing (neither in the node's group in " + v.nfile + " nor in its node type in " + v.tfile + ")");
  return a;
}

// FilterNet's random jitter and rotated receptive fields are refused; other cell processors and list-valued
// filter attributes, which FilterNet would prefer to the ones read, too.
void refuse_unsupported(const NodeView& v) {
  for (const char* name : kUnsupported)
    if (v.types.get(v.row, name))
      v.fail(name,
             "is not supported (give the filter as weight/kpeaks/delay_dom_0/1 and _non_dom_0/1, without "
             "model_processing)");
  const double rotation = v.value("spatial_rotation");
  if (!std::isnan(rotation) && rotation != 0)
    v.fail("spatial_rotation",
           "is " + fmt::format("{}", rotation) + " deg: rotated receptive fields are not supported (only 0)");
  const bool lower = v.has("jitter_lower"), upper = v.has("jitter_upper");
  if (lower != upper)
    throw InputError(v.source(lower ? "jitter_lower" : "jitter_upper"), v.where,
                     lower ? "jitter_upper" : "jitter_lower",
                     "is missing: FilterNet needs both jitter_lower and jitter_upper, or neither");
  if (lower)
    for (const char* j : {"jitter_lower", "jitter_upper"})
      if (v.value(j) != 1.0)
        v.fail(j, "is " + fmt::format("{}", v.value(j)) +
                      ": FilterNet draws jittered filter parameters at random when loading the cell; dpointnet "
                      "supports only jitter_lower = jitter_upper = 1");
}

}  // namespace

std::vector<LgnCell> read_lgn_cells(const SimulationConfig& cfg, const Population& pop) {
  const NodesEntry* entry = nullptr;
  for (const NodesEntry& e : cfg.nodes)
    if (e.nodes_file == pop.nodes_file) entry = &e;
  const std::string pwhere = "population " + pop.name;
  if (!entry)
    throw InputError(cfg.path, pwhere, "nodes_file",
                     "no networks.nodes entry names the population's nodes file " + pop.nodes_file);
  const std::string& nfile = entry->nodes_file;
  const std::string& tfile = entry->node_types_file;
  h5::File file = h5::File::open_read(nfile);
  const CsvTable types = CsvTable::read(tfile);
  const std::string base = "/nodes/" + pop.name;
  if (!file.is_group(base)) throw InputError(nfile, pwhere, base, "group is missing");
  const std::vector<std::int64_t> type_ids = file.read_int(base + "/node_type_id");
  const std::size_t n = type_ids.size();
  auto optional_ints = [&](const char* name) {
    std::vector<std::int64_t> v;
    if (file.is_dataset(base + "/" + name)) {
      v = file.read_int(base + "/" + name);
      if (v.size() != n) throw InputError(nfile, pwhere, name, "length differs from node_type_id");
    }
    return v;
  };
  const std::vector<std::int64_t> node_ids = optional_ints("node_id"), group_ids = optional_ints("node_group_id"),
                                  group_rows = optional_ints("node_group_index");
  if (!pop.node_ids.empty() && pop.node_ids.size() != n)
    throw InputError(nfile, pwhere, "node_type_id",
                     "has " + std::to_string(n) + " rows, the population " + std::to_string(pop.node_ids.size()));
  if (!types.has_column("node_type_id")) throw InputError(tfile, "", "node_type_id", "column is missing");

  std::map<std::int64_t, Group> groups;
  auto group_of = [&](std::int64_t g) -> const Group& {
    auto it = groups.find(g);
    if (it != groups.end()) return it->second;
    const std::string gpath = base + "/" + std::to_string(g);
    if (!file.is_group(gpath))
      throw InputError(nfile, pwhere, "node_group_id", "group " + std::to_string(g) + " (" + gpath + ") is missing");
    Group grp;
    grp.size = SIZE_MAX;
    for (const char* name : kNumeric)
      if (file.is_dataset(gpath + "/" + name)) {
        grp.values[name] = file.read_double(gpath + "/" + name);
        grp.size = std::min(grp.size, grp.values[name].size());
      }
    for (const char* name : kUnsupported)
      if (file.exists(gpath + "/" + name))
        throw InputError(nfile, pwhere + " group " + std::to_string(g), name,
                         "is not supported (give the filter as weight/kpeaks/delay_dom_0/1 and _non_dom_0/1, "
                         "without model_processing)");
    for (const char* name : {"pop_name", "model_template"})
      if (file.exists(gpath + "/" + name))
        throw InputError(nfile, pwhere + " group " + std::to_string(g), name,
                         "per-node class names are not supported: give the class in the node types file");
    return groups.emplace(g, std::move(grp)).first->second;
  };

  std::vector<LgnCell> cells;
  cells.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t node_id = !node_ids.empty()       ? node_ids[i]
                                 : !pop.node_ids.empty() ? pop.node_ids[i]
                                                         : static_cast<std::int64_t>(i);
    const std::string where = "population " + pop.name + " node " + std::to_string(node_id);
    const long trow = types.find_row("node_type_id", type_ids[i]);
    if (trow < 0)
      throw InputError(tfile, where, "node_type_id",
                       "node type " + std::to_string(type_ids[i]) + " used in " + nfile + " is not listed");
    const auto row = static_cast<std::size_t>(trow);
    const Group& grp = group_of(group_ids.empty() ? 0 : group_ids[i]);
    const std::int64_t gi = group_rows.empty() ? static_cast<std::int64_t>(i) : group_rows[i];
    if (!grp.values.empty() && (gi < 0 || static_cast<std::size_t>(gi) >= grp.size))
      throw InputError(nfile, where, "node_group_index",
                       std::to_string(gi) + " is outside the node group's " + std::to_string(grp.size) + " rows");
    const NodeView v{grp, static_cast<std::size_t>(gi), types, row, nfile, tfile, where};
    Spellings names;
    const LgnNodeAttributes a = node_attributes(v, names);
    refuse_unsupported(v);
    try {
      cells.push_back(build_lgn_cell(a));
    } catch (const LgnAttributeError& e) {
      std::string attr = e.attribute();  // named as read
      if (attr == "spatial_size") attr = names.size;
      if (attr.rfind("delay_dom_", 0) == 0) attr = names.delay + attr.substr(10);
      throw InputError(attr == "pop_name" ? tfile : v.source(attr), where, attr, e.detail());
    }
  }
  return cells;
}

}  // namespace dpointnet
