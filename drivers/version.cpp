#include "drivers/version.hpp"

#include <fmt/format.h>

#include <Kokkos_Core.hpp>
#include <string>

#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::cli {

namespace {

#ifndef DPOINTNET_BUILD_TYPE
#define DPOINTNET_BUILD_TYPE ""
#endif
#ifndef DPOINTNET_BUILD_MPI_DRIVER
#define DPOINTNET_BUILD_MPI_DRIVER 0
#endif
#ifndef DPOINTNET_BUILD_NATIVE_ARCH
#define DPOINTNET_BUILD_NATIVE_ARCH "?"
#endif
#ifndef DPOINTNET_BUILD_DEVICE_FMA
#define DPOINTNET_BUILD_DEVICE_FMA "?"
#endif

// The Kokkos backends compiled in, by the names CMake's kokkos_check uses.
std::string kokkos_backends() {
  std::string s;
  auto add = [&s](const char* b) { s += s.empty() ? b : std::string(" ") + b; };
#if defined(KOKKOS_ENABLE_SERIAL)
  add("SERIAL");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  add("OPENMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  add("THREADS");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  add("CUDA");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  add("HIP");
#endif
#if defined(KOKKOS_ENABLE_SYCL)
  add("SYCL");
#endif
#if defined(KOKKOS_ENABLE_OPENMPTARGET)
  add("OPENMPTARGET");
#endif
#if defined(KOKKOS_ENABLE_HPX)
  add("HPX");
#endif
  return s;
}

// The GPU architecture Kokkos was built for (empty for host builds).
std::string kokkos_device_arch() {
  std::string s;
  auto add = [&s](const char* a) { s += s.empty() ? a : std::string(" ") + a; };
#if defined(KOKKOS_ARCH_VOLTA70)
  add("VOLTA70");
#endif
#if defined(KOKKOS_ARCH_VOLTA72)
  add("VOLTA72");
#endif
#if defined(KOKKOS_ARCH_TURING75)
  add("TURING75");
#endif
#if defined(KOKKOS_ARCH_AMPERE80)
  add("AMPERE80");
#endif
#if defined(KOKKOS_ARCH_AMPERE86)
  add("AMPERE86");
#endif
#if defined(KOKKOS_ARCH_ADA89)
  add("ADA89");
#endif
#if defined(KOKKOS_ARCH_HOPPER90)
  add("HOPPER90");
#endif
#if defined(KOKKOS_ARCH_BLACKWELL100)
  add("BLACKWELL100");
#endif
#if defined(KOKKOS_ARCH_BLACKWELL120)
  add("BLACKWELL120");
#endif
#if defined(KOKKOS_ARCH_AMD_GFX90A) || defined(KOKKOS_ARCH_VEGA90A)
  add("AMD_GFX90A");
#endif
#if defined(KOKKOS_ARCH_AMD_GFX942)
  add("AMD_GFX942");
#endif
  return s;
}

template <class Space>
std::string shape_of() {
  if (!device::device_shape<Space>(device::KernelShape::Auto))
    return fmt::format("host (samples vectorized in blocks of {}, one thread per team)", compat::kHostSampleLanes);
  if (!compat::host_execution<Space>) return "device (teams of threads, up to 32 vector lanes over the samples)";
  // (no instance of the space here: --version runs without initializing Kokkos)
  return fmt::format("device, asked for by {}=device (teams of the backend's threads, the device's vector lengths)",
                     device::kKernelShapeVariable);
}

}  // namespace

std::string version_text(int concurrency) {
  using Space = Kokkos::DefaultExecutionSpace;
  std::string s = fmt::format("dpointnet {}\nKokkos {}\nKokkos backends: {}\n", DPOINTNET_VERSION,
                              compat::kokkos_version_string(), kokkos_backends());
  s += fmt::format("default execution space: {}", Space::name());
  if (concurrency >= 0) s += fmt::format(" (concurrency {})", concurrency);
  s += fmt::format("\nmemory space: {}\n", Space::memory_space::name());
  // src/sim/simulator.cpp and src/train/trainer.cpp instantiate both precisions for these spaces.
  s += "precisions: float32 float64 (run.precision; simulate and train); bfloat16 float16 (train: 16-bit adjoint "
       "ring)\n";
  s += fmt::format("kernel shapes: {}: {}\n", Space::name(), shape_of<Space>());
#if DPOINTNET_SECOND_SERIAL_SPACE
  s += fmt::format("also compiled for Serial: float32 float64, {}\n", shape_of<Kokkos::Serial>());
#endif
  const std::string arch = kokkos_device_arch();
  if (!arch.empty()) s += fmt::format("device architecture: {}\n", arch);
#if defined(KOKKOS_ENABLE_CUDA)
  s += "float64 on CUDA: needs compute capability 6.0 or newer (double atomics)\n";
#endif
#if defined(DPOINTNET_HAVE_KOKKOSKERNELS)
  s += "Kokkos Kernels: yes\n";
#else
  s += "Kokkos Kernels: no\n";
#endif
  s += fmt::format("MPI driver dpointnet-mpi: {}\n", DPOINTNET_BUILD_MPI_DRIVER ? "built" : "not built");
  s += fmt::format("build: {}, host vector ISA (-march=native): {}, device fused multiply-adds: {}",
                   DPOINTNET_BUILD_TYPE, DPOINTNET_BUILD_NATIVE_ARCH, DPOINTNET_BUILD_DEVICE_FMA);
  return s;
}

}  // namespace dpointnet::cli
