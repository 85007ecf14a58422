// Chooses the target blocks of the host spike adjoint by timing them (target_blocks.hpp says why: the count that
// pays depends on the machine's caches). Each candidate's blocked copy is built in turn and the spike adjoint run
// on it for a few reverse steps of the caller's own buffers; the copies are bitwise equivalent (same sums in the
// same order), so the choice changes only the speed.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "dpointnet/device/spike_adjoint.hpp"
#include "dpointnet/device/target_blocks.hpp"

namespace dpointnet::device {

struct TargetBlockTiming {
  int n_blocks = 1;
  double seconds_per_step = 0;  // the fastest single step (a busy machine only ever adds time)
};

// The result of choose_target_blocks: the count and the timings behind it (empty when nothing was timed).
struct TargetBlockChoice {
  int n_blocks = 1;
  std::vector<TargetBlockTiming> timings;
  double seconds = 0;  // wall time of the calibration
  // "1: 3.09 ms, 2: 3.05 ms, ...": each timed count and its fastest step (the log and the benchmark print it)
  std::string timings_text() const {
    std::string s;
    char buf[64];
    for (const auto& t : timings) {
      std::snprintf(buf, sizeof buf, "%s%d: %.3g ms", s.empty() ? "" : ", ", t.n_blocks, 1e3 * t.seconds_per_step);
      s += buf;
    }
    return s;
  }
};

// A candidate beats one with fewer blocks only by more than this fraction (the timings of a busy machine vary by a
// few percent; fewer blocks use less memory).
inline constexpr double kTargetBlockMargin = 0.03;

// Picks from timings (candidates in increasing count): the fastest, unless one with fewer blocks is within
// kTargetBlockMargin of it.
inline int pick_target_blocks(const std::vector<TargetBlockTiming>& timings) {
  if (timings.empty()) return 1;
  double best = timings[0].seconds_per_step;
  for (const auto& t : timings) best = std::min(best, t.seconds_per_step);
  for (const auto& t : timings)
    if (t.seconds_per_step <= best * (1 + kTargetBlockMargin)) return t.n_blocks;
  return timings[0].n_blocks;
}

// Times the spike adjoint of the reverse steps t_first .. t_first + steps - 1 (make(t): the functor of step t,
// without target blocks) one step at a time with each candidate count, rounds times in alternating order, after one
// untimed step per candidate and round (the blocked copy was just written), each step after evict() (in a run the
// other kernels of a reverse step pass between two spike adjoints and evict the caches: evict() writes as much
// memory as the last-level cache holds); a candidate's time is its fastest step. Host shapes only.
template <class Real, class Acc, class ExecSpace, class MakeFunctor, class Evict>
TargetBlockChoice choose_target_blocks(const ExecSpace& space,
                                       const GroupedEdges<Real, typename ExecSpace::memory_space>& e, int D,
                                       std::int64_t n_targets, const std::vector<int>& candidates,
                                       const MakeFunctor& make, const Evict& evict, std::int64_t t_first, int steps,
                                       int rounds = 2) {
  static_assert(compat::host_execution<ExecSpace>, "target blocks are a host shape");
  using clock = std::chrono::steady_clock;
  TargetBlockChoice choice;
  if (candidates.size() < 2 || steps < 1) return choice;
  const auto c0 = clock::now();
  for (int c : candidates) choice.timings.push_back({c, 1e300});
  Kokkos::Profiling::pushRegion("dpointnet::calibrate_target_blocks");
  for (int round = 0; round < rounds; ++round)
    for (std::size_t q = 0; q < candidates.size(); ++q) {
      const std::size_t i = round % 2 == 0 ? q : candidates.size() - 1 - q;
      auto f = make(t_first);
      f.tb = target_blocks(space, e, D, n_targets, block_targets_for(n_targets, candidates[i]),
                           "edges.recurrent.calibration");
      spike_adjoint(space, f, KernelShape::Host);
      space.fence();
      for (int k = 0; k < steps; ++k) {
        const auto tb = f.tb;
        f = make(t_first + k);
        f.tb = tb;
        evict();  // untimed
        const auto s0 = clock::now();
        spike_adjoint(space, f, KernelShape::Host);
        space.fence();
        const double s = std::chrono::duration<double>(clock::now() - s0).count();
        choice.timings[i].seconds_per_step = std::min(choice.timings[i].seconds_per_step, s);
      }
    }
  Kokkos::Profiling::popRegion();
  choice.n_blocks = pick_target_blocks(choice.timings);
  choice.seconds = std::chrono::duration<double>(clock::now() - c0).count();
  return choice;
}

}  // namespace dpointnet::device
