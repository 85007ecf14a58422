// Where the host propagation's time goes (benchmark only; bench/README.md): the kernel's own inner loop
// (PropagateFunctor::add_groups, with its prefetches) on the run's own recurrent edges, fed a made-up activity at the
// run's rates, in three memory patterns:
// * as run: each sample zeroes the live spans of its own drive row [R][N] and adds its active groups into it;
// * rows reused: the samples of one work item add into one drive row (the footprint of a drive row per thread, as
//   a propagation fused with the neuron step would have);
// * edges streamed: each sample's groups are consecutive groups of the edge arrays (as many), so that the edges
//   arrive in order instead of group by group from random places.
// Edge additions per second on the default space with all its threads (work item p takes samples p, p + P, ...).
// Host backends only.
#pragma once
#include <fmt/format.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/propagate.hpp"
#include "dpointnet/network/live_channels.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "gather_probe.hpp"

namespace dpointnet::bench {

template <class Real>
struct PropagationProbe {
  using Exec = Kokkos::DefaultExecutionSpace;
  using Propagate = device::PropagateFunctor<Real, Exec, std::uint8_t>;
  Propagate f;  // e: the run's recurrent edges; u: the drive rows [B][R][N]; zero_spans: their live spans
  Kokkos::View<const std::int64_t*> groups;          // the samples' active groups, one after the other
  Kokkos::View<const std::int64_t*> sample_offsets;  // [B + 1] into groups
  int B = 16, P = 1;
  bool reuse = false;  // work item p adds all its samples into row p
  KOKKOS_INLINE_FUNCTION void operator()(const int p) const {
    for (int b = p; b < B; b += P) {
      std::int64_t* const ub = &f.u(reuse ? p : b, 0, 0);
      const std::int64_t N = static_cast<std::int64_t>(f.u.extent(2));
      f.zero_row(ub, 0, N);
      std::int64_t group[Propagate::kList];
      double count[Propagate::kList];
      int n = 0;
      for (std::int64_t q = sample_offsets(b); q < sample_offsets(b + 1); ++q) {
        group[n] = groups(q);
        count[n] = 1.0;
        if (++n == Propagate::kList) {
          f.add_groups(group, count, n, ub, 0, N);
          n = 0;
        }
      }
      f.add_groups(group, count, n, ub, 0, N);
    }
  }
};

struct PropagationRates {
  double as_run = 0, rows_reused = 0, edges_streamed = 0;  // edge additions per second
  double adds_per_step = 0;                                // of one made-up step, all samples
};

// The three patterns on the recurrent projection of net, B samples whose source j spikes with probability p_spike[j]
// at each of the D previous steps (independently). Each timed run takes a step of its own (6 draws: the first is not
// timed), after 64 MiB have been written over the caches, as the other kernels of a run do between two steps: a
// repeated step would find its edges in the caches. Best of 5.
template <class Real>
PropagationRates propagation_edges_per_s(const Network& net, const int B, const std::vector<double>& p_spike) {
  using Probe = PropagationProbe<Real>;
  const Projection& rec = net.projections[0];
  const int D = net.max_delay;
  std::vector<std::int64_t> order;
  Probe pr;
  const Kokkos::DefaultExecutionSpace space;
  pr.f.e = device::group_edges<Real, Kokkos::DefaultExecutionSpace::memory_space>(
      space, rec, std::vector<double>(rec.size(), 0.5), D, net.n_neurons, "probe.edges", &order, false);
  pr.f.D = D;
  const auto off = compat::mirror_view_and_copy(space, pr.f.e.offsets);
  const std::int64_t n_src = rec.n_sources, n_groups = n_src * D;
  auto upload = [&space](const std::vector<std::int64_t>& v, const char* label) {
    Kokkos::View<std::int64_t*> d(Kokkos::view_alloc(space, std::string(label)), std::max<std::size_t>(1, v.size()));
    auto h = Kokkos::create_mirror_view(d);
    space.fence();  // h may be d itself
    for (std::size_t k = 0; k < v.size(); ++k) h(k) = v[k];
    Kokkos::deep_copy(space, d, h);
    space.fence();  // h goes out of scope
    return d;
  };
  struct Draw {
    Kokkos::View<std::int64_t*> random, streamed, offsets;
    double adds = 0, adds_streamed = 0;
  };
  constexpr int kDraws = 6;
  std::vector<Draw> draws(kDraws);
  std::mt19937_64 rng(2027);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (Draw& w : draws) {
    std::vector<std::int64_t> random_groups, streamed_groups, offsets{0};
    for (int b = 0; b < B; ++b) {
      std::int64_t n = 0;
      for (int d = 1; d <= D; ++d)  // as the kernel lists them: delay by delay, sources in order
        for (std::int64_t j = 0; j < n_src; ++j)
          if (uniform(rng) < p_spike[static_cast<std::size_t>(j)]) {
            const std::int64_t g = device::group_index(j, d, n_src);
            random_groups.push_back(g);
            w.adds += static_cast<double>(off(g + 1) - off(g));
            ++n;
          }
      // as many groups, consecutive from a random first one (n <= n_groups)
      const std::int64_t g0 = std::uniform_int_distribution<std::int64_t>(0, n_groups - n)(rng);
      for (std::int64_t g = g0; g < g0 + n; ++g) {
        streamed_groups.push_back(g);
        w.adds_streamed += static_cast<double>(off(g + 1) - off(g));
      }
      offsets.push_back(static_cast<std::int64_t>(random_groups.size()));
    }
    w.random = upload(random_groups, "probe.groups");
    w.streamed = upload(streamed_groups, "probe.groups_streamed");
    w.offsets = upload(offsets, "probe.sample_offsets");
  }
  const LiveChannels lc = live_channels(net, device::NeuronConstants<Real, Kokkos::HostSpace>::kLiveBlock);
  pr.f.zero_spans = upload(lc.span, "probe.spans");
  pr.f.u = decltype(pr.f.u)(Kokkos::view_alloc(space, "probe.drive"), B, net.n_channels, net.n_neurons);
  pr.B = B;
  pr.P = std::min(B, compat::concurrency());
  Kokkos::View<float*> evict(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "probe.evict"),
                             std::int64_t(1) << 24);  // written whole before each timed run
  enum class Pattern { AsRun, RowsReused, EdgesStreamed };
  auto rate = [&](const Pattern pattern) {
    pr.reuse = pattern == Pattern::RowsReused;
    double best = 0;
    for (int k = 0; k < kDraws; ++k) {
      const Draw& w = draws[static_cast<std::size_t>(k)];
      pr.groups = pattern == Pattern::EdgesStreamed ? w.streamed : w.random;
      pr.sample_offsets = w.offsets;
      Kokkos::deep_copy(space, evict, static_cast<float>(k));
      space.fence();
      const auto t0 = std::chrono::steady_clock::now();
      Kokkos::parallel_for("bench::propagation_probe", Kokkos::RangePolicy<>(space, 0, pr.P), pr);
      space.fence();
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (k > 0) best = std::max(best, (pattern == Pattern::EdgesStreamed ? w.adds_streamed : w.adds) / sec);
    }
    return best;
  };
  PropagationRates r;
  for (const Draw& w : draws) r.adds_per_step += w.adds / kDraws;
  r.as_run = rate(Pattern::AsRun);
  r.rows_reused = rate(Pattern::RowsReused);
  r.edges_streamed = rate(Pattern::EdgesStreamed);
  return r;
}

