// Forward-pass benchmark (not a test): generated V1-like networks of several sizes, timed simulation, and
// throughput in neuron-steps/s and synaptic events/s. Synaptic events are counted in a second, untimed run
// of the same steps (the count needs an extra reduction that would distort the timing).
//
//   dpointnet-bench-forward [--sizes 1000,10000,66000] [--steps 500] [--batch 1] [--precision float32]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>

#include "bench_network.hpp"
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"

// No using-directive at file scope: dpointnet::log would clash with ::log of the CUDA math headers.
namespace dpointnet::bench {

template <class Real>
void bench_one(std::int64_t n, int steps, int batch, const std::string& workdir, double syn_per_neuron) {
  const std::string dir = workdir + "/net_" + std::to_string(n);
  if (!std::filesystem::exists(dir + "/config.simulation.json")) {
    GeneratorOptions g;
    g.n_neurons = n;
    g.synapses_per_neuron = syn_per_neuron;
    g.out_dir = dir;
    g.seed = 1;
    g.tstop = steps;
    g.overwrite = true;
    auto t0 = std::chrono::steady_clock::now();
    generate_network(g);
    fmt::print("# generated {} neurons in {:.1f} s\n", n,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  SimulationConfig cfg = SimulationConfig::load(dir + "/config.simulation.json");
  cfg.tstop = steps * cfg.dt;
  cfg.n_steps = steps;
  Network net = build_network(cfg);
  auto inputs = prepare_inputs(cfg, net, steps);
  SimOptions o;
  o.batch_size = batch;
  o.n_steps = steps;
  o.seed = 1;
  o.record_chunk = 50;
  const Kokkos::DefaultExecutionSpace space;
  Simulator<Real> sim(space, net, inputs, o);
  std::size_t n_spikes = 0;
  auto sink = [&](const RecordedChunk& c) {
    const std::size_t total = c.z.span();
    for (std::size_t q = 0; q < static_cast<std::size_t>(c.n_steps) * c.z.extent(1) * c.z.extent(2) && q < total; ++q)
      n_spikes += c.z.data()[q];
  };
  // warm-up
  sim.reset();
  sim.run(std::min(steps, 20), nullptr);
  sim.reset();
  auto t0 = std::chrono::steady_clock::now();
  sim.run(steps, sink);
  space.fence();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sim.reset();
  sim.set_count_events(true);
  sim.run(steps, nullptr);
  const double events = sim.events();
  const double neuron_steps = double(n) * steps * batch;
  fmt::print(
      "{:>8} neurons {:>11} edges  T={} B={}  {:8.3f} s  {:10.3e} neuron-steps/s  {:10.3e} syn-events/s  "
      "rate {:6.2f} Hz\n",
      n, net.n_edges(), steps, batch, secs, neuron_steps / secs, events / secs,
      n_spikes / (double(n) * batch * steps * cfg.dt / 1000.0));
}

int run(int argc, char** argv) {
  CLI::App app{"dpointnet forward benchmark"};
  std::vector<std::int64_t> sizes = {1000, 10000, 66000};
  int steps = 500, batch = 1, threads = 0;
  double syn = 370;
  std::string precision = "float32", workdir = "/tmp/dpointnet-bench";
  app.add_option("--sizes", sizes, "network sizes")->delimiter(',');
  app.add_option("--steps", steps, "time steps (dt = 1 ms)");
  app.add_option("--batch", batch, "samples");
  app.add_option("--synapses-per-neuron", syn, "recurrent in-degree");
  app.add_option("--precision", precision)->check(CLI::IsMember({"float32", "float64"}));
  app.add_option("--workdir", workdir, "where generated networks are kept between runs");
  app.add_option("--threads", threads, "host threads");
  CLI11_PARSE(app, argc, argv);
  bench::start(threads);
  {
    fmt::print("# dpointnet {} forward benchmark, Kokkos {} on {}, precision {}\n", DPOINTNET_VERSION,
               compat::kokkos_version_string(), Kokkos::DefaultExecutionSpace::name(), precision);
    for (auto n : sizes) {
      if (precision == "float64")
        bench_one<double>(n, steps, batch, workdir, syn);
      else
        bench_one<float>(n, steps, batch, workdir, syn);
    }
  }
  Kokkos::finalize();
  return 0;
}

}  // namespace dpointnet::bench

int main(int argc, char** argv) { return dpointnet::bench::run(argc, argv); }
