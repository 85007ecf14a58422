#include "dpointnet/train/synchronization.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "dpointnet/network/v1_cell_types.hpp"
#include "dpointnet/train/fano.hpp"
#include "dpointnet/train/losses.hpp"
#include "dpointnet/train/observed_rates.hpp"
#include "dpointnet/train/sync_plan.hpp"
#include "dpointnet/util/counter_uniform.hpp"
#include "dpointnet/util/hash.hpp"
#include "dpointnet/util/json_reader.hpp"

namespace dpointnet {

namespace {
std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}
}  // namespace

const std::vector<double>& fano_targets_300ms(bool evoked) {
  static const std::vector<double> ev = {1.01881, 1.03436, 1.05102, 1.08038, 1.11356, 1.15149, 1.20246,
                                         1.23919, 1.20588, 1.19266, 1.15404, 1.14281, 1.09735, 0.86053};
  static const std::vector<double> sp = {0.99255, 0.98534, 0.99029, 0.98106, 0.97466, 0.97277, 0.95597,
                                         0.97380, 0.90051, 0.92299, 0.88363, 0.81033, 0.67958, 0.47098};
  return evoked ? ev : sp;
}

fields::Table<LossSpec> synchronization_fields(const SimulationConfig& cfg, const Network& net) {
  using L = LossSpec;
  using Range = JsonReader::Range;
  return {
      fields::integer("n_samples", &L::n_samples, 50, 1, 1 << 24, "must be <= 2^24"),
      fields::integer("seed", &L::seed, 42, 0, 4294967295LL, "must be < 2^32"),
      fields::number("core_radius", &L::core_radius, 0.0, Range::NonNegative),
      fields::one_of<L>("pool", "excitatory", {"excitatory", "all"}),
      fields::custom<L>(
          {"targets"},
          [&cfg](const JsonReader& r, const nlohmann::json& l, L& s) {
            const std::int64_t steps = cfg.n_steps - s.pre_steps - s.post_steps;
            const double window_ms = static_cast<double>(steps) * cfg.dt;
            for (int ms : fano_bin_sizes_ms(window_ms)) {
              const double b = ms / cfg.dt;
              if (std::fabs(b - std::round(b)) > 1e-9 * b)
                r.fail("targets", "the bin of " + std::to_string(ms) + " ms is not a whole number of run.dt steps");
              s.fano_bins.push_back(static_cast<int>(std::llround(b)));
            }
            if (s.fano_bins.empty()) r.fail("post_ms", "the window is too short for a bin of 1 ms (at least 3 ms)");
            if (!l.contains("targets")) r.fail("targets", "is required (\"evoked\", \"spontaneous\" or a list)");
            const nlohmann::json& t = l["targets"];
            if (t.is_string()) {
              const std::string v = t.get<std::string>();
              if (v != "evoked" && v != "spontaneous")
                r.fail("targets", "must be \"evoked\", \"spontaneous\" or a list of numbers, got \"" + v + "\"");
              if (std::fabs(window_ms - 300.0) > 1e-9)
                r.fail("targets", "\"" + v +
                                      "\" has Neuropixels Fano factors for a 300 ms window only; the window is " +
                                      num(window_ms) + " ms (run.tstop - pre_ms - post_ms): give a list");
              s.fano_targets = fano_targets_300ms(v == "evoked");
              return;
            }
            if (!t.is_array() || t.size() != s.fano_bins.size())
              r.fail("targets", "must be a list of " + std::to_string(s.fano_bins.size()) +
                                    " numbers (one per bin size of the " + num(window_ms) + " ms window)");
            for (const auto& v : t) {
              if (!v.is_number() || !std::isfinite(v.get<double>())) r.fail("targets", "must hold finite numbers");
              s.fano_targets.push_back(v.get<double>());
            }
          }),
      fields::check<L>([&cfg, &net](const JsonReader& r, const nlohmann::json& l, L& s) {
        if (l.contains("core_radius") && s.core_radius <= 0) r.fail("core_radius", "must be > 0 (um)");
        const bool all = l.contains("pool") && l["pool"] == "all";
        std::map<std::int64_t, std::string> pop;
        if (!all) pop = node_type_groups(cfg, net, "pop_name", r.section());
        const std::vector<char> core = s.core_radius > 0
                                           ? v1_core_mask(cfg, net, s.core_radius, "(" + r.section() + ".core_radius)")
                                           : std::vector<char>();
        for (std::int64_t i = 0; i < net.n_neurons; ++i) {
          if (!core.empty() && !core[static_cast<std::size_t>(i)]) continue;
          if (!all) {
            const std::string& p = pop.at(net.node_type_id(i));
            if (p.empty() || p[0] != 'e') continue;
          }
          s.pool.push_back(static_cast<std::int32_t>(i));
        }
        if (static_cast<std::int64_t>(s.pool.size()) < kSyncSampleMin)
          r.fail(all ? "core_radius" : "pool", "the pool has " + std::to_string(s.pool.size()) + " neurons (" +
                                                   (all ? "all" : "pop_name starting with 'e'") +
                                                   (core.empty() ? "" : ", in the core") + "); it needs at least " +
                                                   std::to_string(kSyncSampleMin));
      }),
  };
}

