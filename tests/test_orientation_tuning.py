#!/usr/bin/python3
"""scripts/orientation_tuning.py on a synthetic simulate output: 2 trials of 8 directions, cells whose spike
counts follow 1 + cos 2(theta - theta0) (OSI 0.5, DSI 0), 1 + cos(theta - theta0) (OSI 0, DSI 0.5), a flat
curve, a single direction (OSI = DSI = 1), a cell below 0.5 Hz (no OSI) and one whose only tuned spikes fall in
the skipped first 100 ms; an LGN drive whose F1 follows 1 + cos 2(theta - theta0); the pop_name -> cell type
rule on the generator's 17 pop_names. With --bin: input/v1_visual_grating.json (the example's grating run,
whose inputs must equal those of a generated visual network's config) for 300 ms on a 200-cell visual network,
and the script on its output.

  test_orientation_tuning.py [--bin build/dpointnet]
"""
import argparse
import csv
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "scripts", "orientation_tuning.py")
DIRS = np.arange(8) * 45.0
TRIALS = 2
TSTOP = 2350.0  # the window 100-2350 ms: 4.5 cycles of the 2 Hz grating, of which the LGN drive uses 4
WINDOW_S = (TSTOP - 100.0) / 1000.0
POP_NAMES = ["e23Cux2", "e4Scnn1a", "i5Pvalb", "i1Htr3a", "i23Sst", "e6Ntsr1"]
TOL = 2e-3  # counts of 400 x f(theta) per trial, rounded to integers


def curve(kind, theta_deg):
    th = np.deg2rad(theta_deg)
    return {"osi": 1 + np.cos(2 * (th - np.deg2rad(30.0))), "dsi": 1 + np.cos(th - np.deg2rad(100.0)),
            "flat": np.ones_like(th), "single": (np.abs(theta_deg - 135.0) < 1e-9).astype(float),
            "silent": np.zeros_like(th), "late": np.ones_like(th)}[kind]


KINDS = ["osi", "dsi", "flat", "silent", "single", "late"]
EXPECTED = {"osi": (0.5, 0.0), "dsi": (0.0, 0.5), "flat": (0.0, 0.0), "single": (1.0, 1.0), "late": (0.0, 0.0)}


