#include "dpointnet/inputs/lgn_filters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace dpointnet {

namespace {

constexpr double kPi = 3.141592653589793;  // numpy's pi
constexpr int kLags = 600;                 // TemporalFilterCosineBump.nkt
constexpr double kMaxDelay = 1e6;          // ms

std::string num(double v) { return fmt::format("{}", v); }

[[noreturn]] void fail(const std::string& attribute, const std::string& detail) {
  throw LgnAttributeError(attribute, detail);
}

// names: the attributes of w0, w1, k0, k1, d0, d1 in error messages.
std::vector<double> bump_kernel(const double w[2], const double k[2], const double d[2], const std::string names[6]) {
  const double* v[6] = {&w[0], &w[1], &k[0], &k[1], &d[0], &d[1]};
  for (int i = 0; i < 6; ++i)
    if (!std::isfinite(*v[i])) fail(names[i], "is missing or not finite (" + num(*v[i]) + ")");
  if (!(k[0] < k[1]))
    fail(names[3], "must be greater than " + names[2] + " (FilterNet asserts kpeaks[0] < kpeaks[1]), got " + num(k[0]) +
                       " and " + num(k[1]));
  if (!(w[0] > 0)) fail(names[0], "must be > 0 (FilterNet asserts weights[0] > 0), got " + num(w[0]));
  if (!(d[0] <= d[1]))
    fail(names[5], "must not be less than " + names[4] + " (FilterNet asserts delays[0] <= delays[1]), got " +
                       num(d[0]) + " and " + num(d[1]));
  if (std::trunc(d[0]) < 0)
    fail(names[4], "truncates to a negative number of lags (" + num(d[0]) + " ms); FilterNet fails on it");
  if (d[1] > kMaxDelay) fail(names[5], num(d[1]) + " ms is more than " + num(kMaxDelay) + " ms");
  const int d0 = static_cast<int>(d[0]), d1 = static_cast<int>(d[1]);  // numpy's astype(int)

  // fitfuns.makeBasis_StimKernel: bumps on the log axis nlin(t + b), centres nlin(kpeaks), spacing db from
  // ylim = [100, 200]; the raw time grid t = 0 ... ceil(mxt) - 1 has more than 600 samples, of which the 600
  // before the last are kept (kbasis[-1-nkt:-1] of the time-reversed basis): lag l holds t = l + 1.
  const double b = 0.3, eps = 1e-20;
  const double y0 = std::log(100.0 + b + eps), y1 = std::log(200.0 + b + eps), db = y1 - y0;
  const double mxt = std::exp(y1 + 2 * db) - eps - b;
  const int nt = static_cast<int>(std::ceil(mxt));
  if (nt <= kLags) fail(names[2], "internal: the raw cosine-bump grid is shorter than 600 lags");
  std::vector<double> phi[2];
  for (int j = 0; j < 2; ++j) {
    const double c = std::log(k[j] + eps);
    phi[j].resize(kLags);
    for (int l = 0; l < kLags; ++l) {
      const double x = std::log(static_cast<double>(l + 1) + b + eps);
      const double a = (x - c) * kPi / db / 2;
      phi[j][static_cast<std::size_t>(l)] = (std::cos(std::max(-kPi, std::min(kPi, a))) + 1) / 2;
    }
    // normalizecols: the sum runs over the stored order, longest lag first
    double ss = 0;
    for (int l = kLags - 1; l >= 0; --l)
      ss += phi[j][static_cast<std::size_t>(l)] * phi[j][static_cast<std::size_t>(l)];
    if (!(ss > 0))
      fail(names[2 + j], "the raised-cosine bump peaking at " + num(k[j]) +
                             " ms has no weight on lags 0-599 (FilterNet would divide by 0)");
    const double norm = std::sqrt(ss);
    for (double& p : phi[j]) p /= norm;
  }
  // Delays: zeros before each bump; the second bump loses its last d1 - d0 lags (all bumps end at 600 + d0).
  const int n = kLags + d0;
  std::vector<double> bump[2] = {std::vector<double>(static_cast<std::size_t>(n), 0.0),
                                 std::vector<double>(static_cast<std::size_t>(n), 0.0)};
  const int delay[2] = {d0, d1};
  for (int j = 0; j < 2; ++j) {
    for (int l = delay[j]; l < n; ++l)
      bump[j][static_cast<std::size_t>(l)] = phi[j][static_cast<std::size_t>(l - delay[j])];
    double ss = 0;
    for (int l = n - 1; l >= 0; --l) ss += bump[j][static_cast<std::size_t>(l)] * bump[j][static_cast<std::size_t>(l)];
    if (!(ss > 0))
      fail(names[5], "moves the second bump past the kernel's end (" + names[5] + " - " + names[4] + " = " +
                         std::to_string(d1 - d0) + " lags; FilterNet would divide by 0)");
    const double norm = std::sqrt(ss);
    for (double& p : bump[j]) p /= norm;
  }
  std::vector<double> h(static_cast<std::size_t>(n));
  for (std::size_t l = 0; l < h.size(); ++l) h[l] = bump[0][l] * w[0] + bump[1][l] * w[1];
  return h;
}

struct TwoSubunitUnit {
  std::vector<double> kernel;
  double sum = 0;  // S: the kernel's sum before its zero crossing
};

// cell_loaders.createOneUnitOfTwoSubunitFilter: the kernel re-delayed so that its zero crossing lands on ttp_exp.
TwoSubunitUnit aligned_unit(const double w[2], const double k[2], const double d[2], double ttp_exp,
                            const std::string names[6]) {
  const std::vector<double> h = bump_kernel(w, k, d, names);
  int t_cross = 0;
  try {
    t_cross = cosine_bump_t_cross(h);
  } catch (const std::invalid_argument& e) {
    fail(names[1], std::string(e.what()) + " (FilterNet's latency alignment of composite cells needs one)");
  }
  TwoSubunitUnit u;
  for (int l = 0; l < t_cross; ++l) u.sum += h[static_cast<std::size_t>(l)];
  const double offset = ttp_exp - t_cross;
  if (offset < 0)
    fail(names[4], "the kernel's zero crossing (lag " + std::to_string(t_cross) +
                       ") is later than FilterNet's latency " + num(ttp_exp) +
                       " ms: a negative delay offset, which FilterNet refuses ('del_offset < 0')");
  const double shifted[2] = {d[0] + offset, d[1] + offset};  // added before the truncation
  u.kernel = bump_kernel(w, k, shifted, names);
  return u;
}

void require_finite(double v, const std::string& attribute) {
  if (!std::isfinite(v)) fail(attribute, "is missing or not finite (" + num(v) + ")");
}

struct Spont {
  const char* type;
  const char* tf;
  double hz;
};
// get_data_metrics_for_each_subclass(type)[tf]['spont_exp'][0]: the mean Spont of the cells of
// lgnmodel/cell_metrics/{type}_cell_data.csv grouped by the TF of their largest F0 response.
constexpr Spont kSpont[] = {
    {"sON", "TF1", 5.2},
    {"sON", "TF15", 10.879999999999995},
    {"sON", "TF2", 3.533333333333333},
    {"sON", "TF4", 8.25},
    {"sON", "TF8", 1.7666666666666666},
    {"sOFF", "TF1", 3.95},
    {"sOFF", "TF15", 5.075},
    {"sOFF", "TF2", 4.5317777777777755},
    {"sOFF", "TF4", 3.679074074074074},
    {"sOFF", "TF8", 3.62},
    {"tOFF", "TF1", 5.5},
    {"tOFF", "TF15", 1.050666666666664},
    {"tOFF", "TF2", 3.4095238095238303},
    {"tOFF", "TF4", 3.9445502645502764},
    {"tOFF", "TF8", 2.4377777777777867},
    {"tON", "TF8", 2.6},
};

// model.split('_'): the type and the TF key (TF8 for a single token).
void split_class(const std::string& model, std::string& type, std::string& tf) {
  const auto u = model.find('_');
  if (u == std::string::npos) {
    type = model;
    tf = "TF8";
    return;
  }
  type = model.substr(0, u);
  const auto u2 = model.find('_', u + 1);
  tf = model.substr(u + 1, u2 == std::string::npos ? std::string::npos : u2 - u - 1);
}

}  // namespace

