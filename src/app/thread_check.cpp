#include "dpointnet/app/thread_check.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <type_traits>
#include <vector>
#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#include "dpointnet/util/error.hpp"
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

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

double probe_cores_obtained(int threads, double seconds) {
  using clock = std::chrono::steady_clock;
  threads = std::max(threads, 1);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> share(static_cast<std::size_t>(threads), 0.0);
  clock::time_point t0, deadline;
  // The threads spin for `seconds` / 2 first, so that the scheduler has spread them over the cores (a new thread
  // starts on its parent's core); then one window [t0, deadline) for all: each reads its CPU clock when it sees the
  // window open and its wall clock when it leaves, so that neither thread creation nor joins count, but a thread
  // that waits for a core loses that time (as it would at a kernel's barrier).
  const auto spin = [&](int i) {
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) {
    }
    auto t = clock::now();
    while ((t = clock::now()) < t0) {
    }
    const double c0 = thread_cpu_seconds();
    while ((t = clock::now()) < deadline) {
    }
    const double wall = std::chrono::duration<double>(t - t0).count();
    share[static_cast<std::size_t>(i)] = wall > 0 ? (thread_cpu_seconds() - c0) / wall : 0.0;
  };
  std::vector<std::thread> helpers;
  for (int i = 1; i < threads; ++i) helpers.emplace_back(spin, i);
  while (ready.load() < threads - 1) std::this_thread::yield();
  const auto span = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  t0 = clock::now() + span / 2;
  deadline = t0 + span;
  go.store(true, std::memory_order_release);
  spin(0);
  for (auto& t : helpers) t.join();
  double sum = 0;
  for (double c : share) sum += std::min(c, 1.0);
  return sum;
}

int threads_for_cores(int requested, int usable, double obtained) {
  const int cap = usable > 0 ? std::min(requested, usable) : requested;
  if (cap <= 1) return std::max(cap, 1);
  if (obtained >= cap - 0.4) return cap;
  return std::clamp(static_cast<int>(std::floor(obtained + 0.25)), 1, cap);
}

HostThreads fit_host_threads(int cli_threads) {
  HostThreads h;
#if defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::OpenMP>) {
    h.requested = cli_threads > 0 ? cli_threads : omp_get_max_threads();
    if (const char* k = std::getenv("KOKKOS_NUM_THREADS"); k != nullptr && cli_threads <= 0) {
      char* end = nullptr;
      const long n = std::strtol(k, &end, 10);
      if (end != k && *end == '\0' && n > 0 && n < 1 << 20) h.requested = static_cast<int>(n);  // Kokkos' own
    }
  }
#else
  (void)cli_threads;
#endif
  h.threads = h.requested;
  bool adapt = true;
  if (const char* v = std::getenv(kAdaptThreadsVariable)) {
    const std::string s(v);
    if (s != "0" && s != "1")
      throw InputError(
          fmt::format("{}='{}': expected 0 (keep the requested host threads) or 1 (fit them to the "
                      "cores this process gets; the default)",
                      kAdaptThreadsVariable, s));
    adapt = s == "1";
  }
  if (h.requested <= 1 || !adapt) return h;
  h.usable = usable_cores();
  const int probe_threads = h.usable > 0 ? std::min(h.requested, h.usable) : h.requested;
  // One probe of 20 ms (after 10 ms of spreading the threads) when it gets nearly every core; else the median of
  // three: a competitor that is there stays there, a process that passes changes one probe.
  if (probe_threads <= 1) {  // one usable core: nothing to probe
    h.threads = threads_for_cores(h.requested, h.usable, 0.0);
    return h;
  }
  double probe[3] = {probe_cores_obtained(probe_threads, 0.02), 0, 0};
  h.obtained = probe[0];
  if (probe[0] < probe_threads - 0.2) {
    probe[1] = probe_cores_obtained(probe_threads, 0.02);
    probe[2] = probe_cores_obtained(probe_threads, 0.02);
    std::sort(probe, probe + 3);
    h.obtained = probe[1];
  }
  h.threads = threads_for_cores(h.requested, h.usable, h.obtained);
  return h;
}

std::string host_threads_message(const HostThreads& h) {
  if (h.threads == h.requested) return {};
  const int probed = h.usable > 0 ? std::min(h.requested, h.usable) : h.requested;
  std::string why;
  if (h.usable > 0 && h.requested > h.usable)
    why = fmt::format("{} usable core{} (this process's CPU affinity)", h.usable, h.usable == 1 ? "" : "s");
  if (h.obtained > 0 && h.threads < probed)
    why += fmt::format("{}{} threads obtained {:.2f} cores in a 20 ms probe (other processes are running on them)",
                       why.empty() ? "" : "; ", probed, h.obtained);
  return fmt::format(
      "running {} host thread{} instead of the {} requested: {}; threads on shared cores wait for each "
      "other at every kernel. Results do not depend on the thread count; {}=0 keeps the requested "
      "threads (--threads, KOKKOS_NUM_THREADS or OMP_NUM_THREADS)",
      h.threads, h.threads == 1 ? "" : "s", h.requested, why, kAdaptThreadsVariable);
}

void log_host_threads(const HostThreads& h, const std::string& prefix) {
  if (const std::string m = host_threads_message(h); !m.empty()) log::get()->warn("{}{}", prefix, m);
  if (h.obtained > 0)
    log::get()->debug("{}host threads: {} requested, {} usable cores, the probe obtained {:.3f} cores: {}", prefix,
                      h.requested, h.usable, h.obtained, h.threads);
}

}  // namespace dpointnet
