// The optimizer kernel against the documented update (docs/model.md section 8, "Optimizer and constraints"):
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,  w -= lr (m / (1 - b1^k)) / (sqrt(v / (1 - b2^k)) + eps),
// then the sign constraint w = max(w, 0) if w0 >= 0 (also -0.0), else min(w, 0); g is the clipped gradient.
// The expected values are hand-derived (first step) or a reference written from that formula in double.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dpointnet/device/adam.hpp"

using dpointnet::device::AdamFunctor;

namespace {

using Space = Kokkos::DefaultExecutionSpace;

template <class Real>
struct AdamRun {
  Kokkos::View<Real*, Space::memory_space> w, w0, m, v, g;
  explicit AdamRun(const std::vector<double>& weights, const std::vector<double>& initial)
      : w("w", weights.size()),
        w0("w0", weights.size()),
        m("m", weights.size()),
        v("v", weights.size()),
        g("g", weights.size()) {
    set(w, weights);
    set(w0, initial);
  }
  static void set(const Kokkos::View<Real*, Space::memory_space>& d, const std::vector<double>& x) {
    auto h = Kokkos::create_mirror_view(d);
    for (std::size_t i = 0; i < x.size(); ++i) h(i) = static_cast<Real>(x[i]);
    Kokkos::deep_copy(d, h);
  }
  static std::vector<double> get(const Kokkos::View<Real*, Space::memory_space>& d) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
    std::vector<double> x(h.extent(0));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(h(i));
    return x;
  }
  // update k (1-based) with gradient `grad` scaled by the clipping factor `scale`
  void step(const std::vector<double>& grad, int k, double lr, double b1, double b2, double eps, double scale = 1) {
    set(g, grad);
    AdamFunctor<Real, Space> f{w, w0, m, v, g, lr, b1, b2, eps, 1 - std::pow(b1, k), 1 - std::pow(b2, k), scale};
    Kokkos::parallel_for("test_adam", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, w.extent(0)), f);
    Kokkos::fence();
  }
};

// docs/model.md section 8 in double, element by element.
struct Reference {
  std::vector<double> w, w0, m, v;
  void step(const std::vector<double>& g_in, int k, double lr, double b1, double b2, double eps, double scale = 1) {
    for (std::size_t e = 0; e < w.size(); ++e) {
      const double g = g_in[e] * scale;
      m[e] = b1 * m[e] + (1 - b1) * g;
      v[e] = b2 * v[e] + (1 - b2) * g * g;
      w[e] -= lr * (m[e] / (1 - std::pow(b1, k))) / (std::sqrt(v[e] / (1 - std::pow(b2, k))) + eps);
      w[e] = w0[e] >= 0 ? std::max(w[e], 0.0) : std::min(w[e], 0.0);  // -0.0 >= 0 holds
    }
  }
};

}  // namespace

TEST(Adam, FirstStepMovesEachWeightByTheLearningRateAgainstItsGradient) {
  // k = 1 from zero moments: m/(1 - b1) = g, v/(1 - b2) = g^2, so w -= lr g / (|g| + eps) (bias correction undoes
  // the (1 - b) factors), whatever the gradient's size.
  const double lr = 0.01, eps = 1e-11;
  AdamRun<double> a({1.0, 2.0, -1.0, -3.0}, {1.0, 2.0, -1.0, -3.0});
  const std::vector<double> g = {0.5, -1e-3, 20.0, -4.0};
  a.step(g, 1, lr, 0.9, 0.999, eps);
  const auto w = AdamRun<double>::get(a.w);
  EXPECT_NEAR(w[0], 1.0 - lr, 1e-12);
  EXPECT_NEAR(w[1], 2.0 + lr, 1e-9);
  EXPECT_NEAR(w[2], -1.0 - lr, 1e-12);
  EXPECT_NEAR(w[3], -3.0 + lr, 1e-12);
  // the moments: m = (1 - b1) g, v = (1 - b2) g^2
  const auto m = AdamRun<double>::get(a.m), v = AdamRun<double>::get(a.v);
  for (std::size_t e = 0; e < g.size(); ++e) {
    EXPECT_NEAR(m[e], 0.1 * g[e], 1e-15 * std::fabs(g[e]) + 1e-300);
    EXPECT_NEAR(v[e], 0.001 * g[e] * g[e], 1e-12 * g[e] * g[e]);
  }
}

