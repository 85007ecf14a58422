#include "dpointnet/train/memory_plan.hpp"

#include <fmt/format.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <fstream>
#include <sstream>

#include "dpointnet/device/target_blocks.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/sim/step_window.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/host_caches.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace dpointnet {

double MemoryPlan::total() const {
  double t = 0;
  for (const auto& i : items) t += i.bytes;
  return t;
}

namespace {
// An LGN input on the device: its cells' tables, the movie and its spatial sums, and the rate table of 1-ms
// frames x samples x units (device/lgn_runtime.hpp).
double lgn_input_bytes(const PreparedInput& in, std::int64_t n_steps, double dt, int B) {
  const LgnTables& t = *in.lgn.tables;
  const double subs = static_cast<double>(t.n_subunits());
  double b = static_cast<double>(t.colw.size() + t.roww.size() + t.kernel.size()) * 8 + subs * (2 * 8 + 6 * 4 + 3 * 8) +
             static_cast<double>(t.sub_offset.size()) * 4;
  if (in.lgn.movie) {
    const LgnMovie& m = *in.lgn.movie;
    b += static_cast<double>(m.data.size()) * 4 + static_cast<double>(m.frames) * subs * 8;
  }
  const double frames = std::max(1.0, std::ceil(static_cast<double>(n_steps) * dt - 1e-9));
  return b + frames * B * static_cast<double>(t.n_units) * 4;
}
}  // namespace

MemoryPlan plan_memory(const Network& net, const std::vector<PreparedInput>& inputs, const SimulationConfig& cfg,
                       const TrainConfig* tc, int replicas) {
  MemoryPlan p;
  const double real = cfg.double_precision() ? 8.0 : 4.0;
  // the drive adjoint ring's element (16-bit runs: 2 bytes, and one float32 slot beside it)
  const bool ring16 = sixteen_bit(cfg.precision);
  const double ring = ring16 ? 2.0 : real;
  const double N = static_cast<double>(net.n_neurons), B = cfg.batch_size, R = net.n_channels, D = net.max_delay;
  const double T = static_cast<double>(cfg.n_steps);
  const bool record_v = !tc && !cfg.voltage_reports.empty();
  const double chunk = tc ? kTrainingRecordChunk : kRecordChunk;
  double nb = 0;  // bytes that scale with N x B
  auto add = [&](const std::string& name, double bytes, bool per_nb = false) {
    p.items.push_back({name, bytes * replicas});
    if (per_nb) nb += bytes * replicas;
  };
  // simulator
  add("neuron constants", N * (3 * real + 3 * 4 + 4 * real + 2 * R * real));
  const double state = B * N * (real + 2 + 2 * real + 2 * R * real);  // v, r, asc[2], psc_rise, psc
  add("neuron state", state, true);
  if (net.dynamics == Dynamics::Nest) {  // P31, P32, the ASC's step means and kept parts, V_m, I_e, V_min, the model
    add("nest-mode constants", N * (2 * R * real + 4 * real + 3 * real + 1));
    add("nest-mode step outputs (V before the reset, held flag)", B * N * (real + 2), true);
  }
  // the drive of a min-delay window's steps (sim/step_window.hpp), and in training what the passes read of each
  // step of a window (SimOptions::windows_with_hook)
  const int window = window_length(net, 0, cfg.batch_size, net.n_channels,
                                   window_bytes(compat::host_execution<Kokkos::DefaultExecutionSpace>));
  add("synaptic drive (fixed point)", window * B * R * N * 8, true);
  if (tc && window > 1) add("a window's v and r per step (training)", window * B * N * (real + 2), true);
  add("spike ring", D * B * N, true);
  double edge_bytes = 0, n_edges = 0;
  const bool device_build = !compat::host_execution<Kokkos::DefaultExecutionSpace>;
  auto edges = [&](const Projection& pr) {
    const double e = static_cast<double>(pr.size());
    n_edges += e;
    // offsets, and on device builds the active-group list of the balanced event-driven kernels
    const double groups = static_cast<double>(pr.n_sources) * D + 1;
    return groups * (8 + (device_build ? 4 : 0)) + e * (4 + real);  // line (int32) and weight
  };
  edge_bytes += edges(net.projections[0]);
  double input_ring_bytes = 0, input_bytes = 0, x_ext_bytes = 0, lgn_bytes = 0;
  for (const auto& in : inputs) {
    const Projection& pr = net.projections[static_cast<std::size_t>(in.projection)];
    edge_bytes += edges(pr);
    input_ring_bytes += D * B * static_cast<double>(pr.n_sources) * 2;
    if (!in.silent && in.kind == InputKind::SpikeFile)
      input_bytes += static_cast<double>(in.spikes.step_offsets.size()) * 8 + in.spikes.source.size() * 4.0 +
                     in.spikes.count.size() * 2.0;
    else if (!in.silent && in.kind == InputKind::Lgn)
      lgn_bytes += lgn_input_bytes(in, cfg.n_steps, cfg.dt, static_cast<int>(B));
    else if (!in.silent)
      input_bytes += static_cast<double>(in.p.size() + in.p0.size()) * 8;
    x_ext_bytes += static_cast<double>(pr.n_sources) * B * 2;
  }
  add("edges (grouped by source and delay)", edge_bytes);
  add("input rings", input_ring_bytes);
  if (lgn_bytes > 0) add("LGN inputs (cells, movie, rate table per frame, sample and unit)", lgn_bytes, true);
  add("input schedules", input_bytes);
  add("recorder", chunk * B * N * (1 + (record_v ? real + 8 : 0)) + (record_v ? B * N * real : 0) + N * real, true);
  p.per_edge = n_edges > 0 ? edge_bytes / n_edges : 0;
  if (tc) {
    const double C = std::min<double>(tc->checkpoint_interval, T);
    const double segments = std::ceil(T / C);
    double surf = 0;
    auto surface = [&](const std::string& name, const Projection& pr) {
      const auto it = tc->trainable.find(name);
      const bool trainable = it != tc->trainable.end() && it->second;
      surf += static_cast<double>(pr.size()) * (real + (trainable ? 3 * real : 0));
    };
    surface("recurrent", net.projections[0]);
    for (const auto& in : inputs) {
      const Projection& pr = net.projections[static_cast<std::size_t>(in.projection)];
      surface(pr.source_population, pr);
    }
    add("optimizer state (initial weights, Adam moments, gradients)", surf);
    if (!device_build) {
      const Projection& rec = net.projections[0];
      // train.target_blocks "auto" keeps one of the candidates it times (one at a time): the largest is planned
      const auto ne = static_cast<std::int64_t>(rec.size());
      std::vector<int> counts{tc->target_blocks};
      if (tc->target_blocks == 0)
        counts = device::target_block_candidates(ne, rec.n_sources, static_cast<int>(D), R * N * B * ring,
                                                 static_cast<double>(host_cache_bytes(2)));
      double blocked = 0;
      for (const int c : counts)
        blocked = std::max(
            blocked, device::target_block_bytes(ne, static_cast<double>(rec.n_sources), static_cast<int>(D),
                                                net.n_neurons, device::block_targets_for(net.n_neurons, c), real));
      add("recurrent edges in target blocks (host spike adjoint)", blocked);
    }
    add("segment snapshots (one per checkpoint_interval steps)", segments * (state + D * B * N + input_ring_bytes),
        true);
    if (tc->carry_state || tc->from_input)
      add(tc->carry_state ? "carried states (train.carry_state: start and end state per micro-batch)"
                          : "initial states (train.initial_state from_input: two states per micro-batch)",
          2.0 * tc->micro_batches() * (state + D * B * N + input_ring_bytes), true);
    const double acc = real;  // adjoints are Real (float32 runs keep float32 adjoints)
    add("adjoints", N * B * acc * (1 + 2 * R + 2), true);
    add(ring16 ? std::string("drive adjoint ring (") + precision_name(cfg.precision) + ", and one float32 slot)"
               : std::string("drive adjoint ring"),
        D * R * N * B * ring + (ring16 ? R * N * B * acc : 0.0), true);
    add("segment record (v, r, spikes, inputs over D + C steps)",
        C * N * B * (real + 2) + (D + C) * (N * B + x_ext_bytes), true);
    add("loss statistics", B * N * (4 + real) + 2 * T * 8, true);
  }
  p.per_neuron_sample = N * B > 0 ? nb / (N * B * replicas) : 0;
  return p;
}

