// Trainer <-> checkpoint state: the one host export path of the weights (normalized and pA, read order).
#pragma once
#include <string>

#include "dpointnet/network/network.hpp"
#include "dpointnet/train/checkpoint_file.hpp"
#include "dpointnet/train/sample_schedule.hpp"
#include "dpointnet/train/trainer.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

// The trainer's weights, initial weights and Adam state, with the run's identity and sample counter.
template <class Real, class ExecSpace>
CheckpointState capture_state(const Trainer<Real, ExecSpace>& tr, const Network& net, const SimulationConfig& cfg,
                              const std::string& chash, const std::string& nhash, const SampleSchedule& schedule) {
  using F = typename Trainer<Real, ExecSpace>::Field;
  CheckpointState c;
  c.step = tr.updates_done();
  c.optimizer = optimizer_name(tr.config().optimizer);
  c.approach = approach_name(tr.config().approach);
  c.optimizer_iterations = tr.optimizer_iterations();
  c.loss_state = tr.loss_state();
  if (const LossScale& ls = tr.loss_scale(); ls.on)
    c.loss_scale = {ls.scale, static_cast<double>(ls.good_steps), static_cast<double>(ls.skipped_run),
                    static_cast<double>(ls.skipped_total)};
  c.next_sample = schedule.next_sample(tr.updates_done());
  c.seed = cfg.seed;
  c.config_hash = chash;
  c.network_hash = nhash;
  c.precision = precision_name(cfg.precision);
  c.global_batch = schedule.global_batch();
  c.replicas = schedule.replicas;
  c.batch_size = schedule.batch;
  for (int s = 0; s < tr.weights().size(); ++s) {
    SurfaceState st;
    st.name = tr.weights()[s].name;
    st.trainable = tr.weights()[s].trainable;
    st.weight = tr.weights().get(s, F::Weight);
    st.initial_weight = tr.weights().get(s, F::InitialWeight);
    if (st.trainable) {
      st.adam_m = tr.weights().get(s, F::AdamM);
      st.adam_v = tr.weights().get(s, F::AdamV);
    }
    const Projection& p = net.projections[static_cast<std::size_t>(tr.weights()[s].projection)];
    st.weight_pA.resize(st.weight.size());
    for (std::size_t e = 0; e < st.weight.size(); ++e) st.weight_pA[e] = net.to_pA(p.target[e], st.weight[e]);
    c.surfaces.push_back(std::move(st));
  }
  return c;
}

// Loads a checkpoint state into the trainer; `source` names it in errors.
template <class Real, class ExecSpace>
void restore_state(Trainer<Real, ExecSpace>& tr, const CheckpointState& c, const std::string& source) {
  using F = typename Trainer<Real, ExecSpace>::Field;
  for (int s = 0; s < tr.weights().size(); ++s) {
    const SurfaceState* st = nullptr;
    for (const auto& x : c.surfaces)
      if (x.name == tr.weights()[s].name) st = &x;
    if (!st) throw InputError(source, "", "surfaces", "has no surface '" + tr.weights()[s].name + "'");
    tr.weights().set(s, F::Weight, st->weight);
    tr.weights().set(s, F::InitialWeight, st->initial_weight);
    if (tr.weights()[s].trainable) {
      tr.weights().set(s, F::AdamM, st->adam_m);
      tr.weights().set(s, F::AdamV, st->adam_v);
    }
  }
  const std::size_t want = tr.loss_state().size();
  if (c.loss_state.size() != want)
    throw InputError(source, "", "loss_state",
                     "holds " + std::to_string(c.loss_state.size()) +
                         " values of the losses' states; this run's losses keep " + std::to_string(want) +
                         " (OrientationSelectivity's running means)");
  if (want > 0) tr.set_loss_state(c.loss_state);
  if (LossScale ls = tr.loss_scale(); ls.on) {
    if (c.loss_scale.size() != 4)
      throw InputError(source, "", "loss_scale", "is missing: a float16 run resumes its dynamic loss scale");
    ls.scale = c.loss_scale[0];
    ls.good_steps = static_cast<std::int64_t>(c.loss_scale[1]);
    ls.skipped_run = static_cast<std::int64_t>(c.loss_scale[2]);
    ls.skipped_total = static_cast<std::int64_t>(c.loss_scale[3]);
    tr.set_loss_scale(ls);
  }
  tr.set_updates_done(c.step);
  tr.set_optimizer_iterations(c.optimizer_iterations >= 0 ? c.optimizer_iterations
                                                          : c.step * tr.config().steps_per_update());
}

// Per projection, the weights in pA and read order: trained surfaces from the trainer, frozen ones as read.
template <class Real, class ExecSpace>
std::vector<std::vector<double>> weights_pA(const Trainer<Real, ExecSpace>& tr, const Network& net) {
  using F = typename Trainer<Real, ExecSpace>::Field;
  std::vector<std::vector<double>> out;
  for (const auto& p : net.projections) out.push_back(p.weight_pA);
  for (int s = 0; s < tr.weights().size(); ++s) {
    if (!tr.weights()[s].trainable) continue;
    const auto k = static_cast<std::size_t>(tr.weights()[s].projection);
    const auto w = tr.weights().get(s, F::Weight);
    for (std::size_t e = 0; e < w.size(); ++e) out[k][e] = net.to_pA(net.projections[k].target[e], w[e]);
  }
  return out;
}

}  // namespace dpointnet
