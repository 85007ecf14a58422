#include "dpointnet/app/thread_check.hpp"

#include <sched.h>

#include <Kokkos_Core.hpp>

#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"

namespace dpointnet {

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

std::string oversubscription_warning(int threads, int cores) {
  if (cores <= 0 || threads <= cores) return {};
  return std::to_string(threads) + " threads on " + std::to_string(cores) + " usable core" + (cores == 1 ? "" : "s") +
         " (this process's CPU affinity): threads would wait for each other at every kernel; set OMP_NUM_THREADS to " +
         std::to_string(cores) + " or fewer (under mpirun give each rank its cores, e.g. --map-by slot:PE=N)";
}

void warn_if_oversubscribed() {
  if constexpr (compat::host_execution<Kokkos::DefaultExecutionSpace>) {
    const std::string w = oversubscription_warning(compat::concurrency(), usable_cores());
    if (!w.empty()) log::get()->warn("{}", w);
  }
}

}  // namespace dpointnet
