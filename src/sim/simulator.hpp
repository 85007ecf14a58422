// The forward simulator (docs/model.md, "One time step") over a batch of samples on one Kokkos execution space
// instance.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpointnet/device/edge_layout.hpp"
#include "dpointnet/device/inputs.hpp"
#include "dpointnet/device/model_constants.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/sim/neuron_dynamics.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet {

// Steps per recorder chunk: `simulate`, and training (which records nothing; only the staging buffer's size).
inline constexpr int kRecordChunk = 64;
inline constexpr int kTrainingRecordChunk = 8;

struct SimOptions {
  int batch_size = 1;
  std::int64_t n_steps = 0;  // length of the input schedule (steps)
  std::uint32_t seed = 0;
  std::int64_t sample_offset = 0;   // global index of sample 0 of this batch
  bool record_v = false;            // keep v' of every step for the recorder
  bool record_inputs = false;       // keep the inputs' counts of every step for the recorder
  int record_chunk = kRecordChunk;  // steps per host transfer of recorded spikes/voltages
  // Steps per min-delay window of run(): 0 = the network's smallest delay (in steps), capped
  // by the window's drive buffer (sim/step_window.hpp); 1 = step by step. Results are the same bitwise.
  int max_window = 0;
  // run() with a step hook (training) advances a window at a time too, keeping what training reads of each step of
  // the window (training_v, training_r) in a [window B][N] buffer; false: one step per launch with a hook.
  bool windows_with_hook = false;
  // Keep each grouped edge's read-order index (file_order, to_read_order, from_read_order: training, checkpoints,
  // edge export); false skips it at set-up (8 bytes per edge written in scattered order), and file_order throws.
  bool read_order = true;
};

namespace detail {
struct SimulatorAccess;
}

