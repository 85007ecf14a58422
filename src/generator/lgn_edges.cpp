// The LGN -> V1 rule of the Allen V1 model, restated from select_lgn_sources_powerlaw in edge_funcs.py of
// AllenInstitute/biorealistic-v1-model @ 03edab96b8a8c95d0723b0e71d477e41a660351e (:356-522; helpers
// lgn_shift_dict :11-26, pick_from_probs :540-544, gaussian_probability :547-548, calculate_subunit_probs
// :551-555, delta_ori :579-580), which build_network.py's add_lgn_v1_edges of that commit applies to every V1
// cell with lgn_mean = the centre of the 120 x 80 degree screen and a delay of 1.7 ms. For each V1 cell:
//
//  1. its visual-field position is c = (60 + 0.07 x, 40 + 0.04 z) degrees, x and z in um (:366-372);
//  2. v = the unit vector of its tuning_angle; with probability sON_ratio its sustained subfield is ON (sOFF
//     units are left out), else OFF (sON units left out) and v = -v (:378-390);
//  3. it prefers a temporal frequency TF ~ Poisson(poissonParameter), redrawn while 0 (:393-395); a
//     single-subunit unit of group G (sON: 1, 2, 4, 8 Hz; sOFF: 1, 2, 4, 8, 15; tOFF: 4, 8, 15) and frequency f
//     has the class weight (1 - |TF - f| / sum over G of |TF - f'|) / (|G| - 1) (:397, :448-465, :551-555);
//  4. candidates are the units whose RF centre lies within 40 degrees of c (:404-413); a composite unit
//     (sONsOFF, sONtOFF) has class weight 1 when its tuning_angle is within 15 degrees of the cell's, modulo 180,
//     else 0 (:469-472, :579-580);
//  5. subfields: sustained units are moved by -2.5 v and tOFF units by +2.5 v before measuring (composites are
//     not moved) (:417-430, :11-26), so that sustained units near c + 2.5 v and transient OFF units near
//     c - 2.5 v weigh most; the offset from c is stretched by sqrt(1.5) along v and shrunk by it across v, which
//     elongates both subfields across the offset (:435-442); weight = class weight x exp(-d^2 / (2 x 5^2))
//     (:444-445, :474-475, :547-548);
//  6. K = round(target_size x 0.2 x synapse_ratio_against_e4 x (yule - 1) / yule) sources (:478-489), at most the
//     number of candidates with weight > 0 (:493), drawn by weight without replacement (:494, :540-544);
//  7. synapses per source ~ Yule-Simon(yule) (:498-499), the larger counts to the nearer sources: for every
//     drawn count above the smallest drawn one, from the largest down, that many of the remaining sources are
//     drawn with weights exp(-d^2 / (2 (5 / sqrt(k))^2)) and get k synapses; the rest get 1 (:500-516).
//
// Simplified: target_size x 0.2 (an L4 Exc cell's LGN synapses, which the V1 model scales with each cell's total
// synapse count) is the constant kE4LgnSynapses = 500 ("so that e4 becomes 500" in the builder's earlier
// select_lgn_sources_powerlaw, edge_funcs.py @ 7ffad9e305e864c7f99bd3711ae98ad94c18f24c), so K is fixed per type;
// the weight is a per-synapse constant per E/I target (kVisualLgnTypes, rheobase-scaled as every generated
// weight) instead of the V1 model's fitted per-type weight / target size; the draws without replacement use
// exponential keys (Efraimidis-Spirakis: the distribution of numpy's sequential choice, not its numbers).
#include "dpointnet/generator/lgn_edges.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "dpointnet/generator/sampling.hpp"
#include "dpointnet/generator/visual_types.hpp"

