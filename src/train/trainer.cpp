// Explicit instantiations of the trainer.
#include "train/impl/trainer_impl.hpp"

template class dpointnet::Trainer<float, Kokkos::DefaultExecutionSpace>;
template class dpointnet::Trainer<double, Kokkos::DefaultExecutionSpace>;
