// Explicit instantiations of the simulator: float and double on the default execution space, and on Serial
// too when it is enabled besides another default space (so tests can compare backends).
#include "dpointnet/sim/detail/simulator_impl.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

template class dpointnet::Simulator<float, Kokkos::DefaultExecutionSpace>;
template class dpointnet::Simulator<double, Kokkos::DefaultExecutionSpace>;

#if DPOINTNET_SECOND_SERIAL_SPACE
template class dpointnet::Simulator<float, Kokkos::Serial>;
template class dpointnet::Simulator<double, Kokkos::Serial>;
#endif
