// What the benchmarks share: their start (quiet log, Kokkos with the requested threads) and their networks,
// `dpointnet generate --neurons N --seed 1` into WORKDIR/net_N, made once and reused.
#pragma once
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"

namespace dpointnet::bench {

// Warnings-only logging and Kokkos initialized with `threads` threads (<= 0: Kokkos' default).
inline void start(int threads) {
  log::init("warn");
  compat::InitOptions io;
  io.num_threads = threads;
  compat::initialize(io);
}

// The directory of the N-neuron benchmark network under workdir (at step dt ms: its run.dt, and delays of at least
// max(1 ms, dt)), generated first if it is not there.
inline std::string bench_network(const std::string& workdir, std::int64_t n, double dt = 1.0) {
  const std::string dir = workdir + "/net_" + std::to_string(n) + (dt == 1.0 ? "" : fmt::format("_dt{:g}", dt));
  if (!std::filesystem::exists(dir + "/config.simulation.json")) {
    GeneratorOptions g;
    g.n_neurons = n;
    g.dt = dt;
    g.seed = 1;
    g.out_dir = dir;
    g.overwrite = true;
    const auto t0 = std::chrono::steady_clock::now();
    generate_network(g);
    fmt::print("# generated {} neurons in {:.1f} s\n", n,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return dir;
}

}  // namespace dpointnet::bench
