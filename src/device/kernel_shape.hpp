// Which shape a kernel launcher takes (docs/training-update.md, "Kernel shapes"): host shapes (work items that own
// rows and vectorize over samples) on host execution spaces, device shapes (teams, compacted active lists, one lane
// per sample) elsewhere; either may be asked for on a host backend, so that tests run the device shapes there.
// Without Kokkos (option structs include it; the fuzz targets build TrainConfig without Kokkos): the choice per
// execution space is in kernel_shape_choice.hpp.
#pragma once
#include <cstdlib>
#include <string>

#include "dpointnet/util/error.hpp"

namespace dpointnet::device {

// Auto picks the host shape on host execution spaces and the device shape elsewhere, unless the process asks for
// the device shapes everywhere (process_kernel_shape()); Device runs the device shapes on a host backend too;
// Host asks for the host shape (host-only features: target blocks and their calibration; tests).
enum class KernelShape { Auto, Host, Device };

inline constexpr const char* kKernelShapeVariable = "DPOINTNET_KERNEL_SHAPE";

// The value of DPOINTNET_KERNEL_SHAPE: unset, empty or "auto" -> Auto; "device" -> Device (every launcher of the
// process takes its device shape, on host backends with the device's team geometry: the whole suite runs the
// kernels a GPU runs). Anything else is an InputError naming the variable.
inline KernelShape parse_kernel_shape_variable(const char* value) {
  const std::string v = value ? value : "";
  if (v.empty() || v == "auto") return KernelShape::Auto;
  if (v == "device") return KernelShape::Device;
  throw InputError(std::string("environment variable ") + kKernelShapeVariable + "='" + v +
                   "': expected 'auto' or 'device'");
}

// The process-wide shape of KernelShape::Auto, read from the environment once (the executables and the test
// binaries call it at start-up, so a bad value stops them before any work).
inline KernelShape process_kernel_shape() {
  static const KernelShape shape = parse_kernel_shape_variable(std::getenv(kKernelShapeVariable));
  return shape;
}

}  // namespace dpointnet::device
