// The forward simulator: MODEL.md section 4 over a batch of samples on one Kokkos execution space.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "inputs/input_schedule.hpp"
#include "kernels/inputs.hpp"
#include "kernels/neuron_step.hpp"
#include "kernels/propagate.hpp"
#include "network/network.hpp"

namespace dpointnet {

struct SimOptions {
  int batch_size = 1;
  std::int64_t n_steps = 0;  // length of the input schedule (steps)
  std::uint32_t seed = 0;
  std::int64_t sample_offset = 0;  // global index of sample 0 of this batch
  bool record_v = false;           // keep v' of every step for the recorder
  int record_chunk = 64;           // steps per host transfer of recorded spikes/voltages
};

// Recorded output of `chunk_steps` consecutive steps starting at `first_step`, on the host:
// z(k, b, i) in {0,1}, v(k, b, i) normalized v' (only when record_v).
struct RecordedChunk {
  std::int64_t first_step = 0;
  int n_steps = 0;
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, Kokkos::HostSpace> z;
  Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace> v;
};

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class Simulator {
 public:
  using MemSpace = typename ExecSpace::memory_space;

  Simulator(const Network& net, const std::vector<PreparedInput>& inputs, const SimOptions& opt);
  ~Simulator();

  void reset();  // all state zero, step counter 0
  // External current pulses (current clamps), the same for every sample.
  void set_current_pulses(const std::vector<CurrentPulse>& pulses);
  // Advances `steps` steps; every full (or the last partial) chunk of recorded steps goes to `sink`.
  void run(std::int64_t steps, const std::function<void(const RecordedChunk&)>& sink);
  std::int64_t current_step() const { return t_; }

  // ---- for the trainer: time-checkpoint snapshots, per-step hooks, access to weights and constants ----
  struct Snapshot {
    kernels::NeuronState<Real, MemSpace> state;
    kernels::SpikeRing<MemSpace> z_ring;
    std::vector<kernels::CountRing<MemSpace>> input_rings;
    std::int64_t t = 0;
  };
  Snapshot make_snapshot() const;  // allocates
  void save(Snapshot& s) const;    // copies the current state into s
  void restore(const Snapshot& s);
  // Called after every step with the step index and the ring slot (t mod D) that holds its spikes/inputs.
  void set_step_hook(std::function<void(std::int64_t, int)> hook) { hook_ = std::move(hook); }
  kernels::GroupedEdges<Real, MemSpace>& recurrent_edges() { return recurrent_; }
  int n_inputs() const { return static_cast<int>(inputs_.size()); }
  kernels::GroupedEdges<Real, MemSpace>& input_edges(int k);
  const PreparedInput& input_spec(int k) const;
  const kernels::CountRing<MemSpace>& input_ring(int k) const;
  const kernels::SpikeRing<MemSpace>& z_ring() const { return z_ring_; }
  const kernels::NeuronConstants<Real, MemSpace>& constants() const { return k_; }
  int max_delay() const { return D_; }
  int n_channels() const { return R_; }
  double dt() const { return dt_; }
  void set_sample_offset(std::int64_t o) { opt_.sample_offset = o; }

  int batch_size() const { return B_; }
  std::int64_t n_neurons() const { return N_; }
  const kernels::NeuronState<Real, MemSpace>& state() const { return state_; }
  // Total synaptic events (edge additions) since reset, when counting is enabled (benchmarks).
  void set_count_events(bool on) { count_events_ = on; }
  double events() const { return events_; }

 private:
  void step_once(int rec_index);
  struct InputRuntime;

  int B_, R_, D_;
  std::int64_t N_;
  double dt_;
  std::int64_t t_ = 0;
  SimOptions opt_;
  kernels::NeuronConstants<Real, MemSpace> k_;
  kernels::NeuronState<Real, MemSpace> state_;
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> u_;
  kernels::SpikeRing<MemSpace> z_ring_;
  kernels::GroupedEdges<Real, MemSpace> recurrent_;
  std::vector<std::unique_ptr<InputRuntime>> inputs_;
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, MemSpace> rec_z_;
  Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace> rec_v_;
  typename Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, MemSpace>::HostMirror rec_z_host_;
  typename Kokkos::View<Real***, Kokkos::LayoutRight, MemSpace>::HostMirror rec_v_host_;
  Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace> rec_v_double_;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemSpace> v_step_;
  Kokkos::View<Real*, MemSpace> i_ext_;
  std::vector<CurrentPulse> pulses_;
  void update_current(std::int64_t t, bool force = false);
  std::function<void(std::int64_t, int)> hook_;
  bool count_events_ = false;
  double events_ = 0;
};

// Groups a projection's edges by (source, delay) for the event-driven forward pass.
template <class Real, class MemSpace>
kernels::GroupedEdges<Real, MemSpace> group_edges(const Projection& p, int max_delay, std::int64_t n_targets,
                                                  const std::string& label);

}  // namespace dpointnet
