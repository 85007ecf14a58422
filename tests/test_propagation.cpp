// Synaptic propagation: the event-driven scatter over edges grouped by (source, delay) must give the drive of a
// plain loop over the edge list written from docs/model.md (step 1), in both kernel shapes (the host's per-sample
// loop and the devices' compacted active groups spread over teams, forced here on a host backend), for spikes and
// for input counts; and the grouping must list every edge once.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>

#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/propagate.hpp"
#include "dpointnet/device/weight_grad.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

// unique_rows: no (source, delay, channel, target) twice, so that the host shape adds a group's edges as vector
// scatters (GroupedEdges::rows_unique); otherwise repeated edges (multiplicity) and the scalar loop. The unique
// case also starts from a drive full of garbage that the first projection zeroes (PropagateFunctor::zero_first).
// Delays d_lo .. d_hi of a ring of D = 5 slots (the host shape reads only the delays a projection has).
void check_scatter(const bool unique_rows, const int d_lo = 1, const int d_hi = 5) {
  using Exec = TEST_EXECSPACE;
  using Mem = Exec::memory_space;
  const int N = 60, B = 3, D = 5, R = 4;
  std::vector<NeuronParams> ps(N, glif(100, 5, -70, -50, -70, 2.0));
  NetBuilder nb(1.0, ps);
  std::mt19937 gen(17);
  std::set<std::tuple<int, int, int, int>> rows;
  for (int e = 0; e < 2000; ++e) {  // repeated (source, target) pairs allowed, as multiplicity
    const int pre = static_cast<int>(gen() % N), post = static_cast<int>(gen() % N);
    const int c = static_cast<int>(gen() % R), d = d_lo + static_cast<int>(gen() % (d_hi - d_lo + 1));
    const double w = (static_cast<double>(gen() % 2000) - 700.0) / 37.0;
    if (unique_rows && !rows.insert({pre, d, c, post}).second) continue;
    nb.edge(0, pre, post, c, d, w);
  }
  Network net = nb.finish();
  ASSERT_EQ(net.max_delay, d_hi);
  const Projection& p = net.projections[0];
  const std::vector<double> w = net.initial_weights(0);
  std::vector<std::int64_t> order;
  auto g = device::group_edges<double, Mem>(p, w, D, N, "test", order, /*with_active_list=*/true);
  ASSERT_EQ(g.rows_unique, unique_rows) << "2000 random edges over 60 x 5 groups repeat some rows";
  // the grouping is a permutation of the edges, grouped by (source, delay)
  ASSERT_EQ(order.size(), p.size());
  std::vector<int> seen(p.size(), 0);
  auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.offsets);
  for (std::size_t k = 0; k < order.size(); ++k) seen[static_cast<std::size_t>(order[k])]++;
  for (int s : seen) ASSERT_EQ(s, 1);
  for (std::int64_t grp = 0; grp < N * D; ++grp)
    for (std::int64_t k = off(grp); k < off(grp + 1); ++k) {
      const auto e = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
      ASSERT_EQ((p.delay_steps[e] - 1) * N + p.source[e], grp) << "groups are delay-major";
    }
  // without the read order (simulate's set-up, SimOptions::read_order = false): the same groups, lines and weights
  {
    auto g2 = device::group_edges<double, Mem>(Exec(), p, w, D, N, "test.no_order", nullptr, false);
    auto off2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g2.offsets);
    auto ln = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.line);
    auto ln2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g2.line);
    auto wt = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.weight);
    auto wt2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g2.weight);
    for (std::int64_t k = 0; k <= N * D; ++k) ASSERT_EQ(off2(k), off(k));
    for (std::size_t k = 0; k < p.size(); ++k) {
      const auto e = static_cast<std::size_t>(order[k]);
      ASSERT_EQ(ln2(k), ln(k));
      ASSERT_EQ(ln2(k), p.channel[e] * N + p.target[e]) << "edge " << e << ": its row";
      ASSERT_EQ(wt2(k), w[e]) << "edge " << e << ": its weight";
    }
    EXPECT_EQ(g2.rows_unique, g.rows_unique);
  }
  // sparse activity (one source in 5) and every source active (N D = 300 groups per sample: more than the host
  // shape lists at a time, PropagateFunctor::kList)
  static_assert(device::PropagateFunctor<double, Exec, std::uint8_t>::kList < N * D, "the dense case overflows a list");
  for (const std::int64_t t : {std::int64_t(2), std::int64_t(12)})  // t < D: the delays reaching before step 0
    for (const int max_count : {1, 3})                              // spikes (uint8) and input counts (uint16)
      for (const int one_in : {5, 1})
        for (const int parts : {0, 1, 3, 7, -1}) {  // host shape: target parts (0: its choice); -1: device shape
          const auto shape = parts < 0 ? device::KernelShape::Device : device::KernelShape::Host;
          SCOPED_TRACE(std::string(max_count == 1 ? "spikes" : "counts") +
                       (shape == device::KernelShape::Host ? ", host shape, target parts " + std::to_string(parts)
                                                           : ", device shape") +
                       ", t " + std::to_string(t) + ", active one in " + std::to_string(one_in));
          Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, Mem> ring("ring", D, B, N);
          auto hr = Kokkos::create_mirror_view(ring);
          for (int s = 0; s < D; ++s)
            for (int b = 0; b < B; ++b)
              for (int j = 0; j < N; ++j)
                hr(s, b, j) = (gen() % one_in == 0) ? static_cast<std::uint16_t>(1 + gen() % max_count) : 0;
          Kokkos::deep_copy(ring, hr);
          Kokkos::View<std::int64_t***, Kokkos::LayoutRight, Mem> u("u", B, R, N);
          if (unique_rows) Kokkos::deep_copy(u, std::int64_t(0x5a5a5a5a5a5a));  // zeroed by zero_first
          if (max_count == 1) {
            device::SpikeRing<Mem> spikes("spikes", D, B, N);
            auto hs = Kokkos::create_mirror_view(spikes);
            for (std::size_t q = 0; q < hs.span(); ++q) hs.data()[q] = static_cast<std::uint8_t>(hr.data()[q]);
            Kokkos::deep_copy(spikes, hs);
            device::PropagateFunctor<double, Exec, std::uint8_t> f{g, spikes, u, t, D, 0, unique_rows};
            f.target_parts = std::max(parts, 0);
            device::propagate(Exec(), "scatter", f, B, shape);
          } else {
            device::PropagateFunctor<double, Exec, std::uint16_t> f{g, ring, u, t, D, 0, unique_rows};
            f.target_parts = std::max(parts, 0);
            device::propagate(Exec(), "scatter", f, B, shape);
          }
          auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
          // reference: u[b, i, c] = sum_s w_s a[b, pre_s, t - d_s], the ring slot of step k being k mod D; and the same
          // sum in fixed point, in edge-list order (integer sums do not depend on the order)
          std::vector<double> ref(static_cast<std::size_t>(B * R * N), 0.0);
          std::vector<std::int64_t> ref_fixed(ref.size(), 0);
          for (std::size_t e = 0; e < p.size(); ++e)
            for (int b = 0; b < B; ++b) {
              if (t - p.delay_steps[e] < 0) continue;  // nothing before step 0
              const auto a = hr(static_cast<int>((t - p.delay_steps[e]) % D), b, p.source[e]);
              const auto q = static_cast<std::size_t>((b * R + p.channel[e]) * N + p.target[e]);
              ref[q] += w[e] * a;
              if (a) ref_fixed[q] += device::to_fixed(w[e] * a);
            }
          double worst = 0, scale = 0;
          for (int b = 0; b < B; ++b)
            for (int c = 0; c < R; ++c)
              for (int i = 0; i < N; ++i) {
                const auto q = static_cast<std::size_t>((b * R + c) * N + i);
                ASSERT_EQ(h(b, c, i), ref_fixed[q]) << "fixed-point sums do not depend on the order of the terms";
                worst = std::max(worst, std::fabs(device::from_fixed(h(b, c, i)) - ref[q]));
                scale = std::max(scale, std::fabs(ref[q]));
              }
          EXPECT_GT(scale, 1.0);
          EXPECT_LT(worst, 1e-9) << "a few hundred terms, each rounded to 2^-36";
        }
}

