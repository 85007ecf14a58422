#!/usr/bin/python3
"""Training with an LGN input (docs/visual-input.md), with real processes on a generated visual network:

1. the gradients and weights of two updates do not depend on the time-checkpoint interval C (1, 7, 40): bitwise;
2. stimulus_samples.csv names every global sample of every update once (update u holds samples (u-1) B .. u B - 1),
   and a sample's random direction and phase do not depend on the batch it is in (batch 2 x 3 updates against
   batch 3 x 2 updates);
3. resume identity: 4 updates straight against 2, a stop, and a new process resuming for 2 more: the final
   checkpoints are identical and so are the stimulus_samples.csv files.

  test_lgn_training.py --bin build/dpointnet
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr[-4000:])
        raise SystemExit(f"command failed ({r.returncode}): {' '.join(cmd)}")


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def config(path, net, out, batch, steps, C=10):
    c = json.load(open(os.path.join(net, "config.simulation.json")))
    c["network"] = os.path.join(net, c["network"])
    c["run"].update({"tstop": 40.0, "batch_size": batch, "seed": 12})
    c["inputs"]["LGN"] = {"input_type": "lgn", "node_set": "lgn",
                          "stimulus": {"type": "drifting_grating", "direction": "random", "phase": "random",
                                       "temporal_frequency": 8.0}}
    c["output"] = {"output_dir": out, "overwrite_output_dir": True}
    c["train"] = {"steps": steps, "checkpoint_interval": C, "save_checkpoint_every": 1,
                  "trainable": {"recurrent": True, "lgn": True, "bkg": True},
                  "losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 5.0}], "optimizer": {"lr": 0.01}}
    json.dump(c, open(path, "w"), indent=1)
    return path


def rows(path):
    return list(csv.DictReader(open(path)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_lgn_train_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        run([a.bin, "generate", "--out", net, "--neurons", "60", "--seed", "4", "--visual", "--lgn-tiles-x", "2",
             "--lgn-tiles-y", "1"])
        # 1. C-independence
        grads = {}
        for C in (1, 7, 40):
            cfg = config(os.path.join(tmp, f"c{C}.json"), net, os.path.join(tmp, f"oc{C}"), 3, 2, C)
            run([a.bin, "train", cfg, "--gradient-check", os.path.join(tmp, f"g{C}.h5"), "--gradient-check-updates",
                 "2"])
            grads[C] = datasets(os.path.join(tmp, f"g{C}.h5"))
        if not np.linalg.norm(grads[1]["grad/lgn"]) > 0:
            fails.append("the LGN surface's gradient is zero: the LGN input does not reach the network")
        for C in (7, 40):
            diff = [k for k in grads[1] if not np.array_equal(grads[1][k], grads[C][k])]
            print(f"  {'ok  ' if not diff else 'FAIL'} C = {C} against C = 1: {len(grads[1])} datasets, "
                  f"differing {diff}")
            if diff:
                fails.append(f"C = {C}: {diff} differ from C = 1")
        # 2. sample indices per update, and the same stimulus per global sample in any batch
        got = {}
        for batch, steps in ((2, 3), (3, 2)):
            out = os.path.join(tmp, f"ob{batch}")
            run([a.bin, "train", config(os.path.join(tmp, f"b{batch}.json"), net, out, batch, steps), "--no-progress"])
            r = rows(os.path.join(out, "stimulus_samples.csv"))
            want = [(u, s) for u in range(1, steps + 1) for s in range((u - 1) * batch, u * batch)]
            have = [(int(x["update"]), int(x["sample"])) for x in r]
            if have != want:
                fails.append(f"batch {batch}: (update, sample) rows {have}, expected {want}")
            got[batch] = {int(x["sample"]): (float(x["direction"]), float(x["phase"])) for x in r}
        same = got[2] == got[3] and len(got[2]) == 6
        spread = len({d for d, _ in got[2].values()}) == 6 and all(0 <= d < 360 for d, _ in got[2].values())
        print(f"  {'ok  ' if same and spread else 'FAIL'} samples 0..5: directions {[round(v[0], 1) for v in got[2].values()]} "
              f"in batch 2 and batch 3")
        if not (same and spread):
            fails.append(f"per-sample stimuli differ between batches or are not spread: {got}")
        # 3. resume identity
        straight = os.path.join(tmp, "straight")
        resumed = os.path.join(tmp, "resumed")
        run([a.bin, "train", config(os.path.join(tmp, "s.json"), net, straight, 2, 4), "--no-progress"])
        cfg = config(os.path.join(tmp, "r.json"), net, resumed, 2, 4)
        run([a.bin, "train", cfg, "--no-progress", "--stop-after", "2"])
        run([a.bin, "train", cfg, "--no-progress", "--resume", os.path.join(resumed, "checkpoints", "step_2.h5")])
        x = datasets(os.path.join(straight, "checkpoints", "step_4.h5"))
        y = datasets(os.path.join(resumed, "checkpoints", "step_4.h5"))
        diff = [k for k in x if k not in y or not np.array_equal(x[k], y[k])]
        csv_same = open(os.path.join(straight, "stimulus_samples.csv")).read() == \
            open(os.path.join(resumed, "stimulus_samples.csv")).read()
        print(f"  {'ok  ' if not diff and csv_same else 'FAIL'} resume after 2 of 4 updates: checkpoint datasets "
              f"differing {diff}, stimulus_samples.csv identical: {csv_same}")
        if diff or not csv_same:
            fails.append(f"resume: differing {diff}, stimulus_samples.csv identical {csv_same}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if fails:
        print("FAIL:\n  " + "\n  ".join(fails))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