// Recorded output of `chunk_steps` consecutive steps starting at `first_step`, on the host:
// z(k, b, i) in {0,1}, v(k, b, i) normalized v' (only when record_v).
struct RecordedChunk {
  std::int64_t first_step = 0;
  int n_steps = 0;
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, Kokkos::HostSpace> z;
  Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace> v;
  // per input (input_spec order), its counts x(k, b, source) (only when record_inputs)
  std::vector<Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, Kokkos::HostSpace>> inputs;
};

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class Simulator {
 public:
  using MemSpace = typename ExecSpace::memory_space;

  // Kernels are launched on `space`. Weights start from the network's initial weights.
  Simulator(const ExecSpace& space, const Network& net, const std::vector<PreparedInput>& inputs,
            const SimOptions& opt);
  ~Simulator();

  void reset();  // all state zero, step counter 0
  // External current pulses (current clamps), the same for every sample.
  void set_current_pulses(const std::vector<CurrentPulse>& pulses);
  // Advances `steps` steps; every full (or the last partial) chunk of recorded steps goes to `sink`.
  void run(std::int64_t steps, const std::function<void(const RecordedChunk&)>& sink);
  std::int64_t current_step() const { return t_; }

  // ---- for the trainer: segment snapshots (BPTT time checkpointing), per-step hooks, weights ----
  struct SegmentSnapshot {
    device::NeuronState<Real, MemSpace> state;
    device::SpikeRing<MemSpace> z_ring;
    std::vector<device::CountRing<MemSpace>> input_rings;
    std::int64_t t = 0;
    std::int64_t history = 0;  // steps before step 0 held in the rings (continue_from)
  };
  SegmentSnapshot make_snapshot() const;  // allocates
  void save(SegmentSnapshot& s) const;    // copies the current state into s
  void restore(const SegmentSnapshot& s);
  // Continues a run from the end of another (train.carry_state): the state and the last D steps of spikes and
  // inputs of `end` (taken at step end.t) become those before step `t_start`; the ring slots are rotated so
  // that step t_start - d reads what step end.t - d wrote, including steps before 0.
  void continue_from(const SegmentSnapshot& end, std::int64_t t_start);
  std::int64_t history() const { return history_; }
  // Called after every step with the step index and the ring slot (t mod D) that holds its spikes/inputs.
  void set_step_hook(std::function<void(std::int64_t, int)> hook) { hook_ = std::move(hook); }

  // Edge sets: 0 is the recurrent projection, 1 + k the projection of input k. Their weights live here, on the
  // device, in grouped order; file_order(s)[k] is the read-order index of grouped edge k.
  int n_edge_sets() const { return 1 + static_cast<int>(inputs_.size()); }
  device::GroupedEdges<Real, MemSpace>& edges(int s);
  const device::GroupedEdges<Real, MemSpace>& edges(int s) const;
  // From now on the weights of edge set s are `w` (a trainer's weight store owns them; the simulator reads
  // them): same extent, grouped order.
  void borrow_weights(int s, const Kokkos::View<Real*, MemSpace>& w) {
    auto& e = edges(s);
    if (w.extent(0) != e.weight.extent(0))
      throw std::logic_error("edge set " + std::to_string(s) + ": " + std::to_string(w.extent(0)) +
                             " weights lent for " + std::to_string(e.weight.extent(0)) + " edges");
    e.weight = w;
  }
  const std::vector<std::int64_t>& file_order(int s) const;
  int projection(int s) const;  // index into Network::projections
  // Host copies in read order of any per-edge view of edge set s (weights, or a trainer's per-edge state).
  template <class View>
  std::vector<double> to_read_order(int s, const View& v) const;
  template <class View>
  void from_read_order(int s, const std::vector<double>& values, View& v) const;

  int n_inputs() const { return static_cast<int>(inputs_.size()); }
  // Replaces the input schedules (spike lists or rates) by those of another stimulus condition: the same inputs
  // on the same populations and edges (train.conditions); the weights and the state are untouched.
  void set_input_schedules(const std::vector<PreparedInput>& inputs);
  const PreparedInput& input_spec(int k) const;
  // Input k's LGN rates of the current batch (Hz, [frame][sample][unit], 1-ms frames) on the host, computed if
  // they are not yet; an empty view for an input of another kind. Outside the step loop.
  Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace> lgn_rates(int k);
  const device::CountRing<MemSpace>& input_ring(int k) const;
  const device::SpikeRing<MemSpace>& z_ring() const { return z_ring_; }
  const device::NeuronConstants<Real, MemSpace>& constants() const { return k_; }
  const ExecSpace& space() const { return space_; }
  int max_delay() const { return D_; }
  int n_channels() const { return R_; }
  double dt() const { return dt_; }
  void set_sample_offset(std::int64_t o) { opt_.sample_offset = o; }
  // Kernel shapes (device/kernel_shape.hpp): Auto, unless built by detail::SimulatorAccess with another one (a
  // trainer's, or the tests' Device shapes on a host backend).
  device::KernelShape kernel_shape() const { return shape_; }

  int batch_size() const { return B_; }
  std::int64_t n_neurons() const { return N_; }
  const device::NeuronState<Real, MemSpace>& state() const { return state_; }
  // The run's neuron dynamics (run.dynamics); what training reads of the last step is theirs.
  const NeuronDynamics<Real, ExecSpace>& dynamics() const { return *dynamics_; }
  // Of the step a step hook is called for (else of the last step): from the window's buffer, or the dynamics'.
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> training_v() const {
    if (hook_w_ < 0) return dynamics_->training_v(state_);
    return Kokkos::subview(step_v_, hook_rows(), Kokkos::ALL());
  }
  Kokkos::View<std::int16_t**, Kokkos::LayoutRight, MemSpace> training_r() const {
    if (hook_w_ < 0) return dynamics_->training_r(state_);
    return Kokkos::subview(step_r_, hook_rows(), Kokkos::ALL());
  }
  // Total synaptic events (edge additions) since reset, when counting is enabled (benchmarks).
  void set_count_events(bool on) { count_events_ = on; }
  // Steps per min-delay window of run() (SimOptions::max_window).
  int window() const { return window_; }
  double events() const { return events_; }

 private:
  friend struct detail::SimulatorAccess;
  Simulator(const ExecSpace& space, const Network& net, const std::vector<PreparedInput>& inputs, const SimOptions& opt,
            device::KernelShape shape);
  int window_steps(std::int64_t max_steps) const;
  Kokkos::pair<std::size_t, std::size_t> hook_rows() const {
    const auto b = static_cast<std::size_t>(B_);
    return {static_cast<std::size_t>(hook_w_) * b, static_cast<std::size_t>(hook_w_ + 1) * b};
  }
  void advance(int n_steps, int rec_index);
  struct InputRuntime;
  void upload_schedule(InputRuntime& rt, const PreparedInput& in);
  void write_inputs(std::int64_t t, int slot, int n_steps = 1);
  void write_random_input(InputRuntime& in, std::int64_t t, int slot);
  std::int64_t lgn_frames() const;

  ExecSpace space_;
  int B_, R_, D_;
  std::int64_t N_;
  double dt_;
  std::int64_t t_ = 0;
  std::int64_t history_ = 0;  // 0 from rest; D after continue_from (propagation reads steps from -history_ on)
  SimOptions opt_;
  device::KernelShape shape_;
  device::NeuronConstants<Real, MemSpace> k_;
  device::NeuronState<Real, MemSpace> state_;
  int window_ = 1;  // steps per min-delay window (SimOptions::max_window)
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u_;  // the drive of a window's steps [window_ B][R][N]
  Kokkos::View<std::int64_t*, MemSpace> live_spans_;  // the live rows of u_ per channel (LiveChannels::span)
  device::SpikeRing<MemSpace> z_ring_;
  device::GroupedEdges<Real, MemSpace> recurrent_;
  std::vector<std::int64_t> recurrent_order_;
  std::vector<std::unique_ptr<InputRuntime>> inputs_;
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, MemSpace> rec_z_;
  Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace> rec_v_;
  typename Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, MemSpace>::HostMirror rec_z_host_;
  typename Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace>::HostMirror rec_v_host_;
  Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace> rec_v_double_;
  std::vector<Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, MemSpace>> rec_in_;
  std::vector<Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, Kokkos::HostSpace>> rec_in_host_;
  void record_input_slots(int rec_index, int slot);
  Kokkos::View<Real*, MemSpace> i_ext_;
  std::unique_ptr<NeuronDynamics<Real, ExecSpace>> dynamics_;
  std::vector<CurrentPulse> pulses_;
  void update_current(std::int64_t t, bool force = false);
  std::function<void(std::int64_t, int)> hook_;
  // SimOptions::windows_with_hook: training_v and training_r of each step of a window ([window_ B][N]), and the
  // step of the window a hook is called for (-1: none, or no buffer)
  typename NeuronDynamics<Real, ExecSpace>::VView step_v_;
  typename NeuronDynamics<Real, ExecSpace>::RView step_r_;
  int hook_w_ = -1;
  bool count_events_ = false;
  double events_ = 0;
};