TEST(Propagation, ScatterMatchesEdgeList) { check_scatter(false); }
TEST(Propagation, ScatterMatchesEdgeListUniqueRows) { check_scatter(true); }
TEST(Propagation, ScatterMatchesEdgeListDelays2To4) { check_scatter(false, 2, 4); }

// The weight gradient dL/dw_e += sum_b gu[c_e, post_e, b] a(pre_e, t - d_e, b) of one reverse step, in both kernel
// shapes, against a plain loop over the edge list (float64; the shapes add the sample products in different
// orders, so they agree to rounding, and exactly where a group has one active sample).
TEST(Propagation, WeightGradientShapesMatchEdgeList) {
  using Exec = TEST_EXECSPACE;
  using Mem = Exec::memory_space;
  const int N = 50, B = 19, D = 4, R = 3, C = 6;
  std::vector<NeuronParams> ps(N, glif(100, 5, -70, -50, -70, 2.0));
  NetBuilder nb(1.0, ps);
  std::mt19937 gen(23);
  for (int e = 0; e < 1500; ++e)
    nb.edge(0, gen() % N, gen() % N, static_cast<int>(gen() % R), 1 + static_cast<int>(gen() % D), 1.0);
  Network net = nb.finish();
  ASSERT_EQ(net.max_delay, D);
  const Projection& p = net.projections[0];
  std::vector<std::int64_t> order;
  auto g = device::group_edges<double, Mem>(p, net.initial_weights(0), D, N, "test", order, true);
  // records of steps t0 - D .. t0 + C - 1; sparse activity, so that groups with 0, 1, 2 and more active samples occur
  const std::int64_t t0 = 10, t = t0 + 3, ext_base = t0 - D;
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, Mem> act("act", D + C, N, B);
  Kokkos::View<double****, Kokkos::LayoutRight, Mem> gu("gu", D, R, N, B);
  auto ha = Kokkos::create_mirror_view(act);
  auto hg = Kokkos::create_mirror_view(gu);
  for (std::size_t q = 0; q < ha.span(); ++q) ha.data()[q] = gen() % 29 == 0 ? 1 : 0;
  for (std::size_t q = 0; q < hg.span(); ++q) hg.data()[q] = (static_cast<double>(gen() % 20001) - 10000.0) / 7919.0;
  Kokkos::deep_copy(act, ha);
  Kokkos::deep_copy(gu, hg);
  const int slot_gu = static_cast<int>(t % D);
  std::vector<double> ref(p.size(), 0.0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto e = static_cast<std::size_t>(order[k]);
    const std::int64_t s = t - p.delay_steps[e];
    for (int b = 0; b < B; ++b)
      ref[k] += hg(slot_gu, p.channel[e], p.target[e], b) * ha(static_cast<int>(s - ext_base), p.source[e], b);
  }
  double scale = 0;
  for (double r : ref) scale = std::max(scale, std::fabs(r));
  ASSERT_GT(scale, 0.5) << "the test needs active groups";
  for (const auto shape : {device::KernelShape::Host, device::KernelShape::Device}) {
    SCOPED_TRACE(shape == device::KernelShape::Host ? "host shape" : "device shape");
    Kokkos::View<double*, Mem> grad("grad", p.size());
    device::WeightGradFunctor<double, double, Exec, std::uint8_t> wg{g,        act,   gu, grad, t,
                                                                     ext_base, N * D, D,  B,    slot_gu};
    device::weight_grad(Exec(), "weight_grad", wg, shape);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad);
    for (std::size_t k = 0; k < ref.size(); ++k) ASSERT_NEAR(h(k), ref[k], 1e-13 * scale) << "grouped edge " << k;
  }
}

