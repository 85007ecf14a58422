#include "dpointnet/generator/plan.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "dpointnet/generator/cell_types.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet::generator {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad_option(const std::string& option, const std::string& flag, const std::string& what) {
  throw InputError("generate: option " + option + " (" + flag + "): " + what);
}

// Splits `total` over `n` weights in proportion (largest remainders; ties to the earlier entry).
void apportion(std::int64_t total, const double* weight, int n, std::int64_t* out) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += weight[i];
  std::int64_t given = 0;
  std::vector<std::pair<double, int>> rest;
  for (int i = 0; i < n; ++i) {
    const double exact = static_cast<double>(total) * weight[i] / sum;
    out[i] = static_cast<std::int64_t>(std::floor(exact));
    given += out[i];
    rest.emplace_back(exact - static_cast<double>(out[i]), i);
  }
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::int64_t k = 0; k < total - given; ++k) ++out[rest[static_cast<std::size_t>(k)].second];
}

void plan_visual(const GeneratorOptions& o, Plan& p) {
  if (o.n_lgn != 0) bad_option("n_lgn", "--lgn", "must be 0 with --visual (the LGN size is set by --lgn-tiles-x/-y)");
  if (o.lgn_tiles_x < 1 || o.lgn_tiles_x > kLgnMaxTilesX)
    bad_option("lgn_tiles_x", "--lgn-tiles-x",
               "must be in 1.." + std::to_string(kLgnMaxTilesX) + ", got " + std::to_string(o.lgn_tiles_x));
  if (o.lgn_tiles_y < 1 || o.lgn_tiles_y > kLgnMaxTilesY)
    bad_option("lgn_tiles_y", "--lgn-tiles-y",
               "must be in 1.." + std::to_string(kLgnMaxTilesY) + ", got " + std::to_string(o.lgn_tiles_y));
  p.visual = true;
  p.lgn_tiles_x = o.lgn_tiles_x;
  p.lgn_tiles_y = o.lgn_tiles_y;
  p.n_lgn = static_cast<std::int64_t>(kLgnUnitsPerTile) * o.lgn_tiles_x * o.lgn_tiles_y;
  // The column's visual field (centre +- radius x deg/um) must lie inside the LGN's tiles.
  const double fit =
      std::min(0.5 * kLgnTileDeg * o.lgn_tiles_x / kDegPerUmX, 0.5 * kLgnTileDeg * o.lgn_tiles_y / kDegPerUmZ);
  if (o.column_radius == 0) {
    p.column_radius = std::min(kVisualColumnRadius, fit);
  } else {
    if (!std::isfinite(o.column_radius) || !(o.column_radius > 0) || o.column_radius > fit)
      bad_option("column_radius", "--column-radius",
                 "must be 0 (automatic) or in (0, " + num(fit) + "] um for " + std::to_string(o.lgn_tiles_x) + " x " +
                     std::to_string(o.lgn_tiles_y) + " LGN tiles (the column's visual field must lie on them), got " +
                     num(o.column_radius));
    p.column_radius = o.column_radius;
  }
  double e_share[kNumVisualTypes], i_share[kNumVisualTypes];
  int e_index[kNumVisualTypes], i_index[kNumVisualTypes], n_e = 0, n_i = 0;
  for (int t = 0; t < kNumVisualTypes; ++t) {
    if (kCellTypes[kVisualTypes[t].glif].ei == 'e') {
      e_share[n_e] = kVisualTypes[t].share;
      e_index[n_e++] = t;
    } else {
      i_share[n_i] = kVisualTypes[t].share;
      i_index[n_i++] = t;
    }
  }
  std::int64_t e_count[kNumVisualTypes], i_count[kNumVisualTypes];
  apportion(p.n_exc, e_share, n_e, e_count);
  apportion(p.n - p.n_exc, i_share, n_i, i_count);
  for (int k = 0; k < n_e; ++k) p.visual_count[e_index[k]] = e_count[k];
  for (int k = 0; k < n_i; ++k) p.visual_count[i_index[k]] = i_count[k];
  for (int t = 0; t < kNumCellTypes; ++t) p.type_count[t] = 0;
  for (int t = 0; t < kNumVisualTypes; ++t) p.type_count[kVisualTypes[t].glif] += p.visual_count[t];
}

}  // namespace

