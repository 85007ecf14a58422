// The single-replica trainer: forward pass with segment snapshots, segment recompute, BPTT, Adam.
// Free of MPI: the parallel layer wraps it.
#pragma once
#include <Kokkos_Core.hpp>
#include <memory>
#include <string>
#include <vector>

#include "config/simulation_config.hpp"
#include "device/adjoint.hpp"
#include "device/spike_adjoint.hpp"
#include "device/target_block_calibration.hpp"
#include "device/target_blocks.hpp"
#include "network/network.hpp"
#include "sim/simulator.hpp"
#include "train/losses.hpp"
#include "train/sample_schedule.hpp"
#include "train/train_config.hpp"
#include "util/kokkos_compat.hpp"

namespace dpointnet {

// One trainable (or frozen) weight surface: "recurrent" or a virtual population's input weights. The weights
// themselves are the simulator's (edge set `set`); the surface holds the optimizer state beside them.
template <class Real, class MemSpace>
struct Surface {
  std::string name;
  int set = 0;  // the simulator's edge set
  bool trainable = false;
  Kokkos::View<Real*, MemSpace> w0, m, v;  // initial weights, Adam moments (grouped order)
  Kokkos::View<Real*, MemSpace> grad;      // dL/dw (grouped order; float32 runs: float32 sums, see Precision)
};

struct StepMetrics {
  std::int64_t step = 0;  // 1-based update count after this step
  double loss = 0;
  std::vector<double> loss_terms;  // in TrainConfig::losses order
  double rate_hz = 0;              // mean over samples and neurons
  double grad_norm = 0;            // after adding the weight regularizer, before clipping
  double seconds = 0;
  double samples_per_s = 0;
  // wall time by phase (s): forward with snapshots, segment recompute, reverse sweep, optimizer update
  double t_forward = 0, t_recompute = 0, t_backward = 0, t_update = 0;
  double t_allreduce = 0;     // sample-parallel runs: the packed gradient allreduce
  double peak_rss_bytes = 0;  // peak resident memory of the process so far (set by the training loop)
};

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class Trainer {
 public:
  using MemSpace = typename ExecSpace::memory_space;

  Trainer(const ExecSpace& space, const Network& net, const std::vector<PreparedInput>& inputs,
          const SimulationConfig& cfg, const TrainConfig& tc, int batch_size);
  ~Trainer();

  // Loss and gradients of one update on this trainer's samples first_sample .. first_sample + K B - 1 (K =
  // train.accumulate micro-batches of B). Pooled losses (RateDistribution) see only these samples.
  StepMetrics compute_gradient(std::int64_t first_sample);
  // With pooled losses over several replicas: spike counts per neuron summed over this trainer's samples (its
  // forward passes; the last one is reused by compute_gradient), then the gradient from the counts summed over
  // every replica (`pooled_samples` samples in all).
  bool has_pooled_loss() const;
  // The job's sample schedule (micro-batch offsets); a serial trainer's own by default.
  void set_schedule(const SampleSchedule& s) { schedule_ = s; }
  // First global sample of the last forward pass (gradient checks place its terminal state).
  std::int64_t last_forward_sample() const { return last_forward_sample_; }
  std::vector<double> pooled_counts(std::int64_t first_sample);
  StepMetrics compute_gradient(std::int64_t first_sample, const std::vector<double>& pooled, double pooled_samples);
  // Clipping (optional), Adam, sign constraint on the trainable surfaces.
  void apply_update();
  // compute_gradient + apply_update for update number `adam_step_` + 1, on its samples (serial schedule).
  StepMetrics train_step();

  // ---- for sample-parallel training (the parallel layer wraps the trainer) ----
  // All trainable gradients as one dense FP32 buffer in canonical order (trainable surfaces in order, edges in
  // grouped order). The staging buffers are allocated once; the pointer stays valid for the trainer's life.
  std::size_t packed_size() const;
  float* pack_gradients();
  // gradient = packed * scale (e.g. the sum over replicas times 1/replicas); the clipping norm is recomputed.
  void unpack_gradients(const float* packed, double scale);
  double last_grad_norm() const { return last_grad_norm_; }
  // The first trainable surface whose gradient holds a NaN or infinity ("" if none): checked before an update.
  std::string nonfinite_gradient_surface() const;
  // Fault injection for tests (DPOINTNET_FAULT_NAN_STEP): one gradient value of surface s becomes NaN.
  void poison_gradient(int s);
  // Checks: per sample b, the terminal v' of every neuron then its spike count, of the last forward pass
  // ([B][2N] flattened); and the number of trainable weights on the wrong side of their initial sign.
  std::vector<double> terminal_state() const;
  // Spikes per neuron summed over this trainer's samples (all micro-batches) and window of the last update.
  const std::vector<double>& update_spike_counts() const { return update_counts_; }
  std::int64_t sign_violations() const;
  // Host shapes: the target blocks of the spike adjoint (1: unblocked), and the timings they were chosen from
  // (train.target_blocks "auto"; empty when fixed by the config, not timed, or on a device).
  int target_blocks() const { return blocks_.on() ? blocks_.n_blocks : 1; }
  const device::TargetBlockChoice& target_block_choice() const { return block_choice_; }

  // train.carry_state: the committed start states of this trainer's sample slots (micro-batch m, sample b at
  // local slot m B + b), one record of carried_record_size() values per slot: v[N], r[N], asc[2][N],
  // psc_rise[R][N], psc[R][N], the spike ring [D][N] and each input ring [D][n_src] in ring-slot order as of the
  // runs' end step (W + T). Empty before the first update.
  std::size_t carried_record_size() const;
  bool has_carried_state() const { return carry_valid_; }
  std::vector<double> carried_records() const;
  void set_carried_records(const std::vector<double>& records, std::int64_t end_step);
  std::int64_t window_end_step() const { return W_ + T_; }

  std::int64_t adam_step() const { return adam_step_; }
  void set_adam_step(std::int64_t s) { adam_step_ = s; }
  double last_update_seconds() const { return t_update_; }  // wall time of the last apply_update
  int n_surfaces() const { return static_cast<int>(surfaces_.size()); }
  const std::string& surface_name(int s) const { return surfaces_[static_cast<std::size_t>(s)].name; }
  bool surface_trainable(int s) const { return surfaces_[static_cast<std::size_t>(s)].trainable; }
  int surface_projection(int s) const { return sim_->projection(surfaces_[static_cast<std::size_t>(s)].set); }
  // Host copies in the projection's read (file) order, normalized units.
  enum class Field { Weight, InitialWeight, AdamM, AdamV, Gradient };
  std::vector<double> get(int s, Field f) const;
  void set(int s, Field f, const std::vector<double>& values);  // Weight, InitialWeight, AdamM, AdamV

 private:
  void forward_with_snapshots(int micro_batch);
  void backward();
  void reverse_step(std::int64_t t, std::int64_t t0);
  // The spike adjoint of reverse step t over the recurrent edges (in target blocks where the trainer keeps them).
  auto spike_adjoint_at(std::int64_t t) const {
    device::SpikeAdjointFunctor<Real, Acc, ExecSpace> sa{
        sim_->edges(0), adj_, static_cast<Acc>(bp_.rdamp), t, W_ + T_, N_, D_, B_};
    sa.tb = blocks_;
    return sa;
  }
  // Host shapes add the recurrent weight gradient inside the spike adjoint (device::FusedWeightGrad).
  bool fused_recurrent_grad() const {
    return device::host_shape<ExecSpace>(tc_.kernel_shape) && !surfaces_.empty() && surfaces_[0].set == 0 &&
           surfaces_[0].trainable && sim_->edges(0).weight.extent(0) > 0;
  }
  double weight_regularizer();  // adds its gradient; returns sum of (w - w0)^2 over trainable edges
  Kokkos::View<Real*, MemSpace>& weights(Surface<Real, MemSpace>& s) { return sim_->edges(s.set).weight; }

  ExecSpace space_;
  const Network& net_;
  TrainConfig tc_;
  std::vector<std::unique_ptr<Loss>> losses_;
  RegularizerScales scales_;
  int B_, C_, D_, R_;   // C_: steps per segment (checkpoint_interval, at most T)
  std::int64_t N_, T_;  // T_: steps of the BPTT window (run.tstop)
  std::int64_t W_ = 0;  // warm-up steps before the window (train.warmup_ms)
  std::int64_t adam_step_ = 0, n_trainable_ = 0;
  std::unique_ptr<Simulator<Real, ExecSpace>> sim_;
  std::vector<Surface<Real, MemSpace>> surfaces_;
  std::vector<typename Simulator<Real, ExecSpace>::SegmentSnapshot> segment_snapshots_;
  using Acc = Real;  // the adjoint's storage and accumulation type
  device::Adjoint<Acc, MemSpace> adj_;
  device::TargetBlockedEdges<Real, MemSpace> blocks_;  // host shapes, large N: the spike adjoint's edge order
  device::TargetBlockChoice block_choice_;
  void set_up_target_blocks();  // host shapes: blocks_ from train.target_blocks (timed when "auto")
  device::BackwardParams bp_;
  Kokkos::View<std::int32_t**, Kokkos::LayoutRight, MemSpace> counts_;  // spikes per (b, i)
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> vreg_steps_;    // [T][2] voltage-regularizer sums per step
  double vreg_range_sum_ = 0, vreg_threshold_sum_ = 0;                  // raw sums over (b, t, i)
  double last_grad_norm_ = 0;
  double t_recompute_ = 0, t_backward_ = 0, t_update_ = 0;
  bool last_segment_recorded_ = false;  // the forward pass left the last segment's records in rec_
  std::int64_t cached_forward_ = -1;    // first sample of a forward pass still valid for the backward pass
  std::vector<double> update_counts_;   // spikes per neuron of the last update (host)
  // stimulus conditions (train.conditions): their input schedules, and which one the simulator holds (-1: base)
  std::vector<std::vector<PreparedInput>> condition_inputs_;
  int active_condition_ = -1;
  SampleSchedule schedule_;
  std::int64_t last_forward_sample_ = -1;
  // carried states (train.carry_state): start states per micro-batch, end states of the current update
  std::vector<typename Simulator<Real, ExecSpace>::SegmentSnapshot> carry_in_, carry_out_;
  bool carry_valid_ = false;
  std::int64_t s_min_ = 0;  // first step with activity in the current forward pass (-D when carried)
  void allocate_carry();
  void select_micro_batch(int k);  // the inputs of micro-batch k
  template <class HostCounts>
  double add_neuron_counts(const HostCounts& hc, std::vector<double>& sum) const;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> terminal_v_;
  Kokkos::View<float*, MemSpace> packed_;
  typename Kokkos::View<float*, MemSpace>::HostMirror packed_host_;
  // records of the recomputed segment (samples fastest): v and r per step, and the activity of the D steps
  // before it and of its own steps
  device::SegmentRecord<Real, MemSpace> rec_;
  std::vector<Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, MemSpace>> x_ext_;
  void record_history(const typename Simulator<Real, ExecSpace>::SegmentSnapshot& snap, std::int64_t t0);
  void record_step(std::int64_t t, std::int64_t t0, int slot);
};

}  // namespace dpointnet
