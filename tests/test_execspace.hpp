// The execution space of the backend test bodies (Cabana's pattern): tests/CMakeLists.txt compiles the same
// bodies once per enabled backend, defining DPOINTNET_TEST_SERIAL for the Kokkos::Serial executable.
#pragma once
#include <Kokkos_Core.hpp>

#if DPOINTNET_TEST_SERIAL
using TEST_EXECSPACE = Kokkos::Serial;
#else
using TEST_EXECSPACE = Kokkos::DefaultExecutionSpace;
#endif
