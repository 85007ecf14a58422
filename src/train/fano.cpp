#include "dpointnet/train/fano.hpp"

#include <algorithm>
#include <cmath>

namespace dpointnet {

namespace {
constexpr double kMeanFloor = 1e-7;

// Pool k's counts X_m of bins of `bin` steps, and their mean and population variance.
struct Binned {
  std::vector<double> x;
  double mean = 0, var = 0;
};
Binned bin_counts(const std::vector<double>& y, std::int64_t T, std::int64_t P, std::int64_t k, int bin) {
  Binned b;
  const std::int64_t M = T / bin;
  b.x.assign(static_cast<std::size_t>(M), 0.0);
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t t = m * bin; t < (m + 1) * bin; ++t)
      b.x[static_cast<std::size_t>(m)] += y[static_cast<std::size_t>(t * P + k)];
  for (double v : b.x) b.mean += v;
  b.mean /= static_cast<double>(M);
  for (double v : b.x) b.var += (v - b.mean) * (v - b.mean);
  b.var /= static_cast<double>(M);
  return b;
}
}  // namespace

std::vector<int> fano_bin_sizes_ms(double window_ms) {
  std::vector<int> out;
  const double step = 3.0 / 19.0;
  for (int i = 0; i < 20; ++i) {
    const double b = std::pow(10.0, -3.0 + i * step);
    if (!(b < window_ms / 2000.0)) continue;
    out.push_back(std::max(1, static_cast<int>(std::nearbyint(b * 1000.0))));
  }
  return out;
}

void pool_fano(const std::vector<double>& y, std::int64_t T, std::int64_t P, const std::vector<int>& bins,
               std::vector<double>& F) {
  F.assign(bins.size() * static_cast<std::size_t>(P), 0.0);
  for (std::size_t d = 0; d < bins.size(); ++d)
    for (std::int64_t k = 0; k < P; ++k) {
      const Binned b = bin_counts(y, T, P, k, bins[d]);
      F[d * static_cast<std::size_t>(P) + static_cast<std::size_t>(k)] = b.var / std::max(b.mean, kMeanFloor);
    }
}

void pool_fano_gradient(const std::vector<double>& y, std::int64_t T, std::int64_t P, const std::vector<int>& bins,
                        const std::vector<double>& dF, std::vector<double>& dy) {
  dy.assign(static_cast<std::size_t>(T * P), 0.0);
  for (std::size_t d = 0; d < bins.size(); ++d)
    for (std::int64_t k = 0; k < P; ++k) {
      const double g = dF[d * static_cast<std::size_t>(P) + static_cast<std::size_t>(k)];
      if (g == 0) continue;
      const Binned b = bin_counts(y, T, P, k, bins[d]);
      const double M = static_cast<double>(b.x.size()), den = std::max(b.mean, kMeanFloor);
      const double mean_term = b.mean > kMeanFloor ? b.var / (den * den) / M : 0.0;
      for (std::int64_t m = 0; m < static_cast<std::int64_t>(b.x.size()); ++m) {
        const double dx = g * (2.0 * (b.x[static_cast<std::size_t>(m)] - b.mean) / M / den - mean_term);
        for (std::int64_t t = m * bins[d]; t < (m + 1) * bins[d]; ++t) dy[static_cast<std::size_t>(t * P + k)] += dx;
      }
    }
}

}  // namespace dpointnet
