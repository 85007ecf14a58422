// The shape a launcher takes on an execution space (KernelShape: kernel_shape.hpp).
#pragma once
#include "device/kernel_shape.hpp"
#include "util/kokkos_compat.hpp"

namespace dpointnet::device {

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
