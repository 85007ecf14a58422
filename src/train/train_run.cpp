#include "train/train_run.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "config/simulation_config.hpp"
#include "dist/distribution_config.hpp"
#include "dist/replica_context.hpp"
#include "inputs/input_schedule.hpp"
#include "io/hdf5_file.hpp"
#include "network/network_builder.hpp"
#include "train/checkpoint.hpp"
#include "train/train_config.hpp"
#include "train/trainer.hpp"
#include "util/error.hpp"
#include "util/kokkos_compat.hpp"
#include "util/log.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace dpointnet {

namespace {

// The config hash covers what changes the trajectory besides the network (which has its own hash): run, inputs
// (spike files by content, not by path) and the train section. Keys that only say how long or how often
// (train.steps/epochs, checkpoint_interval, save/log intervals) and where outputs go may change on resume,
// and so may the location of the files.
std::string config_hash(const SimulationConfig& cfg) {
  json j;
  for (const auto& in : cfg.inputs) {
    json e = cfg.resolved["inputs"][in.name];
    if (e.contains("input_file")) {
      std::ifstream f(in.file, std::ios::binary);
      e["input_file"] = hash_hex(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
    }
    j["inputs"][in.name] = e;
  }
  j["run"] = {{"dt", cfg.dt},
              {"tstop", cfg.tstop},
              {"seed", cfg.seed},
              {"batch_size", cfg.batch_size},
              {"precision", cfg.double_precision ? "float64" : "float32"}};
  json t = cfg.resolved["train"];
  for (const char* k :
       {"steps", "epochs", "steps_per_epoch", "checkpoint_interval", "save_checkpoint_every", "log_every"})
    t.erase(k);
  j["train"] = t;
  return hash_hex(j.dump());
}

// Network identity: neuron constants, and per projection the sources, targets, channels, delays and initial
// weights (pA).
std::string network_hash(const Network& net) {
  std::string bytes = std::to_string(net.n_neurons) + ";" + std::to_string(net.dt) + ";";
  for (const auto& d : net.neurons) {
    const double v[] = {
        d.vs,          d.E_L,         d.decay,        d.current_factor, d.v_reset, double(d.t_ref_steps),
        d.asc_amps[0], d.asc_amps[1], d.asc_decay[0], d.asc_decay[1]};
    bytes.append(reinterpret_cast<const char*>(v), sizeof v);
    bytes.append(reinterpret_cast<const char*>(d.syn_decay.data()), d.syn_decay.size() * sizeof(double));
  }
  for (const auto& p : net.projections) {
    bytes += p.source_population + ":" + std::to_string(p.size()) + ";";
    bytes.append(reinterpret_cast<const char*>(p.weight_pA.data()), p.weight_pA.size() * sizeof(double));
    bytes.append(reinterpret_cast<const char*>(p.target.data()), p.target.size() * sizeof(std::int64_t));
    bytes.append(reinterpret_cast<const char*>(p.source.data()), p.source.size() * sizeof(std::int64_t));
    bytes.append(reinterpret_cast<const char*>(p.channel.data()), p.channel.size() * sizeof(int));
    bytes.append(reinterpret_cast<const char*>(p.delay_steps.data()), p.delay_steps.size() * sizeof(int));
  }
  return hash_hex(bytes);
}

template <class Real>
CheckpointData snapshot_state(const Trainer<Real>& tr, const Network& net, const SimulationConfig& cfg,
                              const std::string& chash, const std::string& nhash, int replicas) {
  CheckpointData c;
  c.step = tr.adam_step();
  c.next_sample = tr.adam_step() * cfg.batch_size * replicas;  // global batches are drawn in order
  c.seed = cfg.seed;
  c.config_hash = chash;
  c.network_hash = nhash;
  c.precision = cfg.double_precision ? "float64" : "float32";
  using F = typename Trainer<Real>::Field;
  for (int s = 0; s < tr.n_surfaces(); ++s) {
    SurfaceState st;
    st.name = tr.surface_name(s);
    st.trainable = tr.surface_trainable(s);
    st.weight = tr.get(s, F::Weight);
    st.initial_weight = tr.get(s, F::InitialWeight);
    if (st.trainable) {
      st.adam_m = tr.get(s, F::AdamM);
      st.adam_v = tr.get(s, F::AdamV);
    }
    const Projection& p = net.projections[static_cast<std::size_t>(tr.surface_projection(s))];
    st.weight_pA.resize(st.weight.size());
    for (std::size_t e = 0; e < st.weight.size(); ++e)
      st.weight_pA[e] = st.weight[e] * net.neurons[static_cast<std::size_t>(p.target[e])].vs;
    c.surfaces.push_back(std::move(st));
  }
  return c;
}

template <class Real>
void restore_state(Trainer<Real>& tr, const CheckpointData& c, const std::string& path) {
  using F = typename Trainer<Real>::Field;
  for (int s = 0; s < tr.n_surfaces(); ++s) {
    const SurfaceState* st = nullptr;
    for (const auto& x : c.surfaces)
      if (x.name == tr.surface_name(s)) st = &x;
    if (!st) throw InputError(path, "", "surfaces", "has no surface '" + tr.surface_name(s) + "'");
    tr.set(s, F::Weight, st->weight);
    tr.set(s, F::InitialWeight, st->initial_weight);
    if (tr.surface_trainable(s)) {
      tr.set(s, F::AdamM, st->adam_m);
      tr.set(s, F::AdamV, st->adam_v);
    }
  }
  tr.set_adam_step(c.step);
}

// Trained weights as SONATA edge files with the input's layout: each edge file is copied and every edge's
// syn_weight becomes weight_pA / nsyns (so that syn_weight * nsyns is the trained weight).
template <class Real>
void export_edges(const Trainer<Real>& tr, const Network& net, const SimulationConfig& cfg, const std::string& dir) {
  fs::create_directories(dir);
  std::map<std::string, std::vector<int>> by_file;  // edges file -> edge population indices
  for (std::size_t q = 0; q < net.edge_populations.size(); ++q)
    by_file[net.edge_populations[q].file].push_back(static_cast<int>(q));
  // new pA weight per (edge population, row)
  std::vector<std::vector<double>> w_new(net.edge_populations.size());
  std::vector<std::vector<double>> nsyns(net.edge_populations.size());
  for (std::size_t q = 0; q < net.edge_populations.size(); ++q) {
    w_new[q].assign(static_cast<std::size_t>(net.edge_populations[q].n_edges), 0.0);
    nsyns[q].assign(w_new[q].size(), 1.0);
  }
  using F = typename Trainer<Real>::Field;
  for (int s = 0; s < tr.n_surfaces(); ++s) {
    const Projection& p = net.projections[static_cast<std::size_t>(tr.surface_projection(s))];
    const auto w = tr.get(s, F::Weight);
    for (std::size_t e = 0; e < p.size(); ++e) {
      const auto q = static_cast<std::size_t>(p.edge_population[e]);
      const auto row = static_cast<std::size_t>(p.edge_row[e]);
      w_new[q][row] =
          tr.surface_trainable(s) ? w[e] * net.neurons[static_cast<std::size_t>(p.target[e])].vs : p.weight_pA[e];
      nsyns[q][row] = p.nsyns[e];
    }
  }
  for (const auto& [file, pops] : by_file) {
    const std::string out = (fs::path(dir) / fs::path(file).filename()).string();
    auto src = h5::File::open_read(file);
    {
      auto dst = h5::File::create(out + ".tmp", true);
      dst.write_sonata_header();
      for (int q : pops) {
        const std::string g = "/edges/" + net.edge_populations[static_cast<std::size_t>(q)].name;
        dst.copy_from(src, g, g);
        const auto egid = dst.is_dataset(g + "/edge_group_id") ? dst.read_int(g + "/edge_group_id")
                                                               : std::vector<std::int64_t>(w_new[q].size(), 0);
        std::vector<std::int64_t> egidx;
        if (dst.is_dataset(g + "/edge_group_index")) {
          egidx = dst.read_int(g + "/edge_group_index");
        } else {
          egidx.resize(w_new[q].size());
          for (std::size_t i = 0; i < egidx.size(); ++i) egidx[i] = static_cast<std::int64_t>(i);
        }
        std::map<std::int64_t, std::vector<double>> groups;
        for (std::size_t i = 0; i < egid.size(); ++i) {
          auto& col = groups[egid[i]];
          const auto r = static_cast<std::size_t>(egidx[i]);
          if (col.size() <= r) col.resize(r + 1, 0.0);
          col[r] = w_new[static_cast<std::size_t>(q)][i] / nsyns[static_cast<std::size_t>(q)][i];
        }
        for (const auto& [gid, col] : groups) {
          const std::string ds = g + "/" + std::to_string(gid) + "/syn_weight";
          if (dst.is_dataset(ds) && dst.dataset_length(ds) == col.size()) {
            dst.overwrite_double(ds, col);
          } else {
            if (dst.is_dataset(ds)) H5Ldelete(dst.id(), ds.c_str(), H5P_DEFAULT);
            dst.write_double(ds, col);
          }
        }
      }
    }
    fs::rename(out + ".tmp", out);
    log::get()->info("exported trained weights to {}", out);
  }
  // the edge types tables go along, so the directory is a drop-in replacement
  for (const auto& e : cfg.edges)
    fs::copy_file(e.edge_types_file, fs::path(dir) / fs::path(e.edge_types_file).filename(),
                  fs::copy_options::overwrite_existing);
}

// The local replicas of this process (1, or several in mirrored mode) and the cross-process context (MPI), with
// one update's worth of gradient computation and reduction. With a single replica and no distribution the
// serial path is used unchanged (double gradients, no packing).
template <class Real>
struct ReplicaSet {
  std::vector<std::unique_ptr<Trainer<Real>>> reps;
  ReplicaContext* ctx = nullptr;
  bool distributed = false;
  int proc_rank = 0, procs = 1, local = 1, total = 1, batch = 1;
  std::vector<float> sum_;

  Trainer<Real>& chief() { return *reps[0]; }

  StepMetrics compute(std::int64_t update) {
    const std::int64_t global_batch = static_cast<std::int64_t>(batch) * total;
    std::vector<StepMetrics> ms;
    for (int r = 0; r < local; ++r) {
      const std::int64_t first = update * global_batch + static_cast<std::int64_t>(proc_rank * local + r) * batch;
      if (distributed)
        log::get()->info("rank {} replica {}: update {} samples [{}, {})", proc_rank, r, update + 1, first,
                         first + batch);
      ms.push_back(reps[static_cast<std::size_t>(r)]->compute_gradient(first));
    }
    if (!distributed) return ms[0];
    // one packed FP32 buffer: sum over local replicas, then over processes (in place), then the mean
    const std::size_t n = reps[0]->packed_size();
    sum_.assign(n, 0.0f);
    for (auto& t : reps) {
      const float* p = t->pack_gradients();
      for (std::size_t q = 0; q < n; ++q) sum_[q] += p[q];
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (ctx) ctx->allreduce_sum(sum_.data(), n);
    const double allreduce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto& t : reps) t->unpack_gradients(sum_.data(), 1.0 / total);
    // metrics: a separate small reduction of the local sums
    StepMetrics m = ms[0];
    std::vector<double> v(m.loss_terms.size() + 2, 0.0);
    for (const auto& x : ms) {
      v[0] += x.loss;
      v[1] += x.rate_hz;
      for (std::size_t q = 0; q < x.loss_terms.size(); ++q) v[q + 2] += x.loss_terms[q];
    }
    if (ctx) ctx->allreduce_sum(v.data(), v.size());
    m.loss = v[0] / total;
    m.rate_hz = v[1] / total;
    for (std::size_t q = 0; q < m.loss_terms.size(); ++q) m.loss_terms[q] = v[q + 2] / total;
    m.grad_norm = reps[0]->last_grad_norm();
    m.t_allreduce = allreduce_s;
    return m;
  }
  void update() {
    for (auto& t : reps) t->apply_update();
  }
  // Chief's state to every replica (start and after a restore).
  void broadcast_state(CheckpointData& state, const std::string& source) {
    if (ctx) {
      std::vector<double> flat;
      std::int64_t step = state.step;
      for (auto& s : state.surfaces)
        for (auto* v : {&s.weight, &s.initial_weight, &s.adam_m, &s.adam_v})
          flat.insert(flat.end(), v->begin(), v->end());
      std::int64_t len = static_cast<std::int64_t>(flat.size());
      std::int64_t hdr[2] = {step, len};
      ctx->broadcast(hdr, 2);
      flat.resize(static_cast<std::size_t>(hdr[1]));
      ctx->broadcast(flat.data(), flat.size());
      state.step = hdr[0];
      std::size_t off = 0;
      for (auto& s : state.surfaces)
        for (auto* v : {&s.weight, &s.initial_weight, &s.adam_m, &s.adam_v}) {
          std::copy(flat.begin() + static_cast<std::ptrdiff_t>(off),
                    flat.begin() + static_cast<std::ptrdiff_t>(off + v->size()), v->begin());
          off += v->size();
        }
    }
    for (auto& t : reps) restore_state(*t, state, source);
  }
};

template <class Real>
int train_impl(const TrainCommand& cmd, const SimulationConfig& cfg, const Network& net,
               const std::vector<PreparedInput>& inputs, const TrainConfig& tc, const CheckpointData* resume,
               const std::string& chash, const std::string& nhash, const DistributionConfig& dist,
               ReplicaContext* ctx) {
  auto lg = log::get();
  ReplicaSet<Real> rs;
  rs.ctx = ctx;
  rs.procs = ctx ? ctx->size() : 1;
  rs.proc_rank = ctx ? ctx->rank() : 0;
  rs.local = dist.local_replicas();
  rs.total = rs.procs * rs.local;
  rs.batch = cfg.batch_size;
  rs.distributed = dist.mode != DistributionMode::None;
  for (int r = 0; r < rs.local; ++r)
    rs.reps.push_back(std::make_unique<Trainer<Real>>(net, inputs, cfg, tc, cfg.batch_size));
  const bool chief = rs.proc_rank == 0;
  if (rs.distributed)
    lg->info("sample-parallel training: {} replica(s) = {} process(es) x {} local, batch {} per replica, global {}",
             rs.total, rs.procs, rs.local, cfg.batch_size, static_cast<long long>(cfg.batch_size) * rs.total);
  Trainer<Real>& tr = rs.chief();
  using F = typename Trainer<Real>::Field;
  // identical start on every replica: the chief's state (or the restored checkpoint) is broadcast
  if (rs.distributed) {
    CheckpointData state = resume ? *resume : snapshot_state(tr, net, cfg, chash, nhash, rs.total);
    for (auto& sf : state.surfaces)
      if (!sf.trainable) {
        sf.adam_m.clear();
        sf.adam_v.clear();
      }
    rs.broadcast_state(state, resume ? cmd.resume : std::string("chief"));
  } else if (resume) {
    restore_state(tr, *resume, cmd.resume);
  }
  if (resume) lg->info("resumed from {} at step {}", cmd.resume, resume->step);
  const char* fault_rank = std::getenv("DPOINTNET_FAULT_RANK");
  const char* fault_step = std::getenv("DPOINTNET_FAULT_STEP");
  auto maybe_fault = [&](std::int64_t step) {
    if (fault_rank && fault_step && std::atoi(fault_rank) == rs.proc_rank && std::atoll(fault_step) == step)
      throw std::runtime_error("injected fault (DPOINTNET_FAULT_RANK=" + std::string(fault_rank) +
                               ", DPOINTNET_FAULT_STEP=" + std::string(fault_step) + ") on rank " +
                               std::to_string(rs.proc_rank) + " at update " + std::to_string(step));
  };

  if (!cmd.gradient_check.empty()) {
    // K updates on the first K global batches: losses of each, gradients of the first, weights after each
    const int K = std::max(1, cmd.gradient_check_updates);
    std::vector<std::vector<double>> hist(static_cast<std::size_t>(tr.n_surfaces()));
    for (int s = 0; s < tr.n_surfaces(); ++s) hist[static_cast<std::size_t>(s)] = tr.get(s, F::Weight);
    std::vector<StepMetrics> ms;
    std::vector<std::vector<double>> grads;
    std::vector<double> terminal, violations;
    for (int k = 0; k < K; ++k) {
      ms.push_back(rs.compute(tr.adam_step()));
      if (k == 0) {
        for (int s = 0; s < tr.n_surfaces(); ++s) grads.push_back(tr.get(s, F::Gradient));
        // terminal states of every sample of the first global batch, gathered by a sum into global slots
        const std::size_t per = 2 * static_cast<std::size_t>(net.n_neurons);
        terminal.assign(per * static_cast<std::size_t>(cfg.batch_size) * static_cast<std::size_t>(rs.total), 0.0);
        for (int r = 0; r < rs.local; ++r) {
          const auto st = rs.reps[static_cast<std::size_t>(r)]->terminal_state();
          const std::size_t first =
              static_cast<std::size_t>(rs.proc_rank * rs.local + r) * static_cast<std::size_t>(cfg.batch_size) * per;
          std::copy(st.begin(), st.end(), terminal.begin() + static_cast<std::ptrdiff_t>(first));
        }
        if (ctx) ctx->allreduce_sum(terminal.data(), terminal.size());
      }
      rs.update();
      double bad = 0;
      for (auto& t : rs.reps) bad += static_cast<double>(t->sign_violations());
      if (ctx) ctx->allreduce_sum(&bad, 1);
      violations.push_back(bad);
      for (int s = 0; s < tr.n_surfaces(); ++s) {
        const auto w = tr.get(s, F::Weight);
        hist[static_cast<std::size_t>(s)].insert(hist[static_cast<std::size_t>(s)].end(), w.begin(), w.end());
      }
    }
    if (!chief) return 0;
    auto f = h5::File::create(cmd.gradient_check, true);
    auto column = [&](auto get) {
      std::vector<double> v;
      for (const auto& m : ms) v.push_back(get(m));
      return v;
    };
    f.write_double("/loss/total", column([](const StepMetrics& m) { return m.loss; }));
    for (std::size_t q = 0; q < tc.losses.size(); ++q)
      f.write_double("/loss/" + tc.losses[q].name, column([q](const StepMetrics& m) { return m.loss_terms[q]; }));
    f.write_double("/rate_mean_hz", column([](const StepMetrics& m) { return m.rate_hz; }));
    f.write_double("/grad_norm", column([](const StepMetrics& m) { return m.grad_norm; }));
    f.write_double_2d("/terminal/v_and_counts", terminal,
                      terminal.size() / (2 * static_cast<std::size_t>(net.n_neurons)),
                      2 * static_cast<std::size_t>(net.n_neurons));
    f.write_double("/check/sign_violations_all_replicas", violations);
    for (int s = 0; s < tr.n_surfaces(); ++s) {
      const auto& h = hist[static_cast<std::size_t>(s)];
      f.write_double_2d("/weights/" + tr.surface_name(s), h, static_cast<std::size_t>(K) + 1,
                        h.size() / (static_cast<std::size_t>(K) + 1));
      if (tr.surface_trainable(s)) f.write_double("/grad/" + tr.surface_name(s), grads[static_cast<std::size_t>(s)]);
    }
    lg->info("gradient check: {} update(s), first loss {:.9g}, rate {:.4f} Hz, |grad| {:.6g}; wrote {}", K, ms[0].loss,
             ms[0].rate_hz, ms[0].grad_norm, cmd.gradient_check);
    return 0;
  }

  const fs::path out(cfg.output_dir);
  const fs::path ckdir = out / "checkpoints";
  const fs::path metrics_path = out / "metrics.csv";
  std::ofstream metrics;
  if (chief) {
    // metrics log: on resume keep the rows up to the checkpoint's step
    std::vector<std::string> kept;
    if (resume && fs::exists(metrics_path)) {
      std::ifstream in(metrics_path);
      std::string line;
      std::getline(in, line);
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (std::stoll(line.substr(0, line.find(','))) <= resume->step) kept.push_back(line);
      }
    }
    metrics.open(metrics_path, std::ios::trunc);
    metrics << "step,loss";
    for (const auto& l : tc.losses) metrics << "," << l.name;
    metrics << ",rate_hz,grad_norm,samples_per_s,seconds" << (rs.distributed ? ",allreduce_s" : "") << "\n";
    for (const auto& k : kept) metrics << k << "\n";
    metrics.flush();
  }
  auto save = [&](const std::string& why) {
    if (!chief) return;
    fs::create_directories(ckdir);
    const std::string p = (ckdir / ("step_" + std::to_string(tr.adam_step()) + ".h5")).string();
    write_checkpoint(p, snapshot_state(tr, net, cfg, chash, nhash, rs.total));
    lg->info("checkpoint ({}) {}", why, p);
  };
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t first = tr.adam_step();
  const double global_batch = static_cast<double>(cfg.batch_size) * rs.total;
  int done_here = 0;
  while (tr.adam_step() < tc.steps) {
    const auto t0 = std::chrono::steady_clock::now();
    maybe_fault(tr.adam_step() + 1);
    StepMetrics m = rs.compute(tr.adam_step());
    rs.update();
    m.step = tr.adam_step();
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.samples_per_s = global_batch / std::max(m.seconds, 1e-12);
    ++done_here;
    if (chief) {
      metrics << m.step << "," << fmt::format("{:.9g}", m.loss);
      for (double v : m.loss_terms) metrics << "," << fmt::format("{:.9g}", v);
      metrics << "," << fmt::format("{:.9g}", m.rate_hz) << "," << fmt::format("{:.9g}", m.grad_norm) << ","
              << fmt::format("{:.4g}", m.samples_per_s) << "," << fmt::format("{:.4g}", m.seconds);
      if (rs.distributed) metrics << "," << fmt::format("{:.4g}", m.t_allreduce);
      metrics << "\n";
      metrics.flush();
    }
    if (chief && cmd.progress && (m.step % tc.log_every == 0 || m.step == tc.steps)) {
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double per = el / static_cast<double>(m.step - first);
      lg->info("step {}/{} loss {:.6g} rate {:.3f} Hz |grad| {:.4g} {:.1f} samples/s ETA {:.1f} s", m.step, tc.steps,
               m.loss, m.rate_hz, m.grad_norm, m.samples_per_s, per * static_cast<double>(tc.steps - m.step));
    }
    if (tc.save_checkpoint_every > 0 && m.step % tc.save_checkpoint_every == 0 && m.step != tc.steps) save("interval");
    if (cmd.stop_after > 0 && done_here >= cmd.stop_after) {
      save("stop requested");
      if (chief) lg->warn("stopping after {} updates as requested (--stop-after); resume with --resume", done_here);
      if (ctx) ctx->barrier();
      return 0;
    }
  }
  save("final");
  if (chief) export_edges(tr, net, cfg, (out / "network").string());
  if (ctx) ctx->barrier();
  return 0;
}

}  // namespace

