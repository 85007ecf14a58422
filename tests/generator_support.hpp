// Shared fixture and readers of the generator tests.
#pragma once
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/io/hdf5_file.hpp"

namespace dpointnet::test {

namespace fs = std::filesystem;

class GeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    root_ = fs::temp_directory_path() / ("dpointnet_gen_" + std::string(info->name()) + "_" + std::to_string(stamp) +
                                         "_" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  GeneratorOptions options(const std::string& sub, std::int64_t n, double syn) const {
    GeneratorOptions o;
    o.out_dir = (root_ / sub).string();
    o.n_neurons = n;
    o.synapses_per_neuron = syn;
    return o;
  }
  fs::path root_;
};

struct Edges {
  std::vector<std::int64_t> src, trg, type, group_id, group_index, nsyns;
  std::vector<double> weight, delay;
  std::string src_pop, trg_pop;
  std::size_t size() const { return src.size(); }
};

inline Edges read_edges(const fs::path& file, const std::string& pop) {
  auto f = h5::File::open_read(file.string());
  const std::string b = "/edges/" + pop;
  Edges e;
  e.src = f.read_int(b + "/source_node_id");
  e.trg = f.read_int(b + "/target_node_id");
  e.type = f.read_int(b + "/edge_type_id");
  e.group_id = f.read_int(b + "/edge_group_id");
  e.group_index = f.read_int(b + "/edge_group_index");
  e.nsyns = f.read_int(b + "/0/nsyns");
  e.weight = f.read_double(b + "/0/syn_weight");
  e.delay = f.read_double(b + "/0/delay");
  e.src_pop = f.read_attr_string(b + "/source_node_id", "node_population");
  e.trg_pop = f.read_attr_string(b + "/target_node_id", "node_population");
  return e;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

inline const char* const kEdgeFiles[3][2] = {
    {"v1_v1_edges.h5", "v1_to_v1"}, {"lgn_v1_edges.h5", "lgn_to_v1"}, {"bkg_v1_edges.h5", "bkg_to_v1"}};

inline std::size_t population_size(const fs::path& nodes_file, const std::string& pop) {
  auto f = h5::File::open_read(nodes_file.string());
  return f.dataset_length("/nodes/" + pop + "/node_id");
}

// A space-separated types CSV as rows of column -> value, keyed by node_type_id (or edge_type_id).
inline std::map<std::int64_t, std::map<std::string, std::string>> read_types_csv(const fs::path& file) {
  std::ifstream in(file);
  std::string line, word;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::istringstream h(line); h >> word;) header.push_back(word);
  std::map<std::int64_t, std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::istringstream r(line);
    std::map<std::string, std::string> row;
    for (const std::string& col : header)
      if (r >> word) row[col] = word;
    if (!row.empty()) rows[std::stoll(row.at(header.at(0)))] = row;
  }
  return rows;
}

// The pop_name of every node of population `pop` (nodes file + types CSV).
inline std::vector<std::string> node_pop_names(const fs::path& net, const std::string& pop) {
  const auto types = read_types_csv(net / (pop + "_node_types.csv"));
  auto f = h5::File::open_read((net / (pop + "_nodes.h5")).string());
  std::vector<std::string> names;
  for (std::int64_t t : f.read_int("/nodes/" + pop + "/node_type_id")) names.push_back(types.at(t).at("pop_name"));
  return names;
}

}  // namespace dpointnet::test
