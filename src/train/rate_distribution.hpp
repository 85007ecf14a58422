// The rate-distribution loss (docs/training.md, "Losses"): per node type, the sorted firing rates of the type's
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

#include "network/network.hpp"

namespace dpointnet {

struct LossSpec;
class Loss;

// Observed rates (Hz) per node_type_id, sorted ascending, read from `file`: a space-separated table with the
// columns node_type_id and rate_hz (one row per observed cell), or an HDF5 file with datasets /node_type_id and
// /rate_hz of equal length. Every simulated node type of `net` needs at least one observation. Errors name the
// file and the config section.
std::map<std::int64_t, std::vector<double>> read_observed_rates(const std::string& file, const std::string& config,
                                                                const std::string& section, const Network& net);

// Parses the keys of a RateDistribution loss into `s` (target_file, penalty, delta).
void parse_rate_distribution(const nlohmann::json& l, const std::string& config, const std::string& section,
                             const Network& net, LossSpec& s);

std::unique_ptr<Loss> make_rate_distribution_loss(const LossSpec& s, const Network& net);

}  // namespace dpointnet
