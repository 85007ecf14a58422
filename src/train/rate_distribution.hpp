// The rate-distribution loss (docs/training.md, "Losses"): per node type (or group of node types sharing a
// node-types column value), the sorted firing rates of the type's
// neurons, pooled over every sample of the update (global batch, all micro-batches) and the window, against the
// quantiles of an observed rate distribution read from a file. It is not a mean of per-sample terms, so the
// trainer pools the spike counts (and the parallel layer reduces them over replicas) before it is evaluated.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/util/json_fields.hpp"

namespace dpointnet {

class Loss;

// The group value of every simulated node type: its `column` in the node types tables of the recurrent
// populations (node_type_id itself by default). A missing column or an empty cell is an error naming the table.
std::map<std::int64_t, std::string> node_type_groups(const SimulationConfig& cfg, const Network& net,
                                                     const std::string& column, const std::string& section);

// Observed rates (Hz) per group value, sorted ascending, read from `file`: a space-separated table with the
// columns <group_by> and rate_hz (one row per observed cell), or an HDF5 file with datasets /node_type_id and
// /rate_hz of equal length (group_by node_type_id), or with one dataset /observed/<group value> per group (any
// group_by; the layout rates.h5 writes). Every group of `groups` needs at least one observation. Errors name the
// file and the config section.
std::map<std::string, std::vector<double>> read_observed_rates(const std::string& file, const std::string& config,
                                                               const std::string& section, const std::string& group_by,
                                                               const std::map<std::int64_t, std::string>& groups);

// The keys of a RateDistribution loss (group_by, target_file, penalty, delta), read into a LossSpec; the
// observed rates of every group are read with them.
fields::Table<LossSpec> rate_distribution_fields(const SimulationConfig& cfg, const Network& net);

std::unique_ptr<Loss> make_rate_distribution_loss(const LossSpec& s, const Network& net);

}  // namespace dpointnet
