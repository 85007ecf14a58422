// Training-step benchmark (not a test): one network, one configuration per process (so that the peak memory
// reported is this configuration's). Prints the time split by phase, samples/s and the peak resident memory.
//
//   dpointnet-bench-train --neurons 1000 [--steps 500] [--batch 16] [--checkpoint-interval 25] [--updates 2]
#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_network.hpp"
#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/device/target_blocks.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/train/trainer.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"
#include "gather_probe.hpp"
#include "propagation_probe.hpp"

// No using-directive at file scope: dpointnet::log would clash with ::log of the CUDA math headers.
namespace dpointnet::bench {

static double peak_rss_gib() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB on Linux
}

// STREAM-like triad a = b + s c on the default space (a functor: CUDA-safe).
struct Triad {
  Kokkos::View<float*> a, b, c;
  float s;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { a(i) = b(i) + s * c(i); }
};

// Best of 5 triads over 3 x n floats (n large enough to leave the caches), bytes moved / s.
double triad_bytes_per_s(std::int64_t n) {
  const Kokkos::DefaultExecutionSpace space;
  using Kokkos::view_alloc;
  using Kokkos::WithoutInitializing;
  // a is written by every triad, b and c by the fills
  Kokkos::View<float*> a(view_alloc(space, WithoutInitializing, "triad.a"), n),
      b(view_alloc(space, WithoutInitializing, "triad.b"), n), c(view_alloc(space, WithoutInitializing, "triad.c"), n);
  Kokkos::deep_copy(space, b, 1.0f);
  Kokkos::deep_copy(space, c, 2.0f);
  return best_rate(space, 3.0 * 4.0 * static_cast<double>(n), [&] {
    Kokkos::parallel_for("bench::triad", Kokkos::RangePolicy<>(space, 0, n), Triad{a, b, c, 3.0f});
  });
}

// The spike adjoint's target blocks (host backends) and, when they were timed, the timings they came from.
template <class Real>
void print_target_blocks(const Trainer<Real>& tr) {
  if (!compat::host_execution<Kokkos::DefaultExecutionSpace>) return;
  const auto& c = tr.engine().target_block_choice();
  fmt::print("target blocks: {}{}\n", tr.engine().target_blocks(),
             c.timings.empty() ? std::string(" (not timed)")
                               : fmt::format(" (timed in {:.2f} s; per step {})", c.seconds, c.timings_text()));
}

// The spike adjoint's edges per second against the gather probe at several footprints (gather_probe.hpp): 32 KiB
// (in L1), 1 MiB, the kernel's footprint (a target block of a gu slot, or the slot), a slot and the ring of D slots,
// each counting only the rows of gu that edges reach.
template <class Real>
void gather_ceiling(const Network& net, int steps, int B, double spike_seconds, int n_blocks) {
  if (!compat::host_execution<Kokkos::DefaultExecutionSpace>) {
    fmt::print("gather: host backends only (a device kernel's begin and end callbacks do not bound its run)\n");
    return;
  }
  if (net.projections.empty() || net.projections[0].size() == 0 || spike_seconds <= 0) {
    fmt::print("gather: no recurrent edges, no spike adjoint\n");
    return;
  }
  const Projection& rec = net.projections[0];
  const int D = net.max_delay;
  std::vector<double> per_delay(static_cast<std::size_t>(D) + 1, 0.0);
  for (const int d : rec.delay_steps) per_delay[static_cast<std::size_t>(d)] += 1;
  double edges = 0;  // edges the spike adjoint reads per update: those whose step t + d is inside the sequence
  for (int t = 0; t < steps; ++t)
    for (int d = 1; d <= D; ++d)
      if (t + d < steps) edges += per_delay[static_cast<std::size_t>(d)];
  // the rows of gu that recurrent edges reach, the only ones the spike adjoint gathers (live_channels counts the
  // rows that any projection reaches)
  std::vector<char> live(static_cast<std::size_t>(net.n_channels * net.n_neurons), 0);
  for (std::size_t k = 0; k < rec.target.size(); ++k)
    live[static_cast<std::size_t>(rec.channel[k] * net.n_neurons + rec.target[k])] = 1;
  const double live_share = static_cast<double>(std::count(live.begin(), live.end(), 1)) / live.size();
  const double row = 4.0 * B, slot = static_cast<double>(net.n_channels) * net.n_neurons * B * sizeof(Real);
  const std::int64_t block = device::block_targets_for(net.n_neurons, n_blocks);
  const double footprint = block > 0 ? static_cast<double>(net.n_channels) * block * B * sizeof(Real) : slot;
  fmt::print(
      "gather: spike adjoint {:.3g} G edges/s ({:.3g} s per update; footprint {:.2f} MiB{}, of which {:.0f} % "
      "rows that edges reach)\n",
      edges / spike_seconds / 1e9, spike_seconds, footprint / 1048576.0, block > 0 ? " per target block" : "",
      100.0 * live_share);
  if (sizeof(Real) != 4 || B % 16 != 0) {
    fmt::print("gather: probe skipped (float32 and a batch that is a multiple of 16 only)\n");
    return;
  }
  const double sizes[] = {32 * 1024.0, 1048576.0, footprint * live_share, slot * live_share, slot * D * live_share};
  const char* names[] = {"32 KiB", "1 MiB", "kernel footprint", "one slot", "ring"};
  for (int q = 0; q < 5; ++q) {
    const GatherRates r = gather_edges_per_s(sizes[q], B, 64);
    const double rate = r.one_chain, rate2 = r.two_chains;
    fmt::print(
        "gather: probe {:>16} {:8.2f} MiB: {:.3g} G edges/s ({:.0f} GB/s of {:.0f}-byte lines), two chains "
        "{:.3g}; spike adjoint at {:.0f} % of one chain; bfloat16 rows and weights {:.3g} ({:.2f}x one chain)\n",
        names[q], sizes[q] / 1048576.0, rate / 1e9, rate * row / 1e9, row, rate2 / 1e9,
        100.0 * edges / spike_seconds / rate, r.bf16 / 1e9, r.bf16 / rate);
  }
}

