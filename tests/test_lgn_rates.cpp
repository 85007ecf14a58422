// LGN rates on the device (docs/visual-input.md): the exact grating path and the movie path against a direct
// evaluation of the model's definition (frames drawn pixel by pixel, the separable spatial sum, the causal
// temporal convolution, the rectified sum over subunits), closed forms of uniform screens, and the Bernoulli
// spikes' mean against the probabilities, in the space's shape (host chunks or device items).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "dpointnet/device/inputs.hpp"
#include "dpointnet/device/lgn_runtime.hpp"
#include "test_execspace.hpp"

using namespace dpointnet;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Three units on a 20 x 30 screen: one ON cell, one OFF cell, one two-subunit cell; hand-made axis weights and
// kernels (the model's values come from lgn_filters, tested on their own).
LgnTables make_tables() {
  LgnTables t;
  t.screen.rows = 20;
  t.screen.cols = 30;
  t.screen.row_spacing = 1.1;
  t.screen.col_spacing = 0.9;
  t.n_units = 3;
  t.sub_offset = {0, 1, 2, 4};
  struct Sub {
    int c0, r0;
    std::vector<double> cw, rw;
    double amp, spont;
    int len;
    double tau, freq;
  };
  const std::vector<Sub> subs = {{3, 4, {0.2, 0.5, 0.3}, {0.25, 0.5, 0.25}, 1.0, 3.0, 40, 6.0, 0.2},
                                 {25, 15, {0.1, 0.3, 0.4, 0.2}, {0.5, 0.5}, -1.0, 5.5, 35, 4.0, 0.35},
                                 {10, 8, {1.0}, {0.3, 0.7}, -2.2, 2.0, 50, 9.0, 0.1},
                                 {14, 9, {0.6, 0.4}, {0.2, 0.3, 0.5}, 1.0, 2.0, 45, 7.0, 0.15}};
  for (const Sub& s : subs) {
    t.col_first.push_back(s.c0);
    t.col_len.push_back(static_cast<int>(s.cw.size()));
    t.col_off.push_back(static_cast<std::int64_t>(t.colw.size()));
    t.colw.insert(t.colw.end(), s.cw.begin(), s.cw.end());
    t.row_first.push_back(s.r0);
    t.row_len.push_back(static_cast<int>(s.rw.size()));
    t.row_off.push_back(static_cast<std::int64_t>(t.roww.size()));
    t.roww.insert(t.roww.end(), s.rw.begin(), s.rw.end());
    t.kernel_len.push_back(s.len);
    t.kernel_off.push_back(static_cast<std::int64_t>(t.kernel.size()));
    for (int l = 0; l < s.len; ++l) t.kernel.push_back(30.0 * std::sin(s.freq * l) * std::exp(-l / s.tau));
    t.amplitude.push_back(s.amp);
    t.spont.push_back(s.spont);
  }
  return t;
}

using Frames = std::vector<std::vector<double>>;  // [frame][row * cols + col]

// The model's definition, evaluated directly: rate(f) = sum_s max(0, A_s sum_l h_s(l) S_s(f - l) + spont_s).
std::vector<double> direct_rates(const LgnTables& t, const Frames& frames) {
  const auto F = static_cast<std::int64_t>(frames.size());
  std::vector<double> out(static_cast<std::size_t>(F * t.n_units), 0.0);
  for (std::int64_t u = 0; u < t.n_units; ++u) {
    for (int s = t.sub_offset[u]; s < t.sub_offset[u + 1]; ++s) {
      std::vector<double> S(static_cast<std::size_t>(F), 0.0);
      for (std::int64_t f = 0; f < F; ++f)
        for (int r = 0; r < t.row_len[s]; ++r)
          for (int c = 0; c < t.col_len[s]; ++c)
            S[f] += t.roww[t.row_off[s] + r] * t.colw[t.col_off[s] + c] *
                    frames[f][(t.row_first[s] + r) * t.screen.cols + t.col_first[s] + c];
      for (std::int64_t f = 0; f < F; ++f) {
        double L = 0;
        for (std::int64_t l = 0; l < t.kernel_len[s] && l <= f; ++l) L += t.kernel[t.kernel_off[s] + l] * S[f - l];
        out[f * t.n_units + u] += std::max(0.0, t.amplitude[s] * L + t.spont[s]);
      }
    }
  }
  return out;
}

