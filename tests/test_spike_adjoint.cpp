// The spike adjoint of one reverse step, gz[j, b] = rate_grad[j, b] + rdamp sum over recurrent edges e from j of
// w_e gu_{t + d_e}[c_e, post_e, b], with the recurrent weight gradient fused into it (dL/dw_e += sum_b
// gu_{t + d_e}[c_e, post_e, b] z_t[j, b] for sources active at t), against a plain loop over the edge list written
// from docs/model-gradients.md. Host shapes, unblocked and in target blocks of several sizes (target_blocks.hpp):
// the blocked passes must give the unblocked sums bitwise (each group's edges are in target order, so its segments
// over the blocks are its edges in the same order), for edges added in random target order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/spike_adjoint.hpp"
#include "dpointnet/device/target_blocks.hpp"
#include "dpointnet/util/host_simd.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

struct Result {
  std::vector<double> gz, grad;
};

void check_blocks(const int B) {
  using Exec = TEST_EXECSPACE;
  using Mem = Exec::memory_space;
  if (!compat::host_execution<Exec>) GTEST_SKIP() << "target blocks are a host shape";
  const int N = 70, D = 4, R = 3, C = 6;
  std::vector<NeuronParams> ps(N, glif(100, 5, -70, -50, -70, 2.0));
  NetBuilder nb(1.0, ps);
  std::mt19937 gen(31);
  for (int e = 0; e < 4000; ++e)  // random target order within each (source, delay) group
    nb.edge(0, gen() % N, gen() % N, static_cast<int>(gen() % R), 1 + static_cast<int>(gen() % D),
            (static_cast<double>(gen() % 2000) - 900.0) / 53.0);
  Network net = nb.finish();
  ASSERT_EQ(net.max_delay, D);
  const Projection& p = net.projections[0];
  std::vector<std::int64_t> order;
  auto g = device::group_edges<double, Mem>(p, net.initial_weights(0), D, N, "test", order, false);
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.weight);

  // records of steps t0 - D .. t0 + C - 1; t near the end of the sequence, so that some delays reach past T
  const std::int64_t t0 = 10, t = t0 + 3, T = t + 3, ext_base = t0 - D;
  const double rdamp = 0.7;
  device::Adjoint<double, Mem> a;
  a.gu = decltype(a.gu)("gu", D, R, N, B);
  a.gz = decltype(a.gz)("gz", N, B);
  a.rate_grad = decltype(a.rate_grad)("rate_grad", N, B);
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, Mem> z("z", D + C, N, B);
  auto hg = Kokkos::create_mirror_view(a.gu);
  auto hr = Kokkos::create_mirror_view(a.rate_grad);
  auto hz = Kokkos::create_mirror_view(z);
  for (std::size_t q = 0; q < hg.span(); ++q) hg.data()[q] = (static_cast<double>(gen() % 20001) - 10000.0) / 7919.0;
  for (std::size_t q = 0; q < hr.span(); ++q) hr.data()[q] = (static_cast<double>(gen() % 2001) - 1000.0) / 911.0;
  for (std::size_t q = 0; q < hz.span(); ++q) hz.data()[q] = gen() % 23 == 0 ? 1 : 0;
  Kokkos::deep_copy(a.gu, hg);
  Kokkos::deep_copy(a.rate_grad, hr);
  Kokkos::deep_copy(z, hz);

  // the edge list's sums (grouped edge k is file edge order[k])
  std::vector<double> ref_gz(static_cast<std::size_t>(N * B), 0.0), ref_grad(p.size(), 0.0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto e = static_cast<std::size_t>(order[k]);
    const std::int64_t j = p.source[e], step = t + p.delay_steps[e];
    if (step >= T) continue;
    const int slot = static_cast<int>(step % D);
    for (int b = 0; b < B; ++b) {
      const double gu = hg(slot, p.channel[e], p.target[e], b);
      ref_gz[static_cast<std::size_t>(j * B + b)] += hw(k) * gu;
      ref_grad[k] += gu * hz(static_cast<int>(t - ext_base), j, b);
    }
  }
  double gz_scale = 0, grad_scale = 0;
  for (std::size_t q = 0; q < ref_gz.size(); ++q) {
    ref_gz[q] = hr.data()[q] + rdamp * ref_gz[q];
    gz_scale = std::max(gz_scale, std::fabs(ref_gz[q]));
  }
  for (double r : ref_grad) grad_scale = std::max(grad_scale, std::fabs(r));
  ASSERT_GT(grad_scale, 0.5) << "the test needs sources active at t";

  auto run = [&](std::int64_t block_targets) {
    using SA = device::SpikeAdjointFunctor<double, double, Exec>;
    Kokkos::View<double*, Mem> grad("grad", p.size());
    SA sa{g, a, rdamp, t, T, N, D, B};
    sa.wg = {z, grad, ext_base, 0, false};
    sa.tb = device::target_blocks(g, D, N, block_targets, "test.blocks");
    EXPECT_EQ(sa.tb.on(), block_targets > 0 && block_targets < N);
    device::spike_adjoint(Exec(), sa, device::KernelShape::Host);
    Result r;
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.gz);
    auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad);
    r.gz.assign(h1.data(), h1.data() + h1.span());
    r.grad.assign(h2.data(), h2.data() + h2.span());
    return r;
  };
  const Result plain = run(0);
  for (std::size_t q = 0; q < ref_gz.size(); ++q) ASSERT_NEAR(plain.gz[q], ref_gz[q], 1e-12 * gz_scale) << q;
  for (std::size_t k = 0; k < ref_grad.size(); ++k)
    ASSERT_NEAR(plain.grad[k], ref_grad[k], 1e-13 * grad_scale) << "grouped edge " << k;
  for (const std::int64_t L : {1, 7, 23, 69}) {
    SCOPED_TRACE("block of " + std::to_string(L) + " targets");
    const Result blocked = run(L);
    for (std::size_t q = 0; q < plain.gz.size(); ++q) ASSERT_EQ(blocked.gz[q], plain.gz[q]) << "gz " << q;
    for (std::size_t k = 0; k < plain.grad.size(); ++k) ASSERT_EQ(blocked.grad[k], plain.grad[k]) << "edge " << k;
  }
}

}  // namespace

