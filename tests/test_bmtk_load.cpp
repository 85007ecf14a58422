// Loading BMTK's point_450glifs example. Expected numbers are the counts of BMTK's example as
// published with it (counted there with h5py), not from dpointnet.
#include <gtest/gtest.h>

#include <map>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {
std::string write_config(const TempDir& d, double dt, double tstop) {
  const std::string base = bmtk450_dir();
  d.write("sim.json", "{\"network\": \"" + base + "/config.circuit.json\", \"run\": {\"dt\": " + std::to_string(dt) +
                          ", \"tstop\": " + std::to_string(tstop) +
                          "}, \"inputs\": {\"LGN_spikes\": {\"input_type\": \"spikes\", \"module\": \"sonata\", "
                          "\"input_file\": \"" +
                          base +
                          "/inputs/lgn_spikes.h5\", \"node_set\": \"lgn\"}}, "
                          "\"output\": {\"output_dir\": \"" +
                          d.str() + "/out\"}}");
  return d.file("sim.json");
}
}  // namespace

TEST(Bmtk450, LoadsNodesEdgesWeightsAndReceptorPorts) {
  DPOINTNET_REQUIRE_TEST_DATA();
  TempDir d;
  auto cfg = SimulationConfig::load(write_config(d, 1.0, 100.0));
  Network net = build_network(cfg);
  ASSERT_EQ(net.populations.size(), 2u);
  EXPECT_EQ(net.n_neurons, 450);
  const Population* lgn = net.find_population("lgn");
  ASSERT_NE(lgn, nullptr);
  EXPECT_TRUE(lgn->is_virtual);
  EXPECT_EQ(lgn->size, 100);
  ASSERT_EQ(net.projections.size(), 2u);
  const Projection& rec = net.projections[0];
  const Projection& in = net.projections[static_cast<std::size_t>(net.projection_of("lgn"))];
  EXPECT_EQ(rec.size(), 28555u);
  EXPECT_EQ(in.size(), 36035u);
  EXPECT_EQ(net.n_channels, 4);
  // weights are syn_weight * nsyns with nsyns in 1..4; sums of nsyns: 71,572 (v1->v1) and 90,106 (lgn->v1)
  // syn_weight by (target node type, channel), from the example's edge-type tables
  const Population& v1 = *net.find_population("v1");
  auto syn_weight = [&](const Projection& p, std::size_t e) {
    const std::int64_t type = v1.node_type_ids[static_cast<std::size_t>(p.target[e])];
    const bool lif = type >= 105, inh_target = type == 103 || type == 104;
    if (!p.recurrent) return lif ? 13.0 : (inh_target ? 14.0 : 11.0);
    if (lif) return p.channel[e] == 0 ? 3.0 : -4.0;
    const double by_port[4] = {2.5, -6.5, 5.0, -3.0};
    return by_port[p.channel[e]];
  };
  auto check = [&](const Projection& p, double nsyns_total) {
    double total = 0;
    for (std::size_t e = 0; e < p.size(); ++e) {
      const double ns = p.weight_pA[e] / syn_weight(p, e);
      ASSERT_TRUE(ns >= 0.999 && ns <= 4.001 && std::fabs(ns - std::round(ns)) < 1e-9)
          << "edge " << e << " weight " << p.weight_pA[e];
      total += std::round(ns);
      ASSERT_EQ(p.delay_steps[e], 2) << "2.0 ms at dt 1 ms";
    }
    EXPECT_EQ(total, nsyns_total);
  };
  check(rec, 71572);
  check(in, 90106);
  // channels: type 100 -> port 1, 101 -> port 3, 102 -> port 2, 103 -> port 4, LIF targets by sign
  std::map<int, std::size_t> per_channel;
  for (int c : rec.channel) per_channel[c]++;
  EXPECT_EQ(per_channel[0], 15149u + 4709u);
  EXPECT_EQ(per_channel[1], 3224u + 2029u);
  EXPECT_EQ(per_channel[2], 1860u);
  EXPECT_EQ(per_channel[3], 1584u);
  // normalization: every weight divided by the target's threshold gap
  const auto w = net.initial_weights(0);
  for (std::size_t e = 0; e < rec.size(); ++e)
    ASSERT_DOUBLE_EQ(w[e] * net.neurons[static_cast<std::size_t>(rec.target[e])].vs, rec.weight_pA[e]);
  // LGN spikes: 3,044 in the file, all in (0, 3000] ms
  auto inputs = prepare_inputs(cfg, net, 3000);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].spikes.n_spikes, 3044);
  EXPECT_EQ(inputs[0].spikes.n_after_end, 0);
}

#if DPOINTNET_SECOND_SERIAL_SPACE
// The same network and input on two backends gives the same spikes (float64).
TEST(Bmtk450, SerialAndDefaultBackendAgree) {
  DPOINTNET_REQUIRE_TEST_DATA();
  TempDir d;
  auto cfg = SimulationConfig::load(write_config(d, 1.0, 300.0));
  Network net = build_network(cfg);
  auto inputs = prepare_inputs(cfg, net, cfg.n_steps);
  SimOptions o;
  o.n_steps = cfg.n_steps;
  auto collect = [&](auto& sim) {
    std::vector<std::uint8_t> z;
    sim.reset();
    sim.run(cfg.n_steps, [&](const RecordedChunk& c) {
      for (int k = 0; k < c.n_steps; ++k)
        for (std::int64_t i = 0; i < net.n_neurons; ++i) z.push_back(c.z(k, 0, i));
    });
    return z;
  };
  Simulator<double, Kokkos::DefaultExecutionSpace> a(Kokkos::DefaultExecutionSpace(), net, inputs, o);
  Simulator<double, Kokkos::Serial> b(Kokkos::Serial(), net, inputs, o);
  auto za = collect(a), zb = collect(b);
  std::size_t n = 0;
  for (auto z : za) n += z;
  EXPECT_GT(n, 1000u);
  EXPECT_EQ(za, zb);
}
#endif

// The simulator counts refractory steps in 16 bits: a t_ref of more steps of run.dt is refused naming the node
// type's dynamics_params file (a t_ref beyond an int's range was undefined behaviour; tests/fuzz).
TEST(Bmtk450, RefusesARefractoryPeriodOfMoreThan32767Steps) {
  DPOINTNET_REQUIRE_TEST_DATA();
  TempDir d;
  auto cfg = SimulationConfig::load(write_config(d, 1.0, 100.0));
  cfg.dt = 5e-5;  // t_ref 1.5 ms .. 3 ms: 30000 .. 60000 steps
  try {
    build_network(cfg);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(".json"), std::string::npos) << m;
    EXPECT_NE(m.find("field 't_ref'"), std::string::npos) << m;
    EXPECT_NE(m.find("more than 32767 steps"), std::string::npos) << m;
  }
}
