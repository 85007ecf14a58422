// Everything that differs between the Kokkos versions dpointnet supports (3.4 .. 4.x) lives here.
#pragma once
#include <Kokkos_Core.hpp>
#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#include <string>
#include <type_traits>

#if defined(KOKKOS_VERSION) && KOKKOS_VERSION >= 40000
#define DPOINTNET_KOKKOS4 1
#else
#define DPOINTNET_KOKKOS4 0
#endif

namespace dpointnet::compat {

// Kokkos 4 moved the math functions into Kokkos::; 3.x has them in Kokkos::Experimental.
#if DPOINTNET_KOKKOS4 || (KOKKOS_VERSION >= 30700)
using Kokkos::exp;
using Kokkos::fabs;
using Kokkos::fmax;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::exp;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::fmax;
using Kokkos::Experimental::sqrt;
#endif

inline std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

// Kokkos::InitializationSettings exists from 3.7 on; 3.4 takes InitArguments.
struct InitOptions {
  int num_threads = -1;
  int device_id = -1;
};

inline void initialize(const InitOptions& o) {
#if DPOINTNET_KOKKOS4 || (KOKKOS_VERSION >= 30700)
  Kokkos::InitializationSettings s;
  if (o.num_threads > 0) s.set_num_threads(o.num_threads);
  if (o.device_id >= 0) s.set_device_id(o.device_id);
  Kokkos::initialize(s);
#else
  Kokkos::InitArguments a;
  a.num_threads = o.num_threads > 0 ? o.num_threads : -1;
  a.device_id = o.device_id;
  Kokkos::initialize(a);
#endif
}

// The threads of an execution space instance (Kokkos 3.x: OpenMP reports 0 outside parallel regions).
template <class ExecSpace>
int concurrency(const ExecSpace& space) {
#if DPOINTNET_KOKKOS4
  return space.concurrency();
#else
  (void)space;
#if defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same<ExecSpace, Kokkos::OpenMP>::value) return omp_get_max_threads();
#endif
  return ExecSpace::concurrency();
#endif
}
inline int concurrency() { return concurrency(Kokkos::DefaultExecutionSpace()); }

// Whether kernels of this execution space run on the host (then they take their host shape). Keyed on the
// execution space, not on its memory space: a CUDA build whose memory is host-accessible (UVM) runs the device
// shapes.
template <class ExecSpace>
inline constexpr bool host_execution = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
// Samples per register block in the host shape of the samples-fastest kernels.
inline constexpr int kHostSampleLanes = 16;

// Team shape for kernels whose vector lanes run over the B samples: host spaces vectorize the lane loop
// themselves (one thread, vector length 1); devices get B lanes (a power of two, at most 32) and several
// threads per team.
template <class ExecSpace>
struct SampleTeams {
  static constexpr bool host = host_execution<ExecSpace>;
  static int vector_length(int B) {
    if (host) return 1;
    int v = 1;
    while (v < B && v < 32) v *= 2;
    return v;
  }
  static int team_size(int B) { return host ? 1 : (vector_length(B) >= 32 ? 4 : 128 / vector_length(B)); }
  // Teams of team_size(B) threads covering `items` work items.
  static Kokkos::TeamPolicy<ExecSpace> policy(const ExecSpace& space, std::int64_t items, int B) {
    const int ts = team_size(B);
    return Kokkos::TeamPolicy<ExecSpace>(space, static_cast<int>((items + ts - 1) / ts), ts, vector_length(B));
  }
};

}  // namespace dpointnet::compat

// True when Kokkos::Serial is enabled and is not the default execution space.
#if defined(KOKKOS_ENABLE_SERIAL) &&                                                                   \
    (defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_THREADS) || defined(KOKKOS_ENABLE_CUDA) || \
     defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL))
#define DPOINTNET_SECOND_SERIAL_SPACE 1
#else
#define DPOINTNET_SECOND_SERIAL_SPACE 0
#endif
