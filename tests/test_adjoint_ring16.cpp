// The drive adjoint ring in 16 bits (device/ring_storage.hpp), bfloat16 and float16: the spike adjoint (host passes
// unblocked and in target blocks, with the fused recurrent weight gradient; the device shape with teams on this
// backend) and the weight gradients (host and device shapes) gathering a 16-bit ring give bitwise the sums of the
// same kernels gathering a float32 ring that holds the same values (16-bit values widen exactly to float32, and the
// arithmetic after the load is the same); the float32 kernels are checked against the edge list in
// test_spike_adjoint.cpp. The narrowing kernel rounds as to_bfloat16 / to_float16, whose rounding
// test_half_precision.cpp checks against the CPU's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/ring_storage.hpp"
#include "dpointnet/device/spike_adjoint.hpp"
#include "dpointnet/device/target_blocks.hpp"
#include "dpointnet/device/weight_grad.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

using Exec = TEST_EXECSPACE;
using Mem = Exec::memory_space;
template <class T>
using Ring = Kokkos::View<T****, Kokkos::LayoutRight, Mem>;

template <class Half>
struct Case {
  int N = 60, D = 4, R = 3, C = 6, B;
  Network net;
  device::GroupedEdges<float, Mem> g;
  Ring<float> gu32;  // the 16-bit ring's values, widened
  Ring<Half> gu16;
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> rate_grad;
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, Mem> z;
  explicit Case(const int batch) : B(batch) {
    std::vector<NeuronParams> ps(N, glif(100, 5, -70, -50, -70, 2.0));
    NetBuilder nb(1.0, ps);
    std::mt19937 gen(41);
    for (int e = 0; e < 3000; ++e)
      nb.edge(0, gen() % N, gen() % N, static_cast<int>(gen() % R), 1 + static_cast<int>(gen() % D),
              (static_cast<double>(gen() % 2000) - 900.0) / 53.0);
    net = nb.finish();
    std::vector<std::int64_t> order;
    g = device::group_edges<float, Mem>(net.projections[0], net.initial_weights(0), D, N, "test", order, true);
    gu32 = Ring<float>("gu32", D, R, N, B);
    gu16 = Ring<Half>("gu16", D, R, N, B);
    rate_grad = decltype(rate_grad)("rate_grad", N, B);
    z = decltype(z)("z", D + C, N, B);
    auto h32 = Kokkos::create_mirror_view(gu32);
    auto h16 = Kokkos::create_mirror_view(gu16);
    auto hr = Kokkos::create_mirror_view(rate_grad);
    auto hz = Kokkos::create_mirror_view(z);
    std::normal_distribution<float> u(0.f, 1.f);
    for (std::size_t q = 0; q < h16.span(); ++q) {
      h16.data()[q] = narrow<Half>(u(gen) * 1e-3f);  // values over many binades (float16: subnormals too)
      h32.data()[q] = widen(h16.data()[q]);
    }
    for (std::size_t q = 0; q < hr.span(); ++q) hr.data()[q] = u(gen);
    for (std::size_t q = 0; q < hz.span(); ++q) hz.data()[q] = gen() % 19 == 0 ? 1 : 0;
    Kokkos::deep_copy(gu32, h32);
    Kokkos::deep_copy(gu16, h16);
    Kokkos::deep_copy(rate_grad, hr);
    Kokkos::deep_copy(z, hz);
  }
  template <class T>
  device::Adjoint<float, Mem, T> adjoint(const Ring<T>& gu) const {
    device::Adjoint<float, Mem, T> a;
    a.gu = gu;
    a.gz = decltype(a.gz)("gz", N, B);
    a.rate_grad = rate_grad;
    return a;
  }
};

template <class V>
std::vector<typename V::non_const_value_type> host_copy(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return {h.data(), h.data() + h.span()};
}

struct Sums {
  std::vector<float> gz, grad;
};

// The spike adjoint of step t with ring gu: host passes (block_targets: 0 unblocked) with the fused weight
// gradient, or the device shape (block_targets < 0) without it.
template <class T, class C>
Sums spike_adjoint(const C& c, const Ring<T>& gu, const std::int64_t block_targets) {
  const std::int64_t t0 = 10, t = t0 + 2, T_end = t + 3;
  device::SpikeAdjointFunctor<float, float, Exec, T> sa{c.g, c.adjoint(gu), 0.7f, t, T_end, c.N, c.D, c.B};
  Kokkos::View<float*, Mem> grad("grad", c.g.line.extent(0));
  if (block_targets >= 0) {
    sa.wg = {c.z, grad, t0 - c.D, 0, false};
    sa.tb = device::target_blocks(c.g, c.D, c.N, block_targets, "test.blocks");
    device::spike_adjoint(Exec(), sa, device::KernelShape::Host);
  } else {
    device::spike_adjoint(Exec(), sa, device::KernelShape::Device);
  }
  Exec().fence();
  return {host_copy(sa.a.gz), host_copy(grad)};
}

