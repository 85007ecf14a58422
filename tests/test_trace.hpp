// Runs a Simulator (double by default) on the test backend and keeps every step's v' and spikes on the host:
// the single-neuron tests' view of a run (test_single_neuron.cpp, test_nest_mode.cpp). Backend tests only.
#pragma once
#include <cstdint>
#include <vector>

#include "dpointnet/sim/simulator.hpp"
#include "test_execspace.hpp"

namespace dpointnet::test {

struct Trace {
  std::vector<std::vector<double>> v;  // [step][neuron], normalized v'
  std::vector<std::vector<int>> z;
};

template <class Real = double>
Trace run(const Network& net, const std::vector<PreparedInput>& inputs, const std::vector<CurrentPulse>& pulses,
          std::int64_t steps) {
  SimOptions o;
  o.batch_size = 1;
  o.n_steps = steps;
  o.record_v = true;
  o.record_chunk = 16;
  Simulator<Real, TEST_EXECSPACE> sim(TEST_EXECSPACE(), net, inputs, o);
  sim.set_current_pulses(pulses);
  sim.reset();
  Trace tr;
  sim.run(steps, [&](const RecordedChunk& c) {
    for (int k = 0; k < c.n_steps; ++k) {
      std::vector<double> v;
      std::vector<int> z;
      for (std::int64_t i = 0; i < net.n_neurons; ++i) {
        v.push_back(c.v(k, 0, i));
        z.push_back(c.z(k, 0, i));
      }
      tr.v.push_back(v);
      tr.z.push_back(z);
    }
  });
  return tr;
}

// The steps in which neuron i spiked.
inline std::vector<std::int64_t> spike_steps(const Trace& t, std::size_t i) {
  std::vector<std::int64_t> s;
  for (std::size_t k = 0; k < t.z.size(); ++k)
    if (t.z[k][i]) s.push_back(static_cast<std::int64_t>(k));
  return s;
}

}  // namespace dpointnet::test
