// DPOINTNET_HOST_SIMD: marks the sample-lane loop of a host-shape kernel as the loop to vectorize (an OpenMP simd
// construct: the lanes are independent). Without it the compiler may instead vectorize the enclosing edge loop
// as a chain of in-order reductions (one lane at a time), several times slower. Empty in device code and
// without OpenMP.
#pragma once

#if defined(_OPENMP) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define DPOINTNET_HOST_SIMD _Pragma("omp simd")
#define DPOINTNET_HOST_SCALAR _Pragma("omp simd safelen(1)")
#else
#define DPOINTNET_HOST_SIMD
#define DPOINTNET_HOST_SCALAR
#endif
