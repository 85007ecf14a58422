// Writers of the generated SONATA files: text files, nodes files, and edges files from flat columns.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "dpointnet/generator/cell_types.hpp"

namespace dpointnet::generator {

void write_text(const std::filesystem::path& path, const std::string& text);

// Nodes file: /nodes/<pop>/{node_id, node_type_id, node_group_id, node_group_index} and group 0 with `props`.
void write_nodes_file(const std::filesystem::path& path, const std::string& pop,
                      const std::vector<std::uint64_t>& node_type_id,
                      const std::vector<std::pair<std::string, std::vector<double>>>& props, bool overwrite);

// Edges of one projection, sorted by target, in flat columns.
struct EdgeSet {
  std::vector<std::uint32_t> source;
  std::vector<std::uint64_t> target_offset;  // [n_target + 1]: edges of target t are rows offset[t]..offset[t+1)
  std::vector<std::uint8_t> type_index;      // index into the projection's SynType table
  std::vector<double> weight, delay;
  std::vector<std::uint32_t> nsyns;  // synapses per edge; empty: 1 for every edge

  std::size_t size() const { return source.size(); }
  void reserve(std::size_t n, std::size_t n_target) {
    source.reserve(n);
    type_index.reserve(n);
    weight.reserve(n);
    delay.reserve(n);
    target_offset.reserve(n_target + 1);
    target_offset.assign(1, 0);
  }
  void push(std::uint32_t s, std::uint8_t t, double w, double d) {
    source.push_back(s);
    type_index.push_back(t);
    weight.push_back(w);
    delay.push_back(d);
  }
  void end_target() { target_offset.push_back(source.size()); }
};

// A reservation for n_targets x mean_in_degree Bernoulli picks (mean + 6 sigma).
std::size_t reserve_estimate(double n_targets, double mean_in_degree);

// One projection's edges file: names, population sizes and its synapse-type table.
struct EdgeFileSpec {
  std::string file, population, source_pop, target_pop;
  std::uint64_t n_source = 0, n_target = 0;
  const SynType* types = nullptr;
  int n_types = 0;
};

// Writes the edges file (columns, SONATA indices) and frees the columns as it goes.
void write_edges_file(const std::filesystem::path& path, const EdgeFileSpec& pr, EdgeSet& e, bool overwrite, bool gzip);

// The edge types CSV of a synapse-type table.
std::string edge_types_csv(const SynType* types, int n);

}  // namespace dpointnet::generator
