// Host threads against the cores the process may run on and the cores it actually gets: more threads than cores make
// every parallel region's barrier wait for a descheduled thread (a time slice, not microseconds). At start-up the
// host threads are fitted to both: the affinity mask, and the CPU time a short probe obtains while other processes
// compete for the same cores. Results do not depend on the thread count.
#pragma once
#include <string>

namespace dpointnet {

// The cores of this process's affinity mask (sched_getaffinity); 0 when unknown.
int usable_cores();

// The warning for `threads` host threads on `cores` usable cores (naming OMP_NUM_THREADS); empty when the threads
// fit or the cores are unknown (0).
std::string oversubscription_warning(int threads, int cores);

// Logs that warning for the default execution space's threads (host backends only).
void warn_if_oversubscribed();

// `threads` threads spinning together for `seconds` of wall time: the CPU seconds they obtained, summed, divided by
// the wall time (cores' worth of CPU; at most the usable cores, less when other processes share them).
double probe_cores_obtained(int threads, double seconds);

// The threads to run for `requested` threads on `usable` cores (0: unknown) when a probe of min(requested, usable)
// threads obtained `obtained` cores: all of them when the probe got its full share within noise (0.4 of a core),
// else the whole cores it got (rounded from a quarter up), at least 1.
int threads_for_cores(int requested, int usable, double obtained);

// The host threads of this process: what --threads (`cli_threads` > 0), KOKKOS_NUM_THREADS or OpenMP
// (OMP_NUM_THREADS) asks for, fitted to the usable and obtained cores unless DPOINTNET_ADAPT_THREADS=0. For a default
// space without host threads, requested = threads = 0 (nothing probed). A value of DPOINTNET_ADAPT_THREADS other than 0
// or 1 is an InputError.
struct HostThreads {
  int requested = 0;
  int threads = 0;
  int usable = 0;
  double obtained = 0;  // cores obtained by the probe (0: not probed)
};
HostThreads fit_host_threads(int cli_threads);

// The start-up line about a fitted thread count (naming OMP_NUM_THREADS and DPOINTNET_ADAPT_THREADS); empty when the
// requested threads run.
std::string host_threads_message(const HostThreads& h);

// Logs that line (a warning) and, at debug level, the probe's figures; each line starts with `prefix`.
void log_host_threads(const HostThreads& h, const std::string& prefix = "");

inline constexpr const char* kAdaptThreadsVariable = "DPOINTNET_ADAPT_THREADS";

}  // namespace dpointnet
