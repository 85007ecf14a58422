// Per-node dynamics_params of a SONATA node group: /nodes/<pop>/<group>/dynamics_params/<name>, one value (1-d
// dataset) or one row (2-d dataset, for list-valued parameters such as tau_syn) per row of the group. SONATA: a
// node's attributes override those of its node type, so each named parameter replaces the key of that name in
// the node type's dynamics_params JSON (after an Allen GLIF config has been converted to NEST names).
// BMTK 0.x and NEST's own SONATA reader ignore these datasets; docs/simulation.md says so.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "dpointnet/io/hdf5_file.hpp"

namespace dpointnet {

struct NodeDynamicsOverrides {
  std::size_t rows = 0;  // rows of the group (the length of every dataset)
  struct Column {
    std::size_t width = 0;  // 0: one scalar per row; k: a list of k values per row
    std::vector<double> values;
  };
  std::map<std::string, Column> columns;
  bool empty() const { return columns.empty(); }
  std::vector<std::string> names() const;
  // The node type's parameters with row `row`'s values in place of theirs, for the NEST model `model` (true/false
  // keys take 0/1). Keys `model` does not read are left out for this node (a group may mix models) and the keys
  // applied are added to `used`: unused() then names a key that no node of the group reads. Throws InputError
  // (file, where, dynamics_params/<name>) on a row out of range or a non-0/1 value for a true/false key.
  nlohmann::json apply(const std::string& model, const nlohmann::json& type_params, std::size_t row,
                       const std::string& file, const std::string& where, std::set<std::string>& used) const;
  // The first column name not in `used` ("" if every one was applied to some node).
  std::string unused(const std::set<std::string>& used) const;
};

// Reads group_path/dynamics_params (absent or empty: no overrides). Datasets must be numeric, 1-d or 2-d, all
// with the same first dimension; anything else is an InputError naming file, where and the dataset.
NodeDynamicsOverrides read_node_dynamics(const h5::File& f, const std::string& group_path, const std::string& where);

}  // namespace dpointnet
