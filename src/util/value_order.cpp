#include "dpointnet/util/value_order.hpp"

#include <array>
#include <cstring>
#include <stdexcept>

namespace dpointnet {

namespace {

constexpr int kDigitBits = 11;
constexpr std::size_t kBuckets = std::size_t(1) << kDigitBits;

std::uint32_t float_key(double x) {
  float f = static_cast<float>(x);
  if (f == 0.0f) f = 0.0f;  // -0.0 as 0.0
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return (b >> 31) ? ~b : (b | 0x80000000u);
}

std::uint64_t double_key(double x) {
  if (x == 0.0) x = 0.0;
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

// Bucket starts for the digit at `shift` of every key; false when one bucket holds every key (the pass is a no-op).
template <class KeyOf>
bool bucket_starts(std::size_t n, int shift, KeyOf key_of, std::array<std::size_t, kBuckets>& start) {
  start.fill(0);
  for (std::size_t k = 0; k < n; ++k) ++start[(key_of(k) >> shift) & (kBuckets - 1)];
  std::size_t s = 0;
  for (auto& c : start) {
    if (c == n) return false;
    const std::size_t t = c;
    c = s;
    s += t;
  }
  return true;
}

}  // namespace

void value_order(const double* values, std::size_t n, std::vector<std::uint32_t>& order, ValueOrderScratch& sc) {
  if (n >= (std::size_t(1) << 32)) throw std::length_error("value_order: more than 2^32 - 1 values");
  for (std::size_t k = 0; k < n; ++k)
    if (values[k] != values[k]) throw std::domain_error("value_order: a value is NaN");
  order.resize(n);
  std::array<std::size_t, kBuckets> start;
  bool floats = true;
  for (std::size_t k = 0; k < n && floats; ++k)
    floats = static_cast<double>(static_cast<float>(values[k])) == values[k];
  if (floats) {  // one 64-bit word per value: the key above the index
    auto &a = sc.a32, &b = sc.b32;
    a.resize(n);
    b.resize(n);
    for (std::size_t k = 0; k < n; ++k) a[k] = (std::uint64_t(float_key(values[k])) << 32) | k;
    for (int shift = 32; shift < 64; shift += kDigitBits) {
      if (!bucket_starts(
              n, shift, [&](std::size_t k) { return a[k]; }, start))
        continue;
      for (std::size_t k = 0; k < n; ++k) b[start[(a[k] >> shift) & (kBuckets - 1)]++] = a[k];
      a.swap(b);
    }
    for (std::size_t k = 0; k < n; ++k) order[k] = static_cast<std::uint32_t>(a[k]);
    return;
  }
  auto &key = sc.key64, &key_tmp = sc.key64_tmp;
  auto &idx = sc.idx, &idx_tmp = sc.idx_tmp;
  key.resize(n);
  key_tmp.resize(n);
  idx.resize(n);
  idx_tmp.resize(n);
  for (std::size_t k = 0; k < n; ++k) key[k] = double_key(values[k]), idx[k] = static_cast<std::uint32_t>(k);
  for (int shift = 0; shift < 64; shift += kDigitBits) {
    if (!bucket_starts(
            n, shift, [&](std::size_t k) { return key[k]; }, start))
      continue;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t to = start[(key[k] >> shift) & (kBuckets - 1)]++;
      key_tmp[to] = key[k];
      idx_tmp[to] = idx[k];
    }
    key.swap(key_tmp);
    idx.swap(idx_tmp);
  }
  order.assign(idx.begin(), idx.end());
}

}  // namespace dpointnet
