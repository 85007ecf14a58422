// LGN firing rates on the device (docs/visual-input.md): per batch, the rate r of every unit, sample and 1-ms
// frame of the stimulus, stored as the step's spike probability p = 1 - exp(-r dt) in a table
// [frame][sample][unit]; per step, Bernoulli spikes from it.
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>

#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/device/rng.hpp"
#include "dpointnet/util/host_simd.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet::device {

// The cells' flat tables (inputs/lgn_input.hpp, LgnTables) on the device.
template <class MemSpace>
struct LgnCellViews {
  Kokkos::View<const std::int32_t*, MemSpace> sub_offset, col_first, row_first, col_len, row_len, kernel_len;
  Kokkos::View<const std::int64_t*, MemSpace> col_off, row_off, kernel_off;
  Kokkos::View<const double*, MemSpace> amplitude, spont, colw, roww, kernel;
  double row_spacing = 1, col_spacing = 1;
  std::int64_t n_units = 0;
};

// Per-sample grating parameters, in the kernels' units.
enum LgnParam : int { kKx = 0, kKy, kOmega, kPhase, kContrast, kLgnParams };

// Gratings, exactly: a sinusoid's spatial sum over a separable kernel is one complex number per subunit and
// sample, Z = (sum_c colw e^{i kx x_c}) (sum_r roww e^{i ky y_r}); the causal temporal filter of the grating
// e^{i omega tau}, shown for frames [pre, pre + D), is e^{i omega tau} (Q(min(tau, L-1)) - Q(tau - D)) with the
// prefix sums Q(m) = sum_{l <= m} h(l) e^{-i omega l}, accumulated as tau advances; the complex exponentials
// advance by rotations (no sine per frame; the rounding of 700 rotations stays near 1e-13). One item per
// (sample, unit).
template <class ExecSpace>
struct LgnGratingFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  LgnCellViews<MemSpace> c;
  Kokkos::View<const double**, Kokkos::LayoutRight, MemSpace> par;  // [B][kLgnParams]
  Kokkos::View<float***, Kokkos::LayoutRight, MemSpace> prob;       // [F][B][U]
  std::int64_t frames, pre, shown;
  double dt_s;  // step (s)

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const std::int64_t u = idx % c.n_units;
    const int b = static_cast<int>(idx / c.n_units);
    const double kx = par(b, kKx), ky = par(b, kKy), w = par(b, kOmega), ph = par(b, kPhase), con = par(b, kContrast);
    const int s0 = c.sub_offset(u), ns = c.sub_offset(u + 1) - s0;
    double zr[2] = {0, 0}, zi[2] = {0, 0}, hr[2] = {0, 0}, hi[2] = {0, 0}, lr[2] = {0, 0}, li[2] = {0, 0};
    std::int64_t mh[2] = {-1, -1}, ml[2] = {-1, -1};
    for (int k = 0; k < ns; ++k) {
      const int s = s0 + k;
      double cr = 0, ci = 0, rr = 0, ri = 0;
      for (int q = 0; q < c.col_len(s); ++q) {
        const double a = kx * (c.col_first(s) + q) * c.col_spacing, g = c.colw(c.col_off(s) + q);
        cr += g * compat::cos(a);
        ci += g * compat::sin(a);
      }
      for (int q = 0; q < c.row_len(s); ++q) {
        const double a = ky * (c.row_first(s) + q) * c.row_spacing, g = c.roww(c.row_off(s) + q);
        rr += g * compat::cos(a);
        ri += g * compat::sin(a);
      }
      zr[k] = cr * rr - ci * ri;
      zi[k] = cr * ri + ci * rr;
    }
    // rotations by e^{i w}: P = contrast Z e^{i (ph + w tau)} per frame, the next prefix terms' e^{-i w m}
    const double cw = compat::cos(w), sw = compat::sin(w);
    double pr[2], pi[2], nhr[2] = {1, 1}, nhi[2] = {0, 0}, nlr[2] = {1, 1}, nli[2] = {0, 0};
    for (int k = 0; k < ns; ++k) {
      const double er = compat::cos(ph), ei = compat::sin(ph);
      pr[k] = con * (er * zr[k] - ei * zi[k]);
      pi[k] = con * (er * zi[k] + ei * zr[k]);
    }
    for (std::int64_t f = 0; f < frames; ++f) {
      double rate = 0;
      for (int k = 0; k < ns; ++k) {
        const int s = s0 + k;
        double drive = 0;
        if (f >= pre) {
          const std::int64_t tau = f - pre, last = c.kernel_len(s) - 1, k0 = c.kernel_off(s);
          for (const std::int64_t top = tau < last ? tau : last; mh[k] < top;) {
            const double h = c.kernel(k0 + ++mh[k]), r = nhr[k];
            hr[k] += h * nhr[k];
            hi[k] += h * nhi[k];
            nhr[k] = r * cw + nhi[k] * sw;
            nhi[k] = nhi[k] * cw - r * sw;
          }
          for (const std::int64_t top = tau - shown < last ? tau - shown : last; ml[k] < top;) {
            const double h = c.kernel(k0 + ++ml[k]), r = nlr[k];
            lr[k] += h * nlr[k];
            li[k] += h * nli[k];
            nlr[k] = r * cw + nli[k] * sw;
            nli[k] = nli[k] * cw - r * sw;
          }
          // Im(P (Qhi - Qlo)), then P advances by one frame
          const double qr = hr[k] - lr[k], qi = hi[k] - li[k], r = pr[k];
          drive = pr[k] * qi + pi[k] * qr;
          pr[k] = r * cw - pi[k] * sw;
          pi[k] = r * sw + pi[k] * cw;
        }
        const double v = c.amplitude(s) * drive + c.spont(s);
        rate += v > 0 ? v : 0;
      }
      prob(f, b, u) = static_cast<float>(-compat::expm1(-rate * dt_s));
    }
  }
};