// The host neuron step's block conversion of the fixed-point drive (from_fixed_block: bits of 1.5 x 2^52 plus q
// for |q| < 2^51, value by value otherwise) against the compiler's int64 -> double conversion, scaled by 2^-36:
// blocks inside the fast range, blocks with one value just outside it, and values at its edges.
template <class Real>
void check_from_fixed_block() {
  std::mt19937_64 gen(17);
  const std::int64_t edge = std::int64_t(1) << 51;
  for (int rep = 0; rep < 400; ++rep) {
    std::int64_t q[256];
    Real out[256];
    const int m = 1 + static_cast<int>(gen() % 256);
    for (int i = 0; i < m; ++i) {
      const auto x = static_cast<std::int64_t>(gen() >> (13 + gen() % 50));  // |x| < 2^51
      q[i] = gen() % 2 ? x : -x;
    }
    if (rep % 4 == 1) q[gen() % m] = gen() % 2 ? edge : -edge - 1;          // just outside
    if (rep % 4 == 2) q[gen() % m] = gen() % 2 ? edge - 1 : -edge;          // the last values inside
    if (rep % 4 == 3) q[gen() % m] = static_cast<std::int64_t>(gen() | 1);  // anywhere in int64
    device::from_fixed_block(q, m, out);
    for (int i = 0; i < m; ++i)
      ASSERT_EQ(out[i], static_cast<Real>(static_cast<double>(q[i]) / 68719476736.0)) << "value " << q[i];
  }
}
TEST(Propagation, FixedPointBlockConversionIsExact) {
  check_from_fixed_block<float>();
  check_from_fixed_block<double>();
}
