// The replicas of this process (1, or several in mirrored mode) and the job's context, with one update's
// gradient computation and reduction: one packed FP32 buffer, summed over local replicas, one in-place
// allreduce, the mean. Without a distribution mode the single trainer's gradients are used as they are. Each
// local replica runs on its own execution-space instance (compat::make_instances: its own stream on a device).
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "dpointnet/parallel/distribution_config.hpp"
#include "dpointnet/parallel/replica_context.hpp"
#include "dpointnet/train/prepared_run.hpp"
#include "dpointnet/train/sample_schedule.hpp"
#include "dpointnet/train/trainer.hpp"
#include "dpointnet/train/trainer_state.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "dpointnet/util/log.hpp"

namespace dpointnet {

template <class Real>
class ReplicaSet {
 public:
  // `run` (prepared for ctx.size() x dist.local_replicas() replicas) must outlive the set.
  ReplicaSet(ReplicaContext& ctx, const DistributionConfig& dist, const PreparedRun& run)
      : ctx_(ctx), distributed_(dist.mode != DistributionMode::None), local_(dist.local_replicas()) {
    schedule_ = run.schedule;
    if (schedule_.replicas != ctx.size() * local_)
      throw std::logic_error("the run was prepared for " + std::to_string(schedule_.replicas) +
                             " replica(s); the job has " + std::to_string(ctx.size() * local_));
    // the other local replicas take the first one's target-block count (train.target_blocks "auto" is timed once
    // per process; every count gives the same sums)
    spaces_ = compat::make_instances(Kokkos::DefaultExecutionSpace(), local_);
    for (int r = 0; r < local_; ++r)
      reps_.push_back(std::make_unique<Trainer<Real>>(spaces_[static_cast<std::size_t>(r)], run,
                                                      r == 0 ? 0 : reps_[0]->engine().target_blocks()));
  }

  Trainer<Real>& chief() { return *reps_[0]; }
  Trainer<Real>& local(int r) { return *reps_[static_cast<std::size_t>(r)]; }
  int n_local() const { return local_; }
  int replica_index(int r) const { return ctx_.rank() * local_ + r; }  // global replica index
  bool distributed() const { return distributed_; }
  const SampleSchedule& schedule() const { return schedule_; }
  ReplicaContext& context() { return ctx_; }

