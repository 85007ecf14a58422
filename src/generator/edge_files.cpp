#include "dpointnet/generator/edge_files.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "dpointnet/generator/plan.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet::generator {

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path.string(), "", "", "cannot create file");
  out << text;
  out.close();
  if (!out) throw InputError(path.string(), "", "", "cannot write file");
}

// Nodes file: /nodes/<pop>/{node_id, node_type_id, node_group_id, node_group_index} and group 0 with `props`.
void write_nodes_file(const fs::path& path, const std::string& pop, const std::vector<std::uint64_t>& node_type_id,
                      const std::vector<std::pair<std::string, std::vector<double>>>& props, bool overwrite) {
  auto f = h5::File::create(path.string(), overwrite);
  f.write_sonata_header();
  const std::string base = "/nodes/" + pop;
  const std::size_t n = node_type_id.size();
  std::vector<std::uint64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = i;
  f.create_group(base + "/0");
  f.write_uint64(base + "/node_id", ids);
  f.write_uint64(base + "/node_type_id", node_type_id);
  f.write_uint32(base + "/node_group_id", std::vector<std::uint32_t>(n, 0));
  f.write_uint64(base + "/node_group_index", ids);
  for (const auto& [name, values] : props) f.write_double(base + "/0/" + name, values);
}

std::size_t reserve_estimate(double n_targets, double mean_in_degree) {
  const double mean = n_targets * mean_in_degree;
  return static_cast<std::size_t>(mean + 6.0 * std::sqrt(mean) + 16.0);
}

// SONATA index groups (docs/simulation.md): node_id_to_range [n, 2] are half-open row ranges of range_to_edge_id,
// whose rows are half-open edge ranges. Edges are sorted by target, so target_to_source has one range per
// target with edges; source_to_target merges consecutive edge ids of a source into one range.
namespace {

void write_indices(h5::File& f, const std::string& base, const EdgeSet& e, std::uint64_t n_source,
                   std::uint64_t n_target) {
  {
    std::vector<std::uint64_t> n2r(2 * n_target), r2e;
    r2e.reserve(2 * n_target);
    std::uint64_t rows = 0;
    for (std::uint64_t t = 0; t < n_target; ++t) {
      const std::uint64_t a = e.target_offset[t], b = e.target_offset[t + 1];
      n2r[2 * t] = rows;
      if (b > a) {
        r2e.push_back(a);
        r2e.push_back(b);
        ++rows;
      }
      n2r[2 * t + 1] = rows;
    }
    f.write_uint64_2d(base + "/indices/target_to_source/node_id_to_range", n2r, n_target, 2);
    f.write_uint64_2d(base + "/indices/target_to_source/range_to_edge_id", r2e, rows, 2);
  }
  {
    const std::size_t n_edges = e.size();
    std::vector<std::uint64_t> start(n_source + 1, 0);
    for (std::uint32_t s : e.source) ++start[s + 1];
    for (std::uint64_t s = 0; s < n_source; ++s) start[s + 1] += start[s];
    std::vector<std::uint32_t> order(n_edges);  // edge ids grouped by source, ascending within a source
    {
      std::vector<std::uint64_t> fill(start.begin(), start.end() - 1);
      for (std::size_t i = 0; i < n_edges; ++i) order[fill[e.source[i]]++] = static_cast<std::uint32_t>(i);
    }
    std::uint64_t rows = 0;
    for (std::uint64_t s = 0; s < n_source; ++s)
      for (std::uint64_t k = start[s]; k < start[s + 1]; ++k)
        if (k == start[s] || order[k] != order[k - 1] + 1) ++rows;
    std::vector<std::uint64_t> n2r(2 * n_source), r2e(2 * rows);
    std::uint64_t row = 0;
    for (std::uint64_t s = 0; s < n_source; ++s) {
      n2r[2 * s] = row;
      for (std::uint64_t k = start[s]; k < start[s + 1]; ++k) {
        if (k == start[s] || order[k] != order[k - 1] + 1) {
          r2e[2 * row] = order[k];
          ++row;
        }
        r2e[2 * (row - 1) + 1] = static_cast<std::uint64_t>(order[k]) + 1;
      }
      n2r[2 * s + 1] = row;
    }
    order.clear();
    order.shrink_to_fit();
    f.write_uint64_2d(base + "/indices/source_to_target/node_id_to_range", n2r, n_source, 2);
    f.write_uint64_2d(base + "/indices/source_to_target/range_to_edge_id", r2e, rows, 2);
  }
}

}  // namespace

void write_edges_file(const fs::path& path, const EdgeFileSpec& pr, EdgeSet& e, bool overwrite, bool gzip) {
  auto f = h5::File::create(path.string(), overwrite);
  f.write_sonata_header();
  const std::string base = "/edges/" + pr.population;
  const std::size_t n = e.size();
  f.create_group(base + "/0");
  {
    std::vector<std::uint64_t> v(e.source.begin(), e.source.end());
    f.write_uint64(base + "/source_node_id", v, gzip);
  }
  f.write_attr_string(base + "/source_node_id", "node_population", pr.source_pop);
  {
    std::vector<std::uint64_t> v(n);
    for (std::uint64_t t = 0; t < pr.n_target; ++t)
      std::fill(v.begin() + static_cast<std::ptrdiff_t>(e.target_offset[t]),
                v.begin() + static_cast<std::ptrdiff_t>(e.target_offset[t + 1]), t);
    f.write_uint64(base + "/target_node_id", v, gzip);
  }
  f.write_attr_string(base + "/target_node_id", "node_population", pr.target_pop);
  {
    std::vector<std::uint32_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(pr.types[e.type_index[i]].edge_type_id);
    f.write_uint32(base + "/edge_type_id", v, gzip);
    std::vector<std::uint8_t>().swap(e.type_index);
    f.write_uint16(base + "/edge_group_id", std::vector<std::uint16_t>(n, 0), gzip);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(i);
    f.write_uint32(base + "/edge_group_index", v, gzip);
    if (e.nsyns.empty()) {
      std::fill(v.begin(), v.end(), 1u);
      f.write_uint32(base + "/0/nsyns", v, gzip);
    } else {
      f.write_uint32(base + "/0/nsyns", e.nsyns, gzip);
      std::vector<std::uint32_t>().swap(e.nsyns);
    }
  }
  f.write_double(base + "/0/syn_weight", e.weight, gzip);
  std::vector<double>().swap(e.weight);
  f.write_double(base + "/0/delay", e.delay, gzip);
  std::vector<double>().swap(e.delay);
  write_indices(f, base, e, pr.n_source, pr.n_target);
}

std::string edge_types_csv(const SynType* types, int n) {
  std::ostringstream s;
  s << "edge_type_id target_query source_query model_template syn_weight dynamics_params delay\n";
  for (int i = 0; i < n; ++i)
    s << types[i].edge_type_id << ' ' << types[i].target_query << ' ' << types[i].source_query << " static_synapse "
      << num(types[i].weight_pA) << ' ' << types[i].dynamics_params << ' ' << num(types[i].delay_ms) << '\n';
  return s.str();
}

}  // namespace dpointnet::generator