LgnScreen LgnScreen::grating(double height_deg, double width_deg, double degrees_per_pixel) {
  for (double v : {height_deg, width_deg, degrees_per_pixel})
    if (!std::isfinite(v) || v <= 0)
      throw std::invalid_argument("LgnScreen::grating: sizes and degrees per pixel must be finite and > 0, got " +
                                  num(height_deg) + " x " + num(width_deg) + " deg at " + num(degrees_per_pixel));
  const double r = height_deg / degrees_per_pixel, c = width_deg / degrees_per_pixel;
  if (r < 2 || c < 2 || r > 1e6 || c > 1e6)
    throw std::invalid_argument("LgnScreen::grating: " + num(height_deg) + " x " + num(width_deg) + " deg at " +
                                num(degrees_per_pixel) + " deg per pixel gives " + num(std::trunc(r)) + " x " +
                                num(std::trunc(c)) + " pixels (2 to 1e6 per axis)");
  LgnScreen s;
  s.rows = static_cast<int>(r);
  s.cols = static_cast<int>(c);
  s.row_spacing = height_deg / (s.rows - 1);
  s.col_spacing = width_deg / (s.cols - 1);
  return s;
}

AxisWeights gaussian_axis_weights(int n, double spacing, double centre, double sigma) {
  if (n < 1 || !std::isfinite(spacing) || spacing <= 0 || !std::isfinite(sigma) || sigma <= 0 || !std::isfinite(centre))
    throw std::invalid_argument("gaussian_axis_weights: n = " + std::to_string(n) + ", spacing " + num(spacing) +
                                ", centre " + num(centre) + ", sigma " + num(sigma) +
                                " (n >= 1, finite values, spacing and sigma > 0)");
  // scipy.ndimage.gaussian_filter1d: radius int(4 s + 0.5), weights exp(-0.5 / s^2 k^2) normalized
  const double s = sigma / spacing;
  if (4.0 * s + 0.5 > 1e7)
    throw std::invalid_argument("gaussian_axis_weights: sigma / spacing = " + num(s) + " is too large");
  const int radius = static_cast<int>(4.0 * s + 0.5);
  std::vector<double> g(static_cast<std::size_t>(2 * radius + 1), 1.0);
  if (radius > 0) {
    double total = 0;
    for (int j = 0; j <= 2 * radius; ++j) {
      const double kk = j - radius;
      g[static_cast<std::size_t>(j)] = std::exp(-0.5 / (s * s) * (kk * kk));
      total += g[static_cast<std::size_t>(j)];
    }
    for (double& v : g) v /= total;
  }
  std::vector<double> prefix(g.size() + 1, 0.0);
  for (std::size_t j = 0; j < g.size(); ++j) prefix[j + 1] = prefix[j] + g[j];
  auto gsum = [&](long lo, long hi) {  // sum of g[lo..hi], clipped to the radius
    lo = std::max(lo, 0L);
    hi = std::min(hi, static_cast<long>(g.size()) - 1);
    if (lo > hi) return 0.0;
    if (lo == hi) return g[static_cast<std::size_t>(lo)];  // exact (symmetric) inside the screen
    return prefix[static_cast<std::size_t>(hi + 1)] - prefix[static_cast<std::size_t>(lo)];
  };
  // The impulse at the centre pixel(s), filtered with mode "nearest": out[i] = sum_j g[j] in[clamp(i + j - R)].
  const int nc = n % 2 == 0 ? 2 : 1;
  const int cen[2] = {n % 2 == 0 ? n / 2 - 1 : n / 2, n / 2};
  std::vector<double> a(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int q = 0; q < nc; ++q) {
      const long c = cen[q], base = radius - i;  // j = base + m for input pixel m
      double v;
      if (n == 1)
        v = 1.0;
      else if (c == 0)
        v = gsum(0, base);
      else if (c == n - 1)
        v = gsum(base + n - 1, 2L * radius);
      else
        v = gsum(base + c, base + c);
      a[static_cast<std::size_t>(i)] += v / nc;
    }
  // skimage warp (bilinear, zero outside): moved by centre / spacing - (centre pixel)
  const double shift = centre / spacing - (cen[0] + cen[nc - 1]) / 2.0;
  std::vector<double> out(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    const double u = i - shift;
    const double fl = std::floor(u);
    if (fl < -2 || fl > n) continue;
    const long i0 = static_cast<long>(fl);
    const double f = u - fl;
    double v = 0;
    if (i0 >= 0 && i0 < n) v += (1 - f) * a[static_cast<std::size_t>(i0)];
    if (i0 + 1 >= 0 && i0 + 1 < n) v += f * a[static_cast<std::size_t>(i0 + 1)];
    out[static_cast<std::size_t>(i)] = v;
  }
  AxisWeights w;
  int first = -1, last = -1;
  double total = 0;
  for (int i = 0; i < n; ++i)
    if (out[static_cast<std::size_t>(i)] != 0) {
      if (first < 0) first = i;
      last = i;
      total += out[static_cast<std::size_t>(i)];
    }
  if (first < 0) return w;
  w.first = first;
  w.w.assign(out.begin() + first, out.begin() + last + 1);
  for (double& v : w.w) v /= total;
  return w;
}

