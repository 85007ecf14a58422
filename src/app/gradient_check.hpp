// `train --gradient-check OUT.h5`: K updates on the first K global batches through the replica set; writes the
// losses of each, the gradients of the first, the terminal states of every sample of the first global batch,
// sign violations over all replicas and the weights after each update (chief only).
#pragma once
#include <string>

#include "dpointnet/parallel/replica_set.hpp"

namespace dpointnet {

template <class Real>
void run_gradient_check(ReplicaSet<Real>& rs, const Network& net, const SimulationConfig& cfg, const TrainConfig& tc,
                        const std::string& out, int updates);

}  // namespace dpointnet
