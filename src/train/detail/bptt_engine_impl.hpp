// Template implementation of the BPTT engine's passes (train/bptt_engine.hpp); instantiated in bptt_engine.cpp.
#pragma once
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpointnet/device/fill.hpp"
#include "dpointnet/device/loss_stats.hpp"
#include "dpointnet/device/spike_adjoint.hpp"
#include "dpointnet/train/bptt_engine.hpp"
#include "dpointnet/train/detail/bptt_pools_impl.hpp"
#include "dpointnet/train/detail/bptt_records_impl.hpp"
#include "dpointnet/train/detail/target_blocks_setup_impl.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
BpttEngine<Real, ExecSpace>::BpttEngine(const ExecSpace& space, Simulator<Real, ExecSpace>& sim,
                                        WeightStore<Real, ExecSpace>& store, const BpttSettings& settings)
    : space_(space),
      sim_(sim),
      store_(store),
      shape_(settings.shape),
      bp_(settings.backward),
      B_(settings.batch),
      C_(static_cast<int>(std::min<std::int64_t>(settings.segment_steps, settings.window_steps))),
      D_(sim.max_delay()),
      R_(sim.n_channels()),
      N_(sim.n_neurons()),
      T_(settings.window_steps),
      W_(settings.warmup_steps),
      target_blocks_config_(settings.target_blocks) {
  const std::size_t N = static_cast<std::size_t>(N_);
  const std::int64_t nseg = (T_ + C_ - 1) / C_;
  for (std::int64_t q = 0; q < nseg; ++q) segment_snapshots_.push_back(sim_.make_snapshot());
  auto alloc = [&](const std::string& label) { return Kokkos::view_alloc(space_, label); };
  adj_.gV = decltype(adj_.gV)(alloc("adjoint.gV"), N, B_);
  adj_.gP = decltype(adj_.gP)(alloc("adjoint.gP"), R_, N, B_);
  adj_.gQ = decltype(adj_.gQ)(alloc("adjoint.gQ"), R_, N, B_);
  ring_ = settings.ring;
  if (ring16() && !std::is_same_v<Acc, float>) throw std::logic_error("a 16-bit adjoint ring needs float32 arithmetic");
  adj_.gu = decltype(adj_.gu)(alloc("adjoint.gu"), ring16() ? 1 : D_, R_, N, B_);
  adj_.gz = decltype(adj_.gz)(alloc("adjoint.gz"), N, B_);
  auto share = [&](auto& a, const char* label) {
    a.gV = adj_.gV;
    a.gP = adj_.gP;
    a.gQ = adj_.gQ;
    a.gz = adj_.gz;
    a.gu = typename std::decay_t<decltype(a.gu)>(alloc(label), D_, R_, N, B_);
  };
  if (ring_ == device::RingStorage::BFloat16) share(adj_bf16_, "adjoint.gu_bfloat16");
  if (ring_ == device::RingStorage::Float16) share(adj_f16_, "adjoint.gu_float16");
  bands_ = settings.bands.empty() ? std::vector<std::int64_t>{0, T_} : settings.bands;
  for (std::size_t k = 0; k + 1 < bands_.size(); ++k)
    if (bands_[k] >= bands_[k + 1]) throw std::logic_error("the window's bands must increase");
  if (bands_.size() < 2 || bands_.front() != 0 || bands_.back() != T_)
    throw std::logic_error("the window's bands must run from 0 to the window's length");
  const std::size_t K = bands_.size() - 1;
  rate_grads_ = decltype(rate_grads_)(alloc("adjoint.rate_grad"), K, N, B_);
  counts_ = decltype(counts_)(alloc("train.spike_counts"), K, B_, N);
  vreg_steps_ = decltype(vreg_steps_)(alloc("train.vreg_per_step"), T_, 2);
  terminal_v_ = decltype(terminal_v_)(alloc("train.terminal_v"), B_, N);
  rec_.v = decltype(rec_.v)(alloc("segment.v"), C_, N, B_);
  rec_.r = decltype(rec_.r)(alloc("segment.r"), C_, N, B_);
  rec_.z = decltype(rec_.z)(alloc("segment.z"), D_ + C_, N, B_);
  for (int k = 0; k < sim_.n_inputs(); ++k)
    x_ext_.emplace_back(alloc("segment.x"), D_ + C_, sim_.input_ring(k).extent(2), B_);
  space_.fence();
  if (device::host_shape<ExecSpace>(shape_)) set_up_target_blocks();
}

