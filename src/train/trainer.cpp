// Explicit instantiations of the trainer: float and double on the default execution space, and on Serial too
// when it is enabled besides another default space (so tests can compare backends).
#include "train/impl/trainer_access_impl.hpp"
#include "train/impl/trainer_carry_impl.hpp"
#include "train/impl/trainer_impl.hpp"
#include "util/kokkos_compat.hpp"

template class dpointnet::Trainer<float, Kokkos::DefaultExecutionSpace>;
template class dpointnet::Trainer<double, Kokkos::DefaultExecutionSpace>;

#if DPOINTNET_SECOND_SERIAL_SPACE
template class dpointnet::Trainer<float, Kokkos::Serial>;
template class dpointnet::Trainer<double, Kokkos::Serial>;
#endif