// B = 16: one full lane block (the weight gradient's short terms merged into the gz loop); B = 19: a partial one.
TEST(SpikeAdjoint, TargetBlocksMatchEdgeListB16) { check_blocks(16); }
TEST(SpikeAdjoint, TargetBlocksMatchEdgeListB19) { check_blocks(19); }

// The blocked copy follows weight changes (refresh_target_block_weights) and holds every edge once, in its
// block's segment.
TEST(SpikeAdjoint, TargetBlockWeightsFollowTheEdges) {
  using Exec = TEST_EXECSPACE;
  using Mem = Exec::memory_space;
  const int N = 40, D = 3;
  std::vector<NeuronParams> ps(N, glif(100, 5, -70, -50, -70, 2.0));
  NetBuilder nb(1.0, ps);
  std::mt19937 gen(5);
  for (int e = 0; e < 900; ++e) nb.edge(0, gen() % N, gen() % N, 0, 1 + static_cast<int>(gen() % D), 1.0 + e);
  Network net = nb.finish();
  std::vector<std::int64_t> order;
  auto g = device::group_edges<double, Mem>(net.projections[0], net.initial_weights(0), D, N, "test", order, false);
  auto tb = device::target_blocks(g, D, N, 9, "test.blocks");
  ASSERT_TRUE(tb.on());
  ASSERT_EQ(tb.n_blocks, 5);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.weight);
  for (std::size_t k = 0; k < h.span(); ++k) h(k) = -2.0 * h(k);
  Kokkos::deep_copy(g.weight, h);
  device::refresh_target_block_weights(Exec(), tb, g, D);
  auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.offsets);
  auto ln = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.line);
  auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.weight);
  auto seg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tb.seg);
  auto bl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tb.line);
  auto bw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tb.weight);
  ASSERT_EQ(seg(seg.extent(0) - 1), static_cast<std::int32_t>(ln.extent(0)));
  for (int d = 1; d <= D; ++d)
    for (std::int64_t j = 0; j < N; ++j) {
      std::int64_t k = off(g.group(j, d));
      for (int blk = 0; blk < tb.n_blocks; ++blk)
        for (std::int64_t q = seg(tb.section(d, blk) + j); q < seg(tb.section(d, blk) + j + 1); ++q, ++k) {
          ASSERT_EQ(bl(q), ln(k));
          ASSERT_EQ(bl(q) % N / 9, blk) << "edge in its target's block";
          ASSERT_EQ(bw(q), w(k));
          ASSERT_LT(w(k), 0.0) << "the refreshed weights";
        }
      ASSERT_EQ(k, off(g.group(j, d) + 1));
    }
}

