// The SONATA attributes of a population's nodes: a node's value in its node group (the nodes file,
// /nodes/<population>/<node_group_id>/<name>) over its node type's (the node types table of the population's
// networks.nodes entry). Errors name the file, the population, the first node concerned and the attribute.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/io/csv_table.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

class NodeAttributes {
 public:
  // The population's nodes in row order; `purpose` ends every error message (e.g. "(needed by
  // train.losses[2].core_radius)").
  NodeAttributes(const SimulationConfig& cfg, const Population& pop, std::string purpose);

  std::size_t size() const { return type_row_.size(); }
  const std::string& nodes_file() const { return nfile_; }
  const std::string& node_types_file() const { return tfile_; }
  // A number per node (finite), from the node's group dataset or its node type's column.
  std::vector<double> numbers(const std::string& name) const;
  // Text per node from the node types table (a per-node text dataset in a node group is refused).
  std::vector<std::string> strings(const std::string& name) const;

 private:
  std::string where(std::size_t row) const;
  [[noreturn]] void fail(const std::string& file, std::size_t row, const std::string& name,
                         const std::string& what) const;

  std::string nfile_, tfile_, base_, pop_name_, purpose_;
  CsvTable types_;
  std::vector<std::int64_t> node_id_, group_id_, group_index_;
  std::vector<std::size_t> type_row_;  // row of each node's type in the node types table
};

}  // namespace dpointnet
