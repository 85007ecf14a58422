// Preemption by the batch system: SIGTERM, or SIGUSR1 (Slurm's --signal=USR1@SECONDS), during training makes the
// run finish its current update, write a complete checkpoint, log where to resume and exit with
// kExitPreempted (75). The handler only records the signal; the training loop reads it at update boundaries.
#pragma once

namespace dpointnet {

class PreemptionGuard {
 public:
  PreemptionGuard();  // installs the handlers (the previous ones come back on destruction)
  ~PreemptionGuard();
  PreemptionGuard(const PreemptionGuard&) = delete;
  PreemptionGuard& operator=(const PreemptionGuard&) = delete;
  // The signal received since installation (0: none).
  static int received();
  static const char* name(int sig);
};

}  // namespace dpointnet
