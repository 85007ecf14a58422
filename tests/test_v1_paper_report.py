#!/usr/bin/python3
"""scripts/v1_paper_report.py on hand-made simulate outputs whose rates, OSI/DSI and Fano factors are known:
15 excitatory cells (10 L2/3 Exc, 5 L4 Exc) firing every 10 ms (5 of them also 5 ms later) under gratings and
every 5 ms under a grey screen, so that the 15 cells are every Fano pool; 8 L4 PV cells of tuning angles 0 ..
315 with counts 20 (1 + cos 2 (theta - phi)) (OSI 0.5, DSI 0, crowd OSI 0.5, DSI 0); 8 L1 Htr3a cells firing only
at their tuning angle (all four 1); a Neuropixels table of hand-picked rows with the loss's filters. Also the
targets of the real table against V1-PAPER 3.5, and errors. With --bin: the example's configs
(input/v1_paper) on a 200-cell generated visual network: one training update, simulations, the report.

  test_v1_paper_report.py [--bin build/dpointnet [--train-config train.json]]
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
SCRIPT = os.path.join(REPO, "scripts", "v1_paper_report.py")
T = 500
DIRS = np.arange(8) * 45.0
POPS = ["e23Cux2"] * 10 + ["e4Scnn1a"] * 5 + ["i4Pvalb"] * 8 + ["i1Htr3a"] * 8
ANGLES = np.concatenate([np.zeros(15), DIRS, DIRS])
NP_ROWS = [  # ecephys_unit_id DSI OSI preferred_angle max_mean_rate(Hz) Ave_Rate(Hz) cell_type Spont_Rate(Hz)
    (1, 0.1, 0.2, 0, 10, 5, "L4 PV", 3), (2, 0.3, 0.4, 0, 10, 7, "L4 PV", 5),
    (3, 0.9, 0.9, 0, 0.3, 2, "L4 PV", 1),  # max_mean_rate < 0.5: no OSI/DSI
    (4, 0.8, 0.8, 0, 10, 0, "L4 PV", 0),  # Ave_Rate 0: no OSI/DSI
    (5, "nan", "nan", 0, 10, 4, "L4 PV", "nan"),
    (6, 0.5, 0.6, 0, 10, 1, "L2/3 Exc", 1), (7, 0.1, 0.2, 0, 10, 3, "L4 Exc", 2),
    (8, 0.2, 0.3, 0, 10, 2, "L1 Htr3a", 2), (9, 0.2, 0.3, 0, 10, 10, "L1 Htr3a", 2),
    (10, 0.2, 0.3, 0, 10, 20, "L1 Htr3a", 2)]
failures = []


def check(name, got, want, tol=1e-5):  # the CSVs hold 6 significant digits
    ok = (math.isnan(want) and math.isnan(got)) or abs(got - want) <= tol * max(1.0, abs(want))
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {got:.6g} (expected {want:.6g})")
    if not ok:
        failures.append(name)


def write_network(net):
    os.makedirs(net)
    n = len(POPS)
    names = list(dict.fromkeys(POPS))
    with h5py.File(os.path.join(net, "v1_nodes.h5"), "w") as f:
        g = f.create_group("nodes/v1")
        g["node_id"] = np.arange(n, dtype=np.uint64)
        g["node_type_id"] = np.array([110 + names.index(p) for p in POPS], dtype=np.uint64)
        g["node_group_id"] = np.zeros(n, dtype=np.uint32)
        g["node_group_index"] = np.arange(n, dtype=np.uint64)
        g["0/tuning_angle"] = ANGLES
    with open(os.path.join(net, "v1_node_types.csv"), "w") as f:
        f.write("node_type_id model_type pop_name\n" + "".join(f"{110 + k} point_process {p}\n"
                                                                for k, p in enumerate(names)))


def exc_steps(cell, spont):
    period = 5 if spont else 10
    s = [k for k in range(T) if k % period == 0 or (not spont and cell < 5 and k % 10 == 5)]
    return np.array(s)


def write_run(out, net, spont):
    os.makedirs(out)
    nodes = [{"nodes_file": os.path.join(net, "v1_nodes.h5"),
              "node_types_file": os.path.join(net, "v1_node_types.csv")}]
    B = 4 if spont else 8
    with open(os.path.join(out, "simulation_config.resolved.json"), "w") as f:
        json.dump({"run": {"tstop": float(T), "dt": 1.0, "batch_size": B}, "networks": {"nodes": nodes}}, f)
    with open(os.path.join(out, "stimulus_samples.csv"), "w") as f:
        f.write("input,sample,type,direction,temporal_frequency,spatial_frequency,contrast,phase\n")
        for b in range(B):
            f.write(f"LGN,{b},grey_screen,,,,,\n" if spont else f"LGN,{b},drifting_grating,{DIRS[b]:g},2,0.04,0.8,0\n")
    for b in range(B):
        steps, ids = [], []
        for n in range(len(POPS)):
            if n < 15:
                s = exc_steps(n, spont)
            elif spont:
                s = np.zeros(0, dtype=int)
            elif n < 23:  # 20 (1 + cos 2 (theta - phi)) spikes in steps 100 .. 499
                s = np.linspace(100, T, int(round(20 * (1 + math.cos(2 * math.radians(DIRS[b] - ANGLES[n]))))),
                                endpoint=False).astype(int)
            else:
                s = np.arange(100, T, 10) if DIRS[b] == ANGLES[n] else np.zeros(0, dtype=int)
            steps.append(s)
            ids.append(np.full(s.size, n))
        s, i = np.concatenate(steps), np.concatenate(ids)
        order = np.argsort(s, kind="stable")
        with h5py.File(os.path.join(out, f"spikes_sample{b}.h5"), "w") as f:
            g = f.create_group("spikes/v1")
            g["timestamps"] = (s[order] + 1).astype(float)  # step k ends at (k + 1) dt
            g["node_ids"] = i[order].astype(np.int64)


def write_table(path, rows):
    with open(path, "w") as f:
        f.write("ecephys_unit_id DSI OSI preferred_angle max_mean_rate(Hz) Ave_Rate(Hz) cell_type Spont_Rate(Hz)\n")
        for r in rows:
            f.write(" ".join(f'"{v}"' if k == 6 else str(v) for k, v in enumerate(r)) + "\n")


def expected_fano(y, d):
    """Fano factor of the pooled counts y over steps 200 .. 499 in bins of d steps, from bin sums."""
    w = y[200:T]
    x = np.array([w[m * d:(m + 1) * d].sum() for m in range(len(w) // d)])
    return x.var() / x.mean()


def run(args, expect_ok=True):
    p = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True)
    if (p.returncode == 0) != expect_ok:
        print(p.stdout, p.stderr)
        failures.append(" ".join(args))
    return p


def synthetic(tmp):
    net = os.path.join(tmp, "net")
    write_network(net)
    for label in ("a", "b"):
        write_run(os.path.join(tmp, label, "evoked"), net, False)
        write_run(os.path.join(tmp, label, "spont"), net, True)
    table = os.path.join(tmp, "np.csv")
    write_table(table, NP_ROWS)
    out = os.path.join(tmp, "report")
    p = run(["--run", "a", f"{tmp}/a/evoked", f"{tmp}/a/spont", "--run", "b", f"{tmp}/b/evoked", f"{tmp}/b/spont",
             "--neuropixels", table, "--out-dir", out])
    # evoked medians 150, 100, 50, 12.5 Hz against quartiles [3, 3], [3, 3], [2, 5], [6, 15]: only L1 inside;
    # spontaneous 200, 200, 0, 0 against [2, 2], [2, 2], [0.75, 3.5], [2, 2]: none
    for line in ("evoked: cell types whose median rate lies within the Neuropixels quartiles: a 1 of 4, b 1 of 4",
                 "spontaneous: cell types whose median rate lies within the Neuropixels quartiles: a 0 of 4"):
        if line not in p.stdout:
            failures.append(f"line '{line}'")
    with open(os.path.join(out, "v1_paper_types.csv")) as f:
        types = {(r["run"], r["cell_type"]): r for r in csv.DictReader(f)}
    with open(os.path.join(out, "v1_paper_fano.csv")) as f:
        fano = list(csv.DictReader(f))
    for name in ("v1_paper_report.md", "v1_paper_report.png"):
        if not os.path.getsize(os.path.join(out, name)):
            failures.append(name)
    g = lambda run_, t, k: float(types[(run_, t)][k])  # noqa: E731
    # rates: L2/3 Exc five cells at 200 Hz, five at 100 Hz; L4 Exc at 100 Hz; grey screen all 200 Hz
    for q, want in ((25, 100.0), (50, 150.0), (75, 200.0)):
        check(f"L2/3 Exc evoked q{q}", g("b", "L2/3 Exc", f"evoked_model_q{q}"), want)
    check("L4 Exc evoked median", g("a", "L4 Exc", "evoked_model_q50"), 100.0)
    check("L2/3 Exc spont median", g("a", "L2/3 Exc", "spontaneous_model_q50"), 200.0)
    # L4 PV: per cell 20 spikes per sample on average over the 8 directions, in 400 ms = 50 Hz; silent on grey
    check("L4 PV evoked median", g("a", "L4 PV", "evoked_model_q50"), 50.0)
    check("L4 PV spont median", g("a", "L4 PV", "spontaneous_model_q50"), 0.0)
    check("L1 evoked median", g("a", "L1 Htr3a", "evoked_model_q50"), 100.0 / 8)
    # the table: Ave_Rate 5, 7, 2, 0, 4; Spont_Rate 3, 5, 1, 0 (NaN left out)
    for key, want in (("evoked_np_q25", 2.0), ("evoked_np_q50", 4.0), ("evoked_np_q75", 5.0),
                      ("spontaneous_np_q25", 0.75), ("spontaneous_np_q50", 2.0), ("spontaneous_np_q75", 3.5)):
        check(f"L4 PV {key}", g("a", "L4 PV", key), want)
    check("L4 PV target OSI (rows 1, 2)", g("a", "L4 PV", "target_osi"), 0.3)
    check("L4 PV target DSI (rows 1, 2)", g("a", "L4 PV", "target_dsi"), 0.2)
    check("L2/3 Exc target OSI", g("a", "L2/3 Exc", "target_osi"), 0.6)
    for t, osi, dsi in (("L4 PV", 0.5, 0.0), ("L1 Htr3a", 1.0, 1.0), ("L2/3 Exc", 0.0, 0.0)):
        for k, want in (("osi", osi), ("dsi", dsi), ("crowd_osi", osi), ("crowd_dsi", dsi)):
            check(f"{t} {k}", g("a", t, k), want)
    check("L1 cells with OSI", g("a", "L1 Htr3a", "osi_cells"), 8.0)
    # Fano: the pool is all 15 excitatory cells (sizes clip(., 15, 15)), every pool the same summed train
    ev = np.zeros(T)
    sp = np.zeros(T)
    for n in range(15):
        ev[exc_steps(n, False)] += 1
        sp[exc_steps(n, True)] += 1
    bins = [1, 1, 2, 3, 4, 6, 9, 13, 18, 26, 38, 55, 78, 113]  # V1-PAPER 3.3, T_w = 300 ms
    for r in fano:
        d = bins[int(r["bin"])]
        check(f"bin {r['bin']} size", float(r["bin_ms"]), float(d))
        check(f"{r['run']} {r['condition']} Fano {d} ms", float(r["fano"]),
              expected_fano(ev if r["condition"] == "evoked" else sp, d))
    by = {(r["run"], r["condition"], int(r["bin"])): float(r["fano"]) for r in fano}
    check("spont Fano 1 ms = 15 x 0.8", by[("a", "spontaneous", 0)], 12.0)
    check("spont Fano 2 ms = 15 x 0.6", by[("a", "spontaneous", 2)], 9.0)
    check("spont Fano 6 ms target", float(fano[5 + 14]["target"]), 0.97277)
    # errors: a cell type missing from the table, a missing spike file
    write_table(os.path.join(tmp, "np_short.csv"), [r for r in NP_ROWS if r[6] != "L1 Htr3a"])
    p = run(["--run", "a", f"{tmp}/a/evoked", f"{tmp}/a/spont", "--neuropixels", os.path.join(tmp, "np_short.csv"),
             "--out-dir", out], expect_ok=False)
    if "cell type 'L1 Htr3a'" not in p.stderr:
        failures.append("missing type message: " + p.stderr)
    os.remove(os.path.join(tmp, "b", "spont", "spikes_sample3.h5"))
    p = run(["--run", "b", f"{tmp}/b/evoked", f"{tmp}/b/spont", "--neuropixels", table, "--out-dir", out], False)
    if "spikes_sample3.h5 not found" not in p.stderr:
        failures.append("missing spike file message: " + p.stderr)


def real_table():
    spec = importlib.util.spec_from_file_location("v1_paper_report", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    t = mod.read_table(os.path.join(REPO, "input", "neuropixels", "OSI_DSI_neuropixels_v4.csv"))
    for ty, n, osi, dsi in (("L2/3 Exc", 163, 0.3609, 0.2448), ("L5 Exc", 466, 0.2924, 0.1234),
                            ("L6 SST", 1, 0.0358, 0.0573), ("L4 PV", 98, 0.1453, 0.0951)):  # V1-PAPER 3.5
        check(f"Neuropixels {ty} rows kept", float(len(t[ty]["osi"])), float(n))
        check(f"Neuropixels {ty} OSI*", float(t[ty]["osi"].mean()), osi, 1.5e-4)
        check(f"Neuropixels {ty} DSI*", float(t[ty]["dsi"].mean()), dsi, 1.5e-4)


def with_binary(tmp, binary, train_config):
    """The example's configs on a small generated network: they must stay valid."""
    ex = os.path.join(tmp, "v1_paper")
    shutil.copytree(os.path.join(REPO, "input", "v1_paper"), ex, ignore=shutil.ignore_patterns("net", "output"))
    os.makedirs(os.path.join(tmp, "neuropixels"))
    shutil.copy(os.path.join(REPO, "input", "neuropixels", "OSI_DSI_neuropixels_v4.csv"),
                os.path.join(tmp, "neuropixels"))
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    cmds = [[binary, "generate", "--out", os.path.join(ex, "net"), "--neurons", "200", "--visual", "--lgn-tiles-x", "3",
             "--lgn-tiles-y", "2", "--seed", "1"],
            [binary, "train", os.path.join(ex, train_config), "--stop-after", "1", "--no-progress"]]
    cmds += [[binary, "simulate", os.path.join(ex, f"simulate_{c}.json"), "--no-progress"]
             for c in ("evoked", "spontaneous")]
    for c in cmds:
        p = subprocess.run(c, capture_output=True, text=True, env=env)
        if p.returncode:
            print(p.stdout[-3000:], p.stderr[-3000:])
            failures.append(" ".join(c[1:3]))
            return
    o = os.path.join(ex, "output", "untrained")
    p = run(["--run", "untrained", f"{o}/evoked", f"{o}/spontaneous", "--out-dir", os.path.join(ex, "report")])
    if "| L4 Exc |" not in p.stdout:
        failures.append("report on the generated network")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--train-config", default="train.json", help="with --bin: the config of input/v1_paper to train")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="v1_paper_report_")
    try:
        synthetic(tmp)
        real_table()
        if a.bin:
            with_binary(tmp, a.bin, a.train_config)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
