#include "dpointnet/app/simulate_run.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "dpointnet/app/output_dir.hpp"
#include "dpointnet/app/recorded_spikes.hpp"
#include "dpointnet/app/thread_check.hpp"
#include "dpointnet/app/visual_outputs.hpp"
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/io/spike_file.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/sim/step_window.hpp"
#include "dpointnet/train/memory_plan.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"

namespace fs = std::filesystem;

namespace dpointnet {

std::string per_sample_path(const std::string& file, int b, int batch) {
  if (batch == 1) return file;
  fs::path p(file);
  return (p.parent_path() / (p.stem().string() + "_sample" + std::to_string(b) + p.extension().string())).string();
}

namespace {

struct ReportPlan {
  VoltageReport rep;
  std::vector<std::int64_t> neurons;  // global indices
};

struct Progress {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last = start;
  void update(std::int64_t done, std::int64_t total, int batch, bool force) {
    auto now = std::chrono::steady_clock::now();
    if (!force && std::chrono::duration<double>(now - last).count() < 2.0) return;
    last = now;
    const double el = std::chrono::duration<double>(now - start).count();
    const double rate = done / std::max(el, 1e-9);
    const double eta = (total - done) / std::max(rate, 1e-9);
    log::get()->info("step {}/{} ({:.0f}%), {:.0f} steps/s x {} samples, elapsed {:.1f} s, ETA {:.1f} s", done, total,
                     100.0 * done / total, rate, batch, el, eta);
  }
};

template <class Real>
SimulateSummary simulate_impl(const SimulationConfig& cfg, const Network& net, const std::vector<PreparedInput>& inputs,
                              int batch, const std::vector<ReportPlan>& reports,
                              const std::vector<CurrentPulse>& pulses, bool progress, int max_window) {
  SimOptions opt;
  opt.batch_size = batch;
  opt.n_steps = cfg.n_steps;
  opt.seed = cfg.seed;
  opt.record_v = !reports.empty();
  opt.record_inputs = !cfg.input_spikes_file.empty();
  opt.max_window = max_window;
  opt.read_order = false;  // nothing of a simulate run goes back to the edges' read order
  const auto t_build = std::chrono::steady_clock::now();
  Simulator<Real> sim(Kokkos::DefaultExecutionSpace(), net, inputs, opt);
  sim.set_current_pulses(pulses);
  sim.reset();
  Kokkos::fence();
  // spikes per sample and population
  std::vector<std::map<std::string, SpikeTrains>> spikes(static_cast<std::size_t>(batch), empty_spike_trains(net));
  std::vector<std::vector<float>> vtrace(reports.size() * static_cast<std::size_t>(batch));
  std::vector<std::map<std::string, SpikeTrains>> input_spikes(static_cast<std::size_t>(batch));
  Progress prog;
  SimulateSummary sum;
  sum.window = sim.window();
  auto t0 = std::chrono::steady_clock::now();
  sum.build_s = std::chrono::duration<double>(t0 - t_build).count();
  sim.run(cfg.n_steps, [&](const RecordedChunk& c) {
    for (int k = 0; k < c.n_steps; ++k) {
      for (int b = 0; b < batch; ++b) {
        sum.n_spikes += append_step_spikes(c, k, b, net, cfg.dt, spikes[static_cast<std::size_t>(b)]);
        for (std::size_t q = 0; q < c.inputs.size(); ++q)
          append_input_spikes(c, q, k, b, net, inputs[q], cfg.dt, input_spikes[static_cast<std::size_t>(b)]);
        for (std::size_t r = 0; r < reports.size(); ++r) {
          auto& tr = vtrace[r * static_cast<std::size_t>(batch) + static_cast<std::size_t>(b)];
          for (std::int64_t i : reports[r].neurons) {
            const auto& d = net.neurons[static_cast<std::size_t>(i)];
            tr.push_back(static_cast<float>(d.E_L + d.vs * static_cast<double>(c.v(k, b, i))));
          }
        }
      }
    }
    if (progress) prog.update(c.first_step + c.n_steps, cfg.n_steps, batch, c.first_step + c.n_steps == cfg.n_steps);
  });
  const auto t_run_end = std::chrono::steady_clock::now();
  sum.wall_s = std::chrono::duration<double>(t_run_end - t0).count();
  sum.mean_rate_hz = sum.n_spikes / (static_cast<double>(batch) * net.n_neurons * cfg.tstop / 1000.0);

  auto write_atomic = [&](const std::string& path, const std::function<void(const std::string&)>& writer) {
    const std::string tmp = path + ".tmp";
    writer(tmp);
    fs::rename(tmp, path);
  };
  const std::vector<int> lgn = lgn_inputs(inputs);
  if (!lgn.empty()) {
    const std::string path = (fs::path(cfg.output_dir) / "stimulus_samples.csv").string();
    write_atomic(path, [&](const std::string& tmp) {
      std::ofstream os(tmp);
      os << stimulus_csv_header("");
      write_stimulus_rows(os, inputs, cfg.seed, 0, batch, "");
      if (!os.flush()) throw std::runtime_error("cannot write " + tmp);
    });
    log::get()->info("wrote {}", path);
  }
  if (!cfg.lgn_rates_samples.empty()) {
    const PreparedInput& in = inputs[static_cast<std::size_t>(lgn[0])];
    const Population& pop =
        *net.find_population(net.projections[static_cast<std::size_t>(in.projection)].source_population);
    write_lgn_rates(cfg.lgn_rates_file, in.name, pop, sim.lgn_rates(lgn[0]), cfg.lgn_rates_samples, cfg.n_steps,
                    cfg.dt);
    log::get()->info("wrote {} (LGN rates of input {}, {} sample(s))", cfg.lgn_rates_file, in.name,
                     cfg.lgn_rates_samples.size());
  }
  for (int b = 0; opt.record_inputs && b < batch; ++b) {
    const std::string path = per_sample_path(cfg.input_spikes_file, b, batch);
    write_atomic(
        path, [&](const std::string& tmp) { write_spike_file(tmp, true, input_spikes[static_cast<std::size_t>(b)]); });
    log::get()->info("wrote {} (the input populations' spikes)", path);
  }
  for (int b = 0; b < batch; ++b) {
    const std::string path = per_sample_path(cfg.spikes_file, b, batch);
    write_atomic(path,
                 [&](const std::string& tmp) { write_spike_file(tmp, true, spikes[static_cast<std::size_t>(b)]); });
    log::get()->info("wrote {}", path);
  }
  for (std::size_t r = 0; r < reports.size(); ++r) {
    for (int b = 0; b < batch; ++b) {
      const std::string path = per_sample_path(reports[r].rep.file, b, batch);
      write_atomic(path, [&](const std::string& tmp) {
        auto f = h5::File::create(tmp, true);
        f.write_sonata_header();
        // one BMTK report group per population of the recorded neurons
        std::map<std::string, std::vector<std::size_t>> by_pop;
        for (std::size_t q = 0; q < reports[r].neurons.size(); ++q) {
          const auto gi = static_cast<std::size_t>(reports[r].neurons[q]);
          by_pop[net.populations[static_cast<std::size_t>(net.neuron_population[gi])].name].push_back(q);
        }
        const auto& tr = vtrace[r * static_cast<std::size_t>(batch) + static_cast<std::size_t>(b)];
        const std::size_t nrec = reports[r].neurons.size();
        for (const auto& [pname, cols] : by_pop) {
          const std::string g = "/report/" + pname;
          std::vector<float> data(static_cast<std::size_t>(cfg.n_steps) * cols.size());
          std::vector<std::uint64_t> ids, elem(cols.size(), 0), ptr(cols.size() + 1);
          for (std::size_t c = 0; c < cols.size(); ++c) {
            ids.push_back(
                static_cast<std::uint64_t>(net.neuron_node_id[static_cast<std::size_t>(reports[r].neurons[cols[c]])]));
            ptr[c + 1] = c + 1;
            for (std::int64_t k = 0; k < cfg.n_steps; ++k)
              data[static_cast<std::size_t>(k) * cols.size() + c] = tr[static_cast<std::size_t>(k) * nrec + cols[c]];
          }
          f.write_float_2d(g + "/data", data, static_cast<std::size_t>(cfg.n_steps), cols.size(), true);
          f.write_attr_string(g + "/data", "units", "mV");
          f.write_uint64(g + "/mapping/node_ids", ids);
          f.write_uint64(g + "/mapping/element_ids", elem);
          f.write_double(g + "/mapping/element_pos", std::vector<double>(cols.size(), 0.5));
          f.write_uint64(g + "/mapping/index_pointer", ptr);
          f.write_double(g + "/mapping/time", {cfg.dt, cfg.tstop + cfg.dt / 2, cfg.dt});
          f.write_attr_string(g + "/mapping/time", "units", "ms");
        }
      });
      log::get()->info("wrote {}", path);
    }
  }
  sum.write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run_end).count();
  return sum;
}

}  // namespace

