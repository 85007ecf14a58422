#include "dpointnet/train/orientation_selectivity.hpp"

#include <algorithm>
#include <cmath>

#include "dpointnet/inputs/stimulus_samples.hpp"
#include "dpointnet/network/node_attributes.hpp"
#include "dpointnet/network/v1_cell_types.hpp"
#include "dpointnet/train/crowd_selectivity.hpp"
#include "dpointnet/train/losses.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_reader.hpp"

namespace dpointnet {

fields::Table<LossSpec> orientation_selectivity_fields(const SimulationConfig& cfg, const Network& net) {
  using L = LossSpec;
  using Range = JsonReader::Range;
  return {
      fields::required_string("target_file", &L::target_file),
      fields::number("core_radius", &L::core_radius, 0.0, Range::NonNegative),
      fields::number("annulus_weight", &L::annulus_weight, 0.0, Range::NonNegative),
      fields::number("ema_decay", &L::ema_decay, 0.95, Range::NonNegative),
      fields::custom<L>({"directions"},
                        [](const JsonReader& r, const nlohmann::json& l, L& s) {
                          if (!l.contains("directions")) return;
                          const auto& d = l["directions"];
                          if (!d.is_array() || d.empty()) r.fail("directions", "must be a non-empty list of degrees");
                          for (const auto& v : d) {
                            if (!v.is_number() || !std::isfinite(v.get<double>()))
                              r.fail("directions", "must hold finite numbers (degrees)");
                            s.directions.push_back(v.get<double>());
                          }
                        }),
      fields::check<L>([&cfg, &net](const JsonReader& r, const nlohmann::json& l, L& s) {
        if (s.ema_decay >= 1) r.fail("ema_decay", "must be in [0, 1)");
        if (l.contains("core_radius") && s.core_radius <= 0) r.fail("core_radius", "must be > 0 (um)");
        if (s.annulus_weight > 0 && s.core_radius <= 0)
          r.fail("annulus_weight", "needs core_radius (the annulus is the neurons outside the core)");
        const std::string purpose = "(" + r.section() + ")";
        const auto targets = read_selectivity_targets(s.target_file, cfg.path, r.section());
        const std::vector<std::string> types = v1_cell_types(cfg, net, true, purpose);
        for (const auto& p : net.populations) {
          if (p.is_virtual) continue;
          const std::vector<double> a = NodeAttributes(cfg, p, purpose).numbers("tuning_angle");
          s.tuning_deg.insert(s.tuning_deg.end(), a.begin(), a.end());
        }
        std::map<std::string, int> index;
        for (std::size_t i = 0; i < types.size(); ++i) {
          auto it = index.find(types[i]);
          if (it == index.end()) {
            const auto t = targets.find(types[i]);
            if (t == targets.end())
              r.fail("target_file", "'" + s.target_file + "' has no OSI/DSI of cell type \"" + types[i] +
                                        "\" (after its row filters), which the network has");
            it = index.emplace(types[i], static_cast<int>(s.type_names.size())).first;
            s.type_names.push_back(types[i]);
            s.target_osi.push_back(t->second.osi);
            s.target_dsi.push_back(t->second.dsi);
          }
          s.type_index.push_back(it->second);
        }
        if (s.core_radius > 0) {
          s.core = v1_core_mask(cfg, net, s.core_radius, "(" + r.section() + ".core_radius)");
          if (std::count(s.core.begin(), s.core.end(), char(1)) == 0)
            r.fail("core_radius", "no neuron lies within " + std::to_string(s.core_radius) + " um of the axis");
        }
      }),
  };
}

namespace {

// cost x (the crowd loss of the core, or all neurons, + annulus_weight x that of the annulus), rates normalised by
// the running mean e (per neuron, spikes per ms, from 0.003): e <- decay e + (1 - decay) mean rate of the batch.
class OrientationSelectivityLoss final : public Loss {
 public:
  explicit OrientationSelectivityLoss(const LossSpec& s) : Loss(s), ema_(s.type_index.size(), 0.003) {
    std::vector<SelectivityTarget> t;
    for (std::size_t c = 0; c < s.type_names.size(); ++c) t.push_back({s.target_osi[c], s.target_dsi[c], 0});
    for (int part = 0; part < (s.annulus_weight > 0 ? 2 : 1); ++part) {
      std::vector<int> type = s.type_index;
      if (!s.core.empty())
        for (std::size_t i = 0; i < type.size(); ++i)
          if (s.core[i] != (part == 0 ? 1 : 0)) type[i] = -1;
      parts_.emplace_back(type, s.tuning_deg, t);
      weights_.push_back(part == 0 ? 1.0 : s.annulus_weight);
    }
  }