  // Gradients of update `update` (0-based) on every replica, averaged over the job; metrics are job means: every
  // micro-batch (condition < 0), or those of one condition (a "series" step). Pooled losses (RateDistribution)
  // first get the spike counts of their pool groups over the whole global batch: every replica's forward passes,
  // summed over the local replicas and reduced over the job (one allreduce of N doubles per group).
  StepMetrics compute(std::int64_t update, int condition = -1) {
    std::vector<StepMetrics> ms;
    const bool pooled = distributed_ && reps_[0]->has_pooled_loss(condition);
    std::vector<double> counts;
    if (pooled) {
      for (int r = 0; r < local_; ++r) {
        const auto c = reps_[static_cast<std::size_t>(r)]->pooled_counts(
            schedule_.first_sample(update, replica_index(r)), condition);
        if (counts.empty()) counts.assign(c.size(), 0.0);
        for (std::size_t i = 0; i < c.size(); ++i) counts[i] += c[i];
      }
      ctx_.allreduce_sum(counts.data(), counts.size());
    }
    // samples per pool group: the global batch, or one condition's block of it
    const double group = static_cast<double>(schedule_.global_batch()) /
                         (condition < 0 ? reps_[0]->pool_groups() : schedule_.conditions);
    // batch-statistics losses (Synchronization, OrientationSelectivity): their statistics over the whole global
    // batch, from every replica's micro-batches of pooled_counts (one more allreduce)
    std::vector<double> stats;
    if (pooled && reps_[0]->has_stats_loss(condition)) {
      for (int r = 0; r < local_; ++r) {
        const auto st = reps_[static_cast<std::size_t>(r)]->batch_stats(
            schedule_.first_sample(update, replica_index(r)), counts, group, condition);
        if (stats.empty()) stats.assign(st.size(), 0.0);
        for (std::size_t i = 0; i < st.size(); ++i) stats[i] += st[i];
      }
      ctx_.allreduce_sum(stats.data(), stats.size());
    }
    for (int r = 0; r < local_; ++r) {
      const std::int64_t first = schedule_.first_sample(update, replica_index(r));
      if (distributed_)
        for (int c = 0; c < schedule_.conditions; ++c) {
          if (condition >= 0 && c != condition) continue;
          const std::int64_t lo = first + schedule_.micro_offset(c * schedule_.accumulate);
          log::get()->info("rank {} replica {}: update {} samples [{}, {})", ctx_.rank(), r, update + 1, lo,
                           lo + static_cast<std::int64_t>(schedule_.batch) * schedule_.accumulate);
        }
      auto& t = *reps_[static_cast<std::size_t>(r)];
      ms.push_back(pooled ? t.compute_gradient(first, counts, group, stats, condition)
                          : t.compute_gradient(first, condition));
    }
    if (!distributed_) return ms[0];
    const std::size_t n = reps_[0]->weights().packed_size();
    sum_.assign(n, 0.0f);
    // every replica packs on its own instance; all of them are fenced before the host reads a packed buffer
    std::vector<const float*> packed;
    for (auto& t : reps_) packed.push_back(t->weights().pack_gradients());
    for (const auto& space : spaces_) space.fence();
    for (const float* p : packed)
      for (std::size_t q = 0; q < n; ++q) sum_[q] += p[q];
    const auto t0 = std::chrono::steady_clock::now();
    ctx_.allreduce_sum(sum_.data(), n);
    const double allreduce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int total = schedule_.replicas;
    for (auto& t : reps_) t->unpack_gradients(sum_.data(), 1.0 / total);
    // metrics: a separate small reduction of the local sums
    StepMetrics m = ms[0];
    std::vector<double> v(m.loss_terms.size() + 2, 0.0);
    for (const auto& cl : m.conditions) v.insert(v.end(), cl.terms.size() + 1, 0.0);
    for (const auto& x : ms) {
      v[0] += x.loss;
      v[1] += x.rate_hz;
      for (std::size_t q = 0; q < x.loss_terms.size(); ++q) v[q + 2] += x.loss_terms[q];
      std::size_t o = x.loss_terms.size() + 2;
      for (const auto& cl : x.conditions) {
        v[o++] += cl.total;
        for (double term : cl.terms) v[o++] += term;
      }
    }
    ctx_.allreduce_sum(v.data(), v.size());
    m.loss = v[0] / total;
    m.rate_hz = v[1] / total;
    for (std::size_t q = 0; q < m.loss_terms.size(); ++q) m.loss_terms[q] = v[q + 2] / total;
    std::size_t o = m.loss_terms.size() + 2;
    for (auto& cl : m.conditions) {
      cl.total = v[o++] / total;
      for (double& term : cl.terms) term = v[o++] / total;
    }
    m.grad_norm = reps_[0]->last_grad_norm();
    m.t_allreduce = allreduce_s;
    return m;
  }

  void update() {
    for (auto& t : reps_) t->apply_update();
  }

  // Update `update` (0-based) as train.approach says: "series" computes and applies each condition's gradient in
  // turn (one gradient allreduce per condition), the others one gradient and one optimizer step. `before_step`
  // sees each gradient's metrics (and may throw) before its optimizer step. The update's metrics.
  StepMetrics train_update(std::int64_t update, const std::function<void(const StepMetrics&)>& before_step) {
    const TrainConfig& tc = reps_[0]->config();
    std::vector<StepMetrics> parts;
    const bool series = tc.approach == Approach::Series && !tc.conditions.empty();
    for (int c = 0; c < (series ? tc.n_conditions() : 1); ++c) {
      parts.push_back(compute(update, series ? c : -1));
      if (before_step) before_step(parts.back());
      for (auto& t : reps_) t->apply_step();
    }
    for (auto& t : reps_) t->end_update();
    return series ? merge_series_metrics(parts) : parts[0];
  }

  // The chief's state to every replica (start and after a restore); `source` names it in errors.
  void broadcast_state(CheckpointState& state, const std::string& source) {
    std::vector<double> flat;
    for (auto& s : state.surfaces)
      for (auto* v : {&s.weight, &s.initial_weight, &s.adam_m, &s.adam_v})
        flat.insert(flat.end(), v->begin(), v->end());
    flat.insert(flat.end(), state.loss_state.begin(), state.loss_state.end());
    flat.insert(flat.end(), state.loss_scale.begin(), state.loss_scale.end());
    std::int64_t hdr[5] = {state.step, static_cast<std::int64_t>(flat.size()), state.optimizer_iterations,
                           static_cast<std::int64_t>(state.loss_state.size()),
                           static_cast<std::int64_t>(state.loss_scale.size())};
    ctx_.broadcast(hdr, 5);
    flat.resize(static_cast<std::size_t>(hdr[1]));
    ctx_.broadcast(flat.data(), flat.size());
    state.step = hdr[0];
    state.optimizer_iterations = hdr[2];
    state.loss_scale.assign(flat.end() - hdr[4], flat.end());
    state.loss_state.assign(flat.end() - hdr[4] - hdr[3], flat.end() - hdr[4]);
    std::size_t off = 0;
    for (auto& s : state.surfaces)
      for (auto* v : {&s.weight, &s.initial_weight, &s.adam_m, &s.adam_v}) {
        std::copy(flat.begin() + static_cast<std::ptrdiff_t>(off),
                  flat.begin() + static_cast<std::ptrdiff_t>(off + v->size()), v->begin());
        off += v->size();
      }
    for (auto& t : reps_) restore_state(*t, state, source);
  }