int run_train(const TrainCommand& cmd, ReplicaContext* ctx) {
  SimulationConfig cfg = SimulationConfig::load(cmd.config);
  auto lg = log::get();
  lg->info("dpointnet {} train {}", DPOINTNET_VERSION, cfg.path);
  lg->info("Kokkos {} on {} ({} threads), precision {}", compat::kokkos_version_string(),
           Kokkos::DefaultExecutionSpace::name(), compat::concurrency(), cfg.double_precision ? "float64" : "float32");
  Network net = build_network(cfg);
  std::vector<PreparedInput> inputs = prepare_inputs(cfg, net, cfg.n_steps);
  prepare_current_clamps(cfg, net);  // validated here, before any output; the trainer prepares its own copy
  TrainConfig tc = TrainConfig::parse(cfg, net);
  const DistributionConfig dist =
      DistributionConfig::parse(cfg, &tc, ctx ? Launcher::Mpi : Launcher::Serial, ctx ? ctx->size() : 1, true);
  const bool chief = !ctx || ctx->chief();
  const std::string chash = config_hash(cfg), nhash = network_hash(net);
  CheckpointData ck;
  if (!cmd.resume.empty()) {
    if (!fs::exists(cmd.resume)) throw InputError(cmd.resume, "", "--resume", "checkpoint file does not exist");
    ck = read_checkpoint(cmd.resume);
    if (ck.network_hash != nhash)
      throw InputError(
          cmd.resume, "", "network_hash",
          "the checkpoint was written for another network (hash " + ck.network_hash + ", this network " + nhash + ")");
    if (ck.config_hash != chash)
      throw InputError(cmd.resume, "", "config_hash",
                       "the checkpoint was written with another config (hash " + ck.config_hash + ", this config " +
                           chash + "); only train.steps/epochs and the save/log intervals may change on resume");
  }
  if (cmd.gradient_check.empty() && chief) {
    const fs::path out(cfg.output_dir);
    const bool overwrite = cmd.overwrite || cfg.overwrite_output || !cmd.resume.empty();
    for (const auto& p : {out / "metrics.csv", out / "checkpoints", out / "network"})
      if (!overwrite && fs::exists(p))
        throw InputError(cfg.path, "output", "overwrite_output_dir",
                         p.string() + " exists; set output.overwrite_output_dir, pass --overwrite, or --resume");
    fs::create_directories(out);
    log::add_file(cfg.log_file, /*truncate=*/cmd.resume.empty());
    std::ofstream(out / "train_config.resolved.json") << cfg.resolved.dump(2) << "\n";
  }
  struct FileSinkGuard {
    ~FileSinkGuard() { log::remove_files(); }
  } guard;
  lg->info("network: {} neurons, {} edges; T = {} steps, batch {}, {} updates, checkpoint interval {}", net.n_neurons,
           net.n_edges(), cfg.n_steps, cfg.batch_size, tc.steps, tc.checkpoint_interval);
  const CheckpointData* r = cmd.resume.empty() ? nullptr : &ck;
  return cfg.double_precision ? train_impl<double>(cmd, cfg, net, inputs, tc, r, chash, nhash, dist, ctx)
                              : train_impl<float>(cmd, cfg, net, inputs, tc, r, chash, nhash, dist, ctx);
}

}  // namespace dpointnet
