// Helpers for tests: temporary directories, small in-memory networks built from NEST parameters.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/network/neuron_model.hpp"
#include "dpointnet/util/error.hpp"
#include "test_paths.hpp"

namespace dpointnet::test {

// The message of the InputError `f` throws ("" and a test failure if it throws nothing or something else).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected InputError, nothing thrown";
  return "";
}

// The vendored test data (tests/data, where configure found it). The environment variable DPOINTNET_TEST_DATA_DIR
// overrides it, for test executables run away from their source tree (scripts/gpu-check).
inline std::string test_data_dir() {
  const char* env = std::getenv("DPOINTNET_TEST_DATA_DIR");
  return env && *env ? env : configured_test_data_dir();
}
inline std::string bmtk450_dir() { return test_data_dir() + "/bmtk/point_450glifs"; }

// Fails the test (never skips) when the vendored BMTK example is missing.
#define DPOINTNET_REQUIRE_TEST_DATA()                                                        \
  do {                                                                                       \
    if (!std::filesystem::exists(::dpointnet::test::bmtk450_dir() + "/config.circuit.json")) \
      FAIL() << "test data missing: " << ::dpointnet::test::bmtk450_dir()                    \
             << " (this test needs the vendored BMTK example in tests/data/bmtk)";           \
  } while (0)

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("dpointnet_test_" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((path_ / name).parent_path());
    std::ofstream(path_ / name) << text;
  }

 private:
  std::filesystem::path path_;
};

inline NeuronParams glif(double C_m, double g, double E_L, double V_th, double V_reset, double t_ref,
                         std::vector<double> tau_syn = {5.5, 8.5, 2.8, 5.8}, double asc0 = 0, double asc1 = 0,
                         double k0 = 0.03, double k1 = 0.3) {
  NeuronParams p;
  p.kind = ModelKind::GlifPsc;
  p.C_m = C_m;
  p.g = g;
  p.E_L = E_L;
  p.V_th = V_th;
  p.V_reset = V_reset;
  p.t_ref = t_ref;
  p.tau_syn = std::move(tau_syn);
  p.asc_amps[0] = asc0;
  p.asc_amps[1] = asc1;
  p.asc_decay[0] = k0;
  p.asc_decay[1] = k1;
  return p;
}

// One recurrent population "v1" with the given neurons, and optional virtual populations added later.
struct NetBuilder {
  Network net;
  std::vector<NeuronParams> params;
  NetBuilder(double dt, const std::vector<NeuronParams>& ps, Dynamics dynamics = Dynamics::Discrete) : params(ps) {
    net.dt = dt;
    net.dynamics = dynamics;
    Population p;
    p.name = "v1";
    p.size = static_cast<std::int64_t>(ps.size());
    p.offset = 0;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      p.node_ids.push_back(static_cast<std::int64_t>(i));
      p.node_type_ids.push_back(0);
      net.neurons.push_back(derive_neuron(ps[i], dt, dynamics));
      net.neuron_population.push_back(0);
      net.neuron_node_id.push_back(static_cast<std::int64_t>(i));
    }
    net.populations.push_back(p);
    net.n_neurons = p.size;
    Projection rec;
    rec.recurrent = true;
    rec.n_sources = net.n_neurons;
    net.projections.push_back(rec);
  }
  int add_virtual(const std::string& name, std::int64_t n) {
    Population p;
    p.name = name;
    p.is_virtual = true;
    p.size = n;
    for (std::int64_t i = 0; i < n; ++i) p.node_ids.push_back(i);
    net.populations.push_back(p);
    Projection pr;
    pr.source_population = name;
    pr.n_sources = n;
    net.projections.push_back(pr);
    return static_cast<int>(net.projections.size()) - 1;
  }
  void edge(int proj, std::int64_t src, std::int64_t tgt, int channel, int delay, double w_pA) {
    Projection& p = net.projections[static_cast<std::size_t>(proj)];
    p.source.push_back(src);
    p.target.push_back(tgt);
    p.channel.push_back(channel);
    p.delay_steps.push_back(delay);
    p.weight_pA.push_back(w_pA);
    p.edge_population.push_back(0);
    p.edge_row.push_back(static_cast<std::int64_t>(p.source.size() - 1));
  }
  Network finish() {
    net.finalize();
    return net;
  }
};

// A spike-file style input: spikes[(step, source)] with counts.
inline PreparedInput stamped_input(int projection, std::int64_t n_steps,
                                   const std::vector<std::pair<std::int64_t, std::int32_t>>& spikes) {
  PreparedInput in;
  in.name = "test_spikes";
  in.kind = InputKind::SpikeFile;
  in.projection = projection;
  in.spikes.step_offsets.assign(static_cast<std::size_t>(n_steps + 1), 0);
  auto sorted = spikes;
  std::sort(sorted.begin(), sorted.end());
  for (auto& [k, j] : sorted) {
    in.spikes.step_offsets[static_cast<std::size_t>(k + 1)]++;
    in.spikes.source.push_back(j);
    in.spikes.count.push_back(1);
  }
  for (std::size_t k = 1; k < in.spikes.step_offsets.size(); ++k)
    in.spikes.step_offsets[k] += in.spikes.step_offsets[k - 1];
  return in;
}

// N recurrent neurons of one population with the given SONATA node_type_ids (all the losses read of a network).
inline Network network_of_types(const std::vector<std::int64_t>& types) {
  Network net;
  Population p;
  p.name = "v1";
  p.size = static_cast<std::int64_t>(types.size());
  p.offset = 0;
  p.node_type_ids = types;
  net.populations.push_back(p);
  net.neuron_population.assign(types.size(), 0);
  net.n_neurons = p.size;
  return net;
}

}  // namespace dpointnet::test
