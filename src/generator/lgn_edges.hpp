// The LGN -> V1 projection of a visual network: the Allen V1 model's rule that gives every V1 cell an oriented
// receptive field of ON/OFF subfields (docs/generator.md, "Visual networks").
#pragma once
#include <cstdint>

#include "dpointnet/generator/edge_files.hpp"
#include "dpointnet/generator/lgn_nodes.hpp"
#include "dpointnet/generator/plan.hpp"
#include "dpointnet/generator/v1_nodes.hpp"

namespace dpointnet::generator {

// LGN connections of a cell of kVisualTypes[t] when the LGN has enough candidates:
// round-half-even(kE4LgnSynapses x synapse_ratio_against_e4 x (yule - 1) / yule).
int lgn_sources_per_target(int visual_type);

// The edges, target by target, sorted by source within a target, with nsyns per edge, weights per synapse
// (kVisualLgnTypes mean x weight_scale[glif type of the target]) and delay max(1.7 ms, plan.min_delay).
// `capped` counts the targets that got fewer sources than lgn_sources_per_target (too few candidates).
EdgeSet connect_lgn_to_v1(const LgnNodes& lgn, const V1Nodes& v1, const Plan& plan, std::uint32_t seed,
                          const double* weight_scale, std::size_t* capped);

}  // namespace dpointnet::generator
