// Template implementation of the BPTT engine's neuron pools (train/bptt_engine.hpp, set_pools).
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dpointnet/train/bptt_engine.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
void BpttEngine<Real, ExecSpace>::set_pools(const std::vector<std::int32_t>& sample,
                                            const std::vector<std::vector<std::int32_t>>& members, std::int64_t t_begin,
                                            std::int64_t t_end) {
  if (sample.size() != members.size()) throw std::logic_error("one sample per pool");
  if (t_begin < 0 || t_end > T_ || t_begin >= t_end) throw std::logic_error("the pools' window is outside the window");
  const std::size_t P = sample.size();
  std::vector<std::int64_t> offsets(P + 1, 0);
  std::vector<std::int32_t> flat;
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::int32_t>> slots;  // (neuron, sample) -> pools
  for (std::size_t k = 0; k < P; ++k) {
    if (sample[k] < 0 || sample[k] >= B_) throw std::logic_error("a pool's sample is outside the micro-batch");
    for (std::int32_t n : members[k]) {
      if (n < 0 || n >= N_) throw std::logic_error("a pool's member is not a neuron");
      flat.push_back(n);
      slots[{n, sample[k]}].push_back(static_cast<std::int32_t>(k));
    }
    offsets[k + 1] = static_cast<std::int64_t>(flat.size());
  }
  std::vector<std::int32_t> slot_neuron, slot_sample, slot_pools;
  std::vector<std::int64_t> slot_offsets{0};
  for (const auto& [key, pools] : slots) {
    slot_neuron.push_back(key.first);
    slot_sample.push_back(key.second);
    slot_pools.insert(slot_pools.end(), pools.begin(), pools.end());
    slot_offsets.push_back(static_cast<std::int64_t>(slot_pools.size()));
  }
  auto up = [&](const std::string& label, const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    Kokkos::View<T*, MemSpace> d(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "train.pools." + label),
                                 v.size());
    Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(v.data(), v.size());
    Kokkos::deep_copy(space_, d, h);
    return d;
  };
  device::PoolSet<MemSpace> p;
  p.sample = up("sample", sample);
  p.offsets = up("offsets", offsets);
  p.members = up("members", flat);
  p.slot_neuron = up("slot_neuron", slot_neuron);
  p.slot_sample = up("slot_sample", slot_sample);
  p.slot_offsets = up("slot_offsets", slot_offsets);
  p.slot_pools = up("slot_pools", slot_pools);
  p.t_begin = t_begin;
  p.t_end = t_end;
  p.y = decltype(p.y)(Kokkos::view_alloc(space_, "train.pools.y"), static_cast<std::size_t>(t_end - t_begin), P);
  p.g = decltype(p.g)(Kokkos::view_alloc(space_, "train.pools.g"), static_cast<std::size_t>(t_end - t_begin), P);
  space_.fence();  // the host vectors go out of scope
  pools_ = p;
}

template <class Real, class ExecSpace>
std::vector<double> BpttEngine<Real, ExecSpace>::pool_sums() const {
  std::vector<double> out(pools_.y.span());
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(
      out.data(), pools_.y.extent(0), pools_.y.extent(1));
  Kokkos::deep_copy(space_, h, pools_.y);
  space_.fence();
  return out;
}

template <class Real, class ExecSpace>
void BpttEngine<Real, ExecSpace>::set_pool_gradient(const std::vector<double>& dy) {
  if (dy.size() != pools_.g.span()) throw std::logic_error("the pools' gradient has the wrong size");
  std::vector<double> scaled;  // times the loss scale (float16 runs)
  if (loss_scale_ != 1) {
    scaled = dy;
    for (double& x : scaled) x *= loss_scale_;
  }
  Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(
      scaled.empty() ? dy.data() : scaled.data(), pools_.g.extent(0), pools_.g.extent(1));
  Kokkos::deep_copy(space_, pools_.g, h);
  space_.fence();
}

}  // namespace dpointnet