// The recurrent propagation's time per call in the timed updates (kernel_seconds over calls) against the probe at
// the run's rates: spikes(b, j) of source j in sample b over the `steps` steps of the last update. Milliseconds per
// step, and edge additions per second for the additions that these rates give (the kernel's: the mean over its
// steps, as if every step had the mean rates).
template <class Real>
void propagation_ceiling(const Network& net, const int B, const int steps, const std::vector<double>& spikes,
                         const double kernel_seconds, const std::int64_t calls) {
  if (!compat::host_execution<Kokkos::DefaultExecutionSpace>) {
    fmt::print("propagation: host backends only\n");
    return;
  }
  if (net.projections.empty() || net.projections[0].size() == 0 || calls == 0) {
    fmt::print("propagation: no recurrent edges\n");
    return;
  }
  const Projection& rec = net.projections[0];
  std::vector<double> p(static_cast<std::size_t>(rec.n_sources), 0.0), fan_out(p.size(), 0.0);
  for (int b = 0; b < B; ++b)
    for (std::size_t j = 0; j < p.size(); ++j) p[j] += spikes[static_cast<std::size_t>(b) * p.size() + j] / (B * steps);
  for (const std::int64_t j : rec.source) fan_out[static_cast<std::size_t>(j)] += 1;
  double kernel_adds = 0;  // per step, all samples
  for (std::size_t j = 0; j < p.size(); ++j) kernel_adds += B * p[j] * fan_out[j];
  const PropagationRates r = propagation_edges_per_s<Real>(net, B, p);
  const double a = r.adds_per_step, per_call = kernel_seconds / static_cast<double>(calls);
  fmt::print(
      "propagation: propagate_recurrent {:.3f} ms per call ({} calls), {:.3g} M edge additions per step at the run's "
      "rates: {:.3g} G/s; probe ({:.3g} M): as run {:.3f} ms ({:.3g} G/s), drive rows reused {:.3f} ms ({:.3g} G/s), "
      "edges streamed {:.3f} ms ({:.3g} G/s)\n",
      1e3 * per_call, calls, kernel_adds / 1e6, kernel_adds / per_call / 1e9, a / 1e6, 1e3 * a / r.as_run,
      r.as_run / 1e9, 1e3 * a / r.rows_reused, r.rows_reused / 1e9, 1e3 * a / r.edges_streamed, r.edges_streamed / 1e9);
}

}  // namespace dpointnet::bench