// FilterNet's grating frame at local time tau ms: contrast sin(2 pi (sf (x cos th + y sin th) + tf tau / 1000) + ph)
// with th = pi (180 - direction) / 180, ph = pi (180 - phase) / 180, pixel (r, c) at (r dy, c dx).
Frames grating_frames(const LgnScreen& sc, std::int64_t F, std::int64_t pre, std::int64_t post, double dir, double tf,
                      double sf, double con, double phase) {
  Frames fr(static_cast<std::size_t>(F), std::vector<double>(static_cast<std::size_t>(sc.rows * sc.cols), 0.0));
  const double th = kPi * (180 - dir) / 180, ph = kPi * (180 - phase) / 180;
  for (std::int64_t f = pre; f < F - post; ++f)
    for (int r = 0; r < sc.rows; ++r)
      for (int c = 0; c < sc.cols; ++c)
        fr[f][r * sc.cols + c] =
            con * std::sin(2 * kPi *
                               (sf * (c * sc.col_spacing * std::cos(th) + r * sc.row_spacing * std::sin(th)) +
                                tf * static_cast<double>(f - pre) / 1000.0) +
                           ph);
  return fr;
}

StimulusParameter list(std::vector<double> v) {
  StimulusParameter p;
  p.kind = StimulusParameter::Kind::List;
  p.values = std::move(v);
  return p;
}

using Runtime = device::LgnRuntime<TEST_EXECSPACE>;

std::vector<double> device_rates(const LgnTables& t, const StimulusSpec& st, std::shared_ptr<const LgnMovie> movie,
                                 int B, std::int64_t F, std::int64_t offset = 0) {
  Runtime rt;
  TEST_EXECSPACE space;
  LgnInput in;
  in.tables = std::make_shared<const LgnTables>(t);
  in.movie = std::move(movie);
  rt.upload(space, "test.lgn", in, st);
  rt.prepare(space, "test.lgn", "lgn", 11, offset, B, F, 1.0);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rt.probabilities());
  std::vector<double> out(h.size());
  for (std::size_t q = 0; q < h.size(); ++q) out[q] = -std::log1p(-static_cast<double>(h.data()[q])) * 1000.0;
  return out;  // rates (Hz) from the probabilities of 1-ms steps, [F][B][U]
}

void expect_close(double got, double want, const char* what, std::int64_t f, std::int64_t u) {
  EXPECT_NEAR(got, want, 2e-4 * std::max(1.0, std::fabs(want))) << what << " frame " << f << " unit " << u;
}

}  // namespace

TEST(LgnRates, GratingPathEqualsTheDirectEvaluation) {
  const LgnTables t = make_tables();
  StimulusSpec st;
  st.direction = list({0, 33, 250});
  st.temporal_frequency = list({2, 8, 15});
  st.spatial_frequency = list({0.05, 0.1, 0.21});
  st.contrast = list({0.8, 0.3, 1.0});
  st.phase = list({0, 90, 17});
  st.pre_ms = 5;
  st.post_ms = 7;
  const int B = 3;
  const std::int64_t F = 90;
  const std::vector<double> got = device_rates(t, st, nullptr, B, F, 3);  // samples 3, 4, 5: list entries 0, 1, 2
  for (int b = 0; b < B; ++b) {
    const auto want =
        direct_rates(t, grating_frames(t.screen, F, 5, 7, st.direction.values[b], st.temporal_frequency.values[b],
                                       st.spatial_frequency.values[b], st.contrast.values[b], st.phase.values[b]));
    for (std::int64_t f = 0; f < F; ++f)
      for (std::int64_t u = 0; u < t.n_units; ++u)
        expect_close(got[(f * B + b) * t.n_units + u], want[f * t.n_units + u], "grating", f, u);
  }
}

TEST(LgnRates, DirectionConventionDpointnetNegatesTheDirection) {
  const LgnTables t = make_tables();
  StimulusSpec st;
  st.direction.values = {-40};
  st.temporal_frequency.values = {4};
  st.spatial_frequency.values = {0.1};
  st.contrast.values = {0.7};
  st.phase.values = {10};
  StimulusSpec ccw = st;
  ccw.direction.values = {40};
  ccw.dpointnet_direction = true;
  EXPECT_EQ(device_rates(t, st, nullptr, 1, 60), device_rates(t, ccw, nullptr, 1, 60));
  StimulusSpec other = st;
  other.direction.values = {40};
  EXPECT_NE(device_rates(t, st, nullptr, 1, 60), device_rates(t, other, nullptr, 1, 60));
}

