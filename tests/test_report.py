#!/usr/bin/python3
"""The run report (docs/run-report.md), checked from outside the code that writes it.

1. `dpointnet train` (80 neurons, 10 ms warm-up, 5 updates, bkg frozen) leaves run_summary.json, weights.h5,
   spikes_before.h5 and spikes_after.h5 in its output directory.
2. spikes_before.h5 must equal, spike for spike, a `dpointnet simulate` run of the original network (batch 1,
   the same seed, tstop = warm-up + window) and spikes_after.h5 one of the exported trained network (network/):
   another command reading the SONATA files the trainer exported.
3. weights.h5 must hold syn_weight x nsyns of the original edge files (initial_pA) and of the exported ones
   (final_pA), read here with h5py; the frozen surface must be unchanged; the phase times of run_summary.json
   must be the sums of the metrics.csv columns.
4. scripts/report writes one self-contained page (no resource outside it), and headless Chromium (Debian's
   `chromium`) must decode every figure (<body data-figures="6/6"> after load) and render them: the screenshot
   must show the colours of the figures' lines, bars and histograms.
5. With weights.h5 removed the page says so and has 5 figures; without metrics.csv the script exits 1 naming it.
6. run_summary.json of a --stop-after invocation and of its resume (outcome, updates); an invocation that fails
   (injected fault) leaves no report file of the earlier one.

  test_report.py --bin build/dpointnet --report scripts/report
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import matplotlib.image as mpimg
import numpy as np

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"]


def run(cmd, expect=0):
    print("  $ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != expect:
        print(r.stdout[-3000:], r.stderr[-3000:])
        raise SystemExit(f"FAIL: exit {r.returncode}, expected {expect}: {' '.join(cmd)}")
    return r


def spikes(path):
    with h5py.File(path, "r") as f:
        return {p: (f["spikes"][p]["timestamps"][()], f["spikes"][p]["node_ids"][()]) for p in f["spikes"]}


def edge_weights(path):
    """syn_weight x nsyns of every edge of the file's populations, in file order (h5py, not dpointnet)."""
    with h5py.File(path, "r") as f:
        out = []
        for pop in f["edges"]:
            g = f["edges"][pop]["0"]
            w = g["syn_weight"][()].astype(float)
            out.append(w * (g["nsyns"][()] if "nsyns" in g else 1.0))
        return np.concatenate(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--report", required=True)
    a = ap.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("FAIL: chromium is not installed (scripts/setup installs Debian's chromium): the report "
                         "cannot be checked as a person would see it")
    tmp = tempfile.mkdtemp(prefix="dpointnet_report_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        run([a.bin, "generate", "--out", net, "--neurons", "80", "--seed", "4"])
        cfg = json.load(open(os.path.join(net, "config.simulation.json")))
        cfg["network"] = os.path.join(net, cfg["network"])
        cfg["run"].update({"tstop": 40.0, "batch_size": 2, "seed": 5})
        cfg["output"] = {"output_dir": os.path.join(tmp, "out")}
        cfg["train"] = {"steps": 5, "warmup_ms": 10.0, "checkpoint_interval": 20,
                        "trainable": {"recurrent": True, "lgn": True, "bkg": False},
                        "losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 4.0},
                                   {"type": "VoltageRegularization", "cost": 0.1}],
                        "optimizer": {"lr": 0.02}}
        json.dump(cfg, open(os.path.join(tmp, "train.json"), "w"), indent=1)
        run([a.bin, "train", os.path.join(tmp, "train.json"), "--no-progress"])
        out = os.path.join(tmp, "out")
        summary = json.load(open(os.path.join(out, "run_summary.json")))

        # 2. rasters against the simulate command on the original and the exported network
        res = json.load(open(os.path.join(out, "train_config.resolved.json")))
        for which in ("before", "after"):
            c = json.loads(json.dumps(res))
            for k in ("train", "_config_path", "network", "manifest"):
                c.pop(k, None)
            c["run"].update({"batch_size": 1, "tstop": 50.0})
            c["output"] = {"output_dir": os.path.join(tmp, "sim_" + which), "spikes_file": "spikes.h5"}
            if which == "after":
                for e in c["networks"]["edges"]:
                    e["edges_file"] = os.path.join(out, "network", os.path.basename(e["edges_file"]))
            p = os.path.join(tmp, f"sim_{which}.json")
            json.dump(c, open(p, "w"), indent=1)
            run([a.bin, "simulate", p, "--no-progress"])
            mine, ref = spikes(os.path.join(out, f"spikes_{which}.h5")), spikes(os.path.join(tmp, f"sim_{which}",
                                                                                              "spikes.h5"))
            same = sorted(mine) == sorted(ref) and all(
                np.array_equal(mine[q][0], ref[q][0]) and np.array_equal(mine[q][1], ref[q][1]) for q in ref)
            n = sum(len(t) for t, _ in ref.values())
            print(f"  spikes_{which}.h5 vs dpointnet simulate: {'identical' if same else 'DIFFERENT'} ({n} spikes)")
            if not same or n == 0:
                fails.append(f"spikes_{which}.h5 differs from the simulate run (or has no spikes)")
        nb = sum(len(t) for t, _ in spikes(os.path.join(out, "spikes_before.h5")).values())
        na = sum(len(t) for t, _ in spikes(os.path.join(out, "spikes_after.h5")).values())
        if na == nb:
            fails.append(f"{nb} spikes before and after training: the raster comparison would be vacuous")

        # 3. weights.h5 against the edge files; phase sums against metrics.csv
        with h5py.File(os.path.join(out, "weights.h5"), "r") as f:
            for surf, base in (("recurrent", "v1_v1"), ("lgn", "lgn_v1"), ("bkg", "bkg_v1")):
                w0 = edge_weights(os.path.join(net, "network", base + "_edges.h5"))
                w1 = edge_weights(os.path.join(out, "network", base + "_edges.h5"))
                g = f[surf]
                ok0 = np.allclose(g["initial_pA"][()], w0, rtol=1e-6, atol=0)
                ok1 = np.allclose(g["final_pA"][()], w1, rtol=1e-6, atol=0)
                moved = not np.array_equal(w0, w1)
                trainable = bool(np.asarray(g.attrs["trainable"]).ravel()[0])
                print(f"  weights.h5 /{surf}: initial {'=' if ok0 else '!='} original, final {'=' if ok1 else '!='}"
                      f" exported, {'changed' if moved else 'unchanged'} (trainable {trainable})")
                if not (ok0 and ok1) or moved != trainable:
                    fails.append(f"weights.h5 /{surf} disagrees with the edge files")
        with open(os.path.join(out, "metrics.csv")) as fh:
            rows = list(csv.DictReader(fh))
        for col, key in (("forward_s", "forward"), ("backward_s", "backward"), ("recompute_s", "recompute")):
            s = sum(float(r[col]) for r in rows)
            if not np.isclose(s, summary["phase_s"][key], rtol=2e-3, atol=1e-4):
                fails.append(f"run_summary phase_s.{key} {summary['phase_s'][key]} != sum of {col} {s}")
        if summary["outcome"] != "completed" or summary["end_update"] != 5 or summary["warmup_steps"] != 10:
            fails.append(f"run_summary: {summary['outcome']}, end_update {summary['end_update']}")

        # 4. the page, in a browser
        r = run([sys.executable, a.report, out])
        page = os.path.join(out, "report.html")
        if page not in r.stdout:
            fails.append("scripts/report does not print where the page is")
        text = open(page).read()
        external = re.findall(r'(?:src|href)="(?!data:)[^"]*"', text) + re.findall(r"<link|url\(", text)
        if external:
            fails.append(f"the page is not self-contained: {external[:3]}")

        def rendered(path):
            dom = run([chromium] + CHROMIUM_FLAGS + ["--virtual-time-budget=10000", "--dump-dom",
                                                     "file://" + path]).stdout
            m = re.search(r'data-figures="(\d+)/(\d+)"', dom)
            return (int(m.group(1)), int(m.group(2))) if m else None

        got = rendered(page)
        print(f"  chromium: {got} figures decoded")
        if got != (6, 6):
            fails.append(f"chromium decoded {got} figures, expected (6, 6)")
        shot = os.path.join(tmp, "shot.png")
        run([chromium] + CHROMIUM_FLAGS + ["--window-size=1200,6500", f"--screenshot={shot}", "file://" + page])
        img = (mpimg.imread(shot)[..., :3] * 255).round().astype(int)
        colours = {"tab:blue": (31, 119, 180), "tab:orange": (255, 127, 14), "tab:purple": (148, 103, 189),
                   "tab:green": (44, 160, 44)}
        for name, rgb in colours.items():
            n = int(np.sum(np.all(np.abs(img - np.array(rgb)) <= 8, axis=-1)))
            print(f"  screenshot: {n} pixels of {name}")
            if n < 500:
                fails.append(f"the screenshot shows {n} pixels of {name}: a figure did not render")

        # 6. the summary of a stopped and of a resumed invocation; a failing one leaves no earlier report files
        cfg2 = json.loads(json.dumps(cfg))
        cfg2["output"] = {"output_dir": os.path.join(tmp, "out2")}
        cfg2["train"]["steps"] = 4
        cfg2["train"]["save_checkpoint_every"] = 2
        p2 = os.path.join(tmp, "train2.json")
        json.dump(cfg2, open(p2, "w"), indent=1)
        out2 = os.path.join(tmp, "out2")
        summary2 = lambda: json.load(open(os.path.join(out2, "run_summary.json")))  # noqa: E731
        run([a.bin, "train", p2, "--no-progress", "--stop-after", "2"])
        s2 = summary2()
        if (s2["outcome"], s2["start_update"], s2["end_update"]) != ("stopped after 2 updates (--stop-after)", 0, 2):
            fails.append(f"--stop-after 2: summary {s2['outcome']!r} {s2['start_update']}..{s2['end_update']}")
        ck = os.path.join(out2, "checkpoints", "step_2.h5")
        run([a.bin, "train", p2, "--no-progress", "--resume", ck])
        s2 = summary2()
        if (s2["outcome"], s2["start_update"], s2["end_update"]) != ("completed", 2, 4):
            fails.append(f"resume: summary {s2['outcome']!r} {s2['start_update']}..{s2['end_update']}")
        env = dict(os.environ, DPOINTNET_FAULT_RANK="0", DPOINTNET_FAULT_STEP="3")
        r = subprocess.run([a.bin, "train", p2, "--no-progress", "--resume", ck], capture_output=True, text=True,
                           env=env)
        left = [f for f in ("run_summary.json", "weights.h5", "spikes_before.h5", "spikes_after.h5")
                if os.path.exists(os.path.join(out2, f))]
        print(f"  stop/resume summaries checked; a failing resume (exit {r.returncode}) left {left or 'no'} report files")
        if r.returncode == 0 or left:
            fails.append(f"a failing invocation (exit {r.returncode}) left the earlier report files {left}")

        # 5. missing inputs
        os.remove(os.path.join(out, "weights.h5"))
        r = run([sys.executable, a.report, out])
        if "weights.h5" not in r.stderr or "weights.h5 missing" not in open(page).read():
            fails.append("a missing weights.h5 is not named on stderr and on the page")
        got = rendered(page)
        if got != (5, 5):
            fails.append(f"without weights.h5 chromium decoded {got} figures, expected (5, 5)")
        os.remove(os.path.join(out, "metrics.csv"))
        r = run([sys.executable, a.report, out], expect=1)
        if "metrics.csv" not in r.stderr:
            fails.append("a missing metrics.csv is not named")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if fails:
        print("FAIL:\n  " + "\n  ".join(fails))
        return 1
    print("PASS: report inputs agree with the simulate command and the edge files; every figure renders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