namespace dpointnet::generator {

namespace {

constexpr double kPi = 3.141592653589793;

// The builder's delta_ori: the orientation difference (0..90 degrees) of an angle difference.
double delta_ori(double angle) { return std::fabs(std::fmod(std::fabs(angle - 90.0), 180.0) - 90.0); }

// LGN units bucketed by tile, for the candidate search.
class LgnGrid {
 public:
  explicit LgnGrid(const LgnNodes& lgn) : lgn_(lgn), start_(static_cast<std::size_t>(lgn.tiles_x * lgn.tiles_y) + 1) {
    std::vector<int> cell(lgn.size());
    for (std::size_t u = 0; u < lgn.size(); ++u) {
      cell[u] =
          tile(lgn.attr[kLgnX][u], lgn.x0, lgn.tiles_x) * lgn.tiles_y + tile(lgn.attr[kLgnY][u], lgn.y0, lgn.tiles_y);
      ++start_[static_cast<std::size_t>(cell[u]) + 1];
    }
    for (std::size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
    units_.resize(lgn.size());
    std::vector<std::size_t> fill(start_.begin(), start_.end() - 1);
    for (std::size_t u = 0; u < lgn.size(); ++u)
      units_[fill[static_cast<std::size_t>(cell[u])]++] = static_cast<std::uint32_t>(u);
  }
  // Calls f(unit) for the units with ((x - cx) / r)^2 + ((y - cy) / r)^2 <= 1, tile by tile.
  template <class F>
  void within(double cx, double cy, double r, F&& f) const {
    const int i0 = tile(cx - r, lgn_.x0, lgn_.tiles_x), i1 = tile(cx + r, lgn_.x0, lgn_.tiles_x);
    const int j0 = tile(cy - r, lgn_.y0, lgn_.tiles_y), j1 = tile(cy + r, lgn_.y0, lgn_.tiles_y);
    for (int i = i0; i <= i1; ++i)
      for (int j = j0; j <= j1; ++j) {
        const std::size_t c = static_cast<std::size_t>(i * lgn_.tiles_y + j);
        for (std::size_t k = start_[c]; k < start_[c + 1]; ++k) {
          const std::uint32_t u = units_[k];
          const double dx = (lgn_.attr[kLgnX][u] - cx) / r, dy = (lgn_.attr[kLgnY][u] - cy) / r;
          if (dx * dx + dy * dy <= 1.0) f(u);
        }
      }
  }

 private:
  static int tile(double v, double origin, int n) {
    const double t = std::floor((v - origin) / kLgnTileDeg);
    return static_cast<int>(std::min(std::max(t, 0.0), static_cast<double>(n - 1)));
  }
  const LgnNodes& lgn_;
  std::vector<std::size_t> start_;
  std::vector<std::uint32_t> units_;
};

// Moves to the front of `items` (by index into log_w) k of them drawn without replacement with probabilities
// proportional to exp(log_w): the k smallest keys log(E) - log_w, E ~ Exp(1), one uniform per item in order.
void draw_without_replacement(Rng& rng, std::vector<std::uint32_t>& items, const std::vector<double>& log_w,
                              std::size_t k, std::vector<std::pair<double, std::uint32_t>>& keys) {
  keys.clear();
  for (std::uint32_t i : items) keys.emplace_back(std::log(-std::log(rng.uniform_pos())) - log_w[i], i);
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(k), keys.end());
  for (std::size_t j = 0; j < keys.size(); ++j) items[j] = keys[j].second;
}

constexpr double kInvTwoSigma2 = 1.0 / (2.0 * kLgnGaussRadius * kLgnGaussRadius);

// Step 3: the class weights of the single-subunit classes for a cell preferring `tf` Hz with an ON (`on`) or OFF
// sustained subfield; 0 for the left-out sustained group and the composites (weighted per unit).
void class_weights(int tf, bool on, double* w) {
  static const double kTf[3][5] = {{1, 2, 4, 8, 0}, {1, 2, 4, 8, 15}, {4, 8, 15, 0, 0}};  // by LgnKind (:397)
  static const int kTfCount[3] = {4, 5, 3};
  for (int c = 0; c < kNumLgnClasses; ++c) {
    const LgnClass& cl = kLgnClasses[c];
    w[c] = 0;
    if (cl.kind == LgnKind::Composite || (cl.kind == LgnKind::SustainedOn && !on) ||
        (cl.kind == LgnKind::SustainedOff && on))
      continue;
    const int g = static_cast<int>(cl.kind);
    double sum = 0;
    for (int i = 0; i < kTfCount[g]; ++i) sum += std::fabs(tf - kTf[g][i]);
    w[c] = (1.0 - std::fabs(tf - cl.tf) / sum) / (kTfCount[g] - 1);
  }
}

// Scratch of one target: its candidates (unit, squared rule distance, log weight) and the draws.
struct Scratch {
  std::vector<std::uint32_t> unit, items, sources, nsyn;
  std::vector<double> d2, log_w, log_w_k;
  std::vector<std::pair<double, std::uint32_t>> keys;
  std::vector<std::uint32_t> counts;
};

// Step 7: synapses per source (s.sources, candidate indices) into s.nsyn: Yule-Simon counts, each count above the
// smallest drawn one going, from the largest down, to sources drawn with weights exp(-d^2 k / (2 sigma^2)).
void synapse_counts(Rng& rng, double yule, Scratch& s) {
  const std::size_t k = s.sources.size();
  s.counts.resize(k);
  for (std::uint32_t& c : s.counts) c = yule_simon(rng, yule);
  std::sort(s.counts.begin(), s.counts.end());
  s.nsyn.assign(s.unit.size(), 1);
  s.items = s.sources;
  s.log_w_k.resize(s.unit.size());
  std::size_t hi = k;  // s.counts[lo, hi) are the draws of the value s.counts[hi - 1]
  while (hi > 0 && s.counts[hi - 1] > s.counts[0]) {
    const std::uint32_t value = s.counts[hi - 1];
    std::size_t lo = hi - 1;
    while (lo > 0 && s.counts[lo - 1] == value) --lo;
    for (std::uint32_t i : s.items) s.log_w_k[i] = -s.d2[i] * value * kInvTwoSigma2;
    draw_without_replacement(rng, s.items, s.log_w_k, hi - lo, s.keys);
    for (std::size_t j = 0; j < hi - lo; ++j) s.nsyn[s.items[j]] = value;
    s.items.erase(s.items.begin(), s.items.begin() + static_cast<std::ptrdiff_t>(hi - lo));
    hi = lo;
  }
}

}  // namespace

int lgn_sources_per_target(int visual_type) {
  const VisualType& t = kVisualTypes[visual_type];
  const double synapses = kE4LgnSynapses * t.lgn_syn_ratio;
  return static_cast<int>(std::nearbyint(synapses * (t.lgn_yule - 1.0) / t.lgn_yule));
}

EdgeSet connect_lgn_to_v1(const LgnNodes& lgn, const V1Nodes& v1, const Plan& plan, std::uint32_t seed,
                          const double* weight_scale, std::size_t* capped) {
  const std::size_t n = v1.x.size();
  int k_type[kNumVisualTypes];
  std::size_t total = 0;
  for (int t = 0; t < kNumVisualTypes; ++t) {
    k_type[t] = lgn_sources_per_target(t);
    total += static_cast<std::size_t>(k_type[t]) * static_cast<std::size_t>(plan.visual_count[t]);
  }
  EdgeSet e;
  e.reserve(total, n);
  e.nsyns.reserve(total);
  *capped = 0;
  const LgnGrid grid(lgn);
  Rng rng(seed, kPurposeLgnRule);
  const double delay = std::max(kVisualLgnTypes[0].delay_ms, plan.min_delay);
  const double sq_aspect = std::sqrt(kLgnAspectRatio);
  Scratch s;
  for (std::size_t t = 0; t < n; ++t) {
    const VisualType& vt = kVisualTypes[v1.visual_type[t]];
    // steps 1-3: visual-field position, subfield axis and sign, temporal frequency
    const double cx = kScreenCentreX + kDegPerUmX * v1.x[t], cy = kScreenCentreY + kDegPerUmZ * v1.z[t];
    const bool on = rng.uniform() < vt.lgn_son_ratio;
    const double sign = on ? 1.0 : -1.0;
    const double vx = sign * std::cos(v1.tuning[t] * kPi / 180.0), vy = sign * std::sin(v1.tuning[t] * kPi / 180.0);
    int tf = 0;
    while (tf <= 0) tf = poisson(rng, vt.lgn_poisson);
    double class_w[kNumLgnClasses];
    class_weights(tf, on, class_w);
    // steps 4-5: the weighted candidates
    s.unit.clear();
    s.d2.clear();
    s.log_w.clear();
    grid.within(cx, cy, kLgnPoolRadius, [&](std::uint32_t u) {
      const LgnClass& cl = kLgnClasses[lgn.cls[u]];
      double w = class_w[lgn.cls[u]], shift = 0;
      if (cl.kind == LgnKind::Composite)
        w = delta_ori(lgn.attr[kLgnTuningAngle][u] - v1.tuning[t]) < kLgnOrientationWindow ? 1.0 : 0.0;
      else
        shift = cl.kind == LgnKind::TransientOff ? kLgnSubfieldShift : -kLgnSubfieldShift;
      if (!(w > 0)) return;
      const double rx = lgn.attr[kLgnX][u] + shift * vx - cx, ry = lgn.attr[kLgnY][u] + shift * vy - cy;
      const double along = (rx * vx + ry * vy) * sq_aspect, across = (ry * vx - rx * vy) / sq_aspect;
      const double dist2 = along * along + across * across;
      s.unit.push_back(u);
      s.d2.push_back(dist2);
      s.log_w.push_back(std::log(w) - dist2 * kInvTwoSigma2);
    });
    // step 6: the sources
    const std::size_t want = static_cast<std::size_t>(k_type[v1.visual_type[t]]);
    const std::size_t k = std::min(want, s.unit.size());
    if (k < want) ++*capped;
    s.sources.resize(s.unit.size());
    for (std::size_t i = 0; i < s.sources.size(); ++i) s.sources[i] = static_cast<std::uint32_t>(i);
    if (k > 0) draw_without_replacement(rng, s.sources, s.log_w, k, s.keys);
    s.sources.resize(k);
    // step 7 and the edges of this target, by source id
    synapse_counts(rng, vt.lgn_yule, s);
    std::sort(s.sources.begin(), s.sources.end(),
              [&](std::uint32_t a, std::uint32_t b) { return s.unit[a] < s.unit[b]; });
    const int inh = v1.inhibitory(t) ? 1 : 0;
    const double w = kVisualLgnTypes[inh].weight_pA * weight_scale[v1.glif[t]];
    for (std::uint32_t i : s.sources) {
      e.push(s.unit[i], static_cast<std::uint8_t>(inh), w, delay);
      e.nsyns.push_back(s.nsyn[i]);
    }
    e.end_target();
  }
  return e;
}

}  // namespace dpointnet::generator
