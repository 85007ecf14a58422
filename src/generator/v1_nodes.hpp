// The V1 nodes of a generated network: types in node id blocks, positions in the column, tuning angles.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dpointnet/generator/plan.hpp"

namespace dpointnet::generator {

struct V1Nodes {
  std::vector<std::uint8_t> glif;         // index into kCellTypes: dynamics, E/I, weight scale
  std::vector<std::uint8_t> visual_type;  // index into kVisualTypes (visual mode; empty otherwise)
  std::vector<std::uint64_t> node_type_id;
  std::vector<double> x, y, z, tuning;  // um (y = -depth), degrees
  bool inhibitory(std::size_t i) const;
};

// Default mode: the five Allen types in blocks, uniform in the kColumnRadius cylinder at depths kDepthTop ..
// kDepthBottom (stream kPurposeNodes). Visual mode: the 17 kVisualTypes in blocks, uniform in the disc of
// plan.column_radius, depth uniform in the type's layer (stream kPurposeVisualNodes). Tuning U(0, 360) in both.
V1Nodes place_v1_nodes(const Plan& plan, std::uint32_t seed);

// v1_node_types.csv of either mode.
std::string v1_node_types_csv(bool visual);

}  // namespace dpointnet::generator