TEST(LgnRates, MoviePathEqualsTheDirectEvaluation) {
  const LgnTables t = make_tables();
  const std::int64_t F = 80, pre = 6, post = 4;
  for (const double fps : {1000.0, 500.0}) {
    // a drifting grating as a movie: movie frame m shows local time m * 1000 / fps ms
    const std::int64_t M = 50;
    const Frames gm = grating_frames(t.screen, M, 0, 0, 70, 4.0, 0.08, 0.9, 30);
    auto movie = std::make_shared<LgnMovie>();
    movie->frames = M;
    movie->rows = t.screen.rows;
    movie->cols = t.screen.cols;
    for (const auto& fr : gm)
      for (double v : fr) movie->data.push_back(static_cast<float>(v));
    StimulusSpec st;
    st.type = StimulusType::Movie;
    st.movie_frame_rate = fps;
    st.pre_ms = pre;
    st.post_ms = post;
    // frame f shows movie frame floor((f - pre) fps / 1000) while the movie lasts and before post, grey otherwise
    const auto shown = std::min<std::int64_t>(F - pre - post, static_cast<std::int64_t>(std::ceil(M * 1000.0 / fps)));
    Frames frames(static_cast<std::size_t>(F), std::vector<double>(gm[0].size(), 0.0));
    for (std::int64_t f = pre; f < pre + shown; ++f)
      for (std::size_t q = 0; q < gm[0].size(); ++q)
        frames[f][q] = static_cast<float>(gm[static_cast<std::size_t>((f - pre) * fps / 1000.0)][q]);
    const auto want = direct_rates(t, frames);
    const int B = 2;
    const auto got = device_rates(t, st, movie, B, F);
    for (std::int64_t f = 0; f < F; ++f)
      for (int b = 0; b < B; ++b)
        for (std::int64_t u = 0; u < t.n_units; ++u)
          expect_close(got[(f * B + b) * t.n_units + u], want[f * t.n_units + u], "movie", f, u);
  }
}

TEST(LgnRates, UniformScreensGiveTheClosedForms) {
  const LgnTables t = make_tables();
  for (const double v : {0.0, 0.5, -0.8}) {
    StimulusSpec st;
    st.type = StimulusType::GreyScreen;
    st.contrast.values = {v};
    const std::int64_t F = 60;
    const auto got = device_rates(t, st, nullptr, 1, F);
    for (std::int64_t u = 0; u < t.n_units; ++u) {
      for (std::int64_t f = 0; f < F; ++f) {
        // a screen of value v, filtered by a normalized spatial kernel: L(f) = v sum_{l <= f} h(l)
        double want = 0;
        for (int s = t.sub_offset[u]; s < t.sub_offset[u + 1]; ++s) {
          double cum = 0;
          for (std::int64_t l = 0; l < t.kernel_len[s] && l <= f; ++l) cum += t.kernel[t.kernel_off[s] + l];
          want += std::max(0.0, t.amplitude[s] * v * cum + t.spont[s]);
        }
        expect_close(got[f * t.n_units + u], want, "uniform screen", f, u);
      }
    }
  }
}

TEST(LgnRates, BernoulliSpikesAverageToTheRates) {
  using Mem = TEST_EXECSPACE::memory_space;
  TEST_EXECSPACE space;
  const std::int64_t U = 4, F = 1;
  const int B = 2;
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> prob("prob", F, B, U);
  auto h = Kokkos::create_mirror_view(prob);
  const double hz[U] = {0.0, 5.0, 60.0, 400.0};
  for (int b = 0; b < B; ++b)
    for (std::int64_t u = 0; u < U; ++u) h(0, b, u) = static_cast<float>(1 - std::exp(-hz[u] / 1000.0));
  Kokkos::deep_copy(prob, h);
  device::CountRing<Mem> ring("ring", 1, B, U);
  const int steps = 20000;
  std::vector<double> count(U, 0.0);
  for (int t = 0; t < steps; ++t) {
    device::draw_random_input(space, "test.lgn_spikes",
                              device::LgnSpikesFunctor<TEST_EXECSPACE>{prob, ring, 5, 9, t, 0, 0, U, 0}, B);
    auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ring);
    for (int b = 0; b < B; ++b)
      for (std::int64_t u = 0; u < U; ++u) count[u] += r(0, b, u);
  }
  for (std::int64_t u = 0; u < U; ++u) {
    const double p = 1 - std::exp(-hz[u] / 1000.0), n = double(steps) * B;
    EXPECT_NEAR(count[u] / n, p, 5 * std::sqrt(p * (1 - p) / n) + 1e-12) << hz[u] << " Hz";
  }
}
