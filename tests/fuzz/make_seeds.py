#!/usr/bin/python3
"""Writes the seed corpus of the fuzz harnesses (tests/fuzz/corpus/<harness>/seed-*), derived from the vendored
BMTK example (tests/data/bmtk) and the bundled training configs (input/). Run from anywhere:
/usr/bin/python3 tests/fuzz/make_seeds.py. Regression cases (corpus/<harness>/regress-*) are kept as they are.
The HDF5 seeds are encoded in h5_builder's format (tests/fuzz/h5_builder.hpp); the tables below must match the
harnesses' tables (fuzz_sonata_network.cpp, fuzz_spike_file.cpp)."""
import glob
import json
import os
import struct

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BMTK = os.path.join(ROOT, "tests", "data", "bmtk")
NET = os.path.join(BMTK, "point_450glifs", "network")
CELLS = os.path.join(BMTK, "point_components", "cell_models")


def write(harness, name, data):
    for h in [harness] + (["spike_stamp"] if harness == "spike_file" else []):  # same input format
        d = os.path.join(HERE, "corpus", h)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "seed-" + name), "wb") as f:
            f.write(data.encode() if isinstance(data, str) else bytes(data))


def read(path):
    with open(path) as f:
        return f.read()


def files(top, **children):
    return top + "".join("\n=== %s\n%s" % (k, v) for k, v in children.items())


# ---------------------------------------------------------------- config and train_config
def config_seeds():
    sim = os.path.join(BMTK, "point_450glifs")
    write("config", "bmtk450", files(read(os.path.join(sim, "config.simulation.json")),
                                     **{"config.circuit.json": read(os.path.join(sim, "config.circuit.json"))}))
    write("config", "manifest", files(json.dumps({
        "manifest": {"$BASE": "${configdir}", "$NET": "$BASE", "$OUT": "$BASE/results", "$DT": 0.5},
        "network": "$NET/circuit.json",
        "run": {"dt": "$DT", "duration": 100.0, "tstop": 5.0},
        "output": {"output_dir": "$OUT", "spikes_file": "s.h5", "log_file": "/abs/log.txt"},
        "inputs": {"a": {"input_type": "spikes", "input_file": "in/spk.h5", "node_set": "lgn"}}}),
        **{"circuit.json": json.dumps({
            "manifest": {"$D": "."}, "components": {"point_neuron_models_dir": "$D/cells"},
            "networks": {"nodes": [{"nodes_file": "n.h5", "node_types_file": "$D/t.csv"}], "edges": []},
            "run": {"dt": 0.25}})}))
    circuit = json.dumps({"networks": {
        "nodes": [{"nodes_file": "v1_nodes.h5", "node_types_file": "v1_node_types.csv"}],
        "edges": [{"edges_file": "v1_v1_edges.h5", "edge_types_file": "v1_v1_edge_types.csv", "enabled": True}]}})
    write("config", "inputs_reports", files(json.dumps({
        "network": "circuit.json",
        "run": {"dt": 0.1, "tstop": 50.0, "seed": 4294967295, "batch_size": 3, "precision": "float64",
                "overwrite_output_dir": True},
        "inputs": {
            "spk": {"input_type": "spikes", "module": "h5", "input_file": "s.h5", "node_set": "lgn"},
            "r": {"input_type": "rates", "node_set": "bkg", "rates": [1.0, 2.5]},
            "p": {"input_type": "poisson", "node_set": "bkg2", "rate": 100},
            "c": {"input_type": "current_clamp", "node_set": "v1", "amp": [10.0, -5.0], "delay": [1, 20],
                  "duration": [5, 5]},
            "off": {"input_type": "rates", "node_set": "x", "enabled": False}},
        "reports": {"v": {"module": "membrane_report", "variable_name": "V_m", "cells": "v1", "file_name": "v.h5"}},
        "output": {"output_dir": "out", "spikes_file": "spikes.h5", "log_file": "log.txt"}}),
        **{"circuit.json": circuit}))
    for mode, extra in (("mirrored", {"devices": ["cpu", "cpu"], "replicas": 2}), ("mpi", {"replicas": 2})):
        run = {"dt": 1.0, "tstop": 20.0, "batch_size": 2, "global_batch_size": 4,
               "distribution": dict({"mode": mode}, **extra)}
        write("config", "distribution_" + mode, files(json.dumps({"network": "circuit.json", "run": run}),
                                                        **{"circuit.json": circuit}))
    write("config", "simulation_child", files(json.dumps({
        "manifest": {"$X": "${configdir}/x"}, "simulation": "sim.json", "network": "circuit.json"}),
        **{"sim.json": json.dumps({"run": {"dt": 1, "tstop": 3}, "output": {"output_dir": "$X"}}),
           "circuit.json": circuit}))