// The register partial sums of the host spike adjoint (compat::HostLanes16: vectors of the host's register width,
// chained) against lane-by-lane scalar arithmetic, a product then a sum, each rounded: all 16 lanes, in order,
// for float and double (one link with AVX-512 floats, two to eight elsewhere).
template <class T>
void check_host_lanes() {
  std::mt19937 gen(11);
  std::uniform_real_distribution<T> u(T(-3), T(3));
  alignas(64) T acc[16], ref[16], out[16];
  for (int q = 0; q < 16; ++q) ref[q] = acc[q] = u(gen);
  compat::HostLanes16<T> r;
  r.load(acc);
  for (int k = 0; k < 37; ++k) {
    alignas(64) T x[16];
    const T w = u(gen);
    for (int q = 0; q < 16; ++q) {
      x[q] = u(gen);
      const T prod = w * x[q];
      ref[q] = ref[q] + prod;
    }
    r.add_product(w, x);
  }
  r.store(out);
  for (int q = 0; q < 16; ++q) EXPECT_EQ(out[q], ref[q]) << "lane " << q;
}
TEST(SpikeAdjoint, HostLanesAddLaneByLaneFloat) { check_host_lanes<float>(); }
TEST(SpikeAdjoint, HostLanesAddLaneByLaneDouble) { check_host_lanes<double>(); }

// The partial lane blocks (compat::HostLanes<T, N>, N = 1..16: pieces of power-of-two lanes, e.g. 8 + 4 + 2 + 1
// floats with AVX2) against the same scalar arithmetic. The lanes after the N-th are a guard: neither read into the
// sums nor written.
template <class T, int N>
void check_partial_lanes() {
  std::mt19937 gen(13 + N);
  std::uniform_real_distribution<T> u(T(-3), T(3));
  constexpr T kGuard = T(12345);
  T acc[N + 1], ref[N], out[N + 1];
  for (int q = 0; q < N; ++q) ref[q] = acc[q] = u(gen);
  acc[N] = out[N] = kGuard;
  compat::HostLanes<T, N> r;
  r.load(acc);
  for (int k = 0; k < 23; ++k) {
    T x[N + 1];
    x[N] = std::numeric_limits<T>::quiet_NaN();  // would poison a sum that read past the N lanes
    const T w = u(gen);
    for (int q = 0; q < N; ++q) {
      x[q] = u(gen);
      const T prod = w * x[q];
      ref[q] = ref[q] + prod;
    }
    r.add_product(w, x);
  }
  r.store(out);
  for (int q = 0; q < N; ++q) EXPECT_EQ(out[q], ref[q]) << N << " lanes, lane " << q;
  EXPECT_EQ(out[N], kGuard) << N << " lanes: stored past the last lane";
}
template <class T, int... N>
void check_all_partial_lanes(std::integer_sequence<int, N...>) {
  (check_partial_lanes<T, N + 1>(), ...);
}
TEST(SpikeAdjoint, PartialLaneBlocksAddLaneByLaneFloat) {
  check_all_partial_lanes<float>(std::make_integer_sequence<int, 16>{});
}
TEST(SpikeAdjoint, PartialLaneBlocksAddLaneByLaneDouble) {
  check_all_partial_lanes<double>(std::make_integer_sequence<int, 16>{});
}
