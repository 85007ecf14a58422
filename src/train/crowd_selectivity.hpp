// The V1 papers' "crowd" orientation and direction selectivity (docs/training.md, OrientationSelectivity): per
// sample b (one grating direction theta_b) and cell type c, the normalised rates r of the type's neurons weighted by
// cos 2(theta_b - phi_n) and cos(theta_b - phi_n), phi_n a neuron's tuning angle, over their plain mean; OSI_c and
// DSI_c are the means of those ratios over the samples, compared with the Neuropixels targets per type.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace dpointnet {

struct SelectivityTarget {
  double osi = 0, dsi = 0;
  int units = 0;  // rows of the table behind the means
};

// Per cell type, the mean OSI and DSI of the Neuropixels table `file` (space-separated; columns cell_type, OSI,
// DSI, max_mean_rate(Hz), Ave_Rate(Hz)): rows with max_mean_rate(Hz) < 0.5 lose their OSI and DSI, rows with
// Ave_Rate(Hz) = 0 are removed, rows with any NaN are dropped. Errors name the file (and `config`, `section`).
std::map<std::string, SelectivityTarget> read_selectivity_targets(const std::string& file, const std::string& config,
                                                                  const std::string& section);

class CrowdSelectivity {
 public:
  static constexpr double kFloor = 0.0005;  // spikes per ms: the floor of a type's mean and of the normaliser

  // type: per neuron its type index (-1: not counted, e.g. outside the core); tuning_deg: per neuron phi_n;
  // targets per type index.
  CrowdSelectivity(std::vector<int> type, const std::vector<double>& tuning_deg,
                   std::vector<SelectivityTarget> targets);

  std::size_t n_types() const { return targets_.size(); }
  std::size_t stats_size() const { return 2 * targets_.size(); }
  // Adds sample b's O/D and Q/D of every type into stats ([2][types]); r: the sample's normalised rates [N].
  void add_stats(const double* r, double theta_deg, double* stats) const;
  // OSI_c = stats[0][c] / samples, DSI_c = stats[1][c] / samples; the loss without its cost:
  // sum_c m_c ((OSI_c - OSI*_c)^2 + (DSI_c - DSI*_c)^2) / sum_c m_c.
  double value(const double* stats, double samples) const;
  // Adds d(value)/dr of sample b into dr [N], given the whole update's stats.
  void add_gradient(const double* r, double theta_deg, const double* stats, double samples, double* dr) const;

 private:
  struct Sums {
    std::vector<double> mean, o, q;  // per type: mean r, mean r cos 2D, mean r cos D
  };
  Sums sums(const double* r, double theta_deg) const;
  std::vector<int> type_;
  std::vector<double> phi_;  // radians
  std::vector<SelectivityTarget> targets_;
  std::vector<double> m_;  // neurons per type
  double m_total_ = 0;
};

}  // namespace dpointnet
