#include "dpointnet/app/visual_outputs.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dpointnet/device/lgn_runtime.hpp"
#include "dpointnet/io/hdf5_file.hpp"

namespace dpointnet {

std::vector<int> lgn_inputs(const std::vector<PreparedInput>& inputs) {
  std::vector<int> out;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!inputs[k].silent && inputs[k].kind == InputKind::Lgn) out.push_back(static_cast<int>(k));
  return out;
}

std::string stimulus_csv_header(const std::string& lead_names) {
  std::string h = lead_names.empty() ? "" : lead_names + ",";
  h += "input,sample,type";
  for (const auto& n : stimulus_parameter_names()) h += "," + n;
  return h + "\n";
}

void write_stimulus_rows(std::ostream& os, const std::vector<PreparedInput>& inputs, std::uint32_t seed,
                         std::int64_t sample_offset, int batch, const std::string& lead_values) {
  for (int k : lgn_inputs(inputs)) {
    const PreparedInput& in = inputs[static_cast<std::size_t>(k)];
    const bool grating = in.stimulus.type == StimulusType::DriftingGrating ||
                         in.stimulus.type == StimulusType::StaticGrating ||
                         in.stimulus.type == StimulusType::GreyScreen;
    for (int b = 0; b < batch; ++b) {
      const SampleStimulus s = sample_stimulus(in.stimulus, seed, in.name, sample_offset + b);
      if (!lead_values.empty()) os << lead_values << ",";
      os << in.name << "," << (sample_offset + b) << "," << stimulus_type_name(in.stimulus.type);
      for (double v : s.value) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.15g", v);  // the shortest of 15 or 17 digits that reads back as v
        if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
        os << "," << (grating ? buf : "");
      }
      os << "\n";
    }
  }
}

void write_lgn_rates(const std::string& path, const std::string& input, const Population& pop,
                     const Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace>& table,
                     const std::vector<int>& samples, std::int64_t n_steps, double dt) {
  const std::size_t U = table.extent(2), S = samples.size(), T = static_cast<std::size_t>(n_steps);
  const auto frames = static_cast<std::int64_t>(table.extent(0));
  std::vector<float> data(S * T * U);
  for (std::size_t q = 0; q < S; ++q)
    for (std::size_t k = 0; k < T; ++k) {
      std::int64_t f = static_cast<std::int64_t>(static_cast<double>(k) * dt + 1e-9);
      if (f >= frames) f = frames - 1;
      for (std::size_t u = 0; u < U; ++u) data[(q * T + k) * U + u] = table(f, samples[q], u);
    }
  const std::string tmp = path + ".tmp";
  {
    auto f = h5::File::create(tmp, true);
    f.write_float_nd("/rates", data, {S, T, U}, true);
    f.write_attr_string("/rates", "units", "Hz");
    f.write_attr_string("/rates", "dims", "sample, step, unit (the nodes file's row order)");
    f.write_attr_string("/rates", "input", input);
    f.write_attr_string("/rates", "population", pop.name);
    f.write_int64("/node_ids", pop.node_ids);
    f.write_int64("/samples", std::vector<std::int64_t>(samples.begin(), samples.end()));
    f.write_double("/dt", {dt});
  }
  std::filesystem::rename(tmp, path);
}

StimulusLog::StimulusLog(const std::string& path, const PreparedRun& run, std::int64_t resume_update)
    : path_(path), run_(run) {
  active_ = !lgn_inputs(run.inputs).empty();
  for (const auto& c : run.conditions) active_ = active_ || !lgn_inputs(c).empty();
  if (!active_) return;
  const std::string header = stimulus_csv_header("update,condition");
  std::string kept = header;
  if (resume_update >= 0 && std::filesystem::exists(path)) {
    std::ifstream is(path);
    std::string line;
    std::getline(is, line);
    while (std::getline(is, line))
      if (!line.empty() && std::stoll(line.substr(0, line.find(','))) <= resume_update) kept += line + "\n";
  }
  std::ofstream os(path, std::ios::trunc);
  os << kept;
  if (!os.flush()) throw std::runtime_error("cannot write " + path);
}

void StimulusLog::write_update(std::int64_t update) {
  if (!active_) return;
  const SampleSchedule& s = run_.schedule;
  const int n_cond = s.conditions;
  const std::int64_t block = static_cast<std::int64_t>(s.replicas) * s.accumulate * s.batch;
  std::ostringstream os;
  for (int c = 0; c < n_cond; ++c) {
    const auto& inputs = run_.conditions.empty() ? run_.inputs : run_.conditions[static_cast<std::size_t>(c)];
    const std::int64_t first = (update - 1) * s.global_batch() + c * block;
    write_stimulus_rows(os, inputs, run_.cfg->seed, first, static_cast<int>(block),
                        std::to_string(update) + "," + (run_.conditions.empty() ? "" : std::to_string(c)));
  }
  std::ofstream f(path_, std::ios::app);
  f << os.str();
  if (!f.flush()) throw std::runtime_error("cannot write " + path_);
}

}  // namespace dpointnet
