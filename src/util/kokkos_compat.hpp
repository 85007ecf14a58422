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

inline int concurrency() {
#if DPOINTNET_KOKKOS4
  return Kokkos::DefaultExecutionSpace().concurrency();
#elif defined(KOKKOS_ENABLE_OPENMP)
  // Kokkos 3.x: OpenMP::concurrency() reports 0 outside parallel regions.
  if constexpr (std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::OpenMP>::value)
    return omp_get_max_threads();
  else
    return Kokkos::DefaultExecutionSpace::concurrency();
#else
  return Kokkos::DefaultExecutionSpace::concurrency();
#endif
}

}  // namespace dpointnet::compat

// True when Kokkos::Serial is enabled and is not the default execution space.
#if defined(KOKKOS_ENABLE_SERIAL) &&                                                                   \
    (defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_THREADS) || defined(KOKKOS_ENABLE_CUDA) || \
     defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL))
#define DPOINTNET_SECOND_SERIAL_SPACE 1
#else
#define DPOINTNET_SECOND_SERIAL_SPACE 0
#endif
