// The exponentiated Adam kernel against its documented update (docs/model.md section 8; V1-PAPER section 4.4):
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,  alpha = lr sqrt(1 - b2^k) / (1 - b1^k),
//   w *= exp(-alpha m / (sqrt(v) + eps) s(w)),  s(w) = sign(w), s(0) = +1,
// then the sign constraint (a no-op here). The first step is the closed form w exp(-lr g / (|g| + eps / sqrt(1 - b2))
// s(w)) (hand-derived: m = (1 - b1) g, sqrt(v) = sqrt(1 - b2) |g|); later steps a reference loop in double.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dpointnet/device/exp_adam.hpp"

using dpointnet::device::ExpAdamFunctor;

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using View = Kokkos::View<double*, Space::memory_space>;

View make(const std::vector<double>& x) {
  View d("exp_adam_test.values", x.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < x.size(); ++i) h(i) = x[i];
  Kokkos::deep_copy(d, h);
  return d;
}

std::vector<double> get(const View& d) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

struct ExpAdamRun {
  View w, w0, m, v;
  explicit ExpAdamRun(const std::vector<double>& weights)
      : w(make(weights)),
        w0(make(weights)),
        m(make(std::vector<double>(weights.size(), 0.0))),
        v(make(std::vector<double>(weights.size(), 0.0))) {}
  void step(const std::vector<double>& grad, int k, double lr, double b1, double b2, double eps, double scale = 1) {
    const double alpha = lr * std::sqrt(1 - std::pow(b2, k)) / (1 - std::pow(b1, k));
    ExpAdamFunctor<double, Space> f{w, w0, m, v, make(grad), alpha, b1, b2, eps, scale};
    Kokkos::parallel_for("test_exp_adam", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, w.extent(0)),
                         f);
    Kokkos::fence();
  }
};

TEST(ExpAdam, FirstStepFromPlusMinusHalfIsTheClosedForm) {
  const double lr = 0.05, eps = 1e-11;
  const std::vector<double> w0 = {0.5, -0.5, 0.5, -0.5, 0.5, 0.0, -0.5};
  const std::vector<double> g = {2.0, 2.0, -3e-4, -3e-4, 1e-12, 4.0, -7.0};
  ExpAdamRun r(w0);
  r.step(g, 1, lr, 0.9, 0.999, eps);
  const auto w = get(r.w);
  for (std::size_t e = 0; e < w0.size(); ++e) {
    const double s = w0[e] < 0 ? -1.0 : 1.0;
    const double want = w0[e] * std::exp(-lr * g[e] / (std::fabs(g[e]) + eps / std::sqrt(0.001)) * s);
    EXPECT_NEAR(w[e], want, 1e-15 * std::fabs(want)) << "edge " << e;
    EXPECT_EQ(std::signbit(w[e]), std::signbit(w0[e])) << "edge " << e;
  }
  EXPECT_EQ(w[5], 0.0);  // a zero weight stays zero
  // |g| >> eps: the step is lr in the exponent (to eps / (sqrt(0.001) |g|) = 2e-10 of it), shrinking |w| where
  // g w > 0 and growing it where g w < 0
  EXPECT_NEAR(w[0], 0.5 * std::exp(-lr), 1e-10);
  EXPECT_NEAR(w[1], -0.5 * std::exp(lr), 1e-10);
}

TEST(ExpAdam, SeveralStepsFollowTheRecurrenceWithTheClippingScale) {
  const double lr = 0.02, b1 = 0.9, b2 = 0.999, eps = 1e-8, scale = 0.25;
  const std::vector<double> w0 = {0.3, -1.2, 0.01, -0.02, 2.0};
  ExpAdamRun r(w0);
  std::vector<double> w = w0, m(w0.size(), 0.0), v(w0.size(), 0.0);
  for (int k = 1; k <= 25; ++k) {
    std::vector<double> g(w0.size());
    for (std::size_t e = 0; e < g.size(); ++e) g[e] = std::sin(1.7 * k + static_cast<double>(e)) * (e + 1);
    r.step(g, k, lr, b1, b2, eps, scale);
    const double alpha = lr * std::sqrt(1 - std::pow(b2, k)) / (1 - std::pow(b1, k));
    for (std::size_t e = 0; e < g.size(); ++e) {
      const double gs = g[e] * scale;
      m[e] = b1 * m[e] + (1 - b1) * gs;
      v[e] = b2 * v[e] + (1 - b2) * gs * gs;
      w[e] *= std::exp(-alpha * m[e] / (std::sqrt(v[e]) + eps) * (w[e] < 0 ? -1.0 : 1.0));
    }
  }
  const auto got = get(r.w), gm = get(r.m), gv = get(r.v);
  for (std::size_t e = 0; e < w.size(); ++e) {
    EXPECT_NEAR(got[e], w[e], 1e-13 * std::fabs(w[e])) << "edge " << e;
    EXPECT_NEAR(gm[e], m[e], 1e-15 * std::fabs(m[e]) + 1e-300) << "edge " << e;
    EXPECT_NEAR(gv[e], v[e], 1e-15 * std::fabs(v[e]) + 1e-300) << "edge " << e;
    EXPECT_EQ(std::signbit(got[e]), std::signbit(w0[e])) << "edge " << e;
  }
}

}  // namespace
