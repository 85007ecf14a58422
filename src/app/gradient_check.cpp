#include "dpointnet/app/gradient_check.hpp"

#include <map>

#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/log.hpp"

namespace dpointnet {

template <class Real>
void run_gradient_check(ReplicaSet<Real>& rs, const Network& net, const SimulationConfig& /*cfg*/,
                        const TrainConfig& tc, const std::string& out, int updates) {
  using F = typename Trainer<Real>::Field;
  Trainer<Real>& tr = rs.chief();
  ReplicaContext& ctx = rs.context();
  const int K = std::max(1, updates);
  const auto S = static_cast<std::size_t>(tr.weights().size());
  std::vector<std::vector<double>> hist(S), grads;
  for (std::size_t s = 0; s < S; ++s) hist[s] = tr.weights().get(static_cast<int>(s), F::Weight);
  std::vector<StepMetrics> ms;
  std::vector<double> terminal, violations;
  std::map<std::string, std::vector<double>> states;  // per loss with a state: after each update
  const std::size_t per = 2 * static_cast<std::size_t>(net.n_neurons);
  for (int k = 0; k < K; ++k) {
    const std::int64_t base = rs.schedule().first_sample(tr.updates_done(), 0);  // first sample of this update
    bool first_gradient = k == 0;  // the gradient of the first optimizer step ("series": the first condition's)
    ms.push_back(rs.train_update(tr.updates_done(), [&](const StepMetrics&) {
      if (!first_gradient) return;
      first_gradient = false;
      for (std::size_t s = 0; s < S; ++s) grads.push_back(tr.weights().get(static_cast<int>(s), F::Gradient));
      // terminal states of the first global batch, gathered by a sum into global slots
      terminal.assign(per * static_cast<std::size_t>(rs.schedule().global_batch()), 0.0);
      for (int r = 0; r < rs.n_local(); ++r) {
        const auto st = rs.local(r).terminal_state();
        // the replica's last forward pass (with micro-batches: one of them), at its samples' global slots
        const std::size_t first = static_cast<std::size_t>(rs.local(r).last_forward_sample() - base) * per;
        std::copy(st.begin(), st.end(), terminal.begin() + static_cast<std::ptrdiff_t>(first));
      }
      ctx.allreduce_sum(terminal.data(), terminal.size());
    }));
    double bad = 0;
    for (int r = 0; r < rs.n_local(); ++r) bad += static_cast<double>(rs.local(r).weights().sign_violations());
    ctx.allreduce_sum(&bad, 1);
    violations.push_back(bad);
    for (std::size_t s = 0; s < S; ++s) {
      const auto w = tr.weights().get(static_cast<int>(s), F::Weight);
      hist[s].insert(hist[s].end(), w.begin(), w.end());
    }
    for (const auto& [name, v] : tr.named_loss_states()) states[name].insert(states[name].end(), v.begin(), v.end());
  }
  if (!ctx.chief()) return;
  auto f = h5::File::create(out, true);
  auto column = [&](auto get) {
    std::vector<double> v;
    for (const auto& m : ms) v.push_back(get(m));
    return v;
  };
  f.write_double("/loss/total", column([](const StepMetrics& m) { return m.loss; }));
  if (tc.single_loss_set())
    for (std::size_t q = 0; q < tc.losses.size(); ++q)
      f.write_double("/loss/" + tc.losses[q].name, column([q](const StepMetrics& m) { return m.loss_terms[q]; }));
  // with conditions: /loss/<condition>/total and /loss/<condition>/<term>
  for (std::size_t c = 0; c < tc.conditions.size(); ++c) {
    const std::string g = "/loss/" + tc.condition_names[c] + "/";
    f.write_double(g + "total", column([c](const StepMetrics& m) { return m.conditions[c].total; }));
    const auto& specs = tc.losses_of(static_cast<int>(c));
    for (std::size_t q = 0; q < specs.size(); ++q)
      f.write_double(g + specs[q].name, column([c, q](const StepMetrics& m) { return m.conditions[c].terms[q]; }));
  }
  f.write_double("/rate_mean_hz", column([](const StepMetrics& m) { return m.rate_hz; }));
  f.write_double("/grad_norm", column([](const StepMetrics& m) { return m.grad_norm; }));
  f.write_double_2d("/terminal/v_and_counts", terminal, terminal.size() / per, per);
  f.write_double("/check/sign_violations_all_replicas", violations);
  for (const auto& [name, v] : states)
    f.write_double_2d("/loss_state/" + name, v, static_cast<std::size_t>(K), v.size() / static_cast<std::size_t>(K));
  for (std::size_t s = 0; s < S; ++s) {
    const auto& h = hist[s];
    const int si = static_cast<int>(s);
    f.write_double_2d("/weights/" + tr.weights()[si].name, h, static_cast<std::size_t>(K) + 1,
                      h.size() / (static_cast<std::size_t>(K) + 1));
    if (tr.weights()[si].trainable) f.write_double("/grad/" + tr.weights()[si].name, grads[s]);
  }
  log::get()->info("gradient check: {} update(s), first loss {:.9g}, rate {:.4f} Hz, |grad| {:.6g}; wrote {}", K,
                   ms[0].loss, ms[0].rate_hz, ms[0].grad_norm, out);
}

template void run_gradient_check<float>(ReplicaSet<float>&, const Network&, const SimulationConfig&, const TrainConfig&,
                                        const std::string&, int);
template void run_gradient_check<double>(ReplicaSet<double>&, const Network&, const SimulationConfig&,
                                         const TrainConfig&, const std::string&, int);

}  // namespace dpointnet