template <class Real, class ExecSpace>
template <class View>
std::vector<double> Simulator<Real, ExecSpace>::to_read_order(int s, const View& v) const {
  const auto& order = file_order(s);
  std::vector<double> out(order.size(), 0.0);
  if (v.extent(0) != order.size()) return out;
  auto h = compat::mirror_view_and_copy(space_, v);
  for (std::size_t k = 0; k < order.size(); ++k) out[static_cast<std::size_t>(order[k])] = static_cast<double>(h(k));
  return out;
}

template <class Real, class ExecSpace>
template <class View>
void Simulator<Real, ExecSpace>::from_read_order(int s, const std::vector<double>& values, View& v) const {
  const auto& order = file_order(s);
  if (v.extent(0) != values.size() || values.size() != order.size())
    throw std::runtime_error("edge set " + std::to_string(s) + ": " + std::to_string(values.size()) + " values for " +
                             std::to_string(v.extent(0)) + " edges");
  auto h = Kokkos::create_mirror_view(v);
  space_.fence();  // h may be v itself (host memory), which kernels launched on space_ may still use
  for (std::size_t k = 0; k < order.size(); ++k)
    h(k) = static_cast<typename View::non_const_value_type>(values[static_cast<std::size_t>(order[k])]);
  Kokkos::deep_copy(space_, v, h);
  space_.fence();  // h goes out of scope
}

namespace detail {
// A simulator in a chosen kernel shape: for the trainer (whose shape its simulator shares) and the tests.
struct SimulatorAccess {
  template <class Real, class ExecSpace>
  static std::unique_ptr<Simulator<Real, ExecSpace>> make(const ExecSpace& space, const Network& net,
                                                          const std::vector<PreparedInput>& inputs,
                                                          const SimOptions& opt, device::KernelShape shape) {
    return std::unique_ptr<Simulator<Real, ExecSpace>>(new Simulator<Real, ExecSpace>(space, net, inputs, opt, shape));
  }
};
}  // namespace detail

// Instantiated once, in simulator.cpp.
extern template class Simulator<float, Kokkos::DefaultExecutionSpace>;
extern template class Simulator<double, Kokkos::DefaultExecutionSpace>;
#if DPOINTNET_SECOND_SERIAL_SPACE
extern template class Simulator<float, Kokkos::Serial>;
extern template class Simulator<double, Kokkos::Serial>;
#endif

}  // namespace dpointnet
