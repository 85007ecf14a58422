// Parsing of an LGN input's stimulus (docs/visual-input.md, "Stimuli").
#include "dpointnet/config/stimulus_spec.hpp"

#include <cmath>

namespace dpointnet {

using nlohmann::json;

namespace {

struct TypeName {
  StimulusType type;
  const char* name;
};
constexpr TypeName kTypes[] = {{StimulusType::DriftingGrating, "drifting_grating"},
                               {StimulusType::StaticGrating, "static_grating"},
                               {StimulusType::GreyScreen, "grey_screen"},
                               {StimulusType::Movie, "movie"}};

struct Range {
  double lo, hi;
  const char* what;
};

// A parameter: a number, a non-empty list of numbers, "random" (angles only), or {"uniform": [lo, hi]}; every
// value in [range.lo, range.hi].
StimulusParameter parameter(const JsonReader& r, const json& st, const std::string& key, double dflt,
                            const Range& range, bool angle) {
  StimulusParameter p;
  auto check = [&](double v) {
    if (!std::isfinite(v) || v < range.lo || v > range.hi) r.fail(key, std::string("must be ") + range.what);
    return v;
  };
  if (!st.contains(key) || st[key].is_null()) {
    if (std::isnan(dflt)) r.fail(key, "is required");
    p.values = {dflt};
    return p;
  }
  const json& v = st[key];
  if (v.is_number()) {
    p.values = {check(v.get<double>())};
  } else if (v.is_array()) {
    if (v.empty()) r.fail(key, "is an empty list");
    p.kind = StimulusParameter::Kind::List;
    p.values.clear();
    for (const json& e : v) {
      if (!e.is_number()) r.fail(key, "must be a list of numbers");
      p.values.push_back(check(e.get<double>()));
    }
  } else if (v.is_string() && v.get<std::string>() == "random" && angle) {
    p.kind = StimulusParameter::Kind::Uniform;
    p.lo = 0;
    p.hi = 360;
  } else if (v.is_object() && v.size() == 1 && v.contains("uniform") && v["uniform"].is_array() &&
             v["uniform"].size() == 2 && v["uniform"][0].is_number() && v["uniform"][1].is_number()) {
    p.kind = StimulusParameter::Kind::Uniform;
    p.lo = check(v["uniform"][0].get<double>());
    p.hi = check(v["uniform"][1].get<double>());
    if (!(p.lo < p.hi)) r.fail(key, "uniform [lo, hi] needs lo < hi");
  } else {
    r.fail(key, std::string("must be a number, a list of numbers") + (angle ? ", \"random\"" : "") +
                    " or {\"uniform\": [lo, hi]}");
  }
  return p;
}

constexpr double kInf = 1e300;

}  // namespace

double StimulusParameter::at(std::int64_t sample, double u) const {
  switch (kind) {
    case Kind::Fixed:
      return values[0];
    case Kind::List:
      return values[static_cast<std::size_t>(sample % static_cast<std::int64_t>(values.size()))];
    case Kind::Uniform:
      return lo + (hi - lo) * u;
  }
  return values[0];
}

const std::vector<std::string>& stimulus_parameter_names() {
  static const std::vector<std::string> n = {"direction", "temporal_frequency", "spatial_frequency", "contrast",
                                             "phase"};
  return n;
}

const StimulusParameter& stimulus_parameter(const StimulusSpec& s, std::size_t k) {
  const StimulusParameter* p[] = {&s.direction, &s.temporal_frequency, &s.spatial_frequency, &s.contrast, &s.phase};
  return *p[k];
}

const char* stimulus_type_name(StimulusType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.name;
  return "?";
}

StimulusSpec parse_stimulus(const JsonReader& in_reader, const json& input) {
  StimulusSpec s;
  const std::string conv = in_reader.string(input, "direction_convention", "filternet");
  if (conv != "filternet" && conv != "dpointnet")
    in_reader.fail("direction_convention",
                   "must be \"filternet\" (FilterNet's theta = direction) or \"dpointnet\" "
                   "(theta = -direction, DPointNet's ccw)");
  s.dpointnet_direction = conv == "dpointnet";
  if (!input.contains("stimulus") || !input["stimulus"].is_object())
    in_reader.fail("stimulus",
                   "is required for input_type lgn: an object with \"type\" (drifting_grating, "
                   "static_grating, grey_screen or movie)");
  const json& st = input["stimulus"];
  const JsonReader r = in_reader.at(in_reader.section() + ".stimulus");
  const std::string type = r.required_string(st, "type");
  bool found = false;
  for (const auto& e : kTypes)
    if (type == e.name) s.type = e.type, found = true;
  if (!found)
    r.fail("type", "\"" + type + "\" is not a stimulus type (drifting_grating, static_grating, grey_screen, movie)");

  const double nan = std::nan("");
  const bool grating = s.type == StimulusType::DriftingGrating || s.type == StimulusType::StaticGrating;
  std::vector<std::string> known = {"type", "pre_ms", "post_ms"};
  if (grating) {
    s.direction = parameter(r, st, "direction", nan, {-kInf, kInf, "a finite angle (degrees)"}, true);
    s.spatial_frequency =
        parameter(r, st, "spatial_frequency", 0.04, {0, kInf, "a frequency >= 0 (cycles per degree)"}, false);
    s.contrast = parameter(r, st, "contrast", 0.8, {0, 1, "in [0, 1]"}, false);
    s.phase = parameter(r, st, "phase", 0.0, {-kInf, kInf, "a finite angle (degrees)"}, true);
    known.insert(known.end(), {"direction", "spatial_frequency", "contrast", "phase"});
    s.temporal_frequency = parameter(r, st, "temporal_frequency", s.type == StimulusType::DriftingGrating ? 2.0 : 0.0,
                                     {0, kInf, "a frequency >= 0 (Hz)"}, false);
    if (s.type == StimulusType::DriftingGrating) known.push_back("temporal_frequency");
  } else {
    s.direction.values = s.spatial_frequency.values = s.temporal_frequency.values = s.phase.values = {0.0};
    s.contrast.values = {0.0};
  }
  if (s.type == StimulusType::GreyScreen) {
    s.contrast = parameter(r, st, "contrast", 0.0, {-1, 1, "the screen's value, in [-1, 1] (grey is 0)"}, false);
    known.push_back("contrast");
  }
  if (s.type != StimulusType::Movie) {
    s.screen_width = r.number(st, "screen_width", 120, JsonReader::Range::Positive);
    s.screen_height = r.number(st, "screen_height", 80, JsonReader::Range::Positive);
    s.degrees_per_pixel = r.number(st, "degrees_per_pixel", 1, JsonReader::Range::Positive);
    known.insert(known.end(), {"screen_width", "screen_height", "degrees_per_pixel"});
    if (static_cast<long>(s.screen_width / s.degrees_per_pixel) < 2 ||
        static_cast<long>(s.screen_height / s.degrees_per_pixel) < 2)
      r.fail("degrees_per_pixel", "leaves fewer than 2 pixels across the screen");
  } else {
    s.movie_file = r.required_string(st, "movie_file");
    s.movie_dataset = r.string(st, "movie_dataset", "movie");
    s.movie_degrees_per_pixel = r.number(st, "degrees_per_pixel", 1, JsonReader::Range::Positive);
    s.movie_frame_rate = r.number(st, "frame_rate", 1000, JsonReader::Range::Positive);
    known.insert(known.end(), {"movie_file", "movie_dataset", "degrees_per_pixel", "frame_rate"});
  }
  s.pre_ms = r.number(st, "pre_ms", 0, JsonReader::Range::NonNegative);
  s.post_ms = r.number(st, "post_ms", 0, JsonReader::Range::NonNegative);
  r.reject_unknown(st, known, "(for stimulus type " + type + ")");
  return s;
}

}  // namespace dpointnet
