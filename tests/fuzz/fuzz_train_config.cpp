// Harness: the `train` section (src/train/train_config.*: steps, surrogate, trainable surfaces, losses with
// RateDistribution target tables, optimizer, warm-up, conditions as input overrides) and run.distribution with
// the train section's micro-batches (src/parallel/distribution_config.*), checked against a small fixed network
// (fuzz_support.hpp: small_network). Input format as fuzz_config (config.json, then "=== NAME" files, e.g. a
// target_file table). Only the parse functions are called: nothing is trained.
#include <cmath>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/parallel/distribution_config.hpp"
#include "dpointnet/train/train_config.hpp"
#include "fuzz_support.hpp"

using namespace dpointnet;
using namespace dpointnet::fuzz;

namespace {

void check_train(const TrainConfig& t) {
  const char* h = "train_config";
  check(t.steps >= 1 && t.accumulate >= 1 && t.micro_batches() >= 1, h, "steps, accumulate or micro-batches < 1");
  check(t.checkpoint_interval >= 1 && t.log_every >= 1 && t.save_checkpoint_every >= 0, h, "bad intervals");
  check(t.warmup_steps >= 0 && std::isfinite(t.warmup_ms), h, "negative warm-up");
  check(!t.losses.empty(), h, "no loss");
  for (const LossSpec& l : t.losses) {
    check(std::isfinite(l.cost) && l.cost >= 0, h, "loss cost not finite or negative");
    check(std::isfinite(l.target) && l.target >= 0, h, "loss target not finite or negative");
    if (l.kind == LossKind::RateDistribution) check(!l.observed.empty(), h, "RateDistribution without observed rates");
  }
  check(t.lr > 0 && t.beta1 >= 0 && t.beta1 < 1 && t.beta2 >= 0 && t.beta2 < 1 && t.epsilon > 0, h, "bad optimizer");
  check(std::isfinite(t.sigma) && t.sigma > 0 && std::isfinite(t.dampening_factor), h, "bad surrogate");
}

}  // namespace

DPOINTNET_FUZZ_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string top = write_config_input(data, size);
  static const Network net = small_network();
  run_one("train_config", [&] {
    const SimulationConfig c = SimulationConfig::load(top);
    const TrainConfig t = TrainConfig::parse(c, net);
    check_train(t);
    for (Launcher l : {Launcher::Serial, Launcher::Mpi})
      for (int world : {1, 2, 4})
        run_one("train_config", [&] { (void)DistributionConfig::parse(c, &t, l, world, true); });
  });
  return 0;
}
