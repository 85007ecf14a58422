// The options of `train`, shared by the dpointnet and dpointnet-mpi executables.
#pragma once
#include <CLI/CLI.hpp>

#include "dpointnet/app/train_run.hpp"

namespace dpointnet::cli {

inline void add_train_options(CLI::App* t, TrainCommand& cmd) {
  t->add_option("config", cmd.config, "simulation config JSON with a \"train\" section")->required();
  t->add_option("--resume", cmd.resume, "continue from this checkpoint file");
  t->add_option("--gradient-check", cmd.gradient_check,
                "compute one batch's loss, gradients and first Adam update, write them to this HDF5 file, stop");
  t->add_option("--gradient-check-updates", cmd.gradient_check_updates,
                "with --gradient-check: run this many updates (losses and weights after each are written)")
      ->check(CLI::PositiveNumber);
  t->add_flag("--overwrite", cmd.overwrite, "replace existing outputs");
  t->add_flag("!--no-progress", cmd.progress, "no progress lines");
  t->add_option("--stop-after", cmd.stop_after, "debug: stop after this many updates (writes a checkpoint file)");
}

}  // namespace dpointnet::cli
