#include "dpointnet/util/numpy_random.hpp"

#include <cmath>

#include "dpointnet/util/numpy_ziggurat_tables.hpp"

namespace dpointnet {

namespace {

// numpy.random.bit_generator's SeedSequence hashing constants.
constexpr std::uint32_t kInitA = 0x43b0d7e5u, kMultA = 0x931e8875u, kInitB = 0x8b51f9ddu, kMultB = 0x58f38dedu;
constexpr std::uint32_t kMixMultL = 0xca01f9ddu, kMixMultR = 0x4973f715u;
constexpr int kXShift = 16;

std::uint32_t hashmix(std::uint32_t value, std::uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
  std::uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

// a * b rounded to double, never fused with a following addition (numpy's C code is compiled without
// contraction; a fused multiply-add would change the last bit).
double product(double a, double b) {
  volatile double p = a * b;
  return p;
}

}  // namespace

NumpySeedSequence::NumpySeedSequence(std::uint64_t seed) {
  std::vector<std::uint32_t> entropy{static_cast<std::uint32_t>(seed)};
  if ((seed >> 32) != 0) entropy.push_back(static_cast<std::uint32_t>(seed >> 32));
  std::uint32_t hash_const = kInitA;
  for (std::size_t i = 0; i < pool_.size(); ++i) pool_[i] = hashmix(i < entropy.size() ? entropy[i] : 0u, hash_const);
  for (std::size_t src = 0; src < pool_.size(); ++src)
    for (std::size_t dst = 0; dst < pool_.size(); ++dst)
      if (src != dst) pool_[dst] = mix(pool_[dst], hashmix(pool_[src], hash_const));
  // A 64-bit seed has at most 2 words, so no entropy is left beyond the 4-word pool.
}

std::vector<std::uint32_t> NumpySeedSequence::generate_state32(int n_words) const {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(n_words > 0 ? n_words : 0));
  std::uint32_t hash_const = kInitB;
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t v = pool_[i % pool_.size()];
    v ^= hash_const;
    hash_const *= kMultB;
    v *= hash_const;
    v ^= v >> kXShift;
    out[i] = v;
  }
  return out;
}

std::vector<std::uint64_t> NumpySeedSequence::generate_state64(int n_words) const {
  const std::vector<std::uint32_t> w = generate_state32(2 * n_words);
  std::vector<std::uint64_t> out(w.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint64_t>(w[2 * i]) | (static_cast<std::uint64_t>(w[2 * i + 1]) << 32);
  return out;
}

NumpyPcg64::NumpyPcg64(std::uint64_t seed) : NumpyPcg64(NumpySeedSequence(seed)) {}

NumpyPcg64::NumpyPcg64(const NumpySeedSequence& seq) {
  const std::vector<std::uint64_t> v = seq.generate_state64(4);
  const u128 initstate = (static_cast<u128>(v[0]) << 64) | v[1];
  const u128 initseq = (static_cast<u128>(v[2]) << 64) | v[3];
  state_ = 0;
  inc_ = (initseq << 1) | 1u;
  step();
  state_ += initstate;
  step();
}

std::uint64_t NumpyPcg64::next_uint64() {
  step();
  const auto hi = static_cast<std::uint64_t>(state_ >> 64);
  const auto lo = static_cast<std::uint64_t>(state_);
  const std::uint64_t x = hi ^ lo;
  const unsigned rot = static_cast<unsigned>(hi >> 58);
  return (x >> rot) | (x << ((64u - rot) & 63u));
}

double NumpyGenerator::random() { return static_cast<double>(next_uint64() >> 11) * (1.0 / 9007199254740992.0); }

double NumpyGenerator::uniform(double low, double high) { return low + product(high - low, random()); }

double NumpyGenerator::standard_normal() {
  using namespace numpy_ziggurat;
  for (;;) {
    std::uint64_t r = next_uint64();
    const int idx = static_cast<int>(r & 0xff);
    r >>= 8;
    const bool negative = (r & 0x1) != 0;
    const std::uint64_t rabs = (r >> 1) & 0x000fffffffffffffULL;
    double x = static_cast<double>(rabs) * kZigWi[idx];
    if (negative) x = -x;
    if (rabs < kZigKi[idx]) return x;  // inside the strip's rectangle
    if (idx == 0) {
      // Tail beyond r: Marsaglia's exponential rejection, with 1 - U so that the logarithm stays finite.
      for (;;) {
        const double xx = -kNorInvR * std::log1p(-random());
        const double yy = -std::log1p(-random());
        if (yy + yy > xx * xx) return ((rabs >> 8) & 0x1) ? -(kNorR + xx) : kNorR + xx;
      }
    }
    // Wedge between the strip's rectangle and the density.
    if (product(kZigFi[idx - 1] - kZigFi[idx], random()) + kZigFi[idx] < std::exp(-0.5 * x * x)) return x;
  }
}

double NumpyGenerator::normal(double loc, double scale) { return loc + product(scale, standard_normal()); }

std::vector<double> NumpyGenerator::normal(double loc, double scale, std::int64_t n) {
  std::vector<double> out(static_cast<std::size_t>(n > 0 ? n : 0));
  for (double& v : out) v = normal(loc, scale);
  return out;
}

}  // namespace dpointnet