def train_seeds():
    circuit = json.dumps({"networks": {"nodes": [{"nodes_file": "n.h5", "node_types_file": "t.csv"}]}})
    for path in sorted(glob.glob(os.path.join(ROOT, "input", "v1_example_train*.json"))):
        cfg = json.loads(read(path))
        cfg["network"] = "circuit.json"
        extra = {"circuit.json": circuit}
        for loss in cfg["train"]["losses"]:
            if "target_file" in loss:
                loss["target_file"] = "rates.csv"
                extra["rates.csv"] = "node_type_id rate_hz\n100 1.5\n100 2.5\n101 3.0\n"
        name = os.path.basename(path)[len("v1_example_"):-len(".json")]
        write("train_config", name, files(json.dumps(cfg, indent=1), **extra))
    base = {"network": "circuit.json", "run": {"dt": 0.5, "tstop": 10.0, "batch_size": 2},
            "inputs": {"LGN": {"input_type": "rates", "node_set": "lgn", "rate": 10.0},
                       "BKG": {"input_type": "poisson", "node_set": "bkg", "rate": 250.0}}}
    cfg = dict(base, train={
        "epochs": 2, "steps_per_epoch": 3, "accumulate": 2, "warmup_ms": 2.5, "log_every": 2,
        "surrogate": {"type": "gauss", "dampening_factor": 0.3, "sigma": 0.5},
        "voltage_gradient_dampening": 0.5, "recurrent_dampening_factor": 0.2,
        "trainable": {"recurrent": False, "lgn": True},
        "losses": [{"type": "TargetFiringRate", "cost": 1, "target_by_node_type": {"100": 2.0, "101": 5.0},
                    "unit": "spikes_per_step"},
                   {"type": "TargetFiringRate", "cost": 0.5, "target": 3.0},
                   {"type": "VoltageRegularization", "cost": 0.1, "mode": "threshold"}],
        "optimizer": {"type": "adam", "lr": 0.001, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-8,
                      "clip_global_norm": 1.0}})
    write("train_config", "epochs_surrogate", files(json.dumps(cfg, indent=1), **{"circuit.json": circuit}))
    cfg = dict(base, train={
        "steps": 2, "conditions": [{"LGN": {"input_type": "rates", "node_set": "lgn", "rate": 20.0}},
                                   {"LGN": {"input_type": "poisson", "node_set": "lgn", "rate": 5.0}}],
        "losses": [{"type": "WeightRegularization", "cost": 0.01}]})
    cfg["run"] = dict(cfg["run"], global_batch_size=8, distribution={"mode": "mirrored", "devices": ["cpu", "cpu"]})
    write("train_config", "conditions_mirrored", files(json.dumps(cfg, indent=1), **{"circuit.json": circuit}))


# ---------------------------------------------------------------- csv_table and dynamics_params
def csv_seeds():
    for path in sorted(glob.glob(os.path.join(NET, "*.csv"))):
        write("csv_table", os.path.basename(path), read(path))
    write("csv_table", "quoted_nulls",
          'node_type_id model_type "model name" dynamics_params\n100 point_neuron "a b" NONE\n\n101\tvirtual "" x\r\n')


