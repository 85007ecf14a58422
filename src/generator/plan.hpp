// The generator's options, validated and resolved into the sizes it builds (before anything is written).
#pragma once
#include <cstdint>
#include <string>

#include "dpointnet/generator/cell_types.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/generator/visual_types.hpp"

namespace dpointnet::generator {

struct Plan {
  std::int64_t n = 0, n_exc = 0;
  std::int64_t type_count[kNumCellTypes] = {0, 0, 0, 0, 0};
  std::int64_t n_lgn = 0, n_bkg = 0;
  double k_rec = 0;  // effective mean recurrent in-degree
  double k_lgn = 0;  // effective mean LGN in-degree
  std::int64_t k_bkg = 0;
  double min_delay = 1.0;
  // visual mode
  bool visual = false;
  int lgn_tiles_x = 0, lgn_tiles_y = 0;
  double column_radius = kColumnRadius;
  std::int64_t visual_count[kNumVisualTypes] = {};  // neurons per kVisualTypes entry (node id blocks in that order)
};

// Throws InputError naming the option and its command-line flag.
Plan make_plan(const GeneratorOptions& o);

// A number as written into the generated tables (10 significant digits).
std::string num(double v);

}  // namespace dpointnet::generator
