// GoogleTest main that brackets the tests with Kokkos::initialize / finalize and reads DPOINTNET_KERNEL_SHAPE.
#include <gtest/gtest.h>

#include <cstdio>
#include <exception>

#include "dpointnet/device/kernel_shape_choice.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  dpointnet::log::init("warn");
  dpointnet::compat::initialize({});
  int rc = 0;
  try {
    // DPOINTNET_KERNEL_SHAPE=device: every test body runs the device shapes (docs/building.md). On stderr: the
    // test listing of ctest's discovery reads stdout.
    namespace dd = dpointnet::device;
    using Space = Kokkos::DefaultExecutionSpace;
    if constexpr (dpointnet::compat::host_execution<Space>) {
      if (dd::device_shape<Space>(dd::KernelShape::Auto))
        std::fprintf(stderr, "[ shapes ] %s=device: device shapes, teams of up to %d threads on %s\n",
                     dd::kKernelShapeVariable, dpointnet::compat::host_team_size_max(Space()), Space::name());
    } else {
      (void)dd::process_kernel_shape();  // a bad value stops the binary here
    }
    rc = RUN_ALL_TESTS();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    rc = 2;
  }
  Kokkos::finalize();
  return rc;
}
