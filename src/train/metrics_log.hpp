// metrics.csv: one row per update (step, loss, each loss term, with train.conditions each condition's total and
// terms (loss.<condition>, loss.<condition>.<term>), rate, gradient norm, throughput, time, time per
// phase of the chief replica, for sample-parallel runs the allreduce time, the peak resident memory of the process
// so far, and for float16 runs the loss scale and the skipped optimizer steps). On resume the rows up to the
// checkpoint's step are kept.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "dpointnet/train/trainer.hpp"

namespace dpointnet {

// The loss columns after "loss": train.losses' terms when every condition uses them, then per condition (with
// train.conditions) loss.<name> and loss.<name>.<term>; and the values of one update in that order.
std::vector<std::string> loss_columns(const TrainConfig& tc);
std::vector<double> loss_values(const StepMetrics& m);

class MetricsLog {
 public:
  // keep_until >= 0: keep the existing rows with step <= keep_until (resume); else start a new file.
  // with_loss_scale (float16 runs): the columns loss_scale and skipped at the end.
  MetricsLog(const std::string& path, const std::vector<std::string>& loss_columns, bool with_allreduce,
             std::int64_t keep_until, bool with_loss_scale = false);
  void append(const StepMetrics& m);  // OutputError (naming the file) when the row cannot be written

 private:
  std::string path_;
  std::ofstream out_;
  bool with_allreduce_, with_loss_scale_;
};

}  // namespace dpointnet
