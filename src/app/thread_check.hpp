// Host threads against the cores the process may run on: more threads than cores make every parallel region's
// barrier wait for a descheduled thread (a time slice, not microseconds), so a run is told at start-up.
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

}  // namespace dpointnet
