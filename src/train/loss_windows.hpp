// The losses' windows (docs/training.md, "Windows"): each loss reads the steps [begin, end) of the BPTT window
// (pre_ms / post_ms trimmed). The distinct windows cut the window into bands; the engine counts spikes and takes
// the count gradient per band, and a window's counts and gradient are sums over its bands.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "dpointnet/train/train_config.hpp"

namespace dpointnet {

class LossWindows {
 public:
  LossWindows() = default;
  LossWindows(const std::vector<LossSpec>& losses, std::int64_t T) {
    bands_ = {0, T};
    for (const auto& l : losses) {
      const std::pair<std::int64_t, std::int64_t> w{l.pre_steps, T - l.post_steps};
      auto it = std::find(windows_.begin(), windows_.end(), w);
      window_of_loss_.push_back(static_cast<int>(it - windows_.begin()));
      if (it == windows_.end()) windows_.push_back(w);
      bands_.push_back(w.first);
      bands_.push_back(w.second);
    }
    if (windows_.empty()) windows_.push_back({0, T});
    std::sort(bands_.begin(), bands_.end());
    bands_.erase(std::unique(bands_.begin(), bands_.end()), bands_.end());
  }

  const std::vector<std::int64_t>& bands() const { return bands_; }
  std::size_t n_bands() const { return bands_.size() - 1; }
  std::size_t n_windows() const { return windows_.size(); }
  int window_of(std::size_t loss) const { return window_of_loss_[loss]; }
  std::int64_t begin(int w) const { return windows_[static_cast<std::size_t>(w)].first; }
  std::int64_t end(int w) const { return windows_[static_cast<std::size_t>(w)].second; }
  std::int64_t length(int w) const {
    return windows_[static_cast<std::size_t>(w)].second - windows_[static_cast<std::size_t>(w)].first;
  }
  bool covers(int w, std::size_t band) const {
    const auto& x = windows_[static_cast<std::size_t>(w)];
    return bands_[band] >= x.first && bands_[band + 1] <= x.second;
  }

  // Window w's values per (b, i) ([BN]) from per-band ones ([bands][BN]): the sum over its bands.
  template <class T, class Out>
  void window_sum(const std::vector<T>& per_band, int w, std::size_t BN, std::vector<Out>& out) const {
    out.assign(BN, Out(0));
    for (std::size_t k = 0; k < n_bands(); ++k)
      if (covers(w, k))
        for (std::size_t q = 0; q < BN; ++q) out[q] += static_cast<Out>(per_band[k * BN + q]);
  }
  // Per-band gradient ([bands][BN]) from per-window ones (windows x [BN]): a band gets every window covering it.
  std::vector<double> band_gradient(const std::vector<std::vector<double>>& per_window, std::size_t BN) const {
    std::vector<double> out(n_bands() * BN, 0.0);
    for (std::size_t w = 0; w < per_window.size(); ++w)
      for (std::size_t k = 0; k < n_bands(); ++k)
        if (covers(static_cast<int>(w), k))
          for (std::size_t q = 0; q < BN; ++q) out[k * BN + q] += per_window[w][q];
    return out;
  }

 private:
  std::vector<std::int64_t> bands_;
  std::vector<std::pair<std::int64_t, std::int64_t>> windows_;
  std::vector<int> window_of_loss_;
};

}  // namespace dpointnet
