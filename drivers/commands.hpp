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

}  // namespace dpointnet::cli