// Movies, step 1: each subunit's spatial sum of each movie frame, S[frame][subunit].
template <class ExecSpace>
struct LgnMovieSpatialFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  LgnCellViews<MemSpace> c;
  Kokkos::View<const float***, Kokkos::LayoutRight, MemSpace> movie;  // [frames][rows][cols]
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> spatial;      // [frames][subunits]
  std::int64_t n_sub;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const std::int64_t s = idx % n_sub, m = idx / n_sub;
    double acc = 0;
    for (int r = 0; r < c.row_len(s); ++r) {
      double row = 0;
      for (int q = 0; q < c.col_len(s); ++q)
        row += c.colw(c.col_off(s) + q) * movie(m, c.row_first(s) + r, c.col_first(s) + q);
      acc += c.roww(c.row_off(s) + r) * row;
    }
    spatial(m, s) = acc;
  }
};

// Movies, step 2: the causal temporal filter of each subunit's spatial sums and the rectified sum over the
// unit's subunits, the same for every sample. Frame f shows movie frame floor((f - pre) * rate / 1000) for
// f in [pre, pre + shown), grey (0) otherwise.
template <class ExecSpace>
struct LgnMovieTemporalFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  LgnCellViews<MemSpace> c;
  Kokkos::View<const double**, Kokkos::LayoutRight, MemSpace> spatial;  // [movie frames][subunits]
  Kokkos::View<float***, Kokkos::LayoutRight, MemSpace> prob;           // [F][B][U]
  std::int64_t pre, shown;
  double frames_per_ms, dt_s;
  int batch;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const std::int64_t u = idx % c.n_units, f = idx / c.n_units;
    double rate = 0;
    for (int s = c.sub_offset(u); s < c.sub_offset(u + 1); ++s) {
      const std::int64_t k0 = c.kernel_off(s);
      double drive = 0;
      // lags l with f - l in [pre, pre + shown)
      const std::int64_t lo = f - pre - shown + 1 > 0 ? f - pre - shown + 1 : 0;
      const std::int64_t hi_l = f - pre < c.kernel_len(s) - 1 ? f - pre : c.kernel_len(s) - 1;
      for (std::int64_t l = lo; l <= hi_l; ++l) {
        auto m = static_cast<std::int64_t>(static_cast<double>(f - l - pre) * frames_per_ms + 1e-9);
        if (m >= static_cast<std::int64_t>(spatial.extent(0))) m = static_cast<std::int64_t>(spatial.extent(0)) - 1;
        drive += c.kernel(k0 + l) * spatial(m, s);
      }
      const double v = c.amplitude(s) * drive + c.spont(s);
      rate += v > 0 ? v : 0;
    }
    const auto p = static_cast<float>(-compat::expm1(-rate * dt_s));
    for (int b = 0; b < batch; ++b) prob(f, b, u) = p;
  }
};

// One step's spikes: x = 1 iff u < p for each (sample, unit), u drawn per (seed, purpose, global sample, step,
// unit) like every random input.
template <class ExecSpace>
struct LgnSpikesFunctor {
  using MemSpace = typename ExecSpace::memory_space;
  Kokkos::View<const float***, Kokkos::LayoutRight, MemSpace> prob;  // [F][B][U]
  CountRing<MemSpace> ring;
  std::uint32_t seed, purpose;
  std::int64_t t, frame, sample_offset, n_src;
  int slot;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const std::int64_t j = idx % n_src, b = idx / n_src;
    const double u = uniform01(seed, purpose, static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(t),
                               static_cast<std::uint32_t>(sample_offset + b));
    ring(slot, static_cast<int>(b), j) = u < static_cast<double>(prob(frame, b, j)) ? 1 : 0;
  }
  // Hosts: item (b, c) draws units [c kChunk, (c + 1) kChunk) of sample b, the uniforms in a vector loop; the same
  // draws as the item-per-(sample, unit) shape.
  struct HostChunks {};
  static constexpr std::int64_t kChunk = 256;
  KOKKOS_INLINE_FUNCTION std::int64_t chunks() const { return (n_src + kChunk - 1) / kChunk; }
  KOKKOS_INLINE_FUNCTION void operator()(HostChunks, const std::int64_t item) const {
    const std::int64_t b = item / chunks(), j0 = (item % chunks()) * kChunk;
    const int m = static_cast<int>(n_src - j0 < kChunk ? n_src - j0 : kChunk);
    const auto step = static_cast<std::uint32_t>(t), sample = static_cast<std::uint32_t>(sample_offset + b);
    double u[kChunk];
    DPOINTNET_HOST_SIMD
    for (int q = 0; q < m; ++q) u[q] = uniform01(seed, purpose, static_cast<std::uint32_t>(j0 + q), step, sample);
    std::uint16_t* const out = &ring(slot, static_cast<int>(b), j0);
    const float* const p = &prob(frame, b, j0);
    DPOINTNET_HOST_SIMD
    for (int q = 0; q < m; ++q) out[q] = u[q] < static_cast<double>(p[q]) ? 1 : 0;
  }
};

}  // namespace dpointnet::device
