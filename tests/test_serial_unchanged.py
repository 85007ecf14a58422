#!/usr/bin/python3
"""With no run.distribution, training behaves and writes exactly as before the sample-parallel layer existed
(issue 4): the same config is run now and was run with commit 50d2dbf (the last commit before the
distribution layer; files in tests/data/serial_reference/, written by `--write-reference` with that build).
Compared bitwise: a 3-update --gradient-check file, the final checkpoint of a 3-update training run, and the
metrics log (every column but the timings).

  test_serial_unchanged.py --bin build/dpointnet [--write-reference]
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

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "data", "serial_reference")


def run(cmd):
    print("  $ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode != 0:
        print(r.stderr[-3000:])
        raise SystemExit(f"command failed ({r.returncode})")


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out


def metrics(path):
    return [{k: v for k, v in r.items() if k not in ("samples_per_s", "seconds")} for r in csv.DictReader(open(path))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--write-reference", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_serial_ref_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        run([a.bin, "generate", "--out", net, "--neurons", "60", "--seed", "4"])
        c = json.load(open(os.path.join(net, "config.simulation.json")))
        c["network"] = os.path.join(net, c["network"])
        c["run"].update({"tstop": 40.0, "batch_size": 4, "seed": 12})
        c["output"] = {"output_dir": os.path.join(tmp, "out")}
        c["train"] = {"steps": 3, "checkpoint_interval": 10,
                      "trainable": {"recurrent": True, "lgn": True, "bkg": True},
                      "losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 5.0},
                                 {"type": "VoltageRegularization", "cost": 0.1},
                                 {"type": "WeightRegularization", "cost": 0.1}],
                      "optimizer": {"lr": 0.01, "clip_global_norm": 5.0}}
        cfg = os.path.join(tmp, "train.json")
        json.dump(c, open(cfg, "w"), indent=1)
        run([a.bin, "train", cfg, "--gradient-check", os.path.join(tmp, "gradcheck.h5"), "--gradient-check-updates", "3"])
        run([a.bin, "train", cfg, "--no-progress"])
        got = {"gradcheck.h5": os.path.join(tmp, "gradcheck.h5"),
               "step_3.h5": os.path.join(tmp, "out", "checkpoints", "step_3.h5"),
               "metrics.csv": os.path.join(tmp, "out", "metrics.csv")}
        if a.write_reference:
            os.makedirs(REF, exist_ok=True)
            for name, path in got.items():
                shutil.copy(path, os.path.join(REF, name))
            print(f"  wrote the reference into {REF}")
            return 0
        if not os.path.exists(os.path.join(REF, "step_3.h5")):
            fails.append(f"reference files missing in {REF}")
        else:
            for name in ("gradcheck.h5", "step_3.h5"):
                A, B = datasets(got[name]), datasets(os.path.join(REF, name))
                missing = sorted(set(B) - set(A))
                added = sorted(set(A) - set(B))
                if missing:
                    fails.append(f"{name}: datasets of the reference missing: {missing}")
                if added and name != "gradcheck.h5":
                    fails.append(f"{name}: new datasets: {added}")
                elif added:
                    print(f"  {name}: datasets added since the reference (debug file, allowed): {added}")
                for k in sorted(set(A) & set(B)):
                    if np.asarray(A[k]).dtype.kind in "SOU":
                        same = A[k] == B[k]
                    else:
                        same = np.array_equal(np.asarray(A[k]), np.asarray(B[k]))
                    if not same:
                        fails.append(f"{name}: {k} differs from the reference")
                print(f"  {name}: {len(A)} datasets compared bitwise")
            if metrics(got["metrics.csv"]) != metrics(os.path.join(REF, "metrics.csv")):
                fails.append("metrics.csv differs from the reference")
            else:
                print("  metrics.csv: identical but for timings")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in fails:
        print("FAIL: " + f)
    print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
