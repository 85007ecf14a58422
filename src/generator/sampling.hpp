// The generator's random numbers: one std::mt19937_64 stream per purpose, seeded through splitmix64, and every
// distribution written out here (std::*_distribution output is library-specific).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace dpointnet::generator {

// ---------------------------------------------------------------------------------------------------------------
// Random numbers.

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

enum Purpose : std::uint64_t {
  kPurposeNodes = 1,
  kPurposeRecurrentTopology = 2,
  kPurposeRecurrentWeights = 3,
  kPurposeLgnTopology = 4,
  kPurposeLgnWeights = 5,
  kPurposeBkgTopology = 6,
  kPurposeBkgWeights = 7,
  // visual mode only
  kPurposeVisualNodes = 8,  // V1 positions and tuning angles
  kPurposeLgnNodes = 9,     // LGN positions, sizes and filter parameters
  kPurposeLgnRule = 10,     // the LGN -> V1 rule: subfield sign, temporal frequency, sources, synapse counts
};

class Rng {
 public:
  Rng(std::uint32_t seed, Purpose purpose)
      : eng_(splitmix64(splitmix64(static_cast<std::uint64_t>(seed)) ^ (static_cast<std::uint64_t>(purpose) << 56))) {}
  double uniform() { return static_cast<double>(eng_() >> 11) * 0x1.0p-53; }            // [0, 1)
  double uniform_pos() { return static_cast<double>((eng_() >> 11) + 1) * 0x1.0p-53; }  // (0, 1]
  std::uint64_t below(std::uint64_t n) {                                                // uniform in 0..n-1, unbiased
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = max - (max % n + 1) % n;  // accept x <= limit: (limit + 1) is a multiple of n
    std::uint64_t x;
    do {
      x = eng_();
    } while (x > limit);
    return x % n;
  }
  double normal() {  // Box-Muller, one value per call
    const double r = std::sqrt(-2.0 * std::log(uniform_pos()));
    return r * std::cos(6.283185307179586 * uniform());
  }

 private:
  std::mt19937_64 eng_;
};

// Calls f(c) for each c in 0..n-1 independently with probability p, in increasing order, by geometric skips
// (cost proportional to the number of picks).
template <class F>
void bernoulli_subset(Rng& rng, std::uint64_t n, double p, F&& f) {
  if (n == 0 || !(p > 0)) return;
  if (p >= 1.0) {
    for (std::uint64_t c = 0; c < n; ++c) f(c);
    return;
  }
  const double inv_log_q = 1.0 / std::log1p(-p);
  std::uint64_t c = 0;
  bool first = true;
  for (;;) {
    const double skip = std::floor(std::log(rng.uniform_pos()) * inv_log_q);
    if (!(skip < static_cast<double>(n))) return;
    const std::uint64_t step = static_cast<std::uint64_t>(skip) + (first ? 0 : 1);
    if (step >= n - c) return;
    c += step;
    first = false;
    f(c);
  }
}

// Triangular distribution on [a, b] with mode c, by its inverse CDF.
inline double triangular(Rng& rng, double a, double c, double b) {
  const double u = rng.uniform();
  const double fc = (c - a) / (b - a);
  return u < fc ? a + std::sqrt(u * (b - a) * (c - a)) : b - std::sqrt((1.0 - u) * (b - a) * (b - c));
}

// Poisson(lambda) by Knuth's product of uniforms (small lambda).
inline int poisson(Rng& rng, double lambda) {
  const double limit = std::exp(-lambda);
  int k = 0;
  for (double p = rng.uniform_pos(); p > limit; p *= rng.uniform_pos()) ++k;
  return k;
}

// Yule-Simon(rho) on 1, 2, ...: a geometric count with success probability e^-W, W ~ Exp(rho) (the mixture form
// of rho B(k, rho + 1)); capped at 10^6.
inline std::uint32_t yule_simon(Rng& rng, double rho) {
  const double p = std::pow(rng.uniform_pos(), 1.0 / rho);
  const double u = rng.uniform_pos();
  if (p >= 1.0) return 1;
  const double k = std::floor(std::log(u) / std::log1p(-p));
  return 1 + static_cast<std::uint32_t>(std::min(k, 999999.0));
}

class WeightSampler {
 public:
  WeightSampler(double cv, double truncation)
      : sigma_(std::sqrt(std::log1p(cv * cv))), mu_(-0.5 * sigma_ * sigma_), trunc_(truncation) {}
  // Magnitude with mean `mean` (> 0), truncated to [mean / T, mean * T].
  double draw(Rng& rng, double mean) const {
    for (int k = 0; k < 32; ++k) {
      const double x = mean * std::exp(mu_ + sigma_ * rng.normal());
      if (x >= mean / trunc_ && x <= mean * trunc_) return x;
    }
    return mean;
  }

 private:
  double sigma_, mu_, trunc_;
};

}  // namespace dpointnet::generator
