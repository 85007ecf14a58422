// A small generated network with a train section, for the trainer tests.
#pragma once
#include <nlohmann/json.hpp>

#include "dpointnet/config/simulation_config.hpp"
#include "dpointnet/generator/network_generator.hpp"
#include "dpointnet/inputs/input_schedule.hpp"
#include "dpointnet/network/network_builder.hpp"
#include "dpointnet/train/train_config.hpp"
#include "test_support.hpp"

namespace dpointnet::test {

using nlohmann::json;

struct TrainSetup {
  TempDir dir;
  SimulationConfig cfg;
  Network net;
  std::vector<PreparedInput> inputs;
  TrainConfig tc;
  TrainSetup(std::int64_t neurons, double tstop, int batch, const json& train, std::uint32_t seed = 4,
             const json& run_extra = json::object()) {
    GeneratorOptions g;
    g.n_neurons = neurons;
    g.seed = seed;
    g.out_dir = dir.file("net");
    generate_network(g);
    json c = json::parse(std::ifstream(dir.file("net/config.simulation.json")));
    c["network"] = dir.file("net/config.circuit.json");
    c["run"]["tstop"] = tstop;
    c["run"]["batch_size"] = batch;
    c["run"]["seed"] = 3;
    c["run"].update(run_extra);
    c["output"] = {{"output_dir", dir.file("out")}};
    c["train"] = train;
    std::ofstream(dir.file("train.json")) << c.dump(1);
    cfg = SimulationConfig::load(dir.file("train.json"));
    net = build_network(cfg);
    tc = TrainConfig::parse(cfg, net);
    inputs = prepare_inputs(cfg, net, tc.total_steps(cfg));
  }
};

inline json train_section(double lr, int checkpoint_interval, double target) {
  return json{{"steps", 1},
              {"checkpoint_interval", checkpoint_interval},
              {"trainable", {{"recurrent", true}, {"lgn", true}, {"bkg", false}}},
              {"losses",
               {{{"type", "TargetFiringRate"}, {"cost", 1.0}, {"target", target}},
                {{"type", "VoltageRegularization"}, {"cost", 0.1}},
                {{"type", "WeightRegularization"}, {"cost", 0.01}}}},
              {"optimizer", {{"lr", lr}}}};
}

}  // namespace dpointnet::test
