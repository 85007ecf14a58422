// Builds a training run's inputs once (train/prepared_run.hpp): every input and condition override read and
// checked against the network, before any output is written.
#pragma once
#include "dpointnet/train/prepared_run.hpp"

namespace dpointnet {

// `replicas`: the replicas of the job (1 for serial training); `batch`: samples per replica and micro-batch
// (0: run.batch_size).
PreparedRun prepare_run(const SimulationConfig& cfg, const Network& net, const TrainConfig& tc, int replicas = 1,
                        int batch = 0);

}  // namespace dpointnet
