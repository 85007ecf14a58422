// An LGN input prepared on the host: its cells flattened into per-subunit tables on the stimulus' pixel grid,
// and the movie's frames (docs/visual-input.md).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/lgn_filters.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

// The cells of a population as flat tables, unit u owning subunits [sub_offset[u], sub_offset[u + 1]) (at most
// two). Per subunit: its axis weights (columns from col_first, rows from row_first; offsets into colw / roww),
// amplitude, spontaneous rate and temporal kernel (offsets into kernel, trailing zeros cut).
struct LgnTables {
  LgnScreen screen;
  std::int64_t n_units = 0;
  std::vector<std::int32_t> sub_offset;
  std::vector<double> amplitude, spont;
  std::vector<std::int32_t> col_first, row_first, col_len, row_len, kernel_len;
  std::vector<std::int64_t> col_off, row_off, kernel_off;
  std::vector<double> colw, roww, kernel;
  std::int64_t n_subunits() const { return static_cast<std::int64_t>(amplitude.size()); }
};

LgnTables make_lgn_tables(const std::vector<LgnCell>& cells, const LgnScreen& screen);

// A movie's frames, values about grey 0, [frames][rows][cols] row-major.
struct LgnMovie {
  std::int64_t frames = 0, rows = 0, cols = 0;
  std::vector<float> data;
};

struct LgnInput {
  std::shared_ptr<const LgnTables> tables;
  std::shared_ptr<const LgnMovie> movie;  // movie stimuli only
};

// The LGN input `in` on population `pop`: its cells (read_lgn_cells), the stimulus' screen and, for a movie,
// its frames (checked: a 3-D dataset of finite values in [-1, 1], at least 2 x 2 pixels). Tables and movies are
// shared between inputs and conditions that ask for the same ones. `n_steps` and `dt` check pre_ms + post_ms.
LgnInput prepare_lgn_input(const SimulationConfig& cfg, const InputSpec& in, const Population& pop,
                           std::int64_t n_steps, double dt);

}  // namespace dpointnet
