// Which shape a kernel launcher takes (docs/training-update.md, "Kernel shapes"): host shapes (work items that own
// rows and vectorize over samples) on host execution spaces, device shapes (teams, compacted active lists, one lane
// per sample) elsewhere; either may be asked for on a host backend, so that tests run the device shapes there.
// Without Kokkos (option structs include it; the fuzz targets build TrainConfig without Kokkos): the choice per
// execution space is in kernel_shape_choice.hpp.
#pragma once

namespace dpointnet::device {

// Auto picks the host shape on host execution spaces and the device shape elsewhere; Device runs the device shapes
// on a host backend too (SimOptions::kernel_shape, TrainConfig::kernel_shape, tests); Host asks for the host shape
// (tests of the two event-driven kernels on host backends).
enum class KernelShape { Auto, Host, Device };

}  // namespace dpointnet::device
