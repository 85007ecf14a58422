// Harness: the JSON config layer (src/config): manifest variables, `network`/`simulation` child files, path
// anchoring, and the typed `run` (with run.distribution, then checked by the parallel layer for both launchers,
// several world sizes, simulate and train), `components`, `networks`, `inputs`, `output` and `reports` sections.
// The input is config.json, then further files after lines "=== NAME" (fuzz_support.hpp: split_files), e.g.
// "=== circuit.json" for a child config. An accepted config is checked for the properties the runs rely on.
#include <cmath>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/parallel/distribution_config.hpp"
#include "fuzz_support.hpp"

using namespace dpointnet;
using namespace dpointnet::fuzz;

namespace {

void check_config(const SimulationConfig& c) {
  const char* h = "config";
  check(c.dt > 0 && std::isfinite(c.dt), h, "run.dt not a finite positive number");
  check(c.tstop > 0 && std::isfinite(c.tstop), h, "run.tstop not a finite positive number");
  check(c.n_steps >= 1 && c.n_steps <= 2147483647, h, "run has no step or more than 2^31 - 1 steps");
  check(c.batch_size >= 1, h, "run.batch_size < 1");
  check(!c.nodes.empty(), h, "no networks.nodes");
  check(!c.output_dir.empty() && !c.spikes_file.empty() && !c.log_file.empty(), h, "empty output path");
  for (const InputSpec& s : c.inputs) {
    check(std::isfinite(s.rate_hz) && s.rate_hz >= 0, h, "input rate not finite or negative");
    for (double r : s.rates_hz) check(std::isfinite(r) && r >= 0, h, "input rates not finite or negative");
    check(s.amp_pA.size() == s.delay_ms.size() && s.amp_pA.size() == s.duration_ms.size(), h,
          "current clamp lists differ in length");
    for (std::size_t q = 0; q < s.amp_pA.size(); ++q)
      check(std::isfinite(s.amp_pA[q]) && s.delay_ms[q] >= 0 && s.duration_ms[q] >= 0, h, "bad current pulse");
  }
}

}  // namespace

DPOINTNET_FUZZ_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string top = write_config_input(data, size);
  run_one("config", [&] {
    const SimulationConfig c = SimulationConfig::load(top);
    check_config(c);
    for (Launcher l : {Launcher::Serial, Launcher::Mpi})
      for (int world : {1, 2, 3})
        for (bool training : {false, true})
          run_one("config", [&] {
            const DistributionConfig d = DistributionConfig::parse(c, nullptr, l, world, training);
            check(d.local_replicas() >= 1, "config", "fewer than one local replica");
          });
  });
  return 0;
}