std::vector<double> cosine_bump_kernel(const double weights[2], const double kpeaks[2], const double delays[2]) {
  static const std::string names[6] = {"weights[0]", "weights[1]", "kpeaks[0]", "kpeaks[1]", "delays[0]", "delays[1]"};
  return bump_kernel(weights, kpeaks, delays, names);
}

int cosine_bump_t_cross(const std::vector<double>& h) {
  const auto n = static_cast<long>(std::min<std::size_t>(h.size(), kLags));
  if (n == 0) throw std::invalid_argument("the kernel is empty");
  const auto b = h.begin();
  const long imax = std::max_element(b, b + n) - b, imin = std::min_element(b, b + n) - b;
  for (long i = imax; i + 1 < imin; ++i)
    if (h[static_cast<std::size_t>(i)] >= 0 && h[static_cast<std::size_t>(i + 1)] < 0) return static_cast<int>(i + 1);
  throw std::invalid_argument("the kernel does not cross zero between its maximum (lag " + std::to_string(imax) +
                              ") and its minimum (lag " + std::to_string(imin) + ")");
}

double lgn_spontaneous_rate(const std::string& model) {
  std::string type, tf;
  split_class(model, type, tf);
  for (const Spont& s : kSpont)
    if (type == s.type && tf == s.tf) return s.hz;
  throw std::invalid_argument("FilterNet has no spontaneous rate for class \"" + model + "\" (type \"" + type +
                              "\", key \"" + tf +
                              "\"; cell metrics exist for sON, sOFF, tOFF TF1/2/4/8/15 and tON TF8)");
}

