#include "dpointnet/train/crowd_selectivity.hpp"

#include <cmath>
#include <filesystem>

#include "dpointnet/io/csv_table.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

std::map<std::string, SelectivityTarget> read_selectivity_targets(const std::string& file, const std::string& config,
                                                                  const std::string& section) {
  if (!std::filesystem::is_regular_file(file))
    throw InputError(config, section, "target_file", "'" + file + "' does not exist or is not a file");
  const CsvTable t = CsvTable::read(file);
  for (const char* c : {"cell_type", "OSI", "DSI", "max_mean_rate(Hz)", "Ave_Rate(Hz)"})
    if (!t.has_column(c)) throw InputError(file, "", c, "column is missing (the Neuropixels OSI/DSI table)");
  std::map<std::string, double> osi, dsi;
  std::map<std::string, int> n;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const std::string label = "row " + std::to_string(r + 1);
    auto num = [&](const char* c) { return t.get_double(r, c, label).value_or(std::nan("")); };
    const double mx = num("max_mean_rate(Hz)"), ave = num("Ave_Rate(Hz)");
    double o = num("OSI"), d = num("DSI");
    if (mx < 0.5) o = d = std::nan("");
    if (ave == 0) continue;
    const auto type = t.get(r, "cell_type");
    if (!type || std::isnan(o) || std::isnan(d) || std::isnan(mx) || std::isnan(ave)) continue;
    osi[*type] += o;
    dsi[*type] += d;
    ++n[*type];
  }
  std::map<std::string, SelectivityTarget> out;
  for (const auto& [type, k] : n) out[type] = {osi[type] / k, dsi[type] / k, k};
  return out;
}

CrowdSelectivity::CrowdSelectivity(std::vector<int> type, const std::vector<double>& tuning_deg,
                                   std::vector<SelectivityTarget> targets)
    : type_(std::move(type)), targets_(std::move(targets)), m_(targets_.size(), 0.0) {
  for (double a : tuning_deg) phi_.push_back(a * M_PI / 180.0);
  for (int c : type_)
    if (c >= 0) m_[static_cast<std::size_t>(c)] += 1;
  for (double m : m_) m_total_ += m;
}

CrowdSelectivity::Sums CrowdSelectivity::sums(const double* r, double theta_deg) const {
  const double th = theta_deg * M_PI / 180.0;
  Sums s{std::vector<double>(n_types(), 0.0), std::vector<double>(n_types(), 0.0), std::vector<double>(n_types(), 0.0)};
  for (std::size_t i = 0; i < type_.size(); ++i) {
    const int c = type_[i];
    if (c < 0) continue;
    const double d = th - phi_[i];
    s.mean[static_cast<std::size_t>(c)] += r[i];
    s.o[static_cast<std::size_t>(c)] += r[i] * std::cos(2 * d);
    s.q[static_cast<std::size_t>(c)] += r[i] * std::cos(d);
  }
  for (std::size_t c = 0; c < n_types(); ++c)
    if (m_[c] > 0) {
      s.mean[c] /= m_[c];
      s.o[c] /= m_[c];
      s.q[c] /= m_[c];
    }
  return s;
}

void CrowdSelectivity::add_stats(const double* r, double theta_deg, double* stats) const {
  const Sums s = sums(r, theta_deg);
  for (std::size_t c = 0; c < n_types(); ++c) {
    if (m_[c] == 0) continue;
    const double den = std::max(s.mean[c], kFloor);
    stats[c] += s.o[c] / den;
    stats[n_types() + c] += s.q[c] / den;
  }
}

double CrowdSelectivity::value(const double* stats, double samples) const {
  double v = 0;
  for (std::size_t c = 0; c < n_types(); ++c) {
    const double eo = stats[c] / samples - targets_[c].osi, ed = stats[n_types() + c] / samples - targets_[c].dsi;
    v += m_[c] * (eo * eo + ed * ed);
  }
  return v / m_total_;
}

void CrowdSelectivity::add_gradient(const double* r, double theta_deg, const double* stats, double samples,
                                    double* dr) const {
  const Sums s = sums(r, theta_deg);
  const double th = theta_deg * M_PI / 180.0;
  std::vector<double> go(n_types()), gq(n_types()), gmean(n_types());  // d value / d (o, q, mean) of type c
  for (std::size_t c = 0; c < n_types(); ++c) {
    if (m_[c] == 0) continue;
    const double den = std::max(s.mean[c], kFloor);
    const double dosi = m_[c] * 2 * (stats[c] / samples - targets_[c].osi) / m_total_ / samples;
    const double ddsi = m_[c] * 2 * (stats[n_types() + c] / samples - targets_[c].dsi) / m_total_ / samples;
    go[c] = dosi / den;
    gq[c] = ddsi / den;
    gmean[c] = s.mean[c] > kFloor ? -(dosi * s.o[c] + ddsi * s.q[c]) / (den * den) : 0.0;
  }
  for (std::size_t i = 0; i < type_.size(); ++i) {
    const int c = type_[i];
    if (c < 0) continue;
    const auto k = static_cast<std::size_t>(c);
    const double d = th - phi_[i];
    dr[i] += (go[k] * std::cos(2 * d) + gq[k] * std::cos(d) + gmean[k]) / m_[k];
  }
}

}  // namespace dpointnet
