// A checkpoint file from a JSON description, or a checkpoint file as JSON: the C++ side of
// tests/test_checkpoint_h5py.py (which writes and reads the same files with h5py).
//   checkpoint_h5py_tool write STATE.json OUT.h5
//   checkpoint_h5py_tool read IN.h5          (JSON on stdout; a refusal: its message on stderr, exit code 2)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "dpointnet/train/checkpoint_file.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/log.hpp"

using dpointnet::CheckpointState;
using dpointnet::InputError;
using dpointnet::read_checkpoint_file;
using dpointnet::SurfaceState;
using dpointnet::write_checkpoint_file;
using nlohmann::json;

int main(int argc, char** argv) {
  dpointnet::log::init("warn");
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "write" && argc == 4) || (mode == "read" && argc == 3))) {
    std::fprintf(stderr, "usage: %s write STATE.json OUT.h5 | read IN.h5\n", argv[0]);
    return 1;
  }
  try {
    if (mode == "write") {
      std::ifstream in(argv[2]);
      const json j = json::parse(in);
      CheckpointState c;
      c.step = j.at("step");
      c.next_sample = j.at("next_sample");
      c.seed = j.at("seed");
      c.config_hash = j.at("config_hash");
      c.network_hash = j.at("network_hash");
      c.precision = j.at("precision");
      c.global_batch = j.at("global_batch");
      c.replicas = j.at("replicas");
      c.batch_size = j.at("batch_size");
      c.optimizer = j.value("optimizer", std::string("adam"));
      c.approach = j.value("approach", std::string("accumulate"));
      c.optimizer_iterations = j.value("optimizer_iterations", std::int64_t(-1));
      for (const auto& s : j.at("surfaces")) {
        SurfaceState t;
        t.name = s.at("name");
        t.trainable = s.at("trainable");
        t.weight = s.at("weight").get<std::vector<double>>();
        t.initial_weight = s.at("initial_weight").get<std::vector<double>>();
        t.weight_pA = s.at("weight_pA").get<std::vector<double>>();
        if (t.trainable) {
          t.adam_m = s.at("adam_m").get<std::vector<double>>();
          t.adam_v = s.at("adam_v").get<std::vector<double>>();
        }
        c.surfaces.push_back(t);
      }
      if (j.contains("carried")) {
        const json& k = j.at("carried");
        c.carried.slots = k.at("slots");
        c.carried.record_size = k.at("record_size");
        c.carried.end_step = k.at("end_step");
        c.carried.records = k.at("records").get<std::vector<double>>();
      }
      write_checkpoint_file(argv[3], c);
      return 0;
    }
    const CheckpointState c = read_checkpoint_file(argv[2]);
    json j = {{"step", c.step},
              {"next_sample", c.next_sample},
              {"seed", c.seed},
              {"config_hash", c.config_hash},
              {"network_hash", c.network_hash},
              {"precision", c.precision},
              {"global_batch", c.global_batch},
              {"replicas", c.replicas},
              {"batch_size", c.batch_size},
              {"optimizer", c.optimizer},
              {"approach", c.approach},
              {"optimizer_iterations", c.optimizer_iterations},
              {"surfaces", json::array()}};
    for (const auto& s : c.surfaces) {
      json t = {{"name", s.name},
                {"trainable", s.trainable},
                {"weight", s.weight},
                {"initial_weight", s.initial_weight},
                {"weight_pA", s.weight_pA}};
      if (s.trainable) t["adam_m"] = s.adam_m, t["adam_v"] = s.adam_v;
      j["surfaces"].push_back(t);
    }
    if (!c.carried.empty())
      j["carried"] = {{"slots", c.carried.slots},
                      {"record_size", c.carried.record_size},
                      {"end_step", c.carried.end_step},
                      {"records", c.carried.records}};
    std::cout << j.dump() << "\n";
    return 0;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 1;
  }
}
