// The length of the min-delay window of Simulator::run (sim/detail/simulator_window_impl.hpp): the network's
// smallest delay, capped so that the window's drive buffer stays small. Kokkos-free (the memory plan counts it).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dpointnet/network/network.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

// Bytes of the window's drive buffer ([W B][R][N] 64-bit integers) at most: the window is shortened to fit. On
// devices a memory bound; on hosts a cache bound, since the propagation zeroes and adds into the buffer and the
// neuron launch reads it: a buffer that leaves the caches costs more than the launches a longer window saves
// (2-core Xeon, 2 MiB L2 per core: 20,000 neurons at B = 1 fastest at 6 steps of 640 KB; 5,000 neurons at B = 16,
// 2.56 MB a step, fastest step by step; docs/simulation.md).
inline constexpr std::int64_t kMaxWindowBytes = std::int64_t(64) << 20;
inline constexpr std::int64_t kHostWindowBytes = std::int64_t(4) << 20;
inline constexpr std::int64_t window_bytes(bool host) { return host ? kHostWindowBytes : kMaxWindowBytes; }

// The smallest delay (steps) of any edge of the network (D_max when it has no edges).
inline int min_delay_steps(const Network& net) {
  int d = net.max_delay;
  for (const auto& p : net.projections)
    for (int s : p.delay_steps) d = std::min(d, s);
  return std::max(d, 1);
}

// Steps per window: the smallest delay, at most `max_window` (> 0; 0: no cap), with a drive buffer of at most
// `max_bytes` (window_bytes; at least one step).
inline int window_length(const Network& net, int max_window, int batch, int channels, std::int64_t max_bytes) {
  int w = min_delay_steps(net);
  if (max_window > 0) w = std::min(w, max_window);
  const std::int64_t per_step = std::int64_t(8) * batch * channels * net.n_neurons;
  if (per_step > 0) w = static_cast<int>(std::min<std::int64_t>(w, std::max<std::int64_t>(1, max_bytes / per_step)));
  return std::max(w, 1);
}

// DPOINTNET_STEP_WINDOW: unset or empty -> 0 (the network's smallest delay); a positive integer caps the window
// (1: step by step, the reference the window must equal bitwise). Anything else is refused.
inline int step_window_from_environment() {
  const char* v = std::getenv("DPOINTNET_STEP_WINDOW");
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long w = std::strtol(v, &end, 10);
  if (*end != '\0' || w < 1 || w > 1000000)
    throw InputError("DPOINTNET_STEP_WINDOW", "environment", "DPOINTNET_STEP_WINDOW",
                     std::string("must be a positive integer (1: step by step), not '") + v + "'");
  return static_cast<int>(w);
}

}  // namespace dpointnet
