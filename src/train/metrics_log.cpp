#include "dpointnet/train/metrics_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "dpointnet/util/error.hpp"

namespace dpointnet {

namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::size_t a = 0;
  for (std::size_t b; (b = line.find(',', a)) != std::string::npos; a = b + 1) out.push_back(line.substr(a, b - a));
  out.push_back(line.substr(a));
  return out;
}

}  // namespace

std::vector<std::string> loss_columns(const TrainConfig& tc) {
  std::vector<std::string> out;
  if (tc.single_loss_set())
    for (const auto& l : tc.losses) out.push_back(l.name);
  for (std::size_t c = 0; c < tc.conditions.size(); ++c) {
    const std::string n = "loss." + tc.condition_names[c];
    out.push_back(n);
    for (const auto& l : tc.losses_of(static_cast<int>(c))) out.push_back(n + "." + l.name);
  }
  return out;
}

std::vector<double> loss_values(const StepMetrics& m) {
  std::vector<double> out = m.loss_terms;
  for (const auto& c : m.conditions) {
    out.push_back(c.total);
    out.insert(out.end(), c.terms.begin(), c.terms.end());
  }
  return out;
}

MetricsLog::MetricsLog(const std::string& path, const std::vector<std::string>& loss_names, bool with_allreduce,
                       std::int64_t keep_until, bool with_loss_scale)
    : path_(path), with_allreduce_(with_allreduce), with_loss_scale_(with_loss_scale) {
  std::vector<std::string> header = {"step", "loss"};
  header.insert(header.end(), loss_names.begin(), loss_names.end());
  for (const char* c : {"rate_hz", "grad_norm", "samples_per_s", "seconds", "forward_s", "recompute_s", "backward_s",
                        "update_s", "losses_s"})
    header.emplace_back(c);
  if (with_allreduce_) header.emplace_back("allreduce_s");
  header.emplace_back("peak_rss_mib");
  if (with_loss_scale_) header.insert(header.end(), {"loss_scale", "skipped"});
  std::string head = header[0];
  for (std::size_t k = 1; k < header.size(); ++k) head += "," + header[k];

  std::vector<std::string> kept;
  if (keep_until >= 0 && std::filesystem::exists(path)) {
    std::ifstream in(path);
    std::string line, old_head;
    std::getline(in, old_head);
    const std::vector<std::string> old_cols = split_csv(old_head);
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (std::stoll(line.substr(0, line.find(','))) > keep_until) continue;
      if (old_head == head) {
        kept.push_back(line);
        continue;
      }
      // a log of another layout (an earlier version, another distribution mode): its values by column name
      const std::vector<std::string> vals = split_csv(line);
      std::string row;
      for (std::size_t k = 0; k < header.size(); ++k) {
        const auto it = std::find(old_cols.begin(), old_cols.end(), header[k]);
        const auto q = static_cast<std::size_t>(it - old_cols.begin());
        row += (k ? "," : "") + (it != old_cols.end() && q < vals.size() ? vals[q] : std::string());
      }
      kept.push_back(row);
    }
  }
  out_.open(path, std::ios::trunc);
  out_ << head << "\n";
  for (const auto& k : kept) out_ << k << "\n";
  out_.flush();
  if (!out_) throw OutputError(path_, std::string("cannot write the metrics log: ") + std::strerror(errno));
}

void MetricsLog::append(const StepMetrics& m) {
  out_ << m.step << "," << fmt::format("{:.9g}", m.loss);
  for (double v : loss_values(m)) out_ << "," << fmt::format("{:.9g}", v);
  out_ << "," << fmt::format("{:.9g}", m.rate_hz) << "," << fmt::format("{:.9g}", m.grad_norm) << ","
       << fmt::format("{:.4g}", m.samples_per_s) << "," << fmt::format("{:.4g}", m.seconds);
  for (double t : {m.t_forward, m.t_recompute, m.t_backward, m.t_update, m.t_losses})
    out_ << "," << fmt::format("{:.4g}", t);
  if (with_allreduce_) out_ << "," << fmt::format("{:.4g}", m.t_allreduce);
  out_ << "," << fmt::format("{:.1f}", m.peak_rss_bytes / 1048576.0);
  if (with_loss_scale_) out_ << "," << fmt::format("{:.17g}", m.loss_scale) << "," << m.skipped;
  out_ << "\n";
  out_.flush();
  if (!out_) throw OutputError(path_, std::string("cannot write the metrics log: ") + std::strerror(errno));
}

}  // namespace dpointnet