def load_module():
    spec = importlib.util.spec_from_file_location("orientation_tuning", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_network(net):
    os.makedirs(net)
    n = len(KINDS)
    with h5py.File(os.path.join(net, "v1_nodes.h5"), "w") as f:
        g = f.create_group("nodes/v1")
        g["node_id"] = np.arange(n, dtype=np.uint64)
        g["node_type_id"] = np.arange(n, dtype=np.uint64) + 110
        g["node_group_id"] = np.zeros(n, dtype=np.uint32)
        g["node_group_index"] = np.arange(n, dtype=np.uint64)
        g["0/tuning_angle"] = np.linspace(0.0, 300.0, n)
    with open(os.path.join(net, "v1_node_types.csv"), "w") as f:
        f.write("node_type_id model_type pop_name ei\n")
        for k, p in enumerate(POP_NAMES):
            f.write(f"{110 + k} point_process {p} {p[0]}\n")
    with h5py.File(os.path.join(net, "lgn_nodes.h5"), "w") as f:
        g = f.create_group("nodes/lgn")
        g["node_id"] = np.arange(2, dtype=np.uint64)
        g["node_type_id"] = np.array([201, 212], dtype=np.uint64)
        g["node_group_id"] = np.zeros(2, dtype=np.uint32)
        g["node_group_index"] = np.arange(2, dtype=np.uint64)
        g["0/x"], g["0/y"] = np.array([60.0, 61.0]), np.array([40.0, 41.0])
    with open(os.path.join(net, "lgn_node_types.csv"), "w") as f:
        f.write("node_type_id model_type pop_name\n201 virtual sON_TF2\n212 virtual sONsOFF_001\n")
    with h5py.File(os.path.join(net, "lgn_v1_edges.h5"), "w") as f:
        g = f.create_group("edges/lgn_to_v1")
        g["source_node_id"] = np.zeros(n, dtype=np.uint64)  # unit 0 drives every cell: syn_weight 2 x nsyns 3
        g["target_node_id"] = np.arange(n, dtype=np.uint64)
        g["source_node_id"].attrs["node_population"] = "lgn"
        g["target_node_id"].attrs["node_population"] = "v1"
        g["edge_type_id"] = np.full(n, 200, dtype=np.uint32)
        g["edge_group_id"] = np.zeros(n, dtype=np.uint32)
        g["edge_group_index"] = np.arange(n, dtype=np.uint64)
        g["0/nsyns"] = np.full(n, 3, dtype=np.uint32)
    with open(os.path.join(net, "lgn_v1_edge_types.csv"), "w") as f:
        f.write("edge_type_id target_query source_query model_template syn_weight delay\n"
                "200 * * static_synapse 2.0 1.7\n")


def write_resolved(out, net):
    nodes = [{"nodes_file": os.path.join(net, f"{p}_nodes.h5"),
              "node_types_file": os.path.join(net, f"{p}_node_types.csv")} for p in ("v1", "lgn")]
    edges = [{"edges_file": os.path.join(net, "lgn_v1_edges.h5"),
              "edge_types_file": os.path.join(net, "lgn_v1_edge_types.csv")}]
    with open(os.path.join(out, "simulation_config.resolved.json"), "w") as f:
        json.dump({"run": {"tstop": TSTOP, "dt": 1.0, "batch_size": 8 * TRIALS},
                   "networks": {"nodes": nodes, "edges": edges}}, f)


def write_stimulus(out):
    with open(os.path.join(out, "stimulus_samples.csv"), "w") as f:
        f.write("input,sample,type,direction,temporal_frequency,spatial_frequency,contrast,phase\n")
        for b in range(8 * TRIALS):
            f.write(f"LGN,{b},drifting_grating,{DIRS[b % 8]:g},2,0.04,0.8,0\n")


def write_spikes(out):
    """Per trial and direction, round(400 f(theta)) spikes evenly in [100, TSTOP) ms; cell 'silent' one spike at
    45 degrees in the first trial (0.22 Hz), cell 'late' 300 more spikes in [0, 100) ms at 0 degrees."""
    for b in range(8 * TRIALS):
        ts, ids = [], []
        for n, kind in enumerate(KINDS):
            k = int(round(400 * curve(kind, DIRS[b % 8])))
            ts.append(np.linspace(100.0, TSTOP, k, endpoint=False))
            ids.append(np.full(k, n))
            if kind == "silent" and b == 1:
                ts.append(np.array([500.0]))
                ids.append(np.array([n]))
            if kind == "late" and b % 8 == 0:
                ts.append(np.linspace(0.0, 100.0, 300, endpoint=False))
                ids.append(np.full(300, n))
        t, i = np.concatenate(ts), np.concatenate(ids)
        order = np.argsort(t, kind="stable")
        with h5py.File(os.path.join(out, f"spikes_sample{b}.h5"), "w") as f:
            g = f.create_group("spikes/v1")
            g["timestamps"], g["node_ids"] = t[order], i[order].astype(np.uint64)


def write_lgn_rates(out):
    """Unit 0: 10 + 5 (1 + cos 2(theta - 30)) cos(2 pi 2 t); unit 1 constant."""
    t = np.arange(int(TSTOP)) / 1000.0
    rates = np.zeros((8, t.size, 2), dtype=np.float32)
    for b in range(8):
        amp = 5.0 * (1 + np.cos(2 * np.deg2rad(DIRS[b] - 30.0)))
        rates[b, :, 0] = 10.0 + amp * np.cos(2 * np.pi * 2.0 * t)
        rates[b, :, 1] = 7.0
    with h5py.File(os.path.join(out, "lgn_rates.h5"), "w") as f:
        f["rates"] = rates
        f["rates"].attrs["population"] = "lgn"
        f["samples"] = np.arange(8, dtype=np.uint32)
        f["node_ids"] = np.arange(2, dtype=np.uint64)
        f["dt"] = np.array([1.0])


def run(args):
    r = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OMP_NUM_THREADS="1", MPLBACKEND="Agg"))
    return r.returncode, r.stdout + r.stderr


def close(a, b):
    return math.isfinite(a) and abs(a - b) <= TOL


def check_cells(out, fails):
    with open(os.path.join(out, "tuning_cells.csv")) as f:
        rows = {int(r["node_id"]): r for r in csv.DictReader(f)}
    for n, kind in enumerate(KINDS):
        osi, dsi = float(rows[n]["osi"]), float(rows[n]["dsi"])
        if kind == "silent":
            if not (math.isnan(osi) and math.isnan(dsi)):
                fails.append(f"cell below 0.5 Hz got OSI {osi}, DSI {dsi}")
            continue
        want = EXPECTED[kind]
        if not (close(osi, want[0]) and close(dsi, want[1])):
            fails.append(f"cell '{kind}': OSI {osi}, DSI {dsi}, expected {want}")
    silent = float(rows[KINDS.index("silent")]["max_rate"])
    if not math.isclose(silent, 1.0 / (TRIALS * WINDOW_S), rel_tol=1e-5):
        fails.append(f"silent cell: max rate {silent} Hz, expected {1.0 / (TRIALS * WINDOW_S)}")
    rate = float(rows[KINDS.index("flat")]["mean_rate"])
    if not math.isclose(rate, 400.0 / WINDOW_S, rel_tol=1e-5):
        fails.append(f"flat cell: mean rate {rate} Hz, expected {400.0 / WINDOW_S} (400 spikes per window)")
    want_types = ["L2/3 Exc", "L4 Exc", "L5 PV", "L1 Htr3a", "L2/3 SST", "L6 Exc"]
    got = [rows[n]["cell_type"] for n in range(len(KINDS))]
    if got != want_types:
        fails.append(f"cell types {got}, expected {want_types}")


