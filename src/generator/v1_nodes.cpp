#include "dpointnet/generator/v1_nodes.hpp"

#include <cmath>
#include <sstream>

#include "dpointnet/generator/sampling.hpp"
#include "dpointnet/generator/visual_types.hpp"

namespace dpointnet::generator {

bool V1Nodes::inhibitory(std::size_t i) const { return kCellTypes[glif[i]].ei == 'i'; }

V1Nodes place_v1_nodes(const Plan& plan, std::uint32_t seed) {
  const std::size_t nz = static_cast<std::size_t>(plan.n);
  V1Nodes v;
  v.glif.resize(nz);
  v.node_type_id.resize(nz);
  v.x.resize(nz);
  v.y.resize(nz);
  v.z.resize(nz);
  v.tuning.resize(nz);
  constexpr double kTwoPi = 6.283185307179586;
  if (!plan.visual) {
    std::size_t i = 0;
    for (int t = 0; t < kNumCellTypes; ++t)
      for (std::int64_t k = 0; k < plan.type_count[t]; ++k, ++i) {
        v.glif[i] = static_cast<std::uint8_t>(t);
        v.node_type_id[i] = static_cast<std::uint64_t>(kCellTypes[t].node_type_id);
      }
    Rng rng(seed, kPurposeNodes);
    for (std::size_t j = 0; j < nz; ++j) {
      const double r = kColumnRadius * std::sqrt(rng.uniform());
      const double phi = kTwoPi * rng.uniform();
      v.x[j] = r * std::cos(phi);
      v.z[j] = r * std::sin(phi);
      v.y[j] = kDepthTop + (kDepthBottom - kDepthTop) * rng.uniform();
      v.tuning[j] = 360.0 * rng.uniform();
    }
    return v;
  }
  v.visual_type.resize(nz);
  Rng rng(seed, kPurposeVisualNodes);
  std::size_t i = 0;
  for (int t = 0; t < kNumVisualTypes; ++t) {
    const VisualType& vt = kVisualTypes[t];
    const Layer& layer = kLayers[vt.layer];
    for (std::int64_t k = 0; k < plan.visual_count[t]; ++k, ++i) {
      v.visual_type[i] = static_cast<std::uint8_t>(t);
      v.glif[i] = static_cast<std::uint8_t>(vt.glif);
      v.node_type_id[i] = static_cast<std::uint64_t>(vt.node_type_id);
      const double r = plan.column_radius * std::sqrt(rng.uniform());
      const double phi = kTwoPi * rng.uniform();
      v.x[i] = r * std::cos(phi);
      v.z[i] = r * std::sin(phi);
      v.y[i] = -(layer.top + (layer.bottom - layer.top) * rng.uniform());
      v.tuning[i] = 360.0 * rng.uniform();
    }
  }
  return v;
}

std::string v1_node_types_csv(bool visual) {
  std::ostringstream s;
  s << "node_type_id model_type model_template pop_name ei dynamics_params\n";
  if (!visual) {
    for (const CellType& c : kCellTypes)
      s << c.node_type_id << " point_process nest:glif_psc " << c.pop_name << ' ' << c.ei << ' ' << c.file << '\n';
    return s.str();
  }
  for (const VisualType& t : kVisualTypes) {
    const CellType& c = kCellTypes[t.glif];
    s << t.node_type_id << " point_process nest:glif_psc " << t.pop_name << ' ' << c.ei << ' ' << c.file << '\n';
  }
  return s.str();
}

}  // namespace dpointnet::generator
