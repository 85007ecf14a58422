#include "dpointnet/io/sonata_write.hpp"

#include <cstdint>
#include <filesystem>
#include <map>

#include "dpointnet/io/hdf5_file.hpp"

namespace dpointnet {

void write_edges_with_weights(const std::string& src, const std::string& dst,
                              const std::vector<std::string>& populations,
                              const std::vector<std::vector<double>>& syn_weight) {
  auto in = h5::File::open_read(src);
  {
    auto out = h5::File::create(dst + ".tmp", true);
    out.write_sonata_header();
    for (std::size_t q = 0; q < populations.size(); ++q) {
      const std::string g = "/edges/" + populations[q];
      const std::vector<double>& w = syn_weight[q];
      out.copy_from(in, g, g);
      const auto egid = out.is_dataset(g + "/edge_group_id") ? out.read_int(g + "/edge_group_id")
                                                             : std::vector<std::int64_t>(w.size(), 0);
      std::vector<std::int64_t> egidx;
      if (out.is_dataset(g + "/edge_group_index")) {
        egidx = out.read_int(g + "/edge_group_index");
      } else {
        egidx.resize(w.size());
        for (std::size_t i = 0; i < egidx.size(); ++i) egidx[i] = static_cast<std::int64_t>(i);
      }
      std::map<std::int64_t, std::vector<double>> groups;
      for (std::size_t i = 0; i < egid.size(); ++i) {
        auto& col = groups[egid[i]];
        const auto r = static_cast<std::size_t>(egidx[i]);
        if (col.size() <= r) col.resize(r + 1, 0.0);
        col[r] = w[i];
      }
      for (const auto& [gid, col] : groups) {
        const std::string ds = g + "/" + std::to_string(gid) + "/syn_weight";
        if (out.is_dataset(ds) && out.dataset_length(ds) == col.size()) {
          out.overwrite_double(ds, col);
        } else {
          if (out.is_dataset(ds)) out.remove(ds);
          out.write_double(ds, col);
        }
      }
    }
  }
  std::filesystem::rename(dst + ".tmp", dst);
}

}  // namespace dpointnet
