// What the LGN inputs showed and produced: the stimulus of every sample (stimulus_samples.csv) and the LGN
// units' rates (lgn_rates.h5), written next to a run's outputs (docs/visual-input.md, "Outputs").
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/train/prepared_run.hpp"

namespace dpointnet {

// Indices of the LGN inputs among `inputs` (silent ones excluded).
std::vector<int> lgn_inputs(const std::vector<PreparedInput>& inputs);

// The CSV header and one row per LGN input and sample of the batch [sample_offset, sample_offset + batch):
// `lead_names` / `lead_values` (comma-separated, e.g. "update,condition" / "3,evoked") come first, then
// input,sample,type,direction,temporal_frequency,spatial_frequency,contrast,phase (the values each sample got).
std::string stimulus_csv_header(const std::string& lead_names);
void write_stimulus_rows(std::ostream& os, const std::vector<PreparedInput>& inputs, std::uint32_t seed,
                         std::int64_t sample_offset, int batch, const std::string& lead_values);

// lgn_rates.h5: dataset /rates float32 [sample][step][unit] in Hz (units in the nodes file's row order) for the
// given samples of the batch, from a rate table [frame][sample][unit] of 1-ms frames; /node_ids, /samples, and
// attributes input, dt, units. Written to a temporary file and renamed.
void write_lgn_rates(const std::string& path, const std::string& input, const Population& pop,
                     const Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace>& table,
                     const std::vector<int>& samples, std::int64_t n_steps, double dt);

// A training run's stimulus_samples.csv: per update, condition, LGN input and global sample of the update, the
// values the sample got (computed from the schedule; every replica's samples, written by the chief). A resumed
// run keeps the rows of updates up to `resume_update` and appends; a fresh run starts the file. Nothing is
// written for a run without LGN inputs.
class StimulusLog {
 public:
  StimulusLog(const std::string& path, const PreparedRun& run, std::int64_t resume_update);
  void write_update(std::int64_t update);  // 1-based: the update just done
 private:
  std::string path_;
  const PreparedRun& run_;
  bool active_ = false;
};

}  // namespace dpointnet
