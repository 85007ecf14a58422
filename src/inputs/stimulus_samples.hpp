// What each sample of an LGN input sees (docs/visual-input.md): every stimulus parameter of global sample
// `sample`, a fixed value, the list entry sample mod length, or a uniform draw keyed by (seed,
// "input.parameter", sample).
#pragma once
#include <cstdint>
#include <string>

#include "dpointnet/config/stimulus_spec.hpp"
#include "dpointnet/util/counter_uniform.hpp"
#include "dpointnet/util/hash.hpp"

namespace dpointnet {

struct SampleStimulus {
  double value[5] = {0, 0, 0, 0, 0};  // in the order of stimulus_parameter_names()
};

inline SampleStimulus sample_stimulus(const StimulusSpec& st, std::uint32_t seed, const std::string& input,
                                      std::int64_t sample) {
  SampleStimulus s;
  const auto& names = stimulus_parameter_names();
  for (std::size_t k = 0; k < names.size(); ++k) {
    const StimulusParameter& p = stimulus_parameter(st, k);
    const double u =
        p.kind == StimulusParameter::Kind::Uniform
            ? counter_uniform01(seed, fnv1a32(input + "." + names[k]), 0u, 0u, static_cast<std::uint32_t>(sample))
            : 0.5;
    s.value[k] = p.at(sample, u);
  }
  return s;
}

}  // namespace dpointnet
