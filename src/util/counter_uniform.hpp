// The counter-based uniform draw of every random stream (docs/model.md section 6), usable on the host and inside
// kernels: Random123 Philox4x32-10 with key = {seed, purpose}, counter = {source, step, sample, 0}, and
// u = (x0 + 0.5) * 2^-32 in (0, 1) from the first output word.
#pragma once
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define DPOINTNET_HOST_DEVICE __host__ __device__
// Random123 marks its functions __device__ only under nvcc; kernels need host and device.
#ifndef R123_CUDA_DEVICE
#define R123_CUDA_DEVICE __host__ __device__
#endif
#else
#define DPOINTNET_HOST_DEVICE
#endif
#include <Random123/philox.h>

namespace dpointnet {

DPOINTNET_HOST_DEVICE inline double counter_uniform01(std::uint32_t seed, std::uint32_t purpose, std::uint32_t source,
                                                      std::uint32_t step, std::uint32_t sample) {
  r123::Philox4x32 rng;
  r123::Philox4x32::ctr_type ctr = {{source, step, sample, 0u}};
  r123::Philox4x32::key_type key = {{seed, purpose}};
  const auto r = rng(ctr, key);
  return (static_cast<double>(r[0]) + 0.5) * (1.0 / 4294967296.0);
}

}  // namespace dpointnet
