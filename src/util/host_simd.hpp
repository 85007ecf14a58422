// DPOINTNET_HOST_SIMD: marks the loop of a host-shape kernel to vectorize (an OpenMP simd construct: its iterations
// are independent): the sample-lane loop of the spike adjoint (without it GCC vectorized the enclosing edge loop
// as a chain of in-order reductions, one lane at a time, 5.5x slower), a group's scatter into a drive row whose
// rows are distinct (propagate.hpp), the uniforms of the random inputs (inputs.hpp). Empty in device code and
// without OpenMP.
#pragma once

#if defined(_OPENMP) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define DPOINTNET_HOST_SIMD _Pragma("omp simd")
#else
#define DPOINTNET_HOST_SIMD
#endif
