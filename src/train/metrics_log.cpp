#include "train/metrics_log.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/error.hpp"

namespace dpointnet {

MetricsLog::MetricsLog(const std::string& path, const std::vector<std::string>& loss_names, bool with_allreduce,
                       std::int64_t keep_until)
    : path_(path), with_allreduce_(with_allreduce) {
  std::vector<std::string> kept;
  if (keep_until >= 0 && std::filesystem::exists(path)) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (std::stoll(line.substr(0, line.find(','))) <= keep_until) kept.push_back(line);
    }
  }
  out_.open(path, std::ios::trunc);
  out_ << "step,loss";
  for (const auto& l : loss_names) out_ << "," << l;
  out_ << ",rate_hz,grad_norm,samples_per_s,seconds,forward_s,recompute_s,backward_s,update_s"
       << (with_allreduce_ ? ",allreduce_s" : "") << ",peak_rss_mib\n";
  for (const auto& k : kept) out_ << k << "\n";
  out_.flush();
  if (!out_) throw OutputError(path_, std::string("cannot write the metrics log: ") + std::strerror(errno));
}

void MetricsLog::append(const StepMetrics& m) {
  out_ << m.step << "," << fmt::format("{:.9g}", m.loss);
  for (double v : m.loss_terms) out_ << "," << fmt::format("{:.9g}", v);
  out_ << "," << fmt::format("{:.9g}", m.rate_hz) << "," << fmt::format("{:.9g}", m.grad_norm) << ","
       << fmt::format("{:.4g}", m.samples_per_s) << "," << fmt::format("{:.4g}", m.seconds);
  for (double t : {m.t_forward, m.t_recompute, m.t_backward, m.t_update}) out_ << "," << fmt::format("{:.4g}", t);
  if (with_allreduce_) out_ << "," << fmt::format("{:.4g}", m.t_allreduce);
  out_ << "," << fmt::format("{:.1f}", m.peak_rss_bytes / 1048576.0) << "\n";
  out_.flush();
  if (!out_) throw OutputError(path_, std::string("cannot write the metrics log: ") + std::strerror(errno));
}

}  // namespace dpointnet
