#include "dpointnet/network/edge_export.hpp"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "dpointnet/io/sonata_write.hpp"
#include "dpointnet/util/log.hpp"

namespace fs = std::filesystem;

namespace dpointnet {

void export_edges(const Network& net, const SimulationConfig& cfg, const std::vector<std::vector<double>>& weights_pA,
                  const std::string& dir) {
  fs::create_directories(dir);
  // syn_weight per (edge population, row)
  std::vector<std::vector<double>> syn(net.edge_populations.size());
  for (std::size_t q = 0; q < syn.size(); ++q)
    syn[q].assign(static_cast<std::size_t>(net.edge_populations[q].n_edges), 0.0);
  for (std::size_t k = 0; k < net.projections.size(); ++k) {
    const Projection& p = net.projections[k];
    for (std::size_t e = 0; e < p.size(); ++e)
      syn[static_cast<std::size_t>(p.edge_population[e])][static_cast<std::size_t>(p.edge_row[e])] =
          weights_pA[k][e] / p.nsyns[e];
  }
  std::map<std::string, std::vector<std::size_t>> by_file;  // edges file -> edge population indices
  for (std::size_t q = 0; q < net.edge_populations.size(); ++q) by_file[net.edge_populations[q].file].push_back(q);
  for (const auto& [file, pops] : by_file) {
    std::vector<std::string> names;
    std::vector<std::vector<double>> cols;
    for (std::size_t q : pops) {
      names.push_back(net.edge_populations[q].name);
      cols.push_back(syn[q]);
    }
    const std::string out = (fs::path(dir) / fs::path(file).filename()).string();
    // HDF5's object copy crashes (1.10, SIGSEGV in H5Ocopy) instead of failing when the disk fills up under it:
    // the copy (about the size of the input file) must fit in the free space before it starts.
    std::error_code ec;
    const auto need = fs::file_size(file, ec);
    const auto space = fs::space(dir, ec);
    if (!ec && need > 0 && space.available < need + need / 8 + (1u << 20))
      throw std::runtime_error(out + ": No space left on device for the exported edges (about " + std::to_string(need) +
                               " bytes needed, " + std::to_string(space.available) +
                               " available); the final checkpoint file is complete");
    write_edges_with_weights(file, out, names, cols);
    log::get()->info("exported trained weights to {}", out);
  }
  for (const auto& e : cfg.edges)
    fs::copy_file(e.edge_types_file, fs::path(dir) / fs::path(e.edge_types_file).filename(),
                  fs::copy_options::overwrite_existing);
}

}  // namespace dpointnet
