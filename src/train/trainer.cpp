// Explicit instantiations of the trainer and its BPTT engine: float and double on the default execution space,
// and on Serial too when it is enabled besides another default space (so tests can compare backends).
#include "dpointnet/train/detail/trainer_impl.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet {

template class BpttEngine<float, Kokkos::DefaultExecutionSpace>;
template class BpttEngine<double, Kokkos::DefaultExecutionSpace>;
template class Trainer<float, Kokkos::DefaultExecutionSpace>;
template class Trainer<double, Kokkos::DefaultExecutionSpace>;

#if DPOINTNET_SECOND_SERIAL_SPACE
template class BpttEngine<float, Kokkos::Serial>;
template class BpttEngine<double, Kokkos::Serial>;
template class Trainer<float, Kokkos::Serial>;
template class Trainer<double, Kokkos::Serial>;
#endif

}  // namespace dpointnet
