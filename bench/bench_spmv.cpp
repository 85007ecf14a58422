// Spike-adjoint benchmark (not a test): the recurrent read of one reverse step,
//   gz(j, b) = rate_grad(j, b) + rdamp sum_{d = 1..D} sum_{k in group (j, d)} w_k gu(slot(t + d), c_k, target_k, b),
// computed on the same generated network, edges and pseudo-random adjoint ring by
//   hand:        device::SpikeAdjointFunctor, launched as BpttEngine::reverse_step launches it;
//   kk-delay-R:  KokkosSparse::spmv, D calls per step (A_d: n x R N, column c N + target), X_d = the ring slot of
//                delay d as a LayoutRight [R N][B] view (no copy), Y = gz (preset to rate_grad, beta = 1);
//   kk-ring-R:   one spmv per step: A_p (p = t mod D) has every edge of row j in the kernel's order, column
//                slot(t + d) R N + c N + target, into the whole ring viewed as LayoutRight [D R N][B] (D column
//                arrays, one per phase; row map and values shared);
//   kk-ring-R1:  kk-ring-R with rdamp folded into the matrix values (alpha = 1);
//   kk-delay-L:  as kk-delay-R on LayoutLeft copies; the per-step copies (the slot written by the step, and gz
//                back to LayoutRight) are timed too.
// All delays are live (t + D < T): the sequence-end cut of the kernel is not modelled by the spmv forms.
// Prints seconds per step, edge-samples per second, the time ratio to hand and the relative L2 difference of gz
// to hand (float32, largest over D consecutive steps, i.e. over every ring phase).
//
//   dpointnet-bench-spmv [--neurons 5000] [--batch 16] [--steps 100] [--workdir /tmp/dpointnet-bench] [--threads N]
#if defined(DPOINTNET_HAVE_KOKKOSKERNELS)
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <vector>

#include "bench_network.hpp"
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/device/adjoint.hpp"
#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/spike_adjoint.hpp"
#include "dpointnet/device/surrogate.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"

// No using-directive at file scope: dpointnet::log would clash with ::log of the CUDA math headers.
namespace dpointnet::bench {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Dev = Kokkos::Device<Exec, Mem>;
using Crs = KokkosSparse::CrsMatrix<float, int, Dev, void, int>;  // int ordinals and offsets: the ETI types
using MatR = Kokkos::View<float**, Kokkos::LayoutRight, Dev>;
using MatL = Kokkos::View<float**, Kokkos::LayoutLeft, Dev>;
using ConstMatR = Kokkos::View<const float**, Kokkos::LayoutRight, Dev, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Deterministic pseudo-random float in [-1, 1) from an index (splitmix64 finalizer).
KOKKOS_INLINE_FUNCTION float hashed_uniform(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<float>(static_cast<double>(x >> 40) * (1.0 / 8388608.0) - 1.0);
}

template <class V>
void fill_hashed(const Exec& space, const V& v, std::uint64_t seed, const char* label) {
  float* p = v.data();
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<Exec>(space, 0, static_cast<std::int64_t>(v.span())),
      KOKKOS_LAMBDA(const std::int64_t i) {
        p[i] = hashed_uniform(seed * 0x100000000ull + static_cast<std::uint64_t>(i));
      });
}

// A device view of a host vector's values, allocated and copied on `space` (every element written).
template <class T>
Kokkos::View<T*, Dev> upload(const Exec& space, const std::string& label, const std::vector<T>& vec) {
  Kokkos::View<T*, Dev> dev(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), vec.size());
  auto h = Kokkos::create_mirror_view(dev);
  for (std::size_t q = 0; q < vec.size(); ++q) h(q) = vec[q];
  Kokkos::deep_copy(space, dev, h);
  space.fence();  // h goes out of scope
  return dev;
}

// Builds a CrsMatrix from host arrays (copied to the device on `space`).
Crs make_crs(const Exec& space, const std::string& label, int nrows, int ncols, const std::vector<int>& rows,
             const std::vector<int>& cols, const std::vector<float>& vals) {
  const auto r = upload(space, label + ".row_map", rows);
  const auto c = upload(space, label + ".entries", cols);
  const auto v = upload(space, label + ".values", vals);
  return Crs(label, nrows, ncols, static_cast<int>(vals.size()), v, r, c);
}

