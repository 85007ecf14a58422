// The gather ceiling of the machine for the host spike adjoint (benchmark only; docs/performance.md, "Gather
// ceiling"): its memory pattern without its sparse structure. A table of rows of B adjoint values (the footprint:
// one target block of a gu slot, or a whole slot), a stream of edges (row index, weight) at uniformly random rows,
// and per segment of S edges a partial sum of B values kept in registers, loaded from and stored to a sequential
// array (gz). Edges per second, best of 5, on the default space with all its threads. Also the time of the real
// kernel, from Kokkos Tools callbacks (host backends: kernels run synchronously, so begin to end is their time).
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "dpointnet/util/half_precision.hpp"
#include "dpointnet/util/host_simd.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::bench {

struct GatherProbe {
  Kokkos::View<const float*> table;        // rows x B
  Kokkos::View<const std::int32_t*> rows;  // per edge
  Kokkos::View<const float*> weight;       // per edge
  Kokkos::View<float*> out;                // segments x B
  int B = 16, S = 64;
  std::int64_t n_edges = 0, n_chunks = 1;
  bool two_chains = false;  // two segments at once (two independent chains of adds)
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const {
    const std::int64_t k0 = n_edges / n_chunks * c, k1 = c + 1 == n_chunks ? n_edges : n_edges / n_chunks * (c + 1);
    const std::int64_t step = two_chains ? 2 * S : S;
    for (std::int64_t s0 = k0; s0 < k1; s0 += step) {
      if (two_chains && s0 + 2 * S <= k1) {
        float* const o = &out(s0 / S * B);
        for (int b0 = 0; b0 < B; b0 += 16) {
          compat::HostLanes16<float> r, q;
          r.load(o + b0);
          q.load(o + B + b0);
          for (std::int64_t k = s0; k < s0 + S; ++k) {
            r.add_product(weight(k), &table(rows(k) * B + b0));
            q.add_product(weight(k + S), &table(rows(k + S) * B + b0));
          }
          r.store(o + b0);
          q.store(o + B + b0);
        }
        continue;
      }
      for (std::int64_t a0 = s0; a0 < s0 + step && a0 < k1; a0 += S) {
        const std::int64_t s1 = a0 + S < k1 ? a0 + S : k1;
        float* const o = &out(a0 / S * B);
        for (int b0 = 0; b0 < B; b0 += 16) {
          compat::HostLanes16<float> r;
          r.load(o + b0);
          for (std::int64_t k = a0; k < s1; ++k) r.add_product(weight(k), &table(rows(k) * B + b0));
          r.store(o + b0);
        }
      }
    }
  }
};

// The same pattern with bfloat16 rows and weights (issue 37's question: what 16-bit storage of the adjoint ring and
// the weights would give): 16 values of a row widened to float32 in registers (a shift of their bits), products and
// sums in float32, one chain of adds.
struct GatherProbeBf16 {
  Kokkos::View<const bfloat16*> table;     // rows x B
  Kokkos::View<const std::int32_t*> rows;  // per edge
  Kokkos::View<const bfloat16*> weight;    // per edge
  Kokkos::View<float*> out;                // segments x B
  int B = 16, S = 64;
  std::int64_t n_edges = 0, n_chunks = 1;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const {
    const std::int64_t k0 = n_edges / n_chunks * c, k1 = c + 1 == n_chunks ? n_edges : n_edges / n_chunks * (c + 1);
    for (std::int64_t a0 = k0; a0 < k1; a0 += S) {
      const std::int64_t s1 = a0 + S < k1 ? a0 + S : k1;
      float* const o = &out(a0 / S * B);
      for (int b0 = 0; b0 < B; b0 += 16) {
#if defined(__AVX512F__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
        // a row: 16 bfloat16 zero-extended to 32 bits and shifted up; the weight: broadcast as 16 bits to every
        // half-lane and shifted up (the high half's copy falls out)
        __m512 r = _mm512_loadu_ps(o + b0);
        for (std::int64_t k = a0; k < s1; ++k) {
          const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&table(rows(k) * B + b0)));
          const __m512 x = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
          const __m512 w =
              _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_set1_epi16(static_cast<short>(weight(k).bits)), 16));
          r = _mm512_add_ps(r, _mm512_mul_ps(w, x));
        }
        _mm512_storeu_ps(o + b0, r);
#else
        for (int b = b0; b < b0 + 16; ++b) {
          float r = o[b];
          for (std::int64_t k = a0; k < s1; ++k) r += to_float(weight(k)) * to_float(table(rows(k) * B + b));
          o[b] = r;
        }
#endif
      }
    }
  }
};

// Best of 5 timed runs of launch() (after one untimed), which launches on the instance `space`, fenced: work /
// seconds.
template <class ExecSpace, class Launch>
double best_rate(const ExecSpace& space, const double work, Launch&& launch) {
  double best = 0;
  for (int k = 0; k < 6; ++k) {
    space.fence();
    const auto t0 = std::chrono::steady_clock::now();
    launch();
    space.fence();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (k > 0) best = std::max(best, work / s);
  }
  return best;
}