template <class Real, class ExecSpace>
void BpttEngine<Real, ExecSpace>::forward(const Snapshot* carried_start, Snapshot* end_state) {
  device::fill(space_, counts_, 0);
  const bool need_v = bp_.vreg_range_scale > 0 || bp_.vreg_threshold_scale > 0;
  using Stats = device::ForwardStatsFunctor<Real, ExecSpace>;
  Stats stats{Kokkos::subview(counts_, 0, Kokkos::ALL(), Kokkos::ALL()), sim_.z_ring(), sim_.training_v(), N_, 0};
  // The last segment is recorded as it runs (its records are what the reverse sweep needs first), so the
  // backward pass does not recompute it.
  std::int64_t t0_recorded = -1;
  if (carried_start) {  // train.carry_state: the window continues the slot's last run (no warm-up)
    sim_.continue_from(*carried_start, W_);
  } else {
    sim_.reset();
    if (W_ > 0) {  // warm-up from rest: no statistics, no snapshots, no gradient
      Kokkos::Profiling::pushRegion("dpointnet::warmup_steps");
      sim_.run(W_, nullptr);
      Kokkos::Profiling::popRegion();
    }
  }
  s_min_ = -sim_.history();
  // per step of the window: spike counts, and the voltage-regularizer sums reduced into device memory (no host
  // round trip)
  sim_.set_step_hook([&](std::int64_t t, int slot) {
    stats.slot = slot;
    stats.v = sim_.training_v();
    stats.counts = Kokkos::subview(counts_, band_of(t), Kokkos::ALL(), Kokkos::ALL());
    device::forward_stats(space_, stats, B_, need_v, Kokkos::subview(vreg_steps_, t - W_, Kokkos::ALL()), shape_);
    if (t0_recorded >= 0) record_step(t, t0_recorded, slot);
    if (pools_.covers(t - W_))
      device::pool_sums(space_,
                        device::PoolSumFunctor<ExecSpace>{pools_, sim_.z_ring(), slot, t - W_ - pools_.t_begin});
  });
  for (std::size_t q = 0; q < segment_snapshots_.size(); ++q) {
    auto& snap = segment_snapshots_[q];
    sim_.save(snap);
    if (q + 1 == segment_snapshots_.size()) {
      t0_recorded = snap.t;
      record_history(snap, snap.t);
    }
    Kokkos::Profiling::pushRegion("dpointnet::forward_steps");
    sim_.run(std::min<std::int64_t>(C_, W_ + T_ - sim_.current_step()), nullptr);
    Kokkos::Profiling::popRegion();
  }
  sim_.set_step_hook(nullptr);
  last_segment_recorded_ = true;
  if (end_state) sim_.save(*end_state);
  // the sums in step order, as one copy per update
  vreg_range_sum_ = vreg_threshold_sum_ = 0;
  if (need_v) {
    const auto h = compat::mirror_view_and_copy(space_, vreg_steps_);
    for (std::int64_t t = 0; t < T_; ++t) {
      vreg_range_sum_ += h(t, 0);
      vreg_threshold_sum_ += h(t, 1);
    }
  }
  // terminal state of every sample (after step T-1), kept for checks before the backward pass recomputes
  Kokkos::deep_copy(space_, terminal_v_, sim_.state().v);
}