  // train.carry_state (collective): the carried states of every replica into state.carried on the chief, by
  // global sample slot; nothing before the first update.
  void gather_carried(CheckpointState& state) {
    if (!reps_[0]->has_carried_state()) return;
    const std::size_t per = reps_[0]->carried_record_size();
    const int M = schedule_.micro_batches(), B = schedule_.batch;
    std::vector<double> mine;
    for (auto& t : reps_) {
      const auto r = t->carried_records();
      mine.insert(mine.end(), r.begin(), r.end());
    }
    std::vector<double> all(ctx_.chief() ? mine.size() * static_cast<std::size_t>(ctx_.size()) : 0);
    ctx_.gather(mine.data(), mine.size(), all.data());
    if (!ctx_.chief()) return;
    CarriedState& c = state.carried;
    c.slots = schedule_.global_batch();
    c.record_size = static_cast<std::int64_t>(per);
    c.end_step = reps_[0]->window_end_step();
    c.records.assign(static_cast<std::size_t>(c.slots) * per, 0.0);
    std::size_t q = 0;  // records in (rank, local replica, micro-batch, sample) order
    for (int rank = 0; rank < ctx_.size(); ++rank)
      for (int r = 0; r < local_; ++r)
        for (int m = 0; m < M; ++m)
          for (int b = 0; b < B; ++b, q += per) {
            const auto slot = static_cast<std::size_t>(schedule_.slot(rank * local_ + r, m, b));
            std::copy_n(all.data() + q, per, c.records.data() + slot * per);
          }
  }

  // The inverse (collective): each replica's slots from the chief's state.carried; `source` names it in errors.
  void scatter_carried(const CheckpointState& state, const std::string& source) {
    std::int64_t hdr[3] = {state.carried.slots, state.carried.record_size, state.carried.end_step};
    ctx_.broadcast(hdr, 3);
    const auto per = static_cast<std::int64_t>(reps_[0]->carried_record_size());
    if (hdr[0] == 0) return;  // not carried yet (a checkpoint written before the first update)
    if (hdr[0] != schedule_.global_batch() || hdr[1] != per || hdr[2] != reps_[0]->window_end_step())
      throw InputError(source, "carried_state", "records",
                       "holds " + std::to_string(hdr[0]) + " sample slots of " + std::to_string(hdr[1]) +
                           " values ending at step " + std::to_string(hdr[2]) + "; this run needs " +
                           std::to_string(schedule_.global_batch()) + " slots of " + std::to_string(per) +
                           " ending at step " + std::to_string(reps_[0]->window_end_step()));
    const int M = schedule_.micro_batches(), B = schedule_.batch;
    const std::size_t mine_n = static_cast<std::size_t>(local_) * M * B * static_cast<std::size_t>(per);
    std::vector<double> all;
    if (ctx_.chief()) {
      all.resize(mine_n * static_cast<std::size_t>(ctx_.size()));
      std::size_t q = 0;
      for (int rank = 0; rank < ctx_.size(); ++rank)
        for (int r = 0; r < local_; ++r)
          for (int m = 0; m < M; ++m)
            for (int b = 0; b < B; ++b, q += static_cast<std::size_t>(per)) {
              const auto slot = static_cast<std::size_t>(schedule_.slot(rank * local_ + r, m, b));
              std::copy_n(state.carried.records.data() + slot * static_cast<std::size_t>(per), per, all.data() + q);
            }
    }
    std::vector<double> mine(mine_n);
    ctx_.scatter(all.data(), mine.data(), mine_n);
    const std::size_t each = mine_n / static_cast<std::size_t>(local_);
    for (int r = 0; r < local_; ++r)
      reps_[static_cast<std::size_t>(r)]->set_carried_records(
          std::vector<double>(mine.begin() + static_cast<std::ptrdiff_t>(r * each),
                              mine.begin() + static_cast<std::ptrdiff_t>((r + 1) * each)),
          hdr[2]);
  }

 private:
  ReplicaContext& ctx_;
  bool distributed_;
  int local_;
  SampleSchedule schedule_;
  std::vector<Kokkos::DefaultExecutionSpace> spaces_;  // one instance per local replica
  std::vector<std::unique_ptr<Trainer<Real>>> reps_;
  std::vector<float> sum_;
};

}  // namespace dpointnet