TEST(Adam, ClippingScaleActsOnTheGradientBeforeTheMoments) {
  // g = 8 scaled by 0.25 -> effective gradient 2: m = 0.1 * 2, v = 0.001 * 4
  AdamRun<double> a({1.0}, {1.0});
  a.step({8.0}, 1, 1e-3, 0.9, 0.999, 1e-11, 0.25);
  EXPECT_NEAR(AdamRun<double>::get(a.m)[0], 0.2, 1e-15);
  EXPECT_NEAR(AdamRun<double>::get(a.v)[0], 0.004, 1e-15);
  EXPECT_NEAR(AdamRun<double>::get(a.w)[0], 1.0 - 1e-3, 1e-12);
}

TEST(Adam, SignConstraintKeepsEachWeightOnItsInitialSide) {
  // lr 1: the first step moves each weight by about 1 against its gradient, across zero for the first three;
  // w0 = -0.0 counts as non-negative (clamped at 0); w0 > 0 with w already 0 stays >= 0; a negative w0 stops at 0.
  AdamRun<double> a({0.5, -0.0, -0.5, 0.0, 3.0}, {0.5, -0.0, -0.5, 0.0, 3.0});
  a.step({1.0, 1.0, -1.0, -1.0, 1.0}, 1, 1.0, 0.9, 0.999, 1e-11);
  const auto w = AdamRun<double>::get(a.w);
  EXPECT_EQ(w[0], 0.0) << "0.5 - 1 clamped to 0 (w0 > 0)";
  EXPECT_EQ(w[1], 0.0) << "-0.0 - 1 clamped to 0 (w0 = -0.0 counts as non-negative)";
  EXPECT_EQ(w[2], 0.0) << "-0.5 + 1 clamped to 0 (w0 < 0)";
  EXPECT_NEAR(w[3], 1.0, 1e-10) << "0 + 1 allowed (w0 = 0 is non-negative)";
  EXPECT_NEAR(w[4], 2.0, 1e-10);
}

TEST(Adam, SeveralUpdatesFollowTheDocumentedRecurrenceWithBiasCorrection) {
  const double lr = 0.05, b1 = 0.8, b2 = 0.95, eps = 1e-8;
  const std::vector<double> w_init = {0.3, -0.7, 1.5, -0.01, 0.02};
  const std::vector<std::vector<double>> grads = {{0.1, -0.2, 0.3, -0.05, -0.4},
                                                  {-0.3, 0.1, 0.2, -0.05, 0.01},
                                                  {0.2, 0.2, -1.0, 0.5, 0.3},
                                                  {0.0, -0.5, 0.4, 0.1, 2.0}};
  AdamRun<double> a(w_init, w_init);
  Reference r{w_init, w_init, std::vector<double>(5, 0.0), std::vector<double>(5, 0.0)};
  for (std::size_t k = 0; k < grads.size(); ++k) {
    const double scale = k == 2 ? 0.5 : 1.0;
    a.step(grads[k], static_cast<int>(k) + 1, lr, b1, b2, eps, scale);
    r.step(grads[k], static_cast<int>(k) + 1, lr, b1, b2, eps, scale);
    const auto w = AdamRun<double>::get(a.w), m = AdamRun<double>::get(a.m), v = AdamRun<double>::get(a.v);
    for (std::size_t e = 0; e < w.size(); ++e) {
      EXPECT_NEAR(w[e], r.w[e], 1e-13) << "update " << k + 1 << " edge " << e;
      EXPECT_NEAR(m[e], r.m[e], 1e-15) << "update " << k + 1 << " edge " << e;
      EXPECT_NEAR(v[e], r.v[e], 1e-15) << "update " << k + 1 << " edge " << e;
    }
    // the constraint acts in the first update: edge 3 (w0 = -0.01) is pushed up by about lr and stops at 0
    if (k == 0) EXPECT_EQ(w[3], 0.0);
  }
}

TEST(Adam, Float32StoresInFloatAndComputesInDouble) {
  // run.precision float32: weights and moments stored as float, arithmetic in double (docs/model.md section 10):
  // the result is the double reference to float rounding of the stored values.
  const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-11;
  const std::vector<double> w_init = {0.25, -0.125, 2.0};
  AdamRun<float> a(w_init, w_init);
  Reference r{w_init, w_init, std::vector<double>(3, 0.0), std::vector<double>(3, 0.0)};
  const std::vector<std::vector<double>> grads = {{0.5, -0.25, 1.0}, {0.25, 0.5, -2.0}, {-1.0, 0.125, 0.5}};
  for (std::size_t k = 0; k < grads.size(); ++k) {
    a.step(grads[k], static_cast<int>(k) + 1, lr, b1, b2, eps);
    r.step(grads[k], static_cast<int>(k) + 1, lr, b1, b2, eps);
  }
  const auto w = AdamRun<float>::get(a.w);
  for (std::size_t e = 0; e < w.size(); ++e) EXPECT_NEAR(w[e], r.w[e], 4e-7 * std::fabs(r.w[e])) << "edge " << e;
}