LgnCell build_lgn_cell(const LgnNodeAttributes& a) {
  if (a.model.empty()) fail("pop_name", "is missing (neither pop_name nor model_template \"lgnmodel:NAME\")");
  require_finite(a.x, "x");
  require_finite(a.y, "y");
  require_finite(a.spatial_size, "spatial_size");
  if (a.spatial_size <= 0) fail("spatial_size", "must be > 0, got " + num(a.spatial_size));
  const double sigma = a.spatial_size / 3.0;
  static const std::string dom[6] = {"weight_dom_0", "weight_dom_1", "kpeaks_dom_0",
                                     "kpeaks_dom_1", "delay_dom_0",  "delay_dom_1"};
  static const std::string non_dom[6] = {"weight_non_dom_0", "weight_non_dom_1", "kpeaks_non_dom_0",
                                         "kpeaks_non_dom_1", "delay_non_dom_0",  "delay_non_dom_1"};
  LgnCell cell;
  cell.model = a.model;
  const bool s_on_s_off = a.model == "sONsOFF_001" || a.model == "sONsOFF";
  const bool s_on_t_off = a.model == "sONtOFF_001" || a.model == "sONtOFF";
  if (s_on_s_off || s_on_t_off) {  // cell_loaders.py, default_cell_loader's two composite branches
    require_finite(a.tuning_angle, "tuning_angle");
    require_finite(a.sf_sep, "sf_sep");
    const TwoSubunitUnit on =
        aligned_unit(a.weight_non_dom, a.kpeaks_non_dom, a.delay_non_dom, s_on_s_off ? 121.0 : 93.5, non_dom);
    const TwoSubunitUnit off = aligned_unit(a.weight_dom, a.kpeaks_dom, a.delay_dom, s_on_s_off ? 115.0 : 64.8, dom);
    const double amp_on = 1.0, spont = s_on_s_off ? 4.0 : 5.5;
    const double max_roff = s_on_s_off ? 35.0 : 46.0, max_ron = s_on_s_off ? 21.0 : 31.0;
    const double amp_off = s_on_s_off ? -(max_roff / max_ron) * (on.sum / off.sum) * amp_on -
                                            (spont * (max_roff - max_ron)) / (max_ron * off.sum)
                                      : -0.7 * (max_roff / max_ron) * (on.sum / off.sum) * amp_on -
                                            (spont * (max_roff - max_ron)) / (max_ron * off.sum);
    if (!std::isfinite(amp_off)) fail("weight_dom_0", "gives a non-finite dominant amplitude (" + num(amp_off) + ")");
    // TwoSubfieldLinearCell: the non-dominant centre along the on-off axis
    const double angle = a.tuning_angle * kPi / 180.;
    const double x_nd = std::cos(angle) * a.sf_sep + a.x, y_nd = std::sin(angle) * a.sf_sep + a.y;
    cell.subunits.push_back(LgnSubunit{a.x, a.y, sigma, amp_off, 0.5 * spont, off.kernel});
    cell.subunits.push_back(LgnSubunit{x_nd, y_nd, sigma, amp_on, 0.5 * spont, on.kernel});
    return cell;
  }
  if (a.model == "LGNOnOFFCell")
    fail("pop_name", "class \"LGNOnOFFCell\" (FilterNet's sigma_on/sigma_off cell) is not supported");
  std::string type, tf;
  split_class(a.model, type, tf);
  double amplitude;
  if (type.find("ON") != std::string::npos)
    amplitude = 1.0;
  else if (type.find("OFF") != std::string::npos)
    amplitude = -1.0;
  else
    fail("pop_name", "class \"" + a.model +
                         "\" is not an LGN class FilterNet builds (sONsOFF_001, sONtOFF_001, or TYPE_TFk with ON or "
                         "OFF in TYPE)");
  double spont = a.spont_fr;
  if (std::isnan(spont)) {
    try {
      spont = lgn_spontaneous_rate(a.model);
    } catch (const std::invalid_argument& e) {
      fail("pop_name", std::string(e.what()) + " and spont_fr is not given");
    }
  } else if (!std::isfinite(spont)) {
    fail("spont_fr", "is not finite (" + num(spont) + ")");
  }
  cell.subunits.push_back(
      LgnSubunit{a.x, a.y, sigma, amplitude, spont, bump_kernel(a.weight_dom, a.kpeaks_dom, a.delay_dom, dom)});
  return cell;
}

}  // namespace dpointnet
