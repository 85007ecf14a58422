#include "dpointnet/app/train_run.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "dpointnet/app/gradient_check.hpp"
#include "dpointnet/app/output_dir.hpp"
#include "dpointnet/app/preemption.hpp"
#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/app/rate_record.hpp"
#include "dpointnet/app/run_record.hpp"
#include "dpointnet/app/thread_check.hpp"
#include "dpointnet/app/train_checks.hpp"
#include "dpointnet/app/visual_outputs.hpp"
#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/edge_export.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/parallel/distribution_config.hpp"
#include "dpointnet/parallel/replica_set.hpp"
#include "dpointnet/parallel/serial_context.hpp"
#include "dpointnet/train/checkpoint_file.hpp"
#include "dpointnet/train/detail/trainer_test_access.hpp"
#include "dpointnet/train/memory_plan.hpp"
#include "dpointnet/train/metrics_log.hpp"
#include "dpointnet/train/run_identity.hpp"
#include "dpointnet/train/train_config.hpp"
#include "dpointnet/train/trainer_state.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"
#include "dpointnet/util/process_memory.hpp"

namespace fs = std::filesystem;

namespace dpointnet {

namespace {

// DPOINTNET_FAULT_RANK / DPOINTNET_FAULT_STEP: throw on that rank before that update (fault-injection tests).
void maybe_fault(int rank, std::int64_t step) {
  const char* fr = std::getenv("DPOINTNET_FAULT_RANK");
  const char* fs_ = std::getenv("DPOINTNET_FAULT_STEP");
  if (fr && fs_ && std::atoi(fr) == rank && std::atoll(fs_) == step)
    throw std::runtime_error("injected fault (DPOINTNET_FAULT_RANK=" + std::string(fr) +
                             ", DPOINTNET_FAULT_STEP=" + std::string(fs_) + ") on rank " + std::to_string(rank) +
                             " at update " + std::to_string(step));
}

struct RunInputs {
  const TrainCommand& cmd;
  const SimulationConfig& cfg;
  const Network& net;
  const PreparedRun& run;
  const TrainConfig& tc;
  const CheckpointState* resume;
  std::string chash, nhash;
  const DistributionConfig& dist;
};

// The training loop; the chief fills `rec` at whichever exit (completed, preempted, stopped).
template <class Real>
int train_loop(const RunInputs& in, ReplicaContext& ctx, RunRecord& rec) {
  const TrainCommand& cmd = in.cmd;
  const SimulationConfig& cfg = in.cfg;
  const Network& net = in.net;
  const TrainConfig& tc = in.tc;
  const CheckpointState* resume = in.resume;
  const std::string &chash = in.chash, &nhash = in.nhash;
  auto lg = log::get();
  if (in.dist.mode == DistributionMode::Mpi) ctx.set_timeout(in.dist.timeout_s);
  ReplicaSet<Real> rs(ctx, in.dist, in.run);
  const bool chief = ctx.chief();
  if (rs.distributed())
    lg->info("sample-parallel training: {} replica(s) = {} process(es) x {} local, batch {} per replica, global {}",
             rs.schedule().replicas, ctx.size(), rs.n_local(), cfg.batch_size, rs.schedule().global_batch());
  if (tc.micro_batches() > 1)
    lg->info("gradient accumulation: {} micro-batches of {} samples per replica and update ({} samples per update)",
             tc.micro_batches(), cfg.batch_size, rs.schedule().global_batch());
  Trainer<Real>& tr = rs.chief();
  lg->info("forward and recompute passes: {} step(s) per min-delay window", tr.step_window());
  if (!tr.engine().target_block_choice().timings.empty())
    lg->info(
        "spike adjoint: {} target block(s), the fastest per reverse step of {} (train.target_blocks \"auto\", "
        "timed in {:.2f} s)",
        tr.engine().target_blocks(), tr.engine().target_block_choice().timings_text(),
        tr.engine().target_block_choice().seconds);
  // identical start on every replica: the chief's state (or the restored checkpoint) is broadcast
  if (rs.distributed()) {
    CheckpointState state = resume ? *resume : capture_state(tr, net, cfg, chash, nhash, rs.schedule());
    for (auto& sf : state.surfaces)
      if (!sf.trainable) sf.adam_m.clear(), sf.adam_v.clear();
    rs.broadcast_state(state, resume ? cmd.resume : std::string("chief"));
  } else if (resume) {
    restore_state(tr, *resume, cmd.resume);
  }
  if (resume && (tc.carry_state || tc.from_input)) rs.scatter_carried(*resume, cmd.resume);
  if (resume) lg->info("resumed from {} at step {}", cmd.resume, resume->step);
  if (!cmd.gradient_check.empty()) {
    run_gradient_check(rs, net, cfg, tc, cmd.gradient_check, cmd.gradient_check_updates);
    return 0;
  }

  const fs::path out(cfg.output_dir);
  std::unique_ptr<MetricsLog> metrics;
  std::unique_ptr<StimulusLog> stimuli;
  if (chief) {
    metrics = std::make_unique<MetricsLog>((out / "metrics.csv").string(), loss_columns(tc), rs.distributed(),
                                           resume ? resume->step : -1, tr.loss_scale().on);
    stimuli =
        std::make_unique<StimulusLog>((out / "stimulus_samples.csv").string(), in.run, resume ? resume->step : -1);
  }
  // The chief writes; every rank waits for it, so that no rank runs ahead (and fails) while the file is written.
  auto save = [&](const std::string& why) {
    CheckpointState st;
    if (chief) st = capture_state(tr, net, cfg, chash, nhash, rs.schedule());
    if (tc.carry_state || tc.from_input) rs.gather_carried(st);  // collective
    if (chief) {
      create_output_subdir((out / "checkpoints").string());
      const std::string p = (out / "checkpoints" / ("step_" + std::to_string(tr.updates_done()) + ".h5")).string();
      write_checkpoint_file(p, st);
      lg->info("checkpoint file ({}) {}", why, p);
    }
    ctx.barrier();
  };
  // per-neuron rates of this run's first and last update, for the plots (collective: every rank at the same update)
  std::vector<double> rates_first;
  std::int64_t rates_first_update = 0;
  auto save_rates = [&]() {
    const auto last = global_rates_hz(rs, cfg);
    if (chief && !rates_first.empty())
      write_rates_file((out / "rates.h5").string(), net, tc, rates_first, last, rates_first_update, tr.updates_done());
  };
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t first = tr.updates_done();
  int done_here = 0;
  auto record = [&](const std::string& outcome) {  // chief: what the run report needs
    if (!chief) return;
    rec.valid = true;
    rec.outcome = outcome;
    rec.start_update = first;
    rec.end_update = tr.updates_done();
    rec.processes = ctx.size();
    rec.replicas = rs.schedule().replicas;
    rec.global_batch = rs.schedule().global_batch();
    rec.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rec.peak_rss_bytes = peak_rss_bytes();
    rec.final_pA = weights_pA(tr, net);
    rec.surfaces.clear();
    for (const auto& p : net.projections) rec.surfaces.push_back(p.recurrent ? "recurrent" : p.source_population);
    rec.trainable.assign(net.projections.size(), false);
    for (int s = 0; s < tr.weights().size(); ++s)
      rec.trainable[static_cast<std::size_t>(tr.weights()[s].projection)] = tr.weights()[s].trainable;
  };
  // (the signal handlers are installed by train_impl, which keeps them until the run report is written)
  // a signal on any rank stops every rank at the same update boundary (one reduced flag per update)
  auto preempted = [&]() {
    double sig = PreemptionGuard::received();
    if (rs.distributed()) ctx.allreduce_max(&sig, 1);
    return static_cast<int>(sig);
  };
  while (tr.updates_done() < tc.steps) {
    const auto t0 = std::chrono::steady_clock::now();
    maybe_fault(ctx.rank(), tr.updates_done() + 1);
    ctx.set_update(tr.updates_done() + 1);
    const std::int64_t skipped_before = tr.loss_scale().skipped_total;
    StepMetrics m = rs.train_update(tr.updates_done(),
                                    [&](const StepMetrics& g) { check_finite(rs, g, tc, tr.updates_done() + 1); });
    m.skipped = tr.loss_scale().skipped_total - skipped_before;
    if (chief && m.skipped > 0)
      lg->info(
          "update {}: the gradient at loss scale {:g} was not finite: {} optimizer step(s) skipped, the scale is "
          "now {:g}",
          tr.updates_done(), m.loss_scale, m.skipped, tr.loss_scale().scale);
    m.step = tr.updates_done();
    m.t_update = tr.last_update_seconds();
    m.peak_rss_bytes = peak_rss_bytes();
    rec.t_forward += m.t_forward, rec.t_recompute += m.t_recompute, rec.t_backward += m.t_backward;
    rec.t_update += m.t_update, rec.t_allreduce += m.t_allreduce;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.samples_per_s = static_cast<double>(rs.schedule().global_batch()) / std::max(m.seconds, 1e-12);
    ++done_here;
    if (done_here == 1) {
      rates_first = global_rates_hz(rs, cfg);
      rates_first_update = m.step;
    }
    if (chief) metrics->append(m), stimuli->write_update(m.step);
    if (chief && cmd.progress && (m.step % tc.log_every == 0 || m.step == tc.steps)) {
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double per = el / static_cast<double>(m.step - first);
      lg->info("step {}/{} loss {:.6g} rate {:.3f} Hz |grad| {:.4g} {:.1f} samples/s ETA {:.1f} s", m.step, tc.steps,
               m.loss, m.rate_hz, m.grad_norm, m.samples_per_s, per * static_cast<double>(tc.steps - m.step));
    }
    if (tc.save_checkpoint_every > 0 && m.step % tc.save_checkpoint_every == 0 && m.step != tc.steps) save("interval");
    if (const int sig = preempted(); sig != 0 && m.step != tc.steps) {
      save_rates();
      save(std::string("preempted by ") + PreemptionGuard::name(sig));
      record(std::string("preempted by ") + PreemptionGuard::name(sig));
      if (chief)
        lg->warn("{} received: stopped after update {} of {} with a complete checkpoint; resume with --resume {}",
                 PreemptionGuard::name(sig), tr.updates_done(), tc.steps,
                 (out / "checkpoints" / ("step_" + std::to_string(tr.updates_done()) + ".h5")).string());
      return kExitPreempted;
    }
    if (cmd.stop_after > 0 && done_here >= cmd.stop_after) {
      save_rates();
      save("stop requested");
      record("stopped after " + std::to_string(done_here) + " updates (--stop-after)");
      if (chief) lg->warn("stopping after {} updates as requested (--stop-after); resume with --resume", done_here);
      return 0;
    }
  }
  if (done_here > 0) save_rates();
  save("final");
  record(done_here > 0 ? "completed" : "completed (nothing left to run)");
  if (chief) {
    try {
      export_edges(net, cfg, rec.final_pA, (out / "network").string());
    } catch (const std::exception& e) {
      throw OutputError((out / "network").string(), std::string("cannot export the trained network: ") + e.what());
    }
  }
  ctx.barrier();
  return 0;
}

// The loop, then (chief) the files of the run report, once the trainers' memory is released. They are a report:
// a failure to write them is logged and does not change the exit code (the checkpoint and the export are written
// before). After a signal (preemption) only the summary and the weights are written, not the rasters, so that the
// job ends quickly; the signal handlers stay installed until the end.
template <class Real>
int train_impl(const RunInputs& in, ReplicaContext& ctx, double predicted_peak_bytes) {
  RunRecord rec;
  rec.predicted_peak_bytes = predicted_peak_bytes;
  PreemptionGuard preemption;  // SIGTERM/SIGUSR1 handlers, for the loop and the report after it
  const int code = train_loop<Real>(in, ctx, rec);
  if (!rec.valid) return code;
  const fs::path out(in.cfg.output_dir);
  auto attempt = [&](const char* what, const std::function<void()>& write) {
    try {
      write();
    } catch (const std::exception& e) {
      log::get()->warn("the run report's {} was not written: {} (training itself is complete and saved)", what,
                       e.what());
    }
  };
  attempt("summary", [&] { write_run_summary((out / "run_summary.json").string(), rec, in.cfg, in.net, in.tc); });
  attempt("weights file", [&] { write_weights_file((out / "weights.h5").string(), rec, in.net); });
  if (code == kExitPreempted || PreemptionGuard::received() != 0)
    log::get()->info("spike rasters of sample 0 not simulated: a signal arrived (scripts/report leaves them out)");
  else
    attempt("spike rasters", [&] { write_sample_rasters<Real>(out.string(), rec, in.run); });
  return code;
}

}  // namespace

int run_train(const TrainCommand& cmd, ReplicaContext* job) {
  SerialContext serial;
  ReplicaContext& ctx = job ? *job : serial;
  SimulationConfig cfg = SimulationConfig::load(cmd.config);
  auto lg = log::get();
  lg->info("dpointnet {} train {}", DPOINTNET_VERSION, cfg.path);
  lg->info("Kokkos {} on {} ({} threads), precision {}", compat::kokkos_version_string(),
           Kokkos::DefaultExecutionSpace::name(), compat::concurrency(), precision_name(cfg.precision));
  warn_if_oversubscribed();
  lg->info("dynamics: {} (run.dynamics)", dynamics_name(cfg.dynamics));
  Network net = build_network(cfg);
  TrainConfig tc = TrainConfig::parse(cfg, net);
  const DistributionConfig dist =
      DistributionConfig::parse(cfg, &tc, job ? Launcher::Mpi : Launcher::Serial, ctx.size(), true);
  const int replicas = ctx.size() * dist.local_replicas();
  // every input, condition and clamp read and checked once, before any output
  const PreparedRun run = prepare_run(cfg, net, tc, replicas);
  const SampleSchedule& schedule = run.schedule;
  const std::string chash = config_hash(cfg, replicas), nhash = network_hash(net);
  CheckpointState ck;
  if (!cmd.resume.empty()) {
    ck = read_resume(cmd.resume, nhash, chash, precision_name(cfg.precision), tc, schedule);
    if (ck.replicas > 0 && ck.replicas != replicas)
      lg->info(
          "elastic resume: the checkpoint was written by {} replica(s) x batch {}; continuing on {} x {} (global "
          "batch {} kept)",
          ck.replicas, ck.batch_size, replicas, cfg.batch_size, schedule.global_batch());
  }
  const MemoryPlan plan = plan_memory(net, run.inputs, cfg, &tc, dist.local_replicas());
  require_fits(plan, cfg, true);
  if (cmd.gradient_check.empty() && ctx.chief()) {
    const fs::path out(cfg.output_dir);
    prepare_output_dir(cfg.output_dir, cfg.path, "output", "output_dir");
    const bool overwrite = cmd.overwrite || cfg.overwrite_output || !cmd.resume.empty();
    for (const auto& p : {out / "metrics.csv", out / "checkpoints", out / "network"})
      if (!overwrite && fs::exists(p))
        throw InputError(cfg.path, "output", "overwrite_output_dir",
                         p.string() + " exists; set output.overwrite_output_dir, pass --overwrite, or --resume");
    log::add_file(cfg.log_file, /*truncate=*/cmd.resume.empty());
    // the run report's files describe one invocation: an earlier one's must not survive a run that fails
    for (const char* f : {"run_summary.json", "weights.h5", "spikes_before.h5", "spikes_after.h5"}) {
      std::error_code ec;
      if (fs::remove(out / f, ec)) lg->info("removed {} of an earlier invocation", (out / f).string());
      if (ec) throw OutputError((out / f).string(), "cannot remove the earlier run's file: " + ec.message());
    }
    std::ofstream(out / "train_config.resolved.json") << cfg.resolved.dump(2) << "\n";
  }
  struct FileSinkGuard {
    ~FileSinkGuard() { log::remove_files(); }
  } guard;
  lg->info("network: {} neurons, {} edges; T = {} steps, batch {}, {} updates, checkpoint interval {}", net.n_neurons,
           net.n_edges(), cfg.n_steps, cfg.batch_size, tc.steps, tc.checkpoint_interval);
  const RunInputs in{cmd, cfg, net, run, tc, cmd.resume.empty() ? nullptr : &ck, chash, nhash, dist};
  return cfg.double_precision() ? train_impl<double>(in, ctx, plan.total()) : train_impl<float>(in, ctx, plan.total());
}

}  // namespace dpointnet
