// The start-up warning of more host threads than usable cores (app/thread_check): its wording and when it is given;
// the usable cores against the affinity mask the kernel reports for this process.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <fstream>
#include <string>

#include "dpointnet/app/thread_check.hpp"

using namespace dpointnet;

TEST(ThreadCheck, WarnsOnlyWhenThreadsExceedTheCores) {
  EXPECT_EQ(oversubscription_warning(2, 2), "");
  EXPECT_EQ(oversubscription_warning(1, 4), "");
  EXPECT_EQ(oversubscription_warning(8, 0), "");  // cores unknown
  const std::string w = oversubscription_warning(4, 2);
  EXPECT_NE(w.find("4 threads on 2 usable cores"), std::string::npos) << w;
  EXPECT_NE(w.find("OMP_NUM_THREADS to 2 or fewer"), std::string::npos) << w;
  EXPECT_NE(oversubscription_warning(2, 1).find("on 1 usable core "), std::string::npos);
}

TEST(ThreadCheck, UsableCoresAreTheAffinityMask) {
  // /proc/self/status: "Cpus_allowed_list:\t0-1" (ranges and single cores)
  std::ifstream in("/proc/self/status");
  std::string line, list;
  while (std::getline(in, line))
    if (line.rfind("Cpus_allowed_list:", 0) == 0) list = line.substr(line.find(':') + 1);
  ASSERT_FALSE(list.empty());
  int count = 0;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::size_t dash = item.find('-');
    count += dash == std::string::npos ? 1 : std::stoi(item.substr(dash + 1)) - std::stoi(item.substr(0, dash)) + 1;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  EXPECT_EQ(usable_cores(), count);
}

TEST(ThreadCheck, ThreadsFitTheCoresObtained) {
  // A full share within noise keeps every requested thread.
  EXPECT_EQ(threads_for_cores(2, 2, 1.98), 2);
  EXPECT_EQ(threads_for_cores(2, 2, 1.70), 2);
  EXPECT_EQ(threads_for_cores(2, 2, 1.62), 2);
  // The scheduler's usual split instead: one thread on a core of its own, one sharing a core -> 1.5 cores.
  EXPECT_EQ(threads_for_cores(2, 2, 1.50), 1);
  // Two threads and one competing busy process on two cores: fair share 2 x 2 / 3 = 1.33 cores -> 1 thread.
  EXPECT_EQ(threads_for_cores(2, 2, 4.0 / 3.0), 1);
  // 16 threads and one competitor on 16 cores: 16 x 16 / 17 = 15.06 cores -> 15; two competitors: 14.2 -> 14.
  EXPECT_EQ(threads_for_cores(16, 16, 256.0 / 17.0), 15);
  EXPECT_EQ(threads_for_cores(16, 16, 256.0 / 18.0), 14);
  // More threads than the affinity mask's cores: the cores (the probe ran one thread per core).
  EXPECT_EQ(threads_for_cores(4, 2, 1.97), 2);
  EXPECT_EQ(threads_for_cores(2, 1, 0.99), 1);
  // Cores unknown: the probe's share alone; never fewer than one thread.
  EXPECT_EQ(threads_for_cores(4, 0, 3.9), 4);
  EXPECT_EQ(threads_for_cores(4, 0, 0.2), 1);
  EXPECT_EQ(threads_for_cores(1, 8, 0.1), 1);
}

TEST(ThreadCheck, TheProbeCannotObtainMoreThanItsCores) {
  // Two spinning threads confined to one core obtain at most that core's time (the kernel's own accounting), and
  // some of it.
  cpu_set_t saved, one;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &saved)) first = c;
  ASSERT_GE(first, 0);
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
  const double obtained = probe_cores_obtained(2, 0.03);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
  EXPECT_LE(obtained, 1.05);
  EXPECT_GT(obtained, 0.05);
}

TEST(ThreadCheck, TheMessageNamesTheCauseAndTheOverride) {
  HostThreads same;
  same.requested = same.threads = 2;
  EXPECT_EQ(host_threads_message(same), "");
  HostThreads busy;
  busy.requested = 2;
  busy.threads = 1;
  busy.usable = 2;
  busy.obtained = 1.31;
  const std::string m = host_threads_message(busy);
  EXPECT_NE(m.find("running 1 host thread instead of the 2 requested"), std::string::npos) << m;
  EXPECT_NE(m.find("2 threads obtained 1.31 cores"), std::string::npos) << m;
  EXPECT_NE(m.find("DPOINTNET_ADAPT_THREADS=0"), std::string::npos) << m;
  HostThreads mask;
  mask.requested = 4;
  mask.threads = 2;
  mask.usable = 2;
  mask.obtained = 1.97;
  const std::string k = host_threads_message(mask);
  EXPECT_NE(k.find("2 usable cores (this process's CPU affinity)"), std::string::npos) << k;
  EXPECT_EQ(k.find("probe"), std::string::npos) << k;
}