namespace {

// cost x mean over bin sizes d of (F*_d - F_d)^2, F_d the mean over the plan's pools of their Fano factors.
class SynchronizationLoss final : public Loss {
 public:
  explicit SynchronizationLoss(const LossSpec& s) : Loss(s) {}

  double value(const LossInputs&) const override { return 0.0; }
  std::size_t stats_size() const override { return spec_.fano_bins.size(); }

  void prepare_update(std::int64_t update, std::int64_t global_batch) override {
    if (plan_.batch != global_batch)
      plan_ = make_sync_sampling_plan(spec_.n_samples, global_batch, static_cast<std::int64_t>(spec_.pool.size()),
                                      spec_.seed);
    // copy e of the pool: stable ascending order of counter-based uniforms keyed by (seed, update, e)
    const std::size_t P = spec_.pool.size();
    static const std::uint32_t purpose = fnv1a32("synchronization");
    shuffled_.resize(static_cast<std::size_t>(plan_.n_copies) * P);
    std::vector<std::size_t> order(P);
    std::vector<double> key(P);
    for (std::int64_t e = 0; e < plan_.n_copies; ++e) {
      for (std::size_t i = 0; i < P; ++i)
        key[i] = counter_uniform01(spec_.seed, purpose, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(e),
                                   static_cast<std::uint32_t>(update));
      std::iota(order.begin(), order.end(), std::size_t(0));
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
      for (std::size_t i = 0; i < P; ++i) shuffled_[static_cast<std::size_t>(e) * P + i] = spec_.pool[order[i]];
    }
  }

  bool pools(std::int64_t slot0, int B, std::vector<std::int32_t>& sample,
             std::vector<std::vector<std::int32_t>>& members) const override {
    sample.clear();
    members.clear();
    for (std::int64_t k = 0; k < plan_.n_effective; ++k) {
      const std::int64_t trial = plan_.trials[static_cast<std::size_t>(k)];
      if (trial < slot0 || trial >= slot0 + B) continue;
      sample.push_back(static_cast<std::int32_t>(trial - slot0));
      const auto off = static_cast<std::size_t>(plan_.offsets[static_cast<std::size_t>(k)]);
      members.emplace_back(
          shuffled_.begin() + static_cast<std::ptrdiff_t>(off),
          shuffled_.begin() +
              static_cast<std::ptrdiff_t>(off + static_cast<std::size_t>(plan_.counts[static_cast<std::size_t>(k)])));
    }
    return true;
  }

  void add_stats(const MicroBatch& mb, double* stats) const override {
    const std::int64_t P = local_pools(mb);
    if (P == 0) return;
    std::vector<double> F;
    pool_fano(sums(mb, P), mb.T, P, spec_.fano_bins, F);
    for (std::size_t d = 0; d < spec_.fano_bins.size(); ++d)
      for (std::int64_t k = 0; k < P; ++k) stats[d] += F[d * static_cast<std::size_t>(P) + static_cast<std::size_t>(k)];
  }

  double stats_value(const double* stats) const override {
    double v = 0;
    const std::size_t nd = spec_.fano_bins.size();
    for (std::size_t d = 0; d < nd; ++d) {
      const double e = spec_.fano_targets[d] - stats[d] / static_cast<double>(plan_.n_effective);
      v += e * e;
    }
    return spec_.cost * v / static_cast<double>(nd);
  }

  void add_stats_gradient(const MicroBatch& mb, const double* stats, std::vector<double>&,
                          std::vector<double>& pool_grad) const override {
    const std::int64_t P = local_pools(mb);
    if (P == 0) return;
    const std::size_t nd = spec_.fano_bins.size();
    const double n = static_cast<double>(plan_.n_effective);
    std::vector<double> dF(nd * static_cast<std::size_t>(P));
    for (std::size_t d = 0; d < nd; ++d) {
      const double g = -2.0 * spec_.cost * (spec_.fano_targets[d] - stats[d] / n) / static_cast<double>(nd) / n;
      for (std::int64_t k = 0; k < P; ++k) dF[d * static_cast<std::size_t>(P) + static_cast<std::size_t>(k)] = g;
    }
    std::vector<double> dy;
    pool_fano_gradient(sums(mb, P), mb.T, P, spec_.fano_bins, dF, dy);
    pool_grad.resize(dy.size(), 0.0);
    for (std::size_t q = 0; q < dy.size(); ++q) pool_grad[q] += dy[q];
  }

 private:
  std::int64_t local_pools(const MicroBatch& mb) const {
    std::int64_t P = 0;
    for (std::int64_t trial : plan_.trials) P += (trial >= mb.slot0 && trial < mb.slot0 + mb.B) ? 1 : 0;
    return P;
  }
  static std::vector<double> sums(const MicroBatch& mb, std::int64_t P) {
    return std::vector<double>(mb.pool_sums, mb.pool_sums + mb.T * P);
  }
  SyncSamplingPlan plan_;
  std::vector<std::int32_t> shuffled_;  // the shuffled copies of the pool, concatenated
};

}  // namespace

std::unique_ptr<Loss> make_synchronization_loss(const LossSpec& s) { return std::make_unique<SynchronizationLoss>(s); }

}  // namespace dpointnet
