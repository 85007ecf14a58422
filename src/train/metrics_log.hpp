// metrics.csv: one row per update (step, loss, each loss term, rate, gradient norm, throughput, time, time per
// phase of the chief replica, for sample-parallel runs the allreduce time, and the peak resident memory of the
// process so far). On resume the rows up to the checkpoint's step are kept.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "dpointnet/train/trainer.hpp"

namespace dpointnet {

class MetricsLog {
 public:
  // keep_until >= 0: keep the existing rows with step <= keep_until (resume); else start a new file.
  MetricsLog(const std::string& path, const std::vector<std::string>& loss_names, bool with_allreduce,
             std::int64_t keep_until);
  void append(const StepMetrics& m);  // OutputError (naming the file) when the row cannot be written

 private:
  std::string path_;
  std::ofstream out_;
  bool with_allreduce_;
};

}  // namespace dpointnet
