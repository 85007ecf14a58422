// Subcommands of the serial `dpointnet` executable.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace dpointnet::cli {

// Registers the subcommands; each sets `action` to the function that runs it.
struct Commands {
  std::function<int()> action;
  int threads = 0;
  std::string log_level = "info";
};
void register_commands(CLI::App& app, Commands& cmds);

// What `dpointnet --version` prints (and `info`, with the concurrency of the initialized Kokkos when >= 0): the
// dpointnet and Kokkos versions, the Kokkos backends, the precisions and kernel shapes of the build. Needs no
// initialized Kokkos when concurrency < 0.
std::string version_text(int concurrency = -1);

}  // namespace dpointnet::cli