struct GatherRates {
  double one_chain = 0, two_chains = 0;  // edges per second
  double bf16 = 0;  // one chain, the same rows in bfloat16 (half the footprint) with bfloat16 weights; 0: not run
};

// Edges per second gathered from a table of footprint_bytes (rows of B floats, B a multiple of 16), segments of S,
// with one chain of adds and with two, on the same table and edges.
inline GatherRates gather_edges_per_s(double footprint_bytes, int B, int S,
                                      std::int64_t n_edges = std::int64_t(1) << 23) {
  const auto n_rows = std::max<std::int64_t>(1, static_cast<std::int64_t>(footprint_bytes / (4.0 * B)));
  const Kokkos::DefaultExecutionSpace space;
  using Kokkos::view_alloc;
  Kokkos::View<float*> table(view_alloc(space, "probe.table"), n_rows * B),
      weight(view_alloc(space, "probe.weight"), n_edges), out(view_alloc(space, "probe.out"), (n_edges / S + 1) * B);
  Kokkos::View<std::int32_t*> rows(view_alloc(space, "probe.rows"), n_edges);
  space.fence();  // the host mirrors below may be the views themselves
  {
    auto h_rows = Kokkos::create_mirror_view(rows);
    auto h_w = Kokkos::create_mirror_view(weight);
    std::mt19937_64 rng(12345);
    std::uniform_int_distribution<std::int64_t> pick(0, n_rows - 1);
    for (std::int64_t k = 0; k < n_edges; ++k) {
      h_rows(k) = static_cast<std::int32_t>(pick(rng));
      h_w(k) = 0.5f;
    }
    Kokkos::deep_copy(space, rows, h_rows);
    Kokkos::deep_copy(space, weight, h_w);
    Kokkos::deep_copy(space, table, 1.0f);
    space.fence();  // h_rows and h_w go out of scope
  }
  GatherProbe p{table, rows, weight, out, B, S, n_edges, compat::concurrency(), false};
  auto rate = [&](const bool two) {
    p.two_chains = two;
    return best_rate(space, static_cast<double>(n_edges), [&] {
      Kokkos::parallel_for("bench::gather_probe", Kokkos::RangePolicy<>(space, 0, p.n_chunks), p);
    });
  };
  GatherRates r;
  r.one_chain = rate(false);
  r.two_chains = rate(true);
  if (B % 16 == 0) {  // the same rows and edges in bfloat16
    Kokkos::View<bfloat16*> t16(view_alloc(space, "probe.table_bf16"), n_rows * B),
        w16(view_alloc(space, "probe.weight_bf16"), n_edges);
    Kokkos::parallel_for(
        "bench::gather_probe_to_bf16", Kokkos::RangePolicy<>(space, 0, std::max(n_edges, n_rows * B)),
        KOKKOS_LAMBDA(const std::int64_t k) {
          if (k < n_edges) w16(k) = to_bfloat16(weight(k));
          if (k < n_rows * B) t16(k) = to_bfloat16(table(k));
        });
    GatherProbeBf16 q{t16, rows, w16, out, B, S, n_edges, compat::concurrency()};
    r.bf16 = best_rate(space, static_cast<double>(n_edges), [&] {
      Kokkos::parallel_for("bench::gather_probe_bf16", Kokkos::RangePolicy<>(space, 0, q.n_chunks), q);
    });
  }
  return r;
}

// Seconds and calls of the kernels with the given labels (at most kMax), from Kokkos Tools callbacks while an
// instance lives (one at a time).
class KernelClock {
 public:
  static constexpr int kMax = 4;
  explicit KernelClock(std::initializer_list<const char*> labels) {
    n_ = 0;
    for (const char* l : labels)
      if (n_ < kMax) {
        labels_[n_] = l;
        seconds_[n_] = 0;
        calls_[n_++] = 0;
      }
    namespace E = Kokkos::Tools::Experimental;
    E::set_begin_parallel_for_callback(on_begin);
    E::set_end_parallel_for_callback(on_end);
  }
  ~KernelClock() {
    namespace E = Kokkos::Tools::Experimental;
    E::set_begin_parallel_for_callback(nullptr);
    E::set_end_parallel_for_callback(nullptr);
  }
  KernelClock(const KernelClock&) = delete;
  KernelClock& operator=(const KernelClock&) = delete;
  double seconds(const int q) const { return seconds_[q]; }
  std::int64_t calls(const int q) const { return calls_[q]; }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint64_t kOther = kMax;
  static void on_begin(const char* name, const std::uint32_t, std::uint64_t* id) {
    *id = kOther;
    for (int q = 0; q < n_; ++q)
      if (std::strcmp(name, labels_[q]) == 0) *id = static_cast<std::uint64_t>(q);
    if (*id != kOther) start_ = Clock::now();
  }
  static void on_end(const std::uint64_t id) {
    if (id >= kOther) return;
    seconds_[id] += std::chrono::duration<double>(Clock::now() - start_).count();
    ++calls_[id];
  }
  static inline const char* labels_[kMax] = {};
  static inline double seconds_[kMax] = {};
  static inline std::int64_t calls_[kMax] = {};
  static inline int n_ = 0;
  static inline Clock::time_point start_{};
};

}  // namespace dpointnet::bench
