// The start-up warning of more host threads than usable cores (app/thread_check): its wording and when it is given;
// the usable cores against the affinity mask the kernel reports for this process.
#include <gtest/gtest.h>

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
