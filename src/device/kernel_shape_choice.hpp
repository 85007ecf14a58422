// The shape a launcher takes on an execution space (KernelShape: kernel_shape.hpp).
#pragma once
#include "dpointnet/device/kernel_shape.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// Device on device spaces; on host spaces when asked for, by the option or by DPOINTNET_KERNEL_SHAPE=device.
template <class ExecSpace>
inline bool device_shape(KernelShape s) {
  if (s == KernelShape::Device) return true;
  if (s == KernelShape::Host) return false;
  return !compat::host_execution<ExecSpace> || process_kernel_shape() == KernelShape::Device;
}
// Whether a launcher takes its host shape: only on host execution spaces (host shapes use host-only code, so a
// launcher keeps them in an `if constexpr (compat::host_execution<ExecSpace>)` branch), and not when the device
// shape is asked for.
template <class ExecSpace>
inline bool host_shape(KernelShape s) {
  return compat::host_execution<ExecSpace> && !device_shape<ExecSpace>(s);
}

}  // namespace dpointnet::device