double rel_l2(const Exec& space, const MatR& ref, const MatR& x) {
  auto a = compat::mirror_view_and_copy(space, ref);
  auto b = compat::mirror_view_and_copy(space, x);
  double num = 0, den = 0;
  for (std::size_t q = 0; q < a.span(); ++q) {
    const double d = static_cast<double>(a.data()[q]) - static_cast<double>(b.data()[q]);
    num += d * d;
    den += static_cast<double>(a.data()[q]) * static_cast<double>(a.data()[q]);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

int run(int argc, char** argv) {
  CLI::App app{"dpointnet spike-adjoint benchmark: hand-written kernel vs KokkosSparse::spmv"};
  std::int64_t n = 5000;
  int batch = 16, steps = 100, threads = 0;
  std::string workdir = "/tmp/dpointnet-bench";
  app.add_option("--neurons", n);
  app.add_option("--batch", batch);
  app.add_option("--steps", steps, "timed reverse steps per variant (after a warm-up)");
  app.add_option("--workdir", workdir);
  app.add_option("--threads", threads);
  CLI11_PARSE(app, argc, argv);
  bench::start(threads);
  {
    const std::string dir = bench::bench_network(workdir, n);
    const SimulationConfig cfg = SimulationConfig::load(dir + "/config.simulation.json");
    const Network net = build_network(cfg);
    const int D = net.max_delay, R = net.n_channels, B = batch;
    const std::int64_t N = net.n_neurons, RN = R * N;
    const float rdamp = static_cast<float>(device::BackwardParams{}.rdamp);
    if (D * RN >= (std::int64_t(1) << 31) || net.projections[0].size() >= (std::size_t(1) << 31))
      throw std::runtime_error("network too large for int ordinals/offsets");
    std::vector<std::int64_t> order;
    // one instance for everything (KokkosSparse::spmv runs on the default one)
    const Exec space;
    using Kokkos::view_alloc;
    const auto e = device::group_edges<float, Mem>(
        space, net.projections[0], net.initial_weights(0), D, N, "bench.recurrent", &order,
        device::device_shape<Kokkos::DefaultExecutionSpace>(device::KernelShape::Auto));
    const std::int64_t E = static_cast<std::int64_t>(e.weight.extent(0));

    // adjoint state of the kernel (only what the spike adjoint reads and writes)
    device::Adjoint<float, Mem> a;
    a.gu = decltype(a.gu)(view_alloc(space, "bench.gu"), D, R, N, B);
    a.rate_grad = decltype(a.rate_grad)(view_alloc(space, "bench.rate_grad"), N, B);
    a.gz = decltype(a.gz)(view_alloc(space, "bench.gz_hand"), N, B);
    fill_hashed(space, a.gu, 1, "bench::fill_gu");
    fill_hashed(space, a.rate_grad, 2, "bench::fill_rate_grad");
    MatR gz_kk(view_alloc(space, "bench.gz_kk"), N, B);

    // the matrices, from the grouped edges
    auto h_off = compat::mirror_view_and_copy(space, e.offsets);
    auto h_line = compat::mirror_view_and_copy(space, e.line);
    auto h_w = compat::mirror_view_and_copy(space, e.weight);
    auto col_of = [&](std::int64_t k) { return static_cast<int>(h_line(k)); };  // channel * N + target
    std::vector<Crs> A_delay, A_ring;
    for (int d = 1; d <= D; ++d) {
      std::vector<int> rows{0}, cols;
      std::vector<float> vals;
      for (std::int64_t j = 0; j < N; ++j) {
        for (std::int64_t k = h_off(e.group(j, d)); k < h_off(e.group(j, d) + 1); ++k) {
          cols.push_back(col_of(k));
          vals.push_back(h_w(k));
        }
        rows.push_back(static_cast<int>(cols.size()));
      }
      A_delay.push_back(make_crs(space, "bench.A_delay" + std::to_string(d), static_cast<int>(N), static_cast<int>(RN),
                                 rows, cols, vals));
    }
    {
      // one row per source: its groups d = 1..D in turn (the grouped edges are delay-major)
      std::vector<int> rows{0};
      std::vector<float> vals;
      for (std::int64_t j = 0; j < N; ++j) {
        for (int d = 1; d <= D; ++d)
          for (std::int64_t k = h_off(e.group(j, d)); k < h_off(e.group(j, d) + 1); ++k) vals.push_back(h_w(k));
        rows.push_back(static_cast<int>(vals.size()));
      }
      for (int p = 0; p < D; ++p) {  // phase p = t mod D: delay d reads slot (p + d) mod D
        std::vector<int> cols;
        cols.reserve(static_cast<std::size_t>(E));
        for (std::int64_t j = 0; j < N; ++j)
          for (int d = 1; d <= D; ++d) {
            const int slot = (p + d) % D;
            for (std::int64_t k = h_off(e.group(j, d)); k < h_off(e.group(j, d) + 1); ++k)
              cols.push_back(slot * static_cast<int>(RN) + col_of(k));
          }
        if (p == 0) {
          A_ring.push_back(
              make_crs(space, "bench.A_ring0", static_cast<int>(N), static_cast<int>(D * RN), rows, cols, vals));
        } else {  // the same row map and values, another column array
          const auto c = upload(space, "bench.A_ring" + std::to_string(p) + ".entries", cols);
          A_ring.push_back(Crs("bench.A_ring" + std::to_string(p), static_cast<int>(N), static_cast<int>(D * RN),
                               static_cast<int>(E), A_ring[0].values, A_ring[0].graph.row_map, c));
        }
      }
    }
    // kk-ring-R1: rdamp folded into the values (alpha = 1, the spmv's cheapest alpha path); same graphs
    std::vector<Crs> A_ring1;
    {
      Kokkos::View<float*, Dev> v1(view_alloc(space, Kokkos::WithoutInitializing, "bench.A_ring1.values"),
                                   static_cast<std::size_t>(E));  // written whole below
      const auto v0 = A_ring[0].values;
      Kokkos::parallel_for(
          "bench::scale_values", Kokkos::RangePolicy<Exec>(space, 0, E),
          KOKKOS_LAMBDA(const std::int64_t k) { v1(k) = rdamp * v0(k); });
      for (int p = 0; p < D; ++p)
        A_ring1.push_back(Crs("bench.A_ring1_" + std::to_string(p), static_cast<int>(N), static_cast<int>(D * RN),
                              static_cast<int>(E), v1, A_ring[0].graph.row_map, A_ring[p].graph.entries));
    }
    auto slot_view = [&](int slot) {  // ring slot as [R N][B], no copy
      return ConstMatR(a.gu.data() + static_cast<std::size_t>(slot) * RN * B, RN, B);
    };
    const ConstMatR ring_view(a.gu.data(), D * RN, B);

    // LayoutLeft copies: the ring slots, rate_grad, and Y
    std::vector<MatL> guL;
    for (int s = 0; s < D; ++s) guL.emplace_back(view_alloc(space, "bench.guL" + std::to_string(s)), RN, B);
    MatL rgL(view_alloc(space, "bench.rate_grad_left"), N, B), yL(view_alloc(space, "bench.y_left"), N, B);
    Kokkos::deep_copy(space, rgL, a.rate_grad);
    auto slot_to_left = [&](int slot) {
      const float* src = a.gu.data() + static_cast<std::size_t>(slot) * RN * B;
      const MatL dst = guL[static_cast<std::size_t>(slot)];
      const int nb = B;
      Kokkos::parallel_for(
          "bench::gu_slot_to_layout_left", Kokkos::RangePolicy<Exec>(space, 0, RN * B),
          KOKKOS_LAMBDA(const std::int64_t q) { dst(q / nb, static_cast<int>(q % nb)) = src[q]; });
    };
    for (int s = 0; s < D; ++s) slot_to_left(s);

    // one reverse step t of each variant
    const std::int64_t T = steps + 4 * static_cast<std::int64_t>(D) + 16, t_top = T - D - 1;
    using Teams = compat::SampleTeams<Exec>;
    using SA = device::SpikeAdjointFunctor<float, float, Exec>;
    auto hand = [&](std::int64_t t) { device::spike_adjoint(space, SA{e, a, rdamp, t, T, N, D, B}); };
    auto kk_delay_right = [&](std::int64_t t) {
      Kokkos::deep_copy(space, gz_kk, a.rate_grad);
      for (int d = 1; d <= D; ++d)
        KokkosSparse::spmv("N", rdamp, A_delay[static_cast<std::size_t>(d - 1)],
                           slot_view(static_cast<int>((t + d) % D)), 1.0f, gz_kk);
    };
    auto kk_ring_right = [&](std::int64_t t) {
      Kokkos::deep_copy(space, gz_kk, a.rate_grad);
      KokkosSparse::spmv("N", rdamp, A_ring[static_cast<std::size_t>(t % D)], ring_view, 1.0f, gz_kk);
    };
    auto kk_ring_right1 = [&](std::int64_t t) {
      Kokkos::deep_copy(space, gz_kk, a.rate_grad);
      KokkosSparse::spmv("N", 1.0f, A_ring1[static_cast<std::size_t>(t % D)], ring_view, 1.0f, gz_kk);
    };
    auto kk_delay_left = [&](std::int64_t t) {
      slot_to_left(static_cast<int>(t % D));  // the slot the step's neuron adjoint writes
      Kokkos::deep_copy(space, yL, rgL);
      for (int d = 1; d <= D; ++d)
        KokkosSparse::spmv("N", rdamp, A_delay[static_cast<std::size_t>(d - 1)],
                           guL[static_cast<std::size_t>((t + d) % D)], 1.0f, yL);
      const MatL y = yL;
      const MatR gz = gz_kk;
      const int nb = B;
      Kokkos::parallel_for(
          "bench::gz_to_layout_right", Kokkos::RangePolicy<Exec>(space, 0, N * B), KOKKOS_LAMBDA(const std::int64_t q) {
            gz(q / nb, static_cast<int>(q % nb)) = y(q / nb, static_cast<int>(q % nb));
          });
    };
    auto seconds_per_step = [&](const std::function<void(std::int64_t)>& f) {
      for (int s = 0; s < std::min(steps, 10); ++s) f(t_top - s);  // warm-up
      space.fence();
      const auto t0 = std::chrono::steady_clock::now();
      for (int s = 0; s < steps; ++s) f(t_top - s);
      space.fence();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
    };

    fmt::print("{} neurons, {} recurrent edges, D={} R={} B={} T={}, {} threads, Kokkos {}\n", N, E, D, R, B, T,
               compat::concurrency(), compat::kokkos_version_string());
    const double s_hand = seconds_per_step(hand);
    auto report = [&](const char* name, double s, double agree) {
      fmt::print(
          "{:>7} neurons {:>10} edges B={:<3} {:<11}: {:.4e} s/step  {:.3e} edge-samples/s  time/hand {:.3f}  "
          "rel L2 vs hand {:.2e}\n",
          N, E, B, name, s, static_cast<double>(E) * B / s, s / s_hand, agree);
    };
    report("hand", s_hand, 0.0);
    const std::vector<std::pair<const char*, std::function<void(std::int64_t)>>> variants = {
        {"kk-delay-R", kk_delay_right},
        {"kk-ring-R", kk_ring_right},
        {"kk-ring-R1", kk_ring_right1},
        {"kk-delay-L", kk_delay_left}};
    for (const auto& [name, f] : variants) {
      const double s = seconds_per_step(f);
      double worst = 0;
      for (int q = 0; q < D; ++q) {  // every ring phase
        hand(t_top - q);
        f(t_top - q);
        space.fence();
        worst = std::max(worst, rel_l2(space, a.gz, gz_kk));
      }
      report(name, s, worst);
    }
  }
  Kokkos::finalize();
  return 0;
}

}  // namespace dpointnet::bench

int main(int argc, char** argv) { return dpointnet::bench::run(argc, argv); }
#else
#include <cstdio>
int main() {
  std::fprintf(stderr, "dpointnet-bench-spmv needs Kokkos Kernels (DPOINTNET_HAVE_KOKKOSKERNELS)\n");
  return 1;
}
#endif