  double value(const LossInputs&) const override { return 0.0; }
  std::size_t stats_size() const override { return 2 * parts_[0].stats_size(); }

  void bind_inputs(const std::vector<PreparedInput>& inputs, std::uint32_t seed) override {
    seed_ = seed;
    for (const auto& in : inputs)
      if (in.kind == InputKind::Lgn &&
          (in.stimulus.type == StimulusType::DriftingGrating || in.stimulus.type == StimulusType::StaticGrating)) {
        grating_ = &in;
        return;
      }
    if (spec_.directions.empty())
      throw std::logic_error(spec_.name + " has neither directions nor a grating in its condition");
  }

  void prepare_update(std::int64_t, std::int64_t global_batch) override {
    samples_ = static_cast<double>(global_batch);
  }

  void begin_update(const PooledCounts& pc) override {
    const double per = 1.0 / (pc.samples * static_cast<double>(pc.T) * pc.dt);
    for (std::size_t i = 0; i < ema_.size(); ++i)
      ema_[i] = spec_.ema_decay * ema_[i] + (1 - spec_.ema_decay) * pc.counts[i] * per;
  }

  void add_stats(const MicroBatch& mb, double* stats) const override {
    for (int b = 0; b < mb.B; ++b) {
      const std::vector<double> r = normalised(mb, b);
      const double th = direction(mb.first_sample + b);
      for (std::size_t p = 0; p < parts_.size(); ++p)
        parts_[p].add_stats(r.data(), th, stats + p * parts_[0].stats_size());
    }
  }

  double stats_value(const double* stats) const override {
    double v = 0;
    for (std::size_t p = 0; p < parts_.size(); ++p)
      v += weights_[p] * parts_[p].value(stats + p * parts_[0].stats_size(), samples_);
    return spec_.cost * v;
  }

  void add_stats_gradient(const MicroBatch& mb, const double* stats, std::vector<double>& count_grad,
                          std::vector<double>&) const override {
    const double per = 1.0 / (static_cast<double>(mb.T) * mb.dt);
    for (int b = 0; b < mb.B; ++b) {
      const std::vector<double> r = normalised(mb, b);
      const double th = direction(mb.first_sample + b);
      std::vector<double> dr(r.size(), 0.0), part(r.size());
      for (std::size_t p = 0; p < parts_.size(); ++p) {
        std::fill(part.begin(), part.end(), 0.0);
        parts_[p].add_gradient(r.data(), th, stats + p * parts_[0].stats_size(), samples_, part.data());
        for (std::size_t i = 0; i < r.size(); ++i) dr[i] += weights_[p] * part[i];
      }
      for (std::size_t i = 0; i < r.size(); ++i)
        count_grad[static_cast<std::size_t>(b) * r.size() + i] +=
            spec_.cost * dr[i] * per / std::max(ema_[i], CrowdSelectivity::kFloor);
    }
  }

  std::vector<double> state() const override { return ema_; }
  void set_state(const std::vector<double>& s) override {
    if (s.size() != ema_.size()) throw std::logic_error(spec_.name + ": a state of the wrong size");
    ema_ = s;
  }

 private:
  std::vector<double> normalised(const MicroBatch& mb, int b) const {
    std::vector<double> r(static_cast<std::size_t>(mb.N));
    const double per = 1.0 / (static_cast<double>(mb.T) * mb.dt);
    for (std::size_t i = 0; i < r.size(); ++i)
      r[i] = mb.counts[static_cast<std::size_t>(b) * r.size() + i] * per / std::max(ema_[i], CrowdSelectivity::kFloor);
    return r;
  }
  double direction(std::int64_t g) const {
    if (!spec_.directions.empty())
      return spec_.directions[static_cast<std::size_t>(g % static_cast<std::int64_t>(spec_.directions.size()))];
    return sample_stimulus(grating_->stimulus, seed_, grating_->name, g).value[0];
  }
  std::vector<CrowdSelectivity> parts_;
  std::vector<double> weights_;
  std::vector<double> ema_;
  double samples_ = 1;
  const PreparedInput* grating_ = nullptr;
  std::uint32_t seed_ = 0;
};

}  // namespace

std::unique_ptr<Loss> make_orientation_selectivity_loss(const LossSpec& s) {
  return std::make_unique<OrientationSelectivityLoss>(s);
}

}  // namespace dpointnet
