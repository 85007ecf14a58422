#include "dpointnet/network/v1_cell_types.hpp"

#include <cmath>

#include "dpointnet/network/node_attributes.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

std::optional<std::string> v1_cell_type(const std::string& pop_name, bool merge_l5) {
  if (pop_name.size() < 3) return std::nullopt;
  const char layer = pop_name[1];
  if (layer < '1' || layer > '6') return std::nullopt;
  if (layer == '1') return std::string("L1 Htr3a");
  std::string lname(1, layer);
  std::size_t cls = 2;
  if (layer == '2') {
    if (pop_name[2] != '3' || pop_name.size() < 4) return std::nullopt;
    lname = "2/3";
    cls = 3;
  }
  const std::string c = pop_name.substr(cls);
  std::string sub;
  if (c == "Pvalb")
    sub = "PV";
  else if (c == "Sst")
    sub = "SST";
  else if (c == "Vip" || c == "Htr3a")
    sub = "VIP";
  else
    sub = (layer == '5' && !merge_l5) ? c : "Exc";
  return "L" + lname + " " + sub;
}

const std::vector<std::string>& v1_cell_type_order() {
  static const std::vector<std::string> order = {"L1 Htr3a", "L2/3 Exc", "L2/3 PV", "L2/3 SST", "L2/3 VIP", "L4 Exc",
                                                 "L4 PV",    "L4 SST",   "L4 VIP",  "L5 Exc",   "L5 PV",    "L5 SST",
                                                 "L5 VIP",   "L6 Exc",   "L6 PV",   "L6 SST",   "L6 VIP"};
  return order;
}

std::vector<std::string> v1_cell_types(const SimulationConfig& cfg, const Network& net, bool merge_l5,
                                       const std::string& purpose) {
  std::vector<std::string> out(static_cast<std::size_t>(net.n_neurons));
  for (const auto& p : net.populations) {
    if (p.is_virtual) continue;
    const NodeAttributes attrs(cfg, p, purpose);
    const std::vector<std::string> names = attrs.strings("pop_name");
    for (std::size_t r = 0; r < names.size(); ++r) {
      const auto t = v1_cell_type(names[r], merge_l5);
      if (!t) {
        const std::string node = r < p.node_ids.size() ? std::to_string(p.node_ids[r]) : std::to_string(r);
        throw InputError(attrs.node_types_file(), "population " + p.name + " node " + node, "pop_name",
                         "\"" + names[r] +
                             "\" is not a V1 population name (e or i, a layer digit 1-6 with 23 for 2/3, a class, "
                             "e.g. e4Rorb, i23Pvalb) " +
                             purpose);
      }
      out[static_cast<std::size_t>(p.offset) + r] = *t;
    }
  }
  return out;
}

std::vector<char> v1_core_mask(const SimulationConfig& cfg, const Network& net, double radius,
                               const std::string& purpose) {
  std::vector<char> out(static_cast<std::size_t>(net.n_neurons), 0);
  for (const auto& p : net.populations) {
    if (p.is_virtual) continue;
    const NodeAttributes attrs(cfg, p, purpose);
    const std::vector<double> x = attrs.numbers("x"), z = attrs.numbers("z");
    for (std::size_t r = 0; r < x.size(); ++r)
      out[static_cast<std::size_t>(p.offset) + r] = std::sqrt(x[r] * x[r] + z[r] * z[r]) < radius ? 1 : 0;
  }
  return out;
}

}  // namespace dpointnet
