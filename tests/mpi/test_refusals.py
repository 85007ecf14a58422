#!/usr/bin/python3
"""Launcher/config refusals of sample-parallel training (docs/multi-gpu.md, "Scope and refusals"), each as real
processes: exit code non-zero (2 for bad input), a message naming the setting, and no output directory.

  test_refusals.py --bin build/dpointnet --mpi-bin build/dpointnet-mpi [--case NAME]
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_common import make_network, mpirun, parse_binaries, run, train_config  # noqa: E402

# name: (launcher ranks (0 = serial driver), batch, distribution, global_batch, extra run keys, words expected)
CASES = {
    "mpi_driver_without_mode": (2, 4, None, None, {}, ["distribution", "mode", "dpointnet-mpi"]),
    "mpi_driver_with_mirrored": (2, 4, {"mode": "mirrored", "devices": ["cpu"]}, None, {}, ["mode", "mpi"]),
    "serial_driver_with_mpi_mode": (0, 4, {"mode": "mpi"}, None, {}, ["mode", "mpirun"]),
    "single_rank_when_more_requested": (1, 4, {"mode": "mpi", "replicas": 2}, None, {}, ["replicas", "1 rank"]),
    "global_batch_mismatch_mpi": (2, 4, {"mode": "mpi"}, 6, {}, ["global_batch_size", "accumulate", "4 x 1 x 2"]),
    "global_batch_mismatch_mirrored": (0, 4, {"mode": "mirrored", "devices": ["cpu", "cpu"]}, 16, {},
                                       ["global_batch_size"]),
    "float64_refused": (2, 4, {"mode": "mpi"}, None, {"precision": "float64"}, ["precision", "float32", "bfloat16", "float16"]),
    "mirrored_without_devices": (0, 4, {"mode": "mirrored"}, None, {}, ["devices"]),
    "mirrored_second_device_on_host": (0, 4, {"mode": "mirrored", "devices": ["cpu", "1"]}, None, {},
                                       ["devices", "host"]),
    "unknown_mode": (0, 4, {"mode": "horovod"}, None, {}, ["mode", "horovod"]),
    "unknown_distribution_key": (0, 4, {"mode": "mirrored", "devices": ["cpu"], "ranks": 2}, None, {}, ["ranks"]),
    "simulate_under_mpi": (2, 4, {"mode": "mpi"}, None, {}, ["simulate", "inference"]),
    "simulate_with_distribution": (0, 4, {"mode": "mirrored", "devices": ["cpu"]}, None, {}, ["distribution", "simulate"]),
}


def one(a, tmp, name):
    ranks, batch, dist, gb, extra, words = CASES[name]
    out = os.path.join(tmp, name + "_out")
    cfg = train_config(os.path.join(tmp, name + ".json"), os.path.join(tmp, "net"), out, batch, 2, dist, gb)
    if extra:
        c = json.load(open(cfg))
        c["run"].update(extra)
        json.dump(c, open(cfg, "w"))
    verb = "simulate" if name.startswith("simulate") else "train"
    if ranks == 0:
        r = run([a.bin, verb, cfg], check=False)
    else:
        r = mpirun(ranks, [a.mpi_bin, verb, cfg], check=False, timeout=120)
    text = r.stdout + r.stderr
    errs = [l for l in text.splitlines() if "error" in l]
    ok = r.returncode != 0 and all(w in text for w in words) and not os.path.exists(out)
    print(f"  {'ok  ' if ok else 'FAIL'} {name}: exit {r.returncode}; {errs[-1] if errs else text[-300:]}")
    if not ok and os.path.exists(out):
        print(f"       output directory was created: {out}")
    return ok


def main():
    ap = parse_binaries()
    ap.add_argument("--case", default="all")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_mpi_refuse_")
    try:
        make_network(a.bin, os.path.join(tmp, "net"), neurons=30)
        names = list(CASES) if a.case == "all" else [a.case]
        res = [one(a, tmp, n) for n in names]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{sum(res)} passed, {len(res) - sum(res)} failed")
    return 0 if all(res) else 1


if __name__ == "__main__":
    sys.exit(main())
