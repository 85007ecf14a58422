// The BPTT engine's choice of the host spike adjoint's target blocks (device/target_blocks.hpp,
// device/target_block_calibration.hpp); part of the engine's template implementation.
#pragma once
#include <algorithm>

#include "dpointnet/device/fill.hpp"
#include "dpointnet/device/target_block_calibration.hpp"
#include "dpointnet/train/bptt_engine.hpp"
#include "dpointnet/util/host_caches.hpp"

namespace dpointnet {

// Reverse steps timed per candidate and round.
inline constexpr int kTargetBlockCalibrationSteps = 6;

// train.target_blocks: a count from the config, or ("auto", 0) the fastest of the candidates, timed on this
// engine's edges and buffers before anything else runs. The timing runs the fused recurrent weight gradient too
// (the blocked passes add per-segment work for active sources), with a made-up record of about 1.6 % active
// (source, sample, step), and adjoints of zero, so that it adds zeros to the gradient and leaves gz zero; the
// record is zeroed again after.
template <class Real, class ExecSpace>
void BpttEngine<Real, ExecSpace>::set_up_target_blocks() {
  // The explicit instantiation of a device engine instantiates this member too: there the body is a discarded
  // branch (host shapes only).
  if constexpr (compat::host_execution<ExecSpace>) {
    const auto& e = sim_.edges(0);
    int n_blocks = target_blocks_config_;
    if (n_blocks == 0) {
      const double slot = static_cast<double>(R_) * static_cast<double>(N_) * B_ * (ring16() ? 2.0 : sizeof(Acc));
      const auto candidates = device::target_block_candidates(static_cast<std::int64_t>(e.line.extent(0)), e.n_sources,
                                                              D_, slot, static_cast<double>(host_cache_bytes(2)));
      // steps t whose every delay step t + d is inside the window (all D passes run), within one segment record
      const int steps = static_cast<int>(std::min<std::int64_t>({kTargetBlockCalibrationSteps, C_, W_ + T_ - D_}));
      if (candidates.size() > 1 && steps >= 1) {
        auto z = Kokkos::create_mirror_view(rec_.z);
        for (std::size_t q = 0; q < z.extent(0); ++q)
          for (std::size_t i = 0; i < z.extent(1); ++i)
            for (std::size_t b = 0; b < z.extent(2); ++b)
              z(q, i, b) = ((i * 2654435761u + b * 40503u + q * 97u) >> 7) % 64 == 0 ? 1 : 0;
        Kokkos::deep_copy(space_, rec_.z, z);
        space_.fence();
        const bool fused = fused_recurrent_grad();
        auto make_with = [&](const auto& a) {
          return [this, a, fused](std::int64_t t) {
            auto sa = spike_adjoint_at(t, a);
            if (fused) sa.wg = {rec_.z, store_[0].grad, -D_, 0, false};
            return sa;
          };
        };
        // between timed steps: zeros written over the adjoint ring and the segment record's v and r (zero now, and
        // written before they are read in a run), whole views until twice the last-level cache is written (or all
        // three are): no memory of its own
        const double evict_bytes = 2.0 * static_cast<double>(std::max<std::int64_t>(host_cache_bytes(3), 8 << 20));
        auto evict = [&] {
          double left = evict_bytes;
          auto zero = [&](auto v) {
            if (left > 0) device::fill(space_, v, typename decltype(v)::non_const_value_type{});
            left -= static_cast<double>(v.span()) * sizeof(typename decltype(v)::non_const_value_type);
          };
          zero(adj_.gu);
          if (ring16()) with_ring([&](const auto& a) { zero(a.gu); });
          zero(rec_.v);
          zero(rec_.r);
          space_.fence();
        };
        with_ring([&](const auto& a) {
          block_choice_ =
              device::choose_target_blocks<Real, Acc>(space_, e, D_, N_, candidates, make_with(a), evict, 0, steps);
        });
        Kokkos::deep_copy(space_, rec_.z, std::uint8_t(0));
        Kokkos::deep_copy(space_, adj_.gz, Acc(0));
        if (fused) Kokkos::deep_copy(space_, store_[0].grad, Real(0));
      }
      n_blocks = block_choice_.n_blocks;
    }
    blocks_ =
        device::target_blocks(space_, e, D_, N_, device::block_targets_for(N_, n_blocks), "edges.recurrent.blocks");
  }
}

}  // namespace dpointnet