def check_output(out, text, fails):
    lines = text.splitlines()
    drive = next((ln for ln in lines if ln.startswith("LGN drive (")), "")
    if "median F0 60, F1/F0" not in drive or "of F0 0.000, of F1 0.500 (DSI 0.000)" not in drive:
        fails.append(f"LGN drive line: {drive!r} (expected F0 60, OSI of F0 0, of F1 0.5, DSI 0)")
    if not any(ln.startswith("result: excitatory cells median OSI") for ln in lines):
        fails.append(f"no result line in {text!r}")
    for name in ("tuning.png", "lgn_rates.png"):
        path = os.path.join(out, name)
        if not os.path.isfile(path) or os.path.getsize(path) < 5000:
            fails.append(f"{path} missing or implausibly small")


def check_functions(fails):
    mod = load_module()
    rates = np.stack([1 + np.cos(2 * np.deg2rad(DIRS - 77.0)), 1 + np.cos(np.deg2rad(DIRS - 200.0))])
    osi, dsi = mod.selectivity(rates, DIRS)
    if not np.allclose([osi[0], dsi[0], osi[1], dsi[1]], [0.5, 0.0, 0.0, 0.5], atol=1e-12):
        fails.append(f"selectivity of exact curves: OSI {osi}, DSI {dsi}")
    names = ["i1Htr3a", "e23Cux2", "i23Pvalb", "i23Sst", "i23Vip", "e4Scnn1a", "i4Pvalb", "i4Sst", "i4Vip", "e5Rbp4",
             "i5Pvalb", "i5Sst", "i5Vip", "e6Ntsr1", "i6Pvalb", "i6Sst", "i6Vip"]
    got = [mod.cell_type(p) for p in names]
    if got != mod.CELL_TYPES:
        fails.append(f"cell types of the generator's pop_names: {got}")


def check_example(binary, tmp, fails):
    net = os.path.join(tmp, "v1_visual")
    r = subprocess.run([binary, "generate", "--out", net, "--neurons", "200", "--visual", "--lgn-tiles-x", "2",
                        "--lgn-tiles-y", "2", "--seed", "1"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return fails.append(f"generate: exit {r.returncode}: {r.stderr}")
    with open(os.path.join(REPO, "input", "v1_visual_grating.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(net, "config.simulation.json")) as f:
        generated = json.load(f)
    if cfg["inputs"] != generated["inputs"]:
        fails.append(f"input/v1_visual_grating.json inputs {cfg['inputs']} differ from the generator's "
                     f"{generated['inputs']}")
    cfg["run"]["tstop"] = 300.0
    path = os.path.join(tmp, "v1_visual_grating.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    r = subprocess.run([binary, "simulate", path], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return fails.append(f"simulate: exit {r.returncode}: {r.stderr}")
    out = os.path.join(net, "output")
    rc, text = run([out, "--quiet"])
    if rc != 0 or len(text.splitlines()) != 1 or not text.startswith("result: excitatory cells median OSI"):
        fails.append(f"example: exit {rc}, output {text!r}")
    for name in ("tuning.png", "lgn_rates.png"):
        if not os.path.isfile(os.path.join(out, name)):
            fails.append(f"example: {name} not written")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", help="dpointnet binary: also run the example's grating config")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_tuning_")
    fails = []
    try:
        if a.bin:
            check_example(a.bin, tmp, fails)
        out, net = os.path.join(tmp, "output"), os.path.join(tmp, "network")
        os.makedirs(out)
        write_network(net)
        write_resolved(out, net)
        write_stimulus(out)
        write_spikes(out)
        write_lgn_rates(out)
        rc, text = run([out])
        if rc != 0:
            fails.append(f"exit {rc}: {text}")
        else:
            check_cells(out, fails)
            check_output(out, text, fails)
        check_functions(fails)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for e in fails:
        print("FAIL: " + e)
    print("passed" if not fails else f"{len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
