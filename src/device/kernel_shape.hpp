// Which shape a kernel launcher takes (docs/training-update.md, "Kernel shapes"): host shapes (work items that own
// rows and vectorize over samples) on host execution spaces, device shapes (teams, compacted active lists, one lane
// per sample) elsewhere; either may be asked for on a host backend, so that tests run the device shapes there.
#pragma once
#include "util/kokkos_compat.hpp"

namespace dpointnet::device {

// Auto picks the host shape on host execution spaces and the device shape elsewhere; Device runs the device shapes
// on a host backend too (SimOptions::kernel_shape, TrainConfig::kernel_shape, tests); Host asks for the host shape
// (tests of the two event-driven kernels on host backends).
enum class KernelShape { Auto, Host, Device };

template <class ExecSpace>
inline bool device_shape(KernelShape s) {
  return s == KernelShape::Device || (s == KernelShape::Auto && !compat::host_execution<ExecSpace>);
}
// Whether a launcher takes its host shape: only on host execution spaces (host shapes use host-only code, so a
// launcher keeps them in an `if constexpr (compat::host_execution<ExecSpace>)` branch), and not when the device
// shape is asked for (tests and `KernelShape` options run the device shapes on a host backend).
template <class ExecSpace>
inline bool host_shape(KernelShape s) {
  return compat::host_execution<ExecSpace> && !device_shape<ExecSpace>(s);
}

}  // namespace dpointnet::device
