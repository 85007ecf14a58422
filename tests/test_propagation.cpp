// Synaptic propagation: the event-driven scatter (forward pass), the target-major gather (backward-pass
// layout) and a plain loop over the edge list written from MODEL.md section 4 step 1 must give the same drive.
#include <gtest/gtest.h>

#include "kernels/propagate.hpp"
#include "sim/impl/simulator_impl.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

TEST(Propagation, ScatterGatherAndEdgeListAgree) {
  using Exec = Kokkos::DefaultExecutionSpace;
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
  auto g = group_edges<double, Mem>(net.projections[0], D, N, "test");
  kernels::SpikeRing<Mem> ring("ring", D, B, N);
  auto hr = Kokkos::create_mirror_view(ring);
  for (int s = 0; s < D; ++s)
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < N; ++j) hr(s, b, j) = (gen() % 5 == 0) ? 1 : 0;
  Kokkos::deep_copy(ring, hr);
  const std::int64_t t = 12;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, Mem> u1("u1", B, R, N), u2("u2", B, R, N);
  Kokkos::parallel_for("scatter", Kokkos::RangePolicy<Exec>(0, std::int64_t(B) * N * D),
                       kernels::PropagateFunctor<double, Exec, std::uint8_t>{g, ring, u1, t, D});
  Kokkos::parallel_for("gather", Kokkos::RangePolicy<Exec>(0, std::int64_t(B) * N),
                       kernels::GatherDriveFunctor<double, Exec, std::uint8_t>{g, ring, u2, t, D, N});
  auto h1 = Kokkos::create_mirror_view(u1);
  auto h2 = Kokkos::create_mirror_view(u2);
  Kokkos::deep_copy(h1, u1);
  Kokkos::deep_copy(h2, u2);
  // reference: u[b, i, c] = sum_s w_s z[b, pre_s, t - d_s], the ring slot of step k being k mod D
  std::vector<double> ref(static_cast<std::size_t>(B * R * N), 0.0);
  const Projection& p = net.projections[0];
  for (std::size_t e = 0; e < p.size(); ++e)
    for (int b = 0; b < B; ++b) {
      const auto z = hr(static_cast<int>((t - p.delay_steps[e]) % D), b, p.source[e]);
      ref[static_cast<std::size_t>((b * R + p.channel[e]) * N + p.target[e])] += p.weight[e] * z;
    }
  double worst = 0, scale = 0;
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < R; ++c)
      for (int i = 0; i < N; ++i) {
        const double r = ref[static_cast<std::size_t>((b * R + c) * N + i)];
        ASSERT_EQ(h1(b, c, i), h2(b, c, i)) << "fixed-point sums do not depend on the order of the terms";
        worst = std::max(worst, std::fabs(kernels::from_fixed(h1(b, c, i)) - r));
        scale = std::max(scale, std::fabs(r));
      }
  EXPECT_GT(scale, 1.0);
  EXPECT_LT(worst, 1e-9) << "a few hundred terms, each rounded to 2^-36";
  // the target-major index lists every edge exactly once, grouped by target
  auto toff = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.target_offsets);
  auto bt = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.by_target);
  auto tg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.target);
  std::vector<int> seen(p.size(), 0);
  for (int i = 0; i < N; ++i)
    for (std::int64_t q = toff(i); q < toff(i + 1); ++q) {
      EXPECT_EQ(tg(bt(q)), i);
      seen[static_cast<std::size_t>(bt(q))]++;
    }
  for (int s : seen) EXPECT_EQ(s, 1);
}
