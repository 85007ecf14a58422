// Harness spike_file: the SONATA spike file reader (src/io/spike_file.*) at the level of dataset contents: the
// input is decoded by h5_builder into spikes.h5 (current /spikes/<pop>/{timestamps,node_ids} and legacy
// /spikes/{gids,timestamps} layouts, any dtype, shape, layout, `units` and `sorting` attributes).
// Harness spike_stamp (DPOINTNET_FUZZ_STAMP): the same, then the spikes stamped onto the step grid
// (src/inputs: stamp_spike_file). First byte: the population asked for, second: dt (spike_stamp).
#include <cmath>

#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/io/spike_file.hpp"
#include "fuzz_support.hpp"
#include "h5_builder.hpp"

using namespace dpointnet;
using namespace dpointnet::fuzz;

namespace {
const H5Tables& tables() {
  static const H5Tables t{{"spikes.h5"},
                          {"/spikes", "/spikes/lgn", "/spikes/v1", "/", "/spikes/lgn/0", "/spikes/x y"},
                          {"timestamps", "node_ids", "gids", "lgn", "units"},
                          {"units", "sorting", "magic", "version"},
                          {"ms", "s", "lgn", "", "sec", "seconds", "milliseconds", "by_time", "none", "hours", "v1"}};
  return t;
}
}  // namespace

DPOINTNET_FUZZ_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clear_scratch();
  Bytes in(data, size);
  static const char* const kPops[] = {"lgn", "v1", "", "bkg"};
  const std::string want = kPops[in.pick(4)];
  static const double kDt[] = {1.0, 0.1, 0.25, 1e-3};
  const double dt = kDt[in.pick(4)];
  const std::string path = build_h5_files(in, tables())[0];
  run_one("spike_file", [&] {
    for (const std::string& p : spike_file_populations(path))
      check(p.empty() || p.find('/') == std::string::npos, "spike_file", "population name with '/'");
  });
  run_one("spike_file", [&] {
    const SpikeTrains st = read_spike_file(path, want);
    check(st.node_ids.size() == st.times_ms.size(), "spike_file", "node_ids and timestamps differ in length");
  });
#if defined(DPOINTNET_FUZZ_STAMP)
  run_one("spike_stamp", [&] {
    Population pop;
    pop.name = want.empty() ? "lgn" : want;
    pop.is_virtual = true;
    pop.size = 3;
    pop.node_ids = {0, 1, 2};
    const std::int64_t n_steps = 20;
    const StampedSpikes s = stamp_spike_file(path, pop, dt, n_steps);
    check(s.step_offsets.size() == static_cast<std::size_t>(n_steps + 1), "spike_stamp", "step_offsets size");
    check(s.step_offsets.back() == static_cast<std::int64_t>(s.source.size()), "spike_stamp", "step_offsets end");
    for (std::int32_t src : s.source) check(src >= 0 && src < 3, "spike_stamp", "stamped source out of range");
  });
#else
  (void)dt;
#endif
  return 0;
}