std::string num(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

Plan make_plan(const GeneratorOptions& o) {
  Plan p;
  if (o.out_dir.empty()) bad_option("out_dir", "--out", "must name a directory");
  if (o.n_neurons < kMinNeurons || o.n_neurons > kMaxNeurons)
    bad_option("n_neurons", "--neurons",
               "must be in " + std::to_string(kMinNeurons) + ".." + std::to_string(kMaxNeurons) + ", got " +
                   std::to_string(o.n_neurons));
  p.n = o.n_neurons;
  if (!std::isfinite(o.synapses_per_neuron) || !(o.synapses_per_neuron > 0))
    bad_option("synapses_per_neuron", "--synapses-per-neuron",
               "must be a finite number > 0, got " + num(o.synapses_per_neuron));
  p.k_rec = std::min(o.synapses_per_neuron, static_cast<double>(p.n - 1));
  if (static_cast<double>(p.n) * p.k_rec > kMaxEdgesPerProjection)
    bad_option("synapses_per_neuron", "--synapses-per-neuron",
               "n_neurons * synapses_per_neuron = " + num(static_cast<double>(p.n) * p.k_rec) +
                   " recurrent edges exceeds the generator's limit of " + num(kMaxEdgesPerProjection));
  if (o.n_lgn < 0 || o.n_lgn > kMaxVirtualNodes)
    bad_option("n_lgn", "--lgn",
               "must be 0 (automatic) or 1.." + std::to_string(kMaxVirtualNodes) + ", got " + std::to_string(o.n_lgn));
  p.n_lgn = o.n_lgn > 0 ? o.n_lgn : std::max<std::int64_t>(10, (p.n + 2) / 4);
  if (!std::isfinite(o.lgn_per_neuron) || !(o.lgn_per_neuron > 0))
    bad_option("lgn_per_neuron", "--lgn-per-neuron", "must be a finite number > 0, got " + num(o.lgn_per_neuron));
  p.k_lgn = std::min(o.lgn_per_neuron, static_cast<double>(p.n_lgn));
  if (static_cast<double>(p.n) * p.k_lgn > kMaxEdgesPerProjection)
    bad_option("lgn_per_neuron", "--lgn-per-neuron",
               "too many LGN edges (" + num(static_cast<double>(p.n) * p.k_lgn) + ")");
  if (o.n_bkg < 1 || o.n_bkg > kMaxVirtualNodes)
    bad_option("n_bkg", "--bkg",
               "must be in 1.." + std::to_string(kMaxVirtualNodes) + ", got " + std::to_string(o.n_bkg));
  p.n_bkg = o.n_bkg;
  if (o.bkg_per_neuron < 1 || o.bkg_per_neuron > p.n_bkg)
    bad_option("bkg_per_neuron", "--bkg-per-neuron",
               "must be in 1..n_bkg (" + std::to_string(p.n_bkg) + "), got " + std::to_string(o.bkg_per_neuron));
  p.k_bkg = o.bkg_per_neuron;
  if (static_cast<double>(p.n) * static_cast<double>(p.k_bkg) > kMaxEdgesPerProjection)
    bad_option("bkg_per_neuron", "--bkg-per-neuron", "too many background edges");
  if (!std::isfinite(o.dt) || !(o.dt > 0) || o.dt > kMaxDelay)
    bad_option("dt", "--dt", "must be > 0 and <= " + num(kMaxDelay) + " ms, got " + num(o.dt));
  if (!std::isfinite(o.tstop) || !(o.tstop >= o.dt))
    bad_option("tstop", "--tstop", "must be a finite number >= dt, got " + num(o.tstop));
  {
    const double steps = std::round(o.tstop / o.dt);
    if (std::fabs(steps * o.dt - o.tstop) > 1e-6 * o.dt)
      bad_option("tstop", "--tstop",
                 "must be a whole number of steps of dt (" + num(o.dt) + " ms), got " + num(o.tstop));
  }
  if (!std::isfinite(o.lgn_rate_hz) || !(o.lgn_rate_hz > 0))
    bad_option("lgn_rate_hz", "--lgn-rate", "must be a finite rate > 0 Hz, got " + num(o.lgn_rate_hz));
  if (!std::isfinite(o.bkg_rate_hz) || !(o.bkg_rate_hz > 0))
    bad_option("bkg_rate_hz", "--bkg-rate", "must be a finite rate > 0 Hz, got " + num(o.bkg_rate_hz));
  if (!o.visual && o.column_radius != 0)
    bad_option("column_radius", "--column-radius", "is an option of visual networks (--visual)");

  std::error_code ec;
  const fs::path out(o.out_dir);
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec)) bad_option("out_dir", "--out", "'" + o.out_dir + "' exists and is not a directory");
    if (!o.overwrite && !fs::is_empty(out, ec))
      bad_option("out_dir", "--out",
                 "directory '" + o.out_dir + "' exists and is not empty (use --overwrite to replace its files)");
  }

  p.n_exc = std::llround(kExcFraction * static_cast<double>(p.n));
  const std::int64_t n_inh = p.n - p.n_exc;
  for (int t = 0; t < kNumExcTypes; ++t)
    p.type_count[t] = p.n_exc / kNumExcTypes + (t < p.n_exc % kNumExcTypes ? 1 : 0);
  const int n_inh_types = kNumCellTypes - kNumExcTypes;
  for (int t = 0; t < n_inh_types; ++t)
    p.type_count[kNumExcTypes + t] = n_inh / n_inh_types + (t < n_inh % n_inh_types ? 1 : 0);
  p.min_delay = std::max(1.0, o.dt);
  if (o.visual) plan_visual(o, p);
  return p;
}

}  // namespace dpointnet::generator