SimulateSummary run_simulate(const SimulateCommand& cmd) {
  const auto t_start = std::chrono::steady_clock::now();
  const int max_window = step_window_from_environment();
  SimulationConfig cfg = SimulationConfig::load(cmd.config);
  if (cmd.batch_size > 0) cfg.batch_size = cmd.batch_size;
  if (cmd.precision == "float64") cfg.precision = Precision::Float64;
  if (cmd.precision == "float32") cfg.precision = Precision::Float32;
  const bool overwrite = cmd.overwrite || cfg.overwrite_output;
  auto lg = log::get();
  lg->info("dpointnet {} simulate {}", DPOINTNET_VERSION, cfg.path);
  lg->info("Kokkos {} on {} ({} threads/concurrency), precision {}", compat::kokkos_version_string(),
           Kokkos::DefaultExecutionSpace::name(), compat::concurrency(), precision_name(cfg.precision));
  if (sixteen_bit(cfg.precision))
    lg->info(
        "run.precision \"{}\" stores the backward pass's adjoint ring in 16 bits: the simulation (a forward pass) "
        "runs in float32, as a {} training run's forward pass does",
        precision_name(cfg.precision), precision_name(cfg.precision));
  warn_if_oversubscribed();
  lg->info("dynamics: {} (run.dynamics)", dynamics_name(cfg.dynamics));
  if (cfg.distribution.present)
    throw InputError(cfg.path, "run", "distribution",
                     "sample-parallel runs train; simulate (inference) is refused under a distribution mode");
  for (int s : cfg.lgn_rates_samples)
    if (s >= cfg.batch_size)
      throw InputError(cfg.path, "output.lgn_rates", "samples",
                       "sample " + std::to_string(s) + " is not in the batch of " + std::to_string(cfg.batch_size));
  Network net = build_network(cfg);
  std::vector<PreparedInput> inputs = prepare_inputs(cfg, net, cfg.n_steps);
  std::vector<CurrentPulse> pulses = prepare_current_clamps(cfg, net);
  require_fits(plan_memory(net, inputs, cfg, nullptr), cfg, false);
  lg->info("network: {} neurons in {} populations, {} edges ({} recurrent), {} channels, max delay {} steps",
           net.n_neurons, net.populations.size(), net.n_edges(), net.projections[0].size(), net.n_channels,
           net.max_delay);

  std::vector<ReportPlan> reports;
  for (const auto& rep : cfg.voltage_reports) {
    ReportPlan rp;
    rp.rep = rep;
    for (std::int64_t i = 0; i < net.n_neurons; ++i) {
      const auto& pop = net.populations[static_cast<std::size_t>(net.neuron_population[static_cast<std::size_t>(i)])];
      if (rep.node_set == "all" || rep.node_set == pop.name) rp.neurons.push_back(i);
    }
    if (rp.neurons.empty())
      throw InputError(cfg.path, "reports." + rep.name, "cells",
                       "'" + rep.node_set + "' is not a simulated population (or \"all\")");
    reports.push_back(std::move(rp));
  }
  // Refuse to overwrite before anything is written.
  std::vector<std::string> outputs;
  for (int b = 0; b < cfg.batch_size; ++b) {
    outputs.push_back(per_sample_path(cfg.spikes_file, b, cfg.batch_size));
    if (!cfg.input_spikes_file.empty()) outputs.push_back(per_sample_path(cfg.input_spikes_file, b, cfg.batch_size));
    for (const auto& r : reports) outputs.push_back(per_sample_path(r.rep.file, b, cfg.batch_size));
  }
  const std::vector<int> lgn = lgn_inputs(inputs);
  if (!lgn.empty()) outputs.push_back((fs::path(cfg.output_dir) / "stimulus_samples.csv").string());
  if (!cfg.lgn_rates_samples.empty()) {
    if (lgn.size() != 1)
      throw InputError(
          cfg.path, "output", "lgn_rates",
          "needs exactly one LGN input (input_type lgn) with edges; the config has " + std::to_string(lgn.size()));
    outputs.push_back(cfg.lgn_rates_file);
  }
  const std::string resolved_path = (fs::path(cfg.output_dir) / "simulation_config.resolved.json").string();
  outputs.push_back(resolved_path);
  prepare_output_dir(cfg.output_dir, cfg.path, "output", "output_dir");  // before the checks: a file there is named
  if (!overwrite)
    for (const auto& o : outputs)
      if (fs::exists(o))
        throw InputError(cfg.path, "output", "overwrite_output_dir",
                         "output file " + o + " exists; set output.overwrite_output_dir or pass --overwrite");
  prepare_output_dir(cfg.output_dir, cfg.path, "output", "output_dir");
  for (const auto& o : outputs)
    if (!fs::path(o).parent_path().empty())
      prepare_output_dir(fs::path(o).parent_path().string(), cfg.path, "output", "output_dir");
  log::add_file(cfg.log_file);
  struct FileSinkGuard {
    ~FileSinkGuard() { log::remove_files(); }
  } guard;
  {
    std::ofstream rj(resolved_path);
    rj << cfg.resolved.dump(2) << "\n";
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  lg->info("running {} steps of {} ms, batch {}", cfg.n_steps, cfg.dt, cfg.batch_size);
  SimulateSummary s =
      cfg.double_precision()
          ? simulate_impl<double>(cfg, net, inputs, cfg.batch_size, reports, pulses, cmd.progress, max_window)
          : simulate_impl<float>(cfg, net, inputs, cfg.batch_size, reports, pulses, cmd.progress, max_window);
  s.load_s = load_s;
  lg->info("done: {} spikes, mean rate {:.3f} Hz, {:.2f} s", s.n_spikes, s.mean_rate_hz, s.wall_s);
  lg->info("phases: load {:.4f} s, build {:.4f} s, run {:.4f} s ({} steps per window), write {:.4f} s", s.load_s,
           s.build_s, s.wall_s, s.window, s.write_s);
  return s;
}

}  // namespace dpointnet
