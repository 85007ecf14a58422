// The `stimulus` of an LGN input (input_type "lgn"): what the screen shows (docs/visual-input.md).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpointnet/util/json_reader.hpp"

namespace dpointnet {

enum class StimulusType { DriftingGrating, StaticGrating, GreyScreen, Movie };

// A stimulus parameter per sample: one number, a list cycled over the global sample index, or uniform in
// [lo, hi) from the run's seed ("random" is uniform in [0, 360) for direction and phase).
struct StimulusParameter {
  enum class Kind { Fixed, List, Uniform } kind = Kind::Fixed;
  std::vector<double> values = {0.0};  // Fixed: one value; List: the list
  double lo = 0, hi = 0;               // Uniform
  // The value of global sample `sample`; `u` is the sample's uniform draw in (0, 1) (used by Uniform only).
  double at(std::int64_t sample, double u) const;
};

struct StimulusSpec {
  StimulusType type = StimulusType::DriftingGrating;
  // gratings: direction (deg), temporal frequency (Hz), spatial frequency (cycles per degree), contrast (sine
  // amplitude about grey 0), phase (deg); grey screen: contrast is the screen's value
  StimulusParameter direction, temporal_frequency, spatial_frequency, contrast, phase;
  double pre_ms = 0, post_ms = 0;                                        // grey before and after the grating or movie
  double screen_width = 120, screen_height = 80, degrees_per_pixel = 1;  // gratings
  std::string movie_file, movie_dataset = "movie";                       // movie: [frames][rows][cols]
  double movie_degrees_per_pixel = 1, movie_frame_rate = 1000;
  bool dpointnet_direction = false;  // direction_convention "dpointnet": FilterNet's theta = -direction
};

// The names of the per-sample parameters, in the order of StimulusSpec's members (for output columns and for
// the random streams' purposes).
const std::vector<std::string>& stimulus_parameter_names();
const StimulusParameter& stimulus_parameter(const StimulusSpec& s, std::size_t k);

// Parses an LGN input's "stimulus" object and its "direction_convention"; errors name the file, the input and
// the key.
StimulusSpec parse_stimulus(const JsonReader& r, const nlohmann::json& input);

const char* stimulus_type_name(StimulusType t);

}  // namespace dpointnet
