// What a training run leaves in OUTPUT_DIR for the run report (scripts/report, docs/training.md "Run report"),
// besides metrics.csv and rates.h5; written by the chief after the training loop, whatever ended it:
//  * run_summary.json: the build, the network and run sizes, why and where the run ended, wall time per phase,
//    throughput, the predicted peak device memory (`dpointnet plan`) and the measured peak resident memory;
//  * weights.h5: per surface (recurrent, or an input's source population), the initial and the final weights in
//    pA, in read order (every stride-th edge when a surface has more than kReportEdges);
//  * spikes_before.h5 / spikes_after.h5: SONATA spike files of one sample (global sample 0, the inputs of the
//    first update's first micro-batch) simulated from rest over warm-up + window with the initial and with the
//    final weights, so that the raster before and after training sees the same input spikes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/prepared_run.hpp"
#include "dpointnet/train/train_config.hpp"

namespace dpointnet {

inline constexpr std::size_t kReportEdges = 1000000;  // weights.h5 keeps at most this many edges per surface

struct RunRecord {
  bool valid = false;   // the loop ran (not a gradient check); set by the chief
  std::string outcome;  // "completed", "preempted by SIGTERM", "stopped after N updates (--stop-after)"
  std::int64_t start_update = 0, end_update = 0;  // updates start_update + 1 .. end_update ran in this process
  int processes = 1, replicas = 1;
  std::int64_t global_batch = 0;
  double wall_s = 0;  // the training loop, first to last update of this run
  double t_forward = 0, t_recompute = 0, t_backward = 0, t_update = 0, t_allreduce = 0;  // sums over updates
  double predicted_peak_bytes = 0;                                                       // plan_memory(...).total()
  double peak_rss_bytes = 0;                                                             // at the end of the loop
  std::vector<std::string> surfaces;          // per projection: "recurrent" or the source population
  std::vector<bool> trainable;                // per projection
  std::vector<std::vector<double>> final_pA;  // per projection, read order
};

// run_summary.json (atomically).
void write_run_summary(const std::string& path, const RunRecord& rec, const SimulationConfig& cfg, const Network& net,
                       const TrainConfig& tc);
// weights.h5 (atomically): /<surface>/initial_pA, /<surface>/final_pA (float64) with attributes n_edges, stride,
// trainable on the group.
void write_weights_file(const std::string& path, const RunRecord& rec, const Network& net);
// spikes_before.h5 and spikes_after.h5 in dir (see above), with the run's inputs (condition 0 when there are
// conditions: micro-batch 0 runs it).
template <class Real>
void write_sample_rasters(const std::string& dir, const RunRecord& rec, const PreparedRun& run);

}  // namespace dpointnet
