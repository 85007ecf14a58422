#include "drivers/commands.hpp"

#include <memory>
#include <string>

#include "dpointnet/app/plan_run.hpp"
#include "dpointnet/app/simulate_run.hpp"
#include "dpointnet/app/thread_check.hpp"
#include "dpointnet/app/train_run.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"
#include "drivers/train_options.hpp"
#include "drivers/version.hpp"

namespace dpointnet::cli {

void register_commands(CLI::App& app, Commands& cmds) {
  // Before Kokkos starts: everything printed is known at compile time.
  app.set_version_flag(
      "--version", [] { return version_text(); },
      "print the version, Kokkos version and backends, precisions and kernel shapes, and exit");
  app.add_option("--threads", cmds.threads, "host threads for the OpenMP backend (default: OMP_NUM_THREADS)");
  app.add_option("--log-level", cmds.log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

  auto sim = std::make_shared<SimulateCommand>();
  auto* s = app.add_subcommand("simulate", "run a SONATA simulation config forward and write spikes");
  s->add_option("config", sim->config, "simulation config JSON")->required();
  s->add_flag("--overwrite", sim->overwrite, "replace existing outputs");
  s->add_option("--batch-size", sim->batch_size, "samples (overrides run.batch_size)")->check(CLI::PositiveNumber);
  s->add_option("--precision", sim->precision, "float32 or float64 (overrides run.precision)")
      ->check(CLI::IsMember({"float32", "float64"}));
  s->add_flag("!--no-progress", sim->progress, "no progress lines");
  s->callback([&cmds, sim] {
    cmds.action = [sim] {
      run_simulate(*sim);
      return 0;
    };
  });

  auto trn = std::make_shared<TrainCommand>();
  auto* t = app.add_subcommand("train", "train the network's weights (BPTT) on a SONATA config with a train section");
  add_train_options(t, *trn);
  t->callback([&cmds, trn] { cmds.action = [trn] { return run_train(*trn); }; });

  auto gen = std::make_shared<GeneratorOptions>();
  auto* g = app.add_subcommand("generate", "write a V1-like SONATA network of a requested size");
  g->add_option("--out", gen->out_dir, "output directory")->required();
  g->add_option("--neurons,-n", gen->n_neurons, "recurrent neurons (10..200000)");
  g->add_option("--synapses-per-neuron", gen->synapses_per_neuron, "mean recurrent in-degree");
  g->add_option("--lgn", gen->n_lgn, "LGN nodes (0: about neurons/4)");
  g->add_option("--lgn-per-neuron", gen->lgn_per_neuron, "mean LGN in-degree");
  g->add_option("--bkg", gen->n_bkg, "background sources");
  g->add_option("--bkg-per-neuron", gen->bkg_per_neuron, "background connections per neuron");
  g->add_option("--seed", gen->seed, "generator seed");
  g->add_option("--dt", gen->dt, "dt (ms) of the written simulation config");
  g->add_option("--tstop", gen->tstop, "tstop (ms) of the written simulation config");
  g->add_option("--lgn-rate", gen->lgn_rate_hz, "LGN Bernoulli rate (Hz) in the simulation config");
  g->add_option("--bkg-rate", gen->bkg_rate_hz, "background Poisson rate (Hz) in the simulation config");
  g->add_flag("--visual", gen->visual,
              "LGN units with the Allen V1 model's filter attributes, V1 cells of the 17 V1 cell types in a layered "
              "column, and the V1 model's orientation-selective LGN -> V1 rule");
  g->add_option("--lgn-tiles-x", gen->lgn_tiles_x, "with --visual: LGN width in 8-degree tiles (1..15, default 15)");
  g->add_option("--lgn-tiles-y", gen->lgn_tiles_y, "with --visual: LGN height in 8-degree tiles (1..10, default 10)");
  g->add_option("--column-radius", gen->column_radius,
                "with --visual: V1 column radius in um (0: min(400, what the LGN tiles cover))");
  g->add_flag("--gzip", gen->gzip, "gzip-compress the h5 datasets (smaller, slower to write)");
  g->add_flag("--overwrite", gen->overwrite, "replace an existing output directory's files");
  g->callback([&cmds, gen] {
    cmds.action = [gen] {
      generate_network(*gen);
      return 0;
    };
  });

  auto plan_cfg = std::make_shared<std::string>();
  auto plan_sim = std::make_shared<bool>(false);
  auto* pl = app.add_subcommand("plan", "predict the peak device memory of a train (or simulate) run of a config");
  pl->add_option("config", *plan_cfg, "simulation config JSON")->required();
  pl->add_flag("--simulate", *plan_sim, "plan the simulate run even when the config has a train section");
  pl->callback(
      [&cmds, plan_cfg, plan_sim] { cmds.action = [plan_cfg, plan_sim] { return run_plan(*plan_cfg, *plan_sim); }; });

  auto* info = app.add_subcommand("info", "print --version's text with the concurrency of the started Kokkos");
  info->callback([&cmds] {
    cmds.action = [] {
      fmt::print("{}\n", version_text(compat::concurrency()));
      warn_if_oversubscribed();
      return 0;
    };
  });
  app.require_subcommand(1);
}

}  // namespace dpointnet::cli
