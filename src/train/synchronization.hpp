// The synchronization loss of the V1 papers (docs/training.md, "Synchronization"): Fano factors of the spike
// counts of random pools of excitatory neurons, one pool per sample of the sampling plan, against the Neuropixels
// Fano factors per bin size.
#pragma once
#include <memory>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/util/json_fields.hpp"

namespace dpointnet {

class Loss;

// The keys of a Synchronization loss (targets, n_samples, seed, core_radius, pool; its window: pre_ms/post_ms,
// read before these), read into a LossSpec with the bin sizes, the targets and the pool.
fields::Table<LossSpec> synchronization_fields(const SimulationConfig& cfg, const Network& net);

std::unique_ptr<Loss> make_synchronization_loss(const LossSpec& s);

// The Neuropixels Fano factors of a 300 ms window per bin size (V1-PAPER.md 3.3), evoked or spontaneous.
const std::vector<double>& fano_targets_300ms(bool evoked);

}  // namespace dpointnet
