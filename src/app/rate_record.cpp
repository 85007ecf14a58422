#include "dpointnet/app/rate_record.hpp"

#include "dpointnet/app/output_dir.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/train/observed_rates.hpp"

namespace dpointnet {

void write_rates_file(const std::string& path, const Network& net, const TrainConfig& tc,
                      const std::vector<double>& first, const std::vector<double>& last, std::int64_t first_update,
                      std::int64_t last_update) {
  std::vector<std::int64_t> type(static_cast<std::size_t>(net.n_neurons));
  for (std::int64_t i = 0; i < net.n_neurons; ++i) type[static_cast<std::size_t>(i)] = net.node_type_id(i);
  write_atomically(path, "rates file", [&](const std::string& tmp) {
    auto f = h5::File::create(tmp, true);
    f.write_int64("/node_type_id", type);
    f.write_double("/rates_hz/first", first);
    f.write_double("/rates_hz/last", last);
    f.write_attr_uint32("/rates_hz", "first_update", {static_cast<std::uint32_t>(first_update)});
    f.write_attr_uint32("/rates_hz", "last_update", {static_cast<std::uint32_t>(last_update)});
    std::vector<LossSpec> specs = tc.losses;  // train.losses, then the conditions' own (the first of a kind wins)
    for (const auto& own : tc.condition_losses) specs.insert(specs.end(), own.begin(), own.end());
    for (const auto& l : specs) {
      if (l.kind == LossKind::RateDistribution && !f.exists("/observed")) {
        for (const auto& [g, rates] : l.observed) {
          std::vector<std::uint32_t> ids;  // the simulated node types of the group
          for (const auto& [id, gv] : l.group_of_type)
            if (gv == g) ids.push_back(static_cast<std::uint32_t>(id));
          if (ids.empty()) continue;  // observed, but no simulated type has this value
          f.write_double("/observed/" + observed_link_name(g), rates);
          f.write_attr_uint32("/observed/" + observed_link_name(g), "node_type_ids", ids);
        }
        f.write_attr_string("/observed", "group_by", l.group_by);
      } else if (l.kind == LossKind::TargetFiringRate && !l.per_step && !f.exists("/target_hz")) {
        std::vector<double> t(type.size(), l.target);
        for (std::size_t i = 0; i < t.size(); ++i) {
          const auto it = l.target_by_type.find(type[i]);
          if (it != l.target_by_type.end()) t[i] = it->second;
        }
        f.write_double("/target_hz", t);
      }
    }
    f.flush();
  });
}

}  // namespace dpointnet
