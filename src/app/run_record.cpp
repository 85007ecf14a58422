#include "dpointnet/app/run_record.hpp"

#include <Kokkos_Core.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dpointnet/app/output_dir.hpp"
#include "dpointnet/app/recorded_spikes.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/io/spike_file.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"

namespace fs = std::filesystem;

namespace dpointnet {

void write_run_summary(const std::string& path, const RunRecord& rec, const SimulationConfig& cfg, const Network& net,
                       const TrainConfig& tc) {
  nlohmann::json j;
  j["dpointnet_version"] = DPOINTNET_VERSION;
  j["kokkos_version"] = compat::kokkos_version_string();
  j["execution_space"] = Kokkos::DefaultExecutionSpace::name();
  j["memory_space"] = Kokkos::DefaultExecutionSpace::memory_space::name();
  j["threads"] = compat::concurrency();
  j["precision"] = precision_name(cfg.precision);
  j["dynamics"] = dynamics_name(cfg.dynamics);
  j["config"] = cfg.path;
  j["neurons"] = net.n_neurons;
  j["edges"] = net.n_edges();
  nlohmann::json surf = nlohmann::json::array();
  for (std::size_t k = 0; k < rec.surfaces.size(); ++k)
    surf.push_back({{"name", rec.surfaces[k]},
                    {"edges", net.projections[k].size()},
                    {"trainable", static_cast<bool>(rec.trainable[k])}});
  j["surfaces"] = surf;
  j["dt_ms"] = cfg.dt;
  j["window_steps"] = cfg.n_steps;
  j["warmup_steps"] = tc.warmup_steps;
  j["batch_size"] = cfg.batch_size;
  j["global_batch"] = rec.global_batch;
  j["processes"] = rec.processes;
  j["replicas"] = rec.replicas;
  j["checkpoint_interval"] = tc.checkpoint_interval;
  j["steps"] = tc.steps;
  j["outcome"] = rec.outcome;
  j["start_update"] = rec.start_update;
  j["end_update"] = rec.end_update;
  const auto n = static_cast<double>(rec.end_update - rec.start_update);
  j["wall_s"] = rec.wall_s;
  j["samples_per_s"] = rec.wall_s > 0 ? n * static_cast<double>(rec.global_batch) / rec.wall_s : 0.0;
  j["phase_s"] = {{"forward", rec.t_forward},
                  {"recompute", rec.t_recompute},
                  {"backward", rec.t_backward},
                  {"update", rec.t_update},
                  {"allreduce", rec.t_allreduce}};
  j["predicted_peak_device_bytes"] = rec.predicted_peak_bytes;
  j["peak_rss_bytes"] = rec.peak_rss_bytes;
  write_atomically(path, "run summary", [&](const std::string& tmp) {
    std::ofstream f(tmp);
    f << j.dump(2) << "\n";
    f.close();
    if (!f) throw std::runtime_error("write failed");
  });
  log::get()->info("run summary: {}", path);
}

void write_weights_file(const std::string& path, const RunRecord& rec, const Network& net) {
  write_atomically(path, "weights file", [&](const std::string& tmp) {
    auto f = h5::File::create(tmp, true);
    for (std::size_t k = 0; k < rec.surfaces.size(); ++k) {
      const Projection& p = net.projections[k];
      const std::size_t n = p.size(), stride = n > kReportEdges ? (n + kReportEdges - 1) / kReportEdges : 1;
      std::vector<double> w0, w1;
      for (std::size_t e = 0; e < n; e += stride) {
        w0.push_back(p.weight_pA[e]);
        w1.push_back(rec.final_pA[k][e]);
      }
      const std::string g = "/" + rec.surfaces[k];
      f.write_double(g + "/initial_pA", w0, true);
      f.write_double(g + "/final_pA", w1, true);
      f.write_attr_uint32(g, "n_edges", {static_cast<std::uint32_t>(n)});
      f.write_attr_uint32(g, "stride", {static_cast<std::uint32_t>(stride)});
      f.write_attr_uint32(g, "trainable", {rec.trainable[k] ? 1u : 0u});
    }
    f.flush();
  });
  log::get()->info("weights before/after training: {}", path);
}

template <class Real>
void write_sample_rasters(const std::string& dir, const RunRecord& rec, const PreparedRun& run) {
  const SimulationConfig& cfg = *run.cfg;
  const Network& net = *run.net;
  const TrainConfig& tc = *run.tc;
  SimOptions o;
  o.batch_size = 1;
  o.n_steps = tc.total_steps(cfg);
  o.seed = cfg.seed;
  o.sample_offset = 0;
  // micro-batch 0 runs condition 0
  Simulator<Real> sim(Kokkos::DefaultExecutionSpace(), net, run.conditions.empty() ? run.inputs : run.conditions[0], o);
  sim.set_current_pulses(run.clamps);
  for (const char* which : {"before", "after"}) {
    if (std::string(which) == "after")
      for (int s = 0; s < sim.n_edge_sets(); ++s) {
        const auto k = static_cast<std::size_t>(sim.projection(s));
        if (!rec.trainable[k]) continue;
        const Projection& p = net.projections[k];
        std::vector<double> w(p.size());
        for (std::size_t e = 0; e < w.size(); ++e) w[e] = net.to_normalized(p.target[e], rec.final_pA[k][e]);
        sim.from_read_order(s, w, sim.edges(s).weight);
      }
    sim.reset();
    std::map<std::string, SpikeTrains> pops = empty_spike_trains(net);
    sim.run(o.n_steps, [&](const RecordedChunk& c) {
      for (int t = 0; t < c.n_steps; ++t) append_step_spikes(c, t, 0, net, cfg.dt, pops);
    });
    const std::string path = (fs::path(dir) / (std::string("spikes_") + which + ".h5")).string();
    write_atomically(path, "spike raster", [&](const std::string& tmp) { write_spike_file(tmp, true, pops); });
    log::get()->info("sample 0 {} training: {}", which, path);
  }
}

template void write_sample_rasters<float>(const std::string&, const RunRecord&, const PreparedRun&);
template void write_sample_rasters<double>(const std::string&, const RunRecord&, const PreparedRun&);

}  // namespace dpointnet
