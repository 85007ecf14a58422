// numpy's Generator for an integer seed, bit for bit: numpy.random.default_rng(seed) is
// Generator(PCG64(SeedSequence(seed))). NumpySeedSequence hashes the seed into numpy's entropy pool, NumpyPcg64 is
// numpy's PCG64 (128-bit LCG with the XSL-RR output), and NumpyGenerator draws doubles as Generator.random,
// uniform, standard_normal (numpy's 256-level ziggurat) and normal do. The ziggurat's tables are numpy's
// (numpy_ziggurat_tables.hpp, BSD-3-Clause). Draws match numpy 1.24's on the same seed; the rare ziggurat tail and
// wedge tests call the C library's exp and log1p, as numpy does.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace dpointnet {

// numpy.random.SeedSequence(seed) with no spawn key: the seed's 32-bit words (least significant first; one word
// 0 for seed 0) mixed into a pool of 4 words.
class NumpySeedSequence {
 public:
  explicit NumpySeedSequence(std::uint64_t seed);
  const std::array<std::uint32_t, 4>& pool() const { return pool_; }
  // generate_state(n_words, numpy.uint32).
  std::vector<std::uint32_t> generate_state32(int n_words) const;
  // generate_state(n_words, numpy.uint64): pairs of 32-bit words, the first word in the low half.
  std::vector<std::uint64_t> generate_state64(int n_words) const;

 private:
  std::array<std::uint32_t, 4> pool_{};
};

// numpy.random.PCG64: the PCG XSL-RR 128/64 generator, seeded from SeedSequence.generate_state(4, uint64) (words
// 0,1: initial state, high then low; words 2,3: stream).
class NumpyPcg64 {
 public:
  explicit NumpyPcg64(std::uint64_t seed);
  explicit NumpyPcg64(const NumpySeedSequence& seq);
  std::uint64_t next_uint64();
  // bit_generator.state's 'state' and 'inc' as (high, low) 64-bit halves.
  std::uint64_t state_high() const { return static_cast<std::uint64_t>(state_ >> 64); }
  std::uint64_t state_low() const { return static_cast<std::uint64_t>(state_); }
  std::uint64_t inc_high() const { return static_cast<std::uint64_t>(inc_ >> 64); }
  std::uint64_t inc_low() const { return static_cast<std::uint64_t>(inc_); }

 private:
  using u128 = unsigned __int128;
  void step() { state_ = state_ * kMultiplier + inc_; }
  static constexpr u128 kMultiplier =
      (static_cast<u128>(0x2360ED051FC65DA4ULL) << 64) | static_cast<u128>(0x4385DF649FCCF645ULL);
  u128 state_ = 0, inc_ = 0;
};

// numpy.random.Generator(PCG64(seed)) for the draws listed; each call consumes the bit generator as numpy's does.
class NumpyGenerator {
 public:
  explicit NumpyGenerator(std::uint64_t seed) : bits_(seed) {}
  std::uint64_t next_uint64() { return bits_.next_uint64(); }
  // Generator.random(): the upper 53 bits of one 64-bit draw, in [0, 1).
  double random();
  // Generator.uniform(low, high): low + (high - low) * random().
  double uniform(double low, double high);
  // Generator.standard_normal(): numpy's random_standard_normal.
  double standard_normal();
  // Generator.normal(loc, scale): loc + scale * standard_normal().
  double normal(double loc, double scale);
  // Generator.normal(loc, scale, size=n).
  std::vector<double> normal(double loc, double scale, std::int64_t n);

 private:
  NumpyPcg64 bits_;
};

// numpy.random.default_rng(seed).
inline NumpyGenerator numpy_default_rng(std::uint64_t seed) { return NumpyGenerator(seed); }

}  // namespace dpointnet
