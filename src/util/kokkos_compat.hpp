// Everything that differs between the Kokkos versions dpointnet supports (3.4 .. 4.x) lives here.
#pragma once
#include <Kokkos_Core.hpp>
#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#include <string>
#include <type_traits>
#include <vector>

#if defined(KOKKOS_VERSION) && KOKKOS_VERSION >= 40000
#define DPOINTNET_KOKKOS4 1
#else
#define DPOINTNET_KOKKOS4 0
#endif

namespace dpointnet::compat {

// Kokkos 4 moved the math functions into Kokkos::; 3.x has them in Kokkos::Experimental.
#if DPOINTNET_KOKKOS4 || (KOKKOS_VERSION >= 30700)
using Kokkos::cos;
using Kokkos::exp;
using Kokkos::expm1;
using Kokkos::fabs;
using Kokkos::fmax;
using Kokkos::sin;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::cos;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::expm1;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::fmax;
using Kokkos::Experimental::sin;
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

// A host mirror of `src`, not initialized (the view itself where it is host memory).
template <class View>
auto host_mirror_uninitialized(const View& src) {
#if DPOINTNET_KOKKOS4
  return Kokkos::create_mirror_view(Kokkos::view_alloc(Kokkos::HostSpace(), Kokkos::WithoutInitializing), src);
#else
  return Kokkos::create_mirror_view(Kokkos::HostSpace(), src, Kokkos::WithoutInitializing);
#endif
}

// A host copy of `src` made on the instance `space` (the view itself where it is host memory), complete on
// return: the instance is fenced, not the whole device. (Kokkos 4's create_mirror_view_and_copy with the instance
// in its view_alloc refuses a device instance for a host mirror; 3.x has no such overload and fences globally.)
template <class ExecSpace, class View>
auto mirror_view_and_copy(const ExecSpace& space, const View& src) {
  auto h = host_mirror_uninitialized(src);
  Kokkos::deep_copy(space, h, src);
  space.fence();
  return h;
}

// Whether kernels of this execution space run on the host (then they take their host shape). Keyed on the
// execution space, not on its memory space: a CUDA build whose memory is host-accessible (UVM) runs the device
// shapes.
template <class ExecSpace>
inline constexpr bool host_execution = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

// n execution-space instances for work that may overlap (the local replicas of mirrored training). Device
// backends get independent instances (their own streams) from partition_space (Kokkos 4.1 on: the weights as a
// vector); host backends, and older Kokkos (3.4 has no partition_space), get n copies of `space`: host replicas run one
// after another, and a partitioned host pool would only give each of them fewer threads.
template <class ExecSpace>
std::vector<ExecSpace> make_instances(const ExecSpace& space, int n) {
  if (n < 1) return {};
#if KOKKOS_VERSION >= 40100
  if constexpr (!host_execution<ExecSpace>) {
    std::vector<ExecSpace> out =
        Kokkos::Experimental::partition_space(space, std::vector<int>(static_cast<std::size_t>(n), 1));
    return out;
  }
#endif
  return std::vector<ExecSpace>(static_cast<std::size_t>(n), space);
}

// Samples per register block in the host shape of the samples-fastest kernels.
inline constexpr int kHostSampleLanes = 16;

// The largest team a host backend runs (OpenMP: its threads, at most 64; Serial: 1). Device shapes run on host
// backends only when asked for (tests, DPOINTNET_KERNEL_SHAPE=device); they then take teams of this many threads,
// so that the team splits, index mappings and tails of the device kernels execute.
template <class ExecSpace>
struct TeamSizeProbe {  // an empty team kernel, for team_size_max (a local class is no kernel for nvcc)
  KOKKOS_INLINE_FUNCTION void operator()(const typename Kokkos::TeamPolicy<ExecSpace>::member_type&) const {}
};
template <class ExecSpace>
int host_team_size_max(const ExecSpace& space) {
  static_assert(host_execution<ExecSpace>, "host_team_size_max: a host execution space");
  return Kokkos::TeamPolicy<ExecSpace>(space, 1, 1).team_size_max(TeamSizeProbe<ExecSpace>{}, Kokkos::ParallelForTag{});
}

// A team policy of the device shapes whose team size the backend picks (Kokkos::AUTO); host backends get teams of
// host_team_size_max threads instead (Kokkos::AUTO resolves to one thread there).
template <class ExecSpace, class... Tags>
Kokkos::TeamPolicy<ExecSpace, Tags...> auto_team_policy(const ExecSpace& space, int league, int vector_length = 1) {
  if constexpr (host_execution<ExecSpace>)
    return Kokkos::TeamPolicy<ExecSpace, Tags...>(space, league, host_team_size_max(space), vector_length);
  else
    return Kokkos::TeamPolicy<ExecSpace, Tags...>(space, league, Kokkos::AUTO, vector_length);
}

// Team shape for the device shapes of kernels whose vector lanes run over the B samples: B lanes (a power of two,
// at most 32) and 128 / lanes threads per team (4 at 32 lanes). Host backends (device shapes asked for) take the
// same vector length (their vector loops run in one thread) and as many threads as they have, at most the
// device's count.
template <class ExecSpace>
struct SampleTeams {
  static int vector_length(int B) {
    int v = 1;
    while (v < B && v < 32) v *= 2;
    return v;
  }
  static int device_team_size(int B) { return vector_length(B) >= 32 ? 4 : 128 / vector_length(B); }
  static int team_size(const ExecSpace& space, int B) {
    const int ts = device_team_size(B);
    if constexpr (host_execution<ExecSpace>) {
      const int host = host_team_size_max(space);
      return host < ts ? host : ts;
    } else {
      (void)space;
      return ts;
    }
  }
  // Teams of team_size threads covering `items` work items.
  static Kokkos::TeamPolicy<ExecSpace> policy(const ExecSpace& space, std::int64_t items, int B) {
    const int ts = team_size(space, B);
    return Kokkos::TeamPolicy<ExecSpace>(space, static_cast<int>((items + ts - 1) / ts), ts, vector_length(B));
  }
};

}  // namespace dpointnet::compat

// True when Kokkos::Serial is enabled and is not the default execution space (and the build keeps the Serial twin:
// CMake's DPOINTNET_SERIAL_TWIN, ON by default).
#if !defined(DPOINTNET_NO_SERIAL_TWIN) && defined(KOKKOS_ENABLE_SERIAL) &&                             \
    (defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_THREADS) || defined(KOKKOS_ENABLE_CUDA) || \
     defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL))
#define DPOINTNET_SECOND_SERIAL_SPACE 1
#else
#define DPOINTNET_SECOND_SERIAL_SPACE 0
#endif
