// Observed firing rates for the RateDistribution loss (docs/training.md, "Losses"): the group of every simulated
// node type, the observed rates of every group read from a target file, and the per-rank targets drawn from them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"

namespace dpointnet {

// The group value of every simulated node type: its `column` in the node types tables of the recurrent
// populations (node_type_id itself by default), or with column "cell_type" (merge_l5) / "cell_type" unmerged the
// V1 cell type of its pop_name (network/v1_cell_types.hpp). A missing column or an empty cell is an error naming
// the table.
std::map<std::int64_t, std::string> node_type_groups(const SimulationConfig& cfg, const Network& net,
                                                     const std::string& column, const std::string& section,
                                                     bool merge_l5 = true);

// Observed rates (Hz) per group value, sorted ascending, read from `file`: a space-separated table with the
// columns <group column> (group_by, or `cell_type` for group_by "cell_type") and `rate_column` (one row per
// observed cell; NaN rates are skipped), or an HDF5 file with datasets /node_type_id and /rate_hz of equal length
// (group_by node_type_id), or with one dataset /observed/<group value> per group (any group_by; the layout rates.h5
// writes, '/' in a value written %2F). Every group of `groups` needs at least one observation. Errors name the
// file and the config section.
std::map<std::string, std::vector<double>> read_observed_rates(const std::string& file, const std::string& config,
                                                               const std::string& section, const std::string& group_by,
                                                               const std::string& rate_column,
                                                               const std::map<std::int64_t, std::string>& groups);

// A group value as an HDF5 link name of rates.h5 (/observed/<name>) and back.
std::string observed_link_name(const std::string& group);
std::string observed_group_name(const std::string& link);

// The n targets of a group's ranks from its sorted observed rates: the quantiles at (k + 0.5) / n (numpy's linear
// method), or sampled: n uniforms of numpy's RandomState(seed) mapped through the empirical quantile function
// (interpolation between the sorted observations at equally spaced levels), sorted ascending.
std::vector<double> quantile_targets(const std::vector<double>& observed, std::size_t n);
std::vector<double> sampled_targets(const std::vector<double>& observed, std::size_t n, std::uint32_t seed);

}  // namespace dpointnet
