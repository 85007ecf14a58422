// `dpointnet train`: the training run (metrics log, checkpoints, SONATA export), resume, gradient check.
#pragma once
#include <string>

namespace dpointnet {

struct TrainCommand {
  std::string config;
  std::string resume;              // checkpoint to continue from
  std::string gradient_check;      // write loss/gradients/first update of one batch to this HDF5 file and stop
  int gradient_check_updates = 1;  // with gradient_check: updates to run (weights after each are written)
  bool overwrite = false;
  bool progress = true;
  int stop_after = 0;  // stop (as if interrupted) after this many updates of this process; 0: no
};

class ReplicaContext;
// ctx: the cross-process context of an MPI run (null for the serial driver).
int run_train(const TrainCommand& cmd, ReplicaContext* ctx = nullptr);

}  // namespace dpointnet
