// The LGN units of a visual network: the Allen V1 model's 14 filter classes on a block of 8 x 8 degree tiles,
// with the node attributes that the LGN filter model reads (docs/generator.md, "Visual networks").
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dpointnet::generator {

// The attributes in the order they are drawn and written (group 0 of lgn_nodes.h5, float64 each).
enum LgnAttribute : int {
  kLgnX,
  kLgnY,
  kLgnSpatialSize,
  kLgnKpeaksDom0,
  kLgnKpeaksDom1,
  kLgnWeightDom0,
  kLgnWeightDom1,
  kLgnDelayDom0,
  kLgnDelayDom1,
  kLgnKpeaksNonDom0,
  kLgnKpeaksNonDom1,
  kLgnWeightNonDom0,
  kLgnWeightNonDom1,
  kLgnDelayNonDom0,
  kLgnDelayNonDom1,
  kLgnTuningAngle,
  kLgnSfSep,
  kNumLgnAttributes
};
extern const char* const kLgnAttributeNames[kNumLgnAttributes];

struct LgnNodes {
  int tiles_x = 0, tiles_y = 0;
  double x0 = 0, y0 = 0;          // lower-left corner of the tile block (degrees)
  std::vector<std::uint8_t> cls;  // index into kLgnClasses
  std::vector<double> attr[kNumLgnAttributes];
  std::size_t size() const { return cls.size(); }
};

// The builder's layout (node_funcs.py:27-269, build_network.py add_nodes_lgn): class by class in
// kLgnClasses order, tile by tile (x outer, y inner), per_tile units per tile. Per unit: x, y uniform in its tile;
// spatial_size triangular(min, min + 1, max) or the constant size; every fitted temporal parameter x U(0.975,
// 1.025); composite classes also the non-dominant subunit's, sf_sep = nominal x U(0.975, 1.025) and
// tuning_angle U(0, 360); NaN for what a class does not have. Stream kPurposeLgnNodes.
LgnNodes make_lgn_nodes(int tiles_x, int tiles_y, std::uint32_t seed);

// node_type_id of every unit (kLgnNodeTypeBase + class) and the named attribute columns, for writing.
std::vector<std::uint64_t> lgn_node_type_ids(const LgnNodes& lgn);
std::vector<std::pair<std::string, std::vector<double>>> lgn_attribute_columns(const LgnNodes& lgn);

// lgn_node_types.csv of a visual network: one virtual node type per class.
std::string lgn_node_types_csv();

}  // namespace dpointnet::generator
