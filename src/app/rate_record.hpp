// The per-neuron firing rates of the first and the last update of a training run, pooled over the global batch
// and the window, written to OUTPUT_DIR/rates.h5 for the plots (scripts/plot_training.py draws the per-type
// rate distributions against the RateDistribution targets or the TargetFiringRate targets).
#pragma once
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/parallel/replica_set.hpp"
#include "dpointnet/train/train_config.hpp"

namespace dpointnet {

// Rates (Hz) of the last computed update of every replica, summed over the job: a collective call (every rank
// at the same update).
template <class Real>
std::vector<double> global_rates_hz(ReplicaSet<Real>& rs, const SimulationConfig& cfg) {
  std::vector<double> c;
  for (int r = 0; r < rs.n_local(); ++r) {
    const auto& v = rs.local(r).update_spike_counts();
    if (c.empty()) c.assign(v.size(), 0.0);
    for (std::size_t i = 0; i < v.size() && i < c.size(); ++i) c[i] += v[i];
  }
  rs.context().allreduce_sum(c.data(), c.size());
  const double per =
      1000.0 / (static_cast<double>(rs.schedule().global_batch()) * static_cast<double>(cfg.n_steps) * cfg.dt);
  for (double& x : c) x *= per;
  return c;
}

// Writes path (atomically: a temporary name, then renamed): /node_type_id, /rates_hz/{first,last} with
// attributes first_update and last_update, /observed/<group value> of a RateDistribution loss (attribute group_by
// on /observed: node_type_id or the node-types column; node_type_ids on each: the simulated types of the group)
// and /target_hz of a TargetFiringRate loss in Hz, when the run has them.
void write_rates_file(const std::string& path, const Network& net, const TrainConfig& tc,
                      const std::vector<double>& first, const std::vector<double>& last, std::int64_t first_update,
                      std::int64_t last_update);

}  // namespace dpointnet