def dynamics_seeds():
    for path in sorted(glob.glob(os.path.join(CELLS, "*.json"))):
        text = read(path)
        model = 1 if "tau_m" in text or "IntFire" in path or "iaf" in path else 0
        write("dynamics_params", os.path.basename(path), bytes([model, 0]) + text.encode())
    # nest:glif_psc_double_alpha (model byte 2): a GLIF3 type with tau_syn as tau_syn_fast
    p = json.loads(read(os.path.join(CELLS, "593618144_glif_lif_asc_psc.json")))
    tau = p.pop("tau_syn")
    p.update(tau_syn_fast=tau, tau_syn_slow=[3 * t for t in tau], amp_slow=[0.3] * len(tau))
    write("dynamics_params", "593618144_glif_psc_double_alpha.json", bytes([2, 0]) + json.dumps(p, indent=1).encode())


# ---------------------------------------------------------------- sonata_network and spike_file (h5_builder)
NET_FILES = ["v1_nodes.h5", "lgn_nodes.h5", "v1_v1_edges.h5", "lgn_v1_edges.h5"]
NET_PARENTS = ["/nodes", "/nodes/v1", "/nodes/lgn", "/nodes/v1/0", "/nodes/v1/0/dynamics_params", "/edges",
               "/edges/v1_to_v1", "/edges/lgn_to_v1", "/edges/v1_to_v1/0", "/edges/lgn_to_v1/0", "/",
               "/edges/v1_to_v1/1"]
NET_LEAVES = ["node_type_id", "node_id", "node_group_id", "node_group_index", "source_node_id", "target_node_id",
              "edge_type_id", "edge_group_id", "edge_group_index", "syn_weight", "delay", "nsyns", "n_syns_", "x",
              "0"]
NET_ATTRS = ["node_population", "units", "magic"]
NET_STRINGS = ["v1", "lgn", "", "bkg", "v1 "]
SPK_PARENTS = ["/spikes", "/spikes/lgn", "/spikes/v1", "/", "/spikes/lgn/0", "/spikes/x y"]
SPK_LEAVES = ["timestamps", "node_ids", "gids", "lgn", "units"]
SPK_ATTRS = ["units", "sorting", "magic", "version"]
SPK_STRINGS = ["ms", "s", "lgn", "", "sec", "seconds", "milliseconds", "by_time", "none", "hours", "v1"]
# h5_builder dtypes for numpy dtypes
DTYPES = {np.dtype("int8"): 0, np.dtype("uint8"): 1, np.dtype("int16"): 2, np.dtype("uint16"): 3,
          np.dtype("int32"): 4, np.dtype("uint32"): 5, np.dtype("int64"): 6, np.dtype("uint64"): 7,
          np.dtype("float32"): 8, np.dtype("float64"): 9}


def op_dataset(f, parent, leaf, values, dtype=None, layout=0):
    values = np.asarray(values)
    k = DTYPES[np.dtype(dtype or values.dtype)]
    out = [1, f, parent, leaf, k, 1, len(values), layout] + ([3] if layout >= 2 else [])
    ints = np.issubdtype(values.dtype, np.integer)
    if ints and len(values) and (values == np.arange(len(values)) + values[0]).all() and -128 <= values[0] < 128:
        return out + [1, int(values[0]) & 255, 1]  # iota
    if ints and all(-128 <= v < 128 for v in values):
        return out + [2] + [int(v) & 255 for v in values]  # one int8 per element
    return out + [0] + list(np.asarray(values, dtype=np.dtype(dtype or values.dtype).newbyteorder("<")).tobytes())


def op_attr_str(f, parent, leaf, name, value, strings):
    return [2, f, parent, leaf, name, 0, strings.index(value)]