int run(int argc, char** argv) {
  CLI::App app{"dpointnet training-step benchmark"};
  std::int64_t n = 1000;
  int steps = 500, batch = 16, C = 25, updates = 2, threads = 0;
  int rounds = 1;
  std::string workdir = "/tmp/dpointnet-bench";
  std::vector<std::string> precisions{"float32"};
  app.add_option("--neurons", n);
  double dt = 1.0;
  app.add_option("--steps", steps, "sequence length T (steps of --dt)");
  app.add_option("--dt", dt, "run.dt (ms) of the generated network (its smallest delay is max(1 ms, dt))")
      ->check(CLI::PositiveNumber);
  std::vector<int> windows{0};
  app.add_option("--window", windows,
                 "steps per min-delay window at most (DPOINTNET_STEP_WINDOW: 0 the smallest delay, 1 step by step); "
                 "several (comma-separated) are measured one after the other, in every round")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  app.add_option("--batch", batch);
  app.add_option("--checkpoint-interval", C);
  app.add_option("--updates", updates, "timed updates (after one warm-up update)");
  app.add_option("--workdir", workdir);
  app.add_option("--precision", precisions,
                 "run.precision; several (comma-separated) are measured one after the other, in every round")
      ->delimiter(',')
      ->check(CLI::IsMember({"float32", "float64", "bfloat16", "float16"}));
  app.add_option("--rounds", rounds, "rounds over the precisions (the second in reverse order, and so on)")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", threads);
  bool bandwidth = false;
  app.add_flag(
      "--bandwidth", bandwidth,
      "also print a triad bandwidth, the reverse sweep's effective bandwidth (estimated bytes) and, on host "
      "backends, the spike adjoint's edges/s against a gather probe (gather_probe.hpp) and the recurrent "
      "propagation against its own loop in three memory patterns (propagation_probe.hpp); it sets Kokkos Tools "
      "callbacks: do not combine with a tools library");
  std::string target_blocks = "auto";
  app.add_option("--target-blocks", target_blocks,
                 "train.target_blocks: \"auto\" (timed on the run's edges) or a count (1: unblocked); host backends");
  CLI11_PARSE(app, argc, argv);
  bench::start(threads);
  {
    const std::string dir = bench::bench_network(workdir, n, dt);
    nlohmann::json c = nlohmann::json::parse(std::ifstream(dir + "/config.simulation.json"));
    c["network"] = dir + "/config.circuit.json";
    c["run"]["tstop"] = steps * dt;
    c["run"]["batch_size"] = batch;
    c["train"] = {{"steps", updates + 1},
                  {"checkpoint_interval", C},
                  {"trainable", {{"recurrent", true}, {"lgn", true}, {"bkg", true}}},
                  {"losses",
                   {{{"type", "TargetFiringRate"}, {"cost", 1.0}, {"target", 5.0}},
                    {{"type", "VoltageRegularization"}, {"cost", 0.1}}}}};
    if (target_blocks == "auto")
      c["train"]["target_blocks"] = target_blocks;
    else
      c["train"]["target_blocks"] = std::stoi(target_blocks);
    const std::string cpath = dir + "/bench_train.json";
    std::ofstream(cpath) << c.dump(1);
    SimulationConfig cfg = SimulationConfig::load(cpath);
    Network net = build_network(cfg);
    TrainConfig tc = TrainConfig::parse(cfg, net);
    auto inputs = prepare_inputs(cfg, net, tc.total_steps(cfg));
    std::string precision;
    int window = 0;
    auto run = [&](auto tag) {
      using Real = decltype(tag);
      for (const Precision p : {Precision::Float32, Precision::Float64, Precision::BFloat16, Precision::Float16})
        if (precision == precision_name(p)) cfg.precision = p;
      PreparedRun tr_run = prepare_run(cfg, net, tc, 1, batch);
      tr_run.max_window = window;
      Trainer<Real> tr(Kokkos::DefaultExecutionSpace(), tr_run);
      print_target_blocks(tr);
      tr.train_step();  // warm-up
      std::unique_ptr<KernelClock> clock;
      if (bandwidth)
        clock = std::make_unique<KernelClock>(
            std::initializer_list<const char*>{"dpointnet::backward_spike_adjoint", "dpointnet::propagate_recurrent"});
      StepMetrics sum;
      for (int k = 0; k < updates; ++k) {
        StepMetrics m = tr.train_step();
        sum.seconds += m.seconds;
        sum.t_forward += m.t_forward;
        sum.t_recompute += m.t_recompute;
        sum.t_backward += m.t_backward;
        sum.t_update += m.t_update;
        sum.rate_hz = m.rate_hz;
      }
      const double u = updates;
      fmt::print(
          "{:>7} neurons {:>10} edges T={} B={} C={:<4} {} W={}: step {:8.3f} s = forward {:.3f} + recompute {:.3f} + "
          "backward {:.3f} + update {:.4f} (other {:.3f}); {:8.2f} samples/s; peak RSS {:.2f} GiB; rate {:.2f} Hz\n",
          n, net.n_edges(), steps, batch, C, precision, tr.step_window(), sum.seconds / u, sum.t_forward / u,
          sum.t_recompute / u, sum.t_backward / u, sum.t_update / u,
          (sum.seconds - sum.t_forward - sum.t_recompute - sum.t_backward - sum.t_update) / u, batch * u / sum.seconds,
          peak_rss_gib(), sum.rate_hz);
      if (bandwidth) {
        // Bytes of the reverse sweep per step: every recurrent edge (weight, target, channel) and the cache
        // lines of its B adjoint values (spike adjoint); the edges of active groups (a spike in any sample:
        // 1 - (1 - p)^B) again, with their lines and a gradient read and write (weight gradient).
        const double e_rec = static_cast<double>(net.projections[0].size());
        const double e_all = static_cast<double>(net.n_edges());
        const double ring = sixteen_bit(cfg.precision) ? 2.0 : sizeof(Real);  // an adjoint's bytes
        const double lines = std::ceil(batch * ring / 64.0) * 64.0;
        const double edge = sizeof(Real) + 4;  // weight and row index (GroupedEdges::line)
        const double active = 1.0 - std::pow(1.0 - sum.rate_hz * cfg.dt / 1000.0, batch);
        const double bytes = steps * (e_rec * (edge + lines) + active * e_all * (edge + lines + 16));
        const double triad = triad_bytes_per_s(std::int64_t(1) << 25);
        fmt::print(
            "bandwidth: triad {:.1f} GB/s; reverse sweep {:.3g} GB per update in {:.3f} s = {:.1f} GB/s "
            "({:.0f} % of the triad; active groups {:.1f} %)\n",
            triad / 1e9, bytes / 1e9, sum.t_backward / u, bytes / (sum.t_backward / u) / 1e9,
            100.0 * bytes / (sum.t_backward / u) / triad, 100.0 * active);
        gather_ceiling<Real>(net, steps, batch, clock->seconds(0) / u, tr.engine().target_blocks());
        // the spike counts of the last update: [B][v N, counts N] (Trainer::terminal_state)
        const std::vector<double> state = tr.terminal_state();
        std::vector<double> spikes;
        for (int b = 0; b < batch; ++b)
          spikes.insert(spikes.end(), state.begin() + (2 * b + 1) * net.n_neurons,
                        state.begin() + (2 * b + 2) * net.n_neurons);
        propagation_ceiling<Real>(net, batch, steps, spikes, clock->seconds(1), clock->calls(1));
      }
    };
    for (int r = 0; r < rounds; ++r)
      for (std::size_t q = 0; q < precisions.size(); ++q)
        for (std::size_t k = 0; k < windows.size(); ++k) {
          precision = precisions[r % 2 == 0 ? q : precisions.size() - 1 - q];
          window = windows[r % 2 == 0 ? k : windows.size() - 1 - k];
          if (precision == "float64")
            run(double{});
          else
            run(float{});
        }
  }
  Kokkos::finalize();
  return 0;
}

}  // namespace dpointnet::bench

int main(int argc, char** argv) { return dpointnet::bench::run(argc, argv); }