double available_device_bytes() {
#if defined(KOKKOS_ENABLE_CUDA)
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) return static_cast<double>(free_b);
  return 0;
#else
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024.0;
  return 0;
#endif
}

void require_fits(const MemoryPlan& plan, const SimulationConfig& cfg, bool training) {
  const double need = plan.total(), have = available_device_bytes();
  if (have <= 0 || need <= have) return;
  throw InputError(
      cfg.path, "run", "batch_size",
      fmt::format("the run needs about {:.3g} GiB of {} memory but {:.3g} GiB are available; lower "
                  "run.batch_size{} (see `dpointnet plan`)",
                  need / 1073741824.0, Kokkos::DefaultExecutionSpace::memory_space::name(), have / 1073741824.0,
                  training ? " or train.checkpoint_interval (train.accumulate keeps the "
                             "samples per update with a smaller batch)"
                           : ""));
}

std::string describe(const MemoryPlan& plan) {
  std::ostringstream s;
  for (const auto& i : plan.items) s << fmt::format("  {:<62} {:>12.3f} MiB\n", i.name, i.bytes / 1048576.0);
  s << fmt::format("  {:<62} {:>12.3f} MiB\n", "total", plan.total() / 1048576.0);
  s << fmt::format("  device bytes per edge {:.2f}, per (neuron, sample) {:.1f}\n", plan.per_edge,
                   plan.per_neuron_sample);
  return s.str();
}

}  // namespace dpointnet