def network_seeds():
    P, L = NET_PARENTS.index, NET_LEAVES.index
    nodes = {"v1": (0, 12), "lgn": (1, 4)}  # file, number of nodes kept
    node_ops = []
    for pop, (f, n) in nodes.items():
        with h5py.File(os.path.join(NET, pop + "_nodes.h5"), "r") as h:
            g = h["nodes/" + pop]
            for ds in ("node_type_id", "node_id", "node_group_id", "node_group_index"):
                node_ops += op_dataset(f, P("/nodes/" + pop), L(ds), g[ds][:n])
    ops = list(node_ops)
    for name, f, src_n in (("v1_to_v1", 2, 12), ("lgn_to_v1", 3, 4)):
        src_pop = name.split("_to_")[0]
        with h5py.File(os.path.join(NET, "%s_v1_edges.h5" % src_pop), "r") as h:
            g = h["edges/" + name]
            s, t = g["source_node_id"][:], g["target_node_id"][:]
            keep = np.nonzero((s < src_n) & (t < 12))[0][:10]
            base = P("/edges/" + name)
            for ds in ("source_node_id", "target_node_id", "edge_type_id", "edge_group_id"):
                ops += op_dataset(f, base, L(ds), g[ds][keep])
            ops += op_dataset(f, base, L("edge_group_index"), np.arange(len(keep), dtype=np.uint32))
            ops += op_dataset(f, P("/edges/%s/0" % name), L("nsyns"), g["0/nsyns"][keep], layout=3)
            ops += op_attr_str(f, base, L("source_node_id"), 0, src_pop, NET_STRINGS)
            ops += op_attr_str(f, base, L("target_node_id"), 0, "v1", NET_STRINGS)
    write("sonata_network", "bmtk450_subset", bytes([0] + ops))  # dt 0.1 ms
    write("sonata_network", "nodes_only", bytes([1] + node_ops))


def spike_seeds():
    P, L = SPK_PARENTS.index, SPK_LEAVES.index
    with h5py.File(os.path.join(BMTK, "point_450glifs", "inputs", "lgn_spikes.h5"), "r") as h:
        ids = h["spikes/lgn/node_ids"][:]
        ts = h["spikes/lgn/timestamps"][:]
    keep = np.nonzero(ids < 3)[0][:12]
    ops = op_dataset(0, P("/spikes/lgn"), L("node_ids"), ids[keep])
    ops += op_dataset(0, P("/spikes/lgn"), L("timestamps"), ts[keep] / 100.0, layout=3)
    ops += op_attr_str(0, P("/spikes/lgn"), L("timestamps"), SPK_ATTRS.index("units"), "ms", SPK_STRINGS)
    ops += [2, 0, P("/spikes/lgn"), len(SPK_LEAVES), SPK_ATTRS.index("sorting"), 0, SPK_STRINGS.index("none")]
    write("spike_file", "bmtk450_lgn", bytes([0, 1] + ops))
    legacy = op_dataset(0, P("/spikes"), L("gids"), np.array([0, 0, 1, 1, 1], dtype=np.uint64))
    legacy += op_dataset(0, P("/spikes"), L("timestamps"), np.array([0.001, 0.0025, 0.0005, 0.002, 0.0020000001]))
    legacy += op_attr_str(0, P("/spikes"), L("timestamps"), SPK_ATTRS.index("units"), "s", SPK_STRINGS)
    write("spike_file", "legacy_seconds", bytes([2, 0] + legacy))
    two = op_dataset(0, P("/spikes/lgn"), L("node_ids"), np.array([2, 0], dtype=np.int64))
    two += op_dataset(0, P("/spikes/lgn"), L("timestamps"), np.array([3.0, 0.5]))
    two += op_dataset(0, P("/spikes/v1"), L("node_ids"), np.array([1], dtype=np.int64))
    two += op_dataset(0, P("/spikes/v1"), L("timestamps"), np.array([1.0], dtype=np.float32))
    write("spike_file", "two_populations", bytes([1, 2] + two))


if __name__ == "__main__":
    config_seeds()
    train_seeds()
    csv_seeds()
    dynamics_seeds()
    network_seeds()
    spike_seeds()