template <class Half>
void check_spike_adjoint(const int B) {
  const Case<Half> c(B);
  std::vector<std::int64_t> shapes{-1};
  if (compat::host_execution<Exec>) shapes.insert(shapes.end(), {0, 7, 23});
  for (const std::int64_t s : shapes) {
    SCOPED_TRACE(s < 0 ? std::string("device shape") : "host passes, block of " + std::to_string(s) + " targets");
    const Sums a = spike_adjoint(c, c.gu32, s), b = spike_adjoint(c, c.gu16, s);
    ASSERT_EQ(a.gz.size(), b.gz.size());
    double scale = 0;
    for (std::size_t q = 0; q < a.gz.size(); ++q) {
      ASSERT_EQ(b.gz[q], a.gz[q]) << "gz " << q;
      scale = std::max(scale, std::fabs(static_cast<double>(a.gz[q])));
    }
    EXPECT_GT(scale, 0.5);
    for (std::size_t k = 0; k < a.grad.size(); ++k) ASSERT_EQ(b.grad[k], a.grad[k]) << "edge " << k;
  }
}

template <class T, class C>
std::vector<float> weight_grad(const C& c, const Ring<T>& gu, const device::KernelShape shape) {
  const std::int64_t t0 = 10, t = t0 + 3;
  Kokkos::View<float*, Mem> grad("grad", c.g.line.extent(0));
  device::WeightGradFunctor<float, float, Exec, std::uint8_t, T> wg{
      c.g, c.z, gu, grad, t, t0 - c.D, c.g.n_sources * c.D, c.D, c.B, static_cast<int>(t % c.D), 0};
  device::weight_grad(Exec(), "test::weight_grad", wg, shape);
  Exec().fence();
  return host_copy(grad);
}

}  // namespace

TEST(AdjointRing16, SpikeAdjointMatchesWidenedRingB16) {
  check_spike_adjoint<bfloat16>(16);
  check_spike_adjoint<float16>(16);
}
TEST(AdjointRing16, SpikeAdjointMatchesWidenedRingB5) {
  check_spike_adjoint<bfloat16>(5);
  check_spike_adjoint<float16>(5);
}
TEST(AdjointRing16, SpikeAdjointMatchesWidenedRingB37) {
  check_spike_adjoint<bfloat16>(37);
  check_spike_adjoint<float16>(37);
}

template <class Half>
void check_weight_grad() {
  for (const int B : {3, 16, 21}) {
    const Case<Half> c(B);
    for (const auto shape : {device::KernelShape::Host, device::KernelShape::Device}) {
      if (shape == device::KernelShape::Host && !compat::host_execution<Exec>) continue;
      SCOPED_TRACE("B " + std::to_string(B) + (shape == device::KernelShape::Host ? ", host" : ", device"));
      const auto a = weight_grad(c, c.gu32, shape), b = weight_grad(c, c.gu16, shape);
      double scale = 0;
      for (std::size_t k = 0; k < a.size(); ++k) {
        ASSERT_EQ(b[k], a[k]) << "edge " << k;
        scale = std::max(scale, std::fabs(static_cast<double>(a[k])));
      }
      EXPECT_GT(scale, 0.0) << "the test needs active sources";
    }
  }
}
TEST(AdjointRing16, WeightGradMatchesWidenedRing) {
  check_weight_grad<bfloat16>();
  check_weight_grad<float16>();
}

// Each value of the float32 slot lands in the ring's slot as to_bfloat16 / to_float16 gives it (a NaN as a NaN of
// its sign); the other slots stay. 37 x 7 x 2 values: blocks of 16 and a partial one.
template <class Half>
void check_narrow() {
  const int D = 3, R = 2, N = 37, B = 7;
  Ring<float> one("one", 1, R, N, B);
  Ring<Half> ring("ring", D, R, N, B);
  auto h = Kokkos::create_mirror_view(one);
  std::mt19937 gen(3);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (std::size_t q = 0; q < h.span(); ++q) {
    const std::uint32_t u = bits(gen);
    std::memcpy(&h.data()[q], &u, sizeof(float));  // any float32, NaN and infinities included
  }
  Kokkos::deep_copy(one, h);
  device::narrow_ring_slot(Exec(), one, ring, 1);
  Exec().fence();
  auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ring);
  for (int c = 0; c < R; ++c)
    for (int i = 0; i < N; ++i)
      for (int b = 0; b < B; ++b) {
        const float x = h(0, c, i, b);
        if (std::isnan(x))  // hosts may convert by the CPU's instruction: a NaN of the same sign
          ASSERT_TRUE(std::isnan(widen(r(1, c, i, b))) && std::signbit(widen(r(1, c, i, b))) == std::signbit(x));
        else
          ASSERT_EQ(r(1, c, i, b).bits, narrow<Half>(x).bits);
        ASSERT_EQ(r(0, c, i, b).bits, 0);
        ASSERT_EQ(r(2, c, i, b).bits, 0);
      }
  Ring<float> wrong("wrong", 2, R, N, B);
  EXPECT_THROW(device::narrow_ring_slot(Exec(), wrong, ring, 0), std::logic_error);
}
TEST(AdjointRing16, NarrowSlotRoundsEachValue) {
  check_narrow<bfloat16>();
  check_narrow<float16>();
}
