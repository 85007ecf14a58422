// Synaptic propagation: the event-driven scatter over edges grouped by (source, delay) must give the drive of a
// plain loop over the edge list written from docs/model.md (step 1), and the grouping must list every edge once.
#include <gtest/gtest.h>

#include "device/edge_layout.hpp"
#include "device/model_constants.hpp"
#include "device/propagate.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

TEST(Propagation, ScatterMatchesEdgeList) {
  using Exec = TEST_EXECSPACE;
  using Mem = Exec::memory_space;
  const int N = 60, B = 3, D = 5, R = 4;
  std::vector<NeuronParams> ps(N, glif(100, 5, -70, -50, -70, 2.0));
  NetBuilder nb(1.0, ps);
  std::mt19937 gen(17);
  for (int e = 0; e < 2000; ++e)  // repeated (source, target) pairs allowed, as multiplicity
    nb.edge(0, gen() % N, gen() % N, static_cast<int>(gen() % R), 1 + static_cast<int>(gen() % D),
            (static_cast<double>(gen() % 2000) - 700.0) / 37.0);
  Network net = nb.finish();
  ASSERT_EQ(net.max_delay, D);
  const Projection& p = net.projections[0];
  const std::vector<double> w = net.initial_weights(0);
  std::vector<std::int64_t> order;
  auto g = device::group_edges<double, Mem>(p, w, D, "test", order);
  // the grouping is a permutation of the edges, grouped by (source, delay)
  ASSERT_EQ(order.size(), p.size());
  std::vector<int> seen(p.size(), 0);
  auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.offsets);
  for (std::size_t k = 0; k < order.size(); ++k) seen[static_cast<std::size_t>(order[k])]++;
  for (int s : seen) ASSERT_EQ(s, 1);
  for (std::int64_t grp = 0; grp < N * D; ++grp)
    for (std::int64_t k = off(grp); k < off(grp + 1); ++k) {
      const auto e = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
      ASSERT_EQ(p.source[e] * D + p.delay_steps[e] - 1, grp);
    }
  device::SpikeRing<Mem> ring("ring", D, B, N);
  auto hr = Kokkos::create_mirror_view(ring);
  for (int s = 0; s < D; ++s)
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < N; ++j) hr(s, b, j) = (gen() % 5 == 0) ? 1 : 0;
  Kokkos::deep_copy(ring, hr);
  const std::int64_t t = 12;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, Mem> u("u", B, R, N);
  Kokkos::parallel_for("scatter", Kokkos::RangePolicy<Exec>(Exec(), 0, std::int64_t(B) * N * D),
                       device::PropagateFunctor<double, Exec, std::uint8_t>{g, ring, u, t, D});
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  // reference: u[b, i, c] = sum_s w_s z[b, pre_s, t - d_s], the ring slot of step k being k mod D; and the same
  // sum in fixed point, in edge-list order (integer sums do not depend on the order)
  std::vector<double> ref(static_cast<std::size_t>(B * R * N), 0.0);
  std::vector<std::int64_t> ref_fixed(ref.size(), 0);
  for (std::size_t e = 0; e < p.size(); ++e)
    for (int b = 0; b < B; ++b) {
      const auto z = hr(static_cast<int>((t - p.delay_steps[e]) % D), b, p.source[e]);
      const auto q = static_cast<std::size_t>((b * R + p.channel[e]) * N + p.target[e]);
      ref[q] += w[e] * z;
      if (z) ref_fixed[q] += device::to_fixed(w[e]);
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
