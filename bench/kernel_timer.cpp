// A Kokkos Tools library (not a test, no Kokkos dependency): the wall time of every labelled kernel, summed
// per label and printed to stderr at Kokkos::finalize, largest first. Kernels are timed from their begin to
// their end callback, so on an asynchronous backend a kernel's time is only its launch unless the caller fences
// (the host backends, which docs/performance.md measures with it, run kernels synchronously).
//
//   KOKKOS_PROFILE_LIBRARY=build/libdpointnet-kernel-timer.so build/dpointnet-bench-train ...   (Kokkos 3.x)
//   KOKKOS_TOOLS_LIBS=build/libdpointnet-kernel-timer.so build/dpointnet-bench-train ...        (Kokkos 4.x)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
struct Totals {
  double seconds = 0;
  long calls = 0;
};
std::mutex g_mutex;
std::map<std::string, Totals> g_totals;
std::map<std::uint64_t, std::pair<std::string, Clock::time_point>> g_open;
std::uint64_t g_next = 1;

void begin(const char* name, std::uint64_t* id) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  *id = g_next++;
  g_open[*id] = {name, Clock::now()};
}
void end(std::uint64_t id) {
  const auto now = Clock::now();
  const std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = g_open.find(id);
  if (it == g_open.end()) return;
  Totals& t = g_totals[it->second.first];
  t.seconds += std::chrono::duration<double>(now - it->second.second).count();
  ++t.calls;
  g_open.erase(it);
}
}  // namespace

extern "C" {
void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {}
void kokkosp_begin_parallel_for(const char* name, std::uint32_t, std::uint64_t* id) { begin(name, id); }
void kokkosp_end_parallel_for(std::uint64_t id) { end(id); }
void kokkosp_begin_parallel_reduce(const char* name, std::uint32_t, std::uint64_t* id) { begin(name, id); }
void kokkosp_end_parallel_reduce(std::uint64_t id) { end(id); }
void kokkosp_begin_parallel_scan(const char* name, std::uint32_t, std::uint64_t* id) { begin(name, id); }
void kokkosp_end_parallel_scan(std::uint64_t id) { end(id); }
void kokkosp_finalize_library() {
  std::vector<std::pair<std::string, Totals>> rows(g_totals.begin(), g_totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  double total = 0;
  for (const auto& r : rows) total += r.second.seconds;
  std::fprintf(stderr, "kernel-timer: %.3f s in %zu kernel labels\n", total, rows.size());
  for (const auto& r : rows)
    std::fprintf(stderr, "kernel-timer: %9.4f s %5.1f %% %8ld calls  %s\n", r.second.seconds,
                 total > 0 ? 100.0 * r.second.seconds / total : 0.0, r.second.calls, r.first.c_str());
}
}
