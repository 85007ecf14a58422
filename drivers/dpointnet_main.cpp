// dpointnet: the serial (MPI-free) executable.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "dpointnet/app/thread_check.hpp"
#include "dpointnet/device/kernel_shape.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"
#include "drivers/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dpointnet: GLIF point-neuron networks from SONATA files, simulated and trained with Kokkos"};
  dpointnet::cli::Commands cmds;
  dpointnet::cli::register_commands(app, cmds);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  dpointnet::log::init(cmds.log_level);
  dpointnet::HostThreads host;
  try {
    host = dpointnet::fit_host_threads(cmds.threads);
  } catch (const dpointnet::InputError& e) {
    std::fprintf(stderr, "dpointnet: error: %s\n", e.what());
    return dpointnet::kExitInput;
  }
  dpointnet::compat::InitOptions init;
  init.num_threads = host.threads > 0 ? host.threads : cmds.threads;
  dpointnet::compat::initialize(init);
  dpointnet::log_host_threads(host);
  int rc = 0;
  try {
    if (dpointnet::device::process_kernel_shape() == dpointnet::device::KernelShape::Device)
      dpointnet::log::get()->info("{}=device: every kernel takes its device shape",
                                  dpointnet::device::kKernelShapeVariable);
    rc = cmds.action();
  } catch (const dpointnet::InputError& e) {
    dpointnet::log::get()->error("{}", e.what());
    std::fprintf(stderr, "dpointnet: error: %s\n", e.what());
    rc = dpointnet::kExitInput;
  } catch (const dpointnet::OutputError& e) {
    std::fprintf(stderr, "dpointnet: output error: %s\n", e.what());
    rc = dpointnet::kExitOutput;
  } catch (const dpointnet::TrainingError& e) {
    dpointnet::log::get()->error("{}", e.what());
    std::fprintf(stderr, "dpointnet: error: %s\n", e.what());
    rc = dpointnet::kExitNumerical;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dpointnet: internal error: %s\n", e.what());
    rc = dpointnet::kExitInternal;
  }
  Kokkos::finalize();
  return rc;
}
