// GoogleTest main that brackets the tests with Kokkos::initialize / finalize.
#include <gtest/gtest.h>

#include "util/kokkos_compat.hpp"
#include "util/log.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  dpointnet::log::init("warn");
  dpointnet::compat::initialize({});
  const int rc = RUN_ALL_TESTS();
  Kokkos::finalize();
  return rc;
}
