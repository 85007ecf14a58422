// The radix order of src/util/value_order against the standard library's stable sort of the same values (ties in
// index order; -0.0 equal to 0.0), on the float path and the double path, with ties, signs, zeros, subnormals and
// infinities, and digits that one pass would skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "dpointnet/util/value_order.hpp"

using namespace dpointnet;

namespace {

std::vector<std::uint32_t> stable_order(const std::vector<double>& v) {
  std::vector<std::uint32_t> o(v.size());
  std::iota(o.begin(), o.end(), 0u);
  std::stable_sort(o.begin(), o.end(), [&](std::uint32_t a, std::uint32_t b) { return v[a] < v[b]; });
  return o;
}

std::vector<double> mixed_values(std::size_t n, bool floats, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> mag(-2.0, 2.0);
  std::uniform_int_distribution<int> pick(0, 19);
  std::vector<double> v(n);
  for (auto& x : v) {
    const int p = pick(rng);
    x = p == 0   ? 0.0
        : p == 1 ? -0.0
        : p == 2 ? 1.5  // ties
        : p == 3 ? std::numeric_limits<double>::denorm_min() * (floats ? 0.0 : 7.0)
        : p == 4 ? -std::numeric_limits<double>::infinity()
        : p == 5 ? std::numeric_limits<float>::denorm_min()
                 : (pick(rng) < 6 ? -1.0 : 1.0) * mag(rng);
    if (floats) x = static_cast<double>(static_cast<float>(x));
  }
  return v;
}

}  // namespace

TEST(ValueOrder, FloatValuesInTheStableSortsOrder) {
  ValueOrderScratch sc;
  std::vector<std::uint32_t> order;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto v = mixed_values(20000 + seed * 777, true, seed);
    value_order(v.data(), v.size(), order, sc);
    EXPECT_EQ(order, stable_order(v)) << "seed " << seed;
  }
}

TEST(ValueOrder, DoubleValuesInTheStableSortsOrder) {
  ValueOrderScratch sc;
  std::vector<std::uint32_t> order;
  for (std::uint64_t seed : {4u, 5u}) {
    auto v = mixed_values(30000, false, seed);
    v[7] = 0.1;  // not a float: the 64-bit path
    value_order(v.data(), v.size(), order, sc);
    EXPECT_EQ(order, stable_order(v)) << "seed " << seed;
  }
}

TEST(ValueOrder, ValuesSharingHighDigitsAndTinyInputs) {
  ValueOrderScratch sc;
  std::vector<std::uint32_t> order;
  std::vector<double> v;  // one exponent: the passes of the exponent's digits are skipped
  for (int k = 0; k < 5000; ++k) v.push_back(1.0 + ((k * 7919) % 4096) / 8192.0);
  value_order(v.data(), v.size(), order, sc);
  EXPECT_EQ(order, stable_order(v));
  for (std::size_t n : {0u, 1u, 2u}) {
    std::vector<double> w(n, 3.0);
    value_order(w.data(), w.size(), order, sc);
    EXPECT_EQ(order, stable_order(w));
  }
  std::vector<double> same(100, -2.5);  // every pass skipped: index order
  value_order(same.data(), same.size(), order, sc);
  EXPECT_EQ(order, stable_order(same));
}

TEST(ValueOrder, RefusesNaN) {
  ValueOrderScratch sc;
  std::vector<std::uint32_t> order;
  const std::vector<double> v = {1.0, std::nan(""), 0.5};
  EXPECT_THROW(value_order(v.data(), v.size(), order, sc), std::domain_error);
}
