// Resident memory of this process, for the metrics log and the run summary.
#pragma once
#include <sys/resource.h>

namespace dpointnet {

// Peak resident set size of this process so far, bytes (getrusage; Linux reports ru_maxrss in KiB). 0 when the
// system does not tell.
inline double peak_rss_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

}  // namespace dpointnet
