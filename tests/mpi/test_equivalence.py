#!/usr/bin/python3
"""Sample-parallel equivalence (and which process writes the outputs), with real processes:
serial batch 8 vs `mpirun -n 1` local 8 vs `mpirun -n 2` local 4 vs `mpirun -n 4` local 2 (oversubscribed) vs
mirrored 2 x 4.
Compares the terminal state (v' and spike counts) of every sample of the first global batch, the losses of
three consecutive updates, every surface's gradient of the first, and the weights after each update: worst relative L2 must stay below 1e-6. Checks the sign constraints on the final weights,
that the logged sample ranges of every rank/replica are disjoint and cover each global batch, and that only
the chief wrote output.

  test_equivalence.py --bin build/dpointnet --mpi-bin build/dpointnet-mpi [--ranks 1,2,4] [--[no-]mirrored]
                      [--precision float32|bfloat16]

--ranks: the mpirun rank counts to compare with the serial run (each dividing the global batch 8; '' for none);
default 1,2,4. --mirrored: also compare mirrored 2 x 4 (the serial driver); default: only when --ranks is not
given. tests/CMakeLists.txt registers mpi.equivalence.np1/np2/np4 (--ranks N --no-mirrored) and
train.mirrored_equivalence (--ranks '' --mirrored, which needs no --mpi-bin), and both in bfloat16 (the adjoint ring
of every replica rounded per sample: a split of the batch changes no sample's values, so the bound is float32's).
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_common import (make_network, mpirun, parse_binaries, rank_list, read_h5, rel_l2, report, run,  # noqa: E402
                        train_config)

GLOBAL_BATCH = 8


def main():
    ap = parse_binaries(mpi_required=False)
    ap.add_argument("--ranks", type=rank_list, default=None,
                    help="comma-separated mpirun rank counts (default 1,2,4; '' for none)")
    ap.add_argument("--mirrored", action=argparse.BooleanOptionalAction, default=None,
                    help="also compare mirrored 2 x 4 (default: only when --ranks is not given)")
    ap.add_argument("--precision", default="float32", help="run.precision of every run (float32 or bfloat16)")
    a = ap.parse_args()
    mirrored = a.mirrored if a.mirrored is not None else a.ranks is None
    ranks = a.ranks if a.ranks is not None else [1, 2, 4]
    if any(GLOBAL_BATCH % n for n in ranks):
        ap.error(f"every rank count must divide the global batch {GLOBAL_BATCH}: {ranks}")
    if ranks and not a.mpi_bin:
        ap.error("--mpi-bin is required when --ranks names a rank count")
    if not ranks and not mirrored:
        ap.error("nothing to compare: no rank counts and --no-mirrored")
    others = [f"mpirun -n {n} local {GLOBAL_BATCH // n}" for n in ranks] + (["mirrored 2 x 4"] if mirrored else [])
    print(f"  comparing serial batch {GLOBAL_BATCH} with: " + ", ".join(others), flush=True)
    tmp = tempfile.mkdtemp(prefix="dpointnet_mpi_eq_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        make_network(a.bin, net)
        K = "3"
        runs = {}
        cfg = train_config(os.path.join(tmp, "serial.json"), net, os.path.join(tmp, "o_serial"), GLOBAL_BATCH,
                           precision=a.precision)
        run([a.bin, "train", cfg, "--gradient-check", os.path.join(tmp, "serial.h5"), "--gradient-check-updates", K])
        runs["serial batch 8"] = os.path.join(tmp, "serial.h5")
        logs = {}
        for n in ranks:
            b = GLOBAL_BATCH // n
            cfg = train_config(os.path.join(tmp, f"mpi{n}.json"), net, os.path.join(tmp, f"o_mpi{n}"), b,
                               distribution={"mode": "mpi"}, global_batch=GLOBAL_BATCH, precision=a.precision)
            r = mpirun(n, [a.mpi_bin, "train", cfg, "--gradient-check", os.path.join(tmp, f"mpi{n}.h5"),
                           "--gradient-check-updates", K])
            runs[f"mpirun -n {n} local {b}"] = os.path.join(tmp, f"mpi{n}.h5")
            logs[n] = r.stderr
        if mirrored:
            cfg = train_config(os.path.join(tmp, "mirrored.json"), net, os.path.join(tmp, "o_mirrored"), 4,
                               distribution={"mode": "mirrored", "devices": ["cpu", "cpu"]}, precision=a.precision)
            r = run([a.bin, "train", cfg, "--gradient-check", os.path.join(tmp, "mirrored.h5"),
                     "--gradient-check-updates", K])
            runs["mirrored 2 x 4"] = os.path.join(tmp, "mirrored.h5")
            logs["mirrored"] = r.stderr
        ref = read_h5(runs["serial batch 8"])
        worst = 0.0
        for name, path in runs.items():
            if name == "serial batch 8":
                continue
            got = read_h5(path)
            for key in sorted(ref):
                if key not in got:
                    fails.append(f"{name}: {key} missing")
                    continue
                e = rel_l2(got[key], ref[key])
                worst = max(worst, e)
                status = "ok  " if e < 1e-6 else "FAIL"
                if e >= 1e-6:
                    fails.append(f"{name}: {key} relative L2 {e:.3e}")
                print(f"  {status} {name}: {key} relative L2 {e:.3e}")
            if np.any(got["check/sign_violations_all_replicas"] != 0):
                fails.append(f"{name}: sign constraint violated on some replica")
            # sign constraints on the final weights
            for key in got:
                if key.startswith("weights/"):
                    w0, wk = got[key][0], got[key][-1]
                    bad = np.sum((w0 >= 0) & (wk < 0)) + np.sum((w0 < 0) & (wk > 0))
                    if bad:
                        fails.append(f"{name}: {key}: {bad} weights changed sign")
        print(f"  worst relative L2 over all runs and quantities: {worst:.3e} (limit 1e-6)")
        # ownership: every global batch of 8 is covered exactly once
        for n, text in logs.items():
            ranges = re.findall(r"rank (\d+) replica (\d+): update (\d+) samples \[(\d+), (\d+)\)", text)
            per_update = {}
            for rank, rep, upd, lo, hi in ranges:
                per_update.setdefault(int(upd), []).append((int(lo), int(hi), int(rank), int(rep)))
            if sorted(per_update) != [1, 2, 3]:
                fails.append(f"{n}: ownership log incomplete: {sorted(per_update)}")
            for upd, rs in per_update.items():
                covered = sorted(x for lo, hi, _, _ in rs for x in range(lo, hi))
                if covered != list(range((upd - 1) * GLOBAL_BATCH, upd * GLOBAL_BATCH)):
                    fails.append(f"{n}: update {upd} samples {covered}")
            print(f"  ownership {n}: " + "; ".join(f"update {u}: " + ", ".join(f"r{r}.{p}=[{lo},{hi})" for lo, hi, r, p in sorted(rs, key=lambda x: x[0])) for u, rs in sorted(per_update.items())))
        # only the chief wrote (gradient-check writes just the chief's file; no output directories at all)
        for d in os.listdir(tmp):
            if d.startswith("o_"):
                fails.append(f"an output directory was created: {d}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
