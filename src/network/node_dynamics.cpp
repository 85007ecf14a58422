#include "dpointnet/network/node_dynamics.hpp"

#include <cmath>

#include "dpointnet/network/neuron_model.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

std::vector<std::string> NodeDynamicsOverrides::names() const {
  std::vector<std::string> out;
  for (const auto& [k, c] : columns) out.push_back(k);
  return out;
}

std::string NodeDynamicsOverrides::unused(const std::set<std::string>& used) const {
  for (const auto& [k, c] : columns)
    if (!used.count(k)) return k;
  return "";
}

nlohmann::json NodeDynamicsOverrides::apply(const std::string& model, const nlohmann::json& type_params,
                                            std::size_t row, const std::string& file, const std::string& where,
                                            std::set<std::string>& used) const {
  nlohmann::json p = type_params;
  for (const auto& [name, c] : columns) {
    const std::string field = "dynamics_params/" + name;
    bool flag = false;
    if (!reads_parameter(model, name, &flag)) continue;
    used.insert(name);
    if (row >= rows)
      throw InputError(
          file, where, field,
          "node_group_index " + std::to_string(row) + " is beyond the group's " + std::to_string(rows) + " rows");
    if (c.width == 0) {
      const double v = c.values[row];
      if (flag) {
        if (v != 0.0 && v != 1.0)
          throw InputError(file, where, field,
                           "overrides a true/false parameter and must be 0 or 1, got " + std::to_string(v));
        p[name] = v != 0.0;
      } else {
        p[name] = v;
      }
    } else {
      p[name] = std::vector<double>(c.values.begin() + static_cast<std::ptrdiff_t>(row * c.width),
                                    c.values.begin() + static_cast<std::ptrdiff_t>((row + 1) * c.width));
    }
  }
  return p;
}

NodeDynamicsOverrides read_node_dynamics(const h5::File& f, const std::string& group_path, const std::string& where) {
  NodeDynamicsOverrides o;
  const std::string dp = group_path + "/dynamics_params";
  if (!f.exists(dp)) return o;
  if (!f.is_group(dp)) throw InputError(f.path(), where, "dynamics_params", "must be a group of datasets");
  bool first = true;
  for (const std::string& name : f.children(dp)) {
    const std::string ds = dp + "/" + name, field = "dynamics_params/" + name;
    if (!f.is_dataset(ds))
      throw InputError(f.path(), where, field, "must be a dataset (one value or row per node of the group)");
    const auto shape = f.dataset_shape(ds);
    if (shape.empty() || shape.size() > 2)
      throw InputError(f.path(), where, field,
                       "must be 1-d (a value per node) or 2-d (a list per node), has " + std::to_string(shape.size()) +
                           " dimensions");
    if (first) o.rows = shape[0], first = false;
    if (shape[0] != o.rows)
      throw InputError(f.path(), where, field,
                       "has " + std::to_string(shape[0]) + " rows, the group's other dynamics_params have " +
                           std::to_string(o.rows));
    NodeDynamicsOverrides::Column c;
    c.width = shape.size() == 2 ? shape[1] : 0;
    if (shape.size() == 2 && c.width == 0) throw InputError(f.path(), where, field, "has rows of no values");
    c.values = f.read_double(ds);  // refuses non-numeric data, naming the dataset
    for (double v : c.values)
      if (!std::isfinite(v)) throw InputError(f.path(), where, field, "holds a value that is not finite");
    o.columns.emplace(name, std::move(c));
  }
  return o;
}

}  // namespace dpointnet