template <class Real, class ExecSpace>
void BpttEngine<Real, ExecSpace>::backward(const std::vector<double>& count_gradient) {
  const std::size_t K = rate_grads_.extent(0), BN = static_cast<std::size_t>(B_) * static_cast<std::size_t>(N_);
  if (count_gradient.size() != K * BN)
    throw std::logic_error("the count gradient has " + std::to_string(count_gradient.size()) +
                           " values, not bands x B x N");
  auto hg = Kokkos::create_mirror_view(rate_grads_);
  space_.fence();  // on a host backend hg is the view itself
  for (std::size_t k = 0; k < K; ++k)
    for (int b = 0; b < B_; ++b)
      for (std::int64_t i = 0; i < N_; ++i)
        hg(k, i, b) = static_cast<Acc>(count_gradient[k * BN + static_cast<std::size_t>(b * N_ + i)] * loss_scale_);
  Kokkos::deep_copy(space_, rate_grads_, hg);
  Kokkos::deep_copy(space_, adj_.gV, Acc(0));
  Kokkos::deep_copy(space_, adj_.gP, Acc(0));
  Kokkos::deep_copy(space_, adj_.gQ, Acc(0));
  Kokkos::deep_copy(space_, adj_.gu, Acc(0));
  if (ring16())
    with_ring([&](const auto& a) {
      device::fill(space_, a.gu, typename std::decay_t<decltype(a.gu)>::non_const_value_type{});
    });
  device::refresh_target_block_weights(space_, blocks_, sim_.edges(0), D_);
  // the voltage regularizer's gradient times the loss scale too (restored at the end)
  const device::BackwardParams unscaled = bp_;
  bp_.vreg_range_scale *= loss_scale_;
  bp_.vreg_threshold_scale *= loss_scale_;
  t_recompute_ = t_backward_ = 0;
  using clock = std::chrono::steady_clock;
  for (std::int64_t seg = static_cast<std::int64_t>(segment_snapshots_.size()) - 1; seg >= 0; --seg) {
    const auto& snap = segment_snapshots_[static_cast<std::size_t>(seg)];
    const std::int64_t t0 = snap.t, t1 = std::min<std::int64_t>(W_ + T_, t0 + C_);
    auto tr0 = clock::now();
    const bool recorded = last_segment_recorded_ && seg + 1 == static_cast<std::int64_t>(segment_snapshots_.size());
    if (!recorded) {
      sim_.restore(snap);
      record_history(snap, t0);
      sim_.set_step_hook([this, t0](std::int64_t t, int slot) { record_step(t, t0, slot); });
      Kokkos::Profiling::pushRegion("dpointnet::recompute_steps");
      sim_.run(t1 - t0, nullptr);
      Kokkos::Profiling::popRegion();
      sim_.set_step_hook(nullptr);
    }
    space_.fence();
    auto tr1 = clock::now();
    t_recompute_ += std::chrono::duration<double>(tr1 - tr0).count();
    Kokkos::Profiling::pushRegion("dpointnet::reverse_steps");
    for (std::int64_t t = t1 - 1; t >= t0; --t) reverse_step(t, t0);
    if (seg == 0 && fused_recurrent_grad()) {
      // the fused recurrent weight gradient's terms from activity before the first reverse step (warm-up or
      // carried state), in decreasing activity step as the separate kernel adds them
      with_ring([&](const auto& a) {
        for (std::int64_t s = t0 - 1; s >= std::max<std::int64_t>(s_min_, t0 - D_); --s) {
          auto sa = spike_adjoint_at(s, a);
          sa.wg = {rec_.z, store_[0].grad, t0 - D_, t0, true};
          device::spike_adjoint(space_, sa, shape_);
        }
      });
    }
    Kokkos::Profiling::popRegion();
    space_.fence();
    t_backward_ += std::chrono::duration<double>(clock::now() - tr1).count();
  }
  last_segment_recorded_ = false;
  bp_ = unscaled;
}

// One step of the reverse sweep: spike adjoint (recurrent reads), neuron adjoint, weight gradients.
template <class Real, class ExecSpace>
void BpttEngine<Real, ExecSpace>::reverse_step(std::int64_t t, std::int64_t t0) {
  const int D = D_;
  const int slot_gu = static_cast<int>(t % D);
  const bool fused = fused_recurrent_grad();
  with_ring([&](const auto& a) {
    auto sa = spike_adjoint_at(t, a);
    if (fused) sa.wg = {rec_.z, store_[0].grad, t0 - D, 0, false};
    device::spike_adjoint(space_, sa, shape_);
  });
  if (pools_.covers(t - W_))
    device::pool_gradient(space_, device::PoolGradFunctor<Acc, ExecSpace>{pools_, adj_.gz, t - W_ - pools_.t_begin});
  // with a 16-bit ring the neuron adjoint writes its one float32 slot, then rounded into the ring's slot
  sim_.dynamics().adjoint(space_, {sim_.constants(), adj_, rec_, bp_, static_cast<int>(t - t0), ring16() ? 0 : slot_gu,
                                   B_, R_, N_, shape_});
  if (ring16())
    with_ring([&](const auto& a) {
      if constexpr (!std::is_same_v<typename std::decay_t<decltype(a.gu)>::non_const_value_type, Acc>)
        device::narrow_ring_slot(space_, adj_.gu, a.gu, slot_gu);
    });

  for (int q = 0; q < store_.size(); ++q) {
    auto& s = store_[q];
    const auto& e = sim_.edges(s.set);
    if (!s.trainable || e.weight.extent(0) == 0) continue;
    if (q == 0 && fused) continue;  // added by the spike adjoint
    const std::int64_t groups = e.n_sources * D;
    with_ring([&](const auto& a) {
      using Ring = typename std::decay_t<decltype(a.gu)>::non_const_value_type;
      if (q == 0) {
        device::WeightGradFunctor<Real, Acc, ExecSpace, std::uint8_t, Ring> wg{
            e, rec_.z, a.gu, s.grad, t, t0 - D, groups, D, B_, slot_gu, s_min_};
        device::weight_grad(space_, "dpointnet::backward_weight_grad_recurrent", wg, shape_);
      } else {
        device::WeightGradFunctor<Real, Acc, ExecSpace, std::uint16_t, Ring> wg{
            e, x_ext_[static_cast<std::size_t>(q - 1)], a.gu, s.grad, t, t0 - D, groups, D, B_, slot_gu, s_min_};
        device::weight_grad(space_, "dpointnet::backward_weight_grad_input", wg, shape_);
      }
    });
  }
}

}  // namespace dpointnet
