#include "dpointnet/generator/lgn_nodes.hpp"

#include <limits>
#include <sstream>

#include "dpointnet/generator/sampling.hpp"
#include "dpointnet/generator/visual_types.hpp"

namespace dpointnet::generator {

const char* const kLgnAttributeNames[kNumLgnAttributes] = {
    "x",
    "y",
    "spatial_size",
    "kpeaks_dom_0",
    "kpeaks_dom_1",
    "weight_dom_0",
    "weight_dom_1",
    "delay_dom_0",
    "delay_dom_1",
    "kpeaks_non_dom_0",
    "kpeaks_non_dom_1",
    "weight_non_dom_0",
    "weight_non_dom_1",
    "delay_non_dom_0",
    "delay_non_dom_1",
    "tuning_angle",
    "sf_sep",
};

namespace {

// The six parameters of template `t` (kpeaks, weights, delays, as the attributes are ordered), each x U(1 - j, 1 + j).
void jittered_filter(Rng& rng, const LgnTemplate& t, double* out) {
  auto jitter = [&](double v) { return v * (1.0 - kLgnJitter + 2.0 * kLgnJitter * rng.uniform()); };
  out[0] = jitter(t.kpeaks[0]);
  out[1] = jitter(t.kpeaks[1]);
  out[2] = jitter(t.weight[0]);
  out[3] = jitter(t.weight[1]);
  out[4] = jitter(t.delay[0]);
  out[5] = jitter(t.delay[1]);
}

}  // namespace

LgnNodes make_lgn_nodes(int tiles_x, int tiles_y, std::uint32_t seed) {
  LgnNodes lgn;
  lgn.tiles_x = tiles_x;
  lgn.tiles_y = tiles_y;
  lgn.x0 = kScreenCentreX - 0.5 * kLgnTileDeg * tiles_x;
  lgn.y0 = kScreenCentreY - 0.5 * kLgnTileDeg * tiles_y;
  const std::size_t n = static_cast<std::size_t>(kLgnUnitsPerTile) * static_cast<std::size_t>(tiles_x * tiles_y);
  lgn.cls.reserve(n);
  for (auto& a : lgn.attr) a.assign(n, std::numeric_limits<double>::quiet_NaN());
  Rng rng(seed, kPurposeLgnNodes);
  std::size_t u = 0;
  double v[kNumLgnAttributes];
  for (int c = 0; c < kNumLgnClasses; ++c) {
    const LgnClass& cl = kLgnClasses[c];
    for (int i = 0; i < tiles_x; ++i)
      for (int j = 0; j < tiles_y; ++j)
        for (int k = 0; k < cl.per_tile; ++k, ++u) {
          for (double& a : v) a = std::numeric_limits<double>::quiet_NaN();
          v[kLgnX] = lgn.x0 + kLgnTileDeg * (i + rng.uniform());
          v[kLgnY] = lgn.y0 + kLgnTileDeg * (j + rng.uniform());
          v[kLgnSpatialSize] =
              cl.min_size == cl.max_size ? cl.min_size : triangular(rng, cl.min_size, cl.min_size + 1.0, cl.max_size);
          jittered_filter(rng, kLgnTemplates[cl.dom], &v[kLgnKpeaksDom0]);
          if (cl.non_dom >= 0) {
            jittered_filter(rng, kLgnTemplates[cl.non_dom], &v[kLgnKpeaksNonDom0]);
            v[kLgnSfSep] = cl.sf_sep * (1.0 - kLgnJitter + 2.0 * kLgnJitter * rng.uniform());
            v[kLgnTuningAngle] = 360.0 * rng.uniform();
          }
          lgn.cls.push_back(static_cast<std::uint8_t>(c));
          for (int a = 0; a < kNumLgnAttributes; ++a) lgn.attr[a][u] = v[a];
        }
  }
  return lgn;
}

std::vector<std::uint64_t> lgn_node_type_ids(const LgnNodes& lgn) {
  std::vector<std::uint64_t> ids(lgn.size());
  for (std::size_t u = 0; u < ids.size(); ++u) ids[u] = static_cast<std::uint64_t>(kLgnNodeTypeBase + lgn.cls[u]);
  return ids;
}

std::vector<std::pair<std::string, std::vector<double>>> lgn_attribute_columns(const LgnNodes& lgn) {
  std::vector<std::pair<std::string, std::vector<double>>> props;
  for (int a = 0; a < kNumLgnAttributes; ++a) props.emplace_back(kLgnAttributeNames[a], lgn.attr[a]);
  return props;
}

std::string lgn_node_types_csv() {
  std::ostringstream s;
  s << "node_type_id model_type pop_name ei location\n";
  for (int c = 0; c < kNumLgnClasses; ++c)
    s << kLgnNodeTypeBase + c << " virtual " << kLgnClasses[c].pop_name << " e LGN\n";
  return s.str();
}

}  // namespace dpointnet::generator
