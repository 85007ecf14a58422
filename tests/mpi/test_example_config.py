#!/usr/bin/python3
"""The bundled example configs (input/v1_example_train.json and input/v1_example_train_mpi.json) differ only by
the run.distribution block, and both run: serially and under `mpirun -n N` (--ranks N, default 2; 2 updates
each, on the example network generated into a temporary directory). input/v1_example_train_accumulate.json
differs from the serial one only by batch_size 2 x train.accumulate 2 (the same 4 samples per update) and its
output directory, and runs too; input/v1_example_train_rate_distribution.json (warm-up 50 ms, RateDistribution
against input/v1_example_observed_rates.csv) runs and writes rates.h5 with the observed distributions;
input/v1_example_train_carry_state.json differs from the serial one only by warmup_ms 50 + carry_state and its
output directory, runs, and its checkpoint holds the carried state of the 4 sample slots.

  test_example_config.py --bin build/dpointnet --mpi-bin build/dpointnet-mpi [--ranks N]

tests/CMakeLists.txt registers mpi.example_config.np1/np2/np4.
"""
import json
import os
import shutil

import h5py
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_common import add_ranks, mpirun, parse_binaries, report, run  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = add_ranks(parse_binaries(), 2)
    a = ap.parse_args()
    serial = json.load(open(os.path.join(REPO, "input", "v1_example_train.json")))
    mpi = json.load(open(os.path.join(REPO, "input", "v1_example_train_mpi.json")))
    fails = []
    stripped = json.loads(json.dumps(mpi))
    stripped["run"].pop("distribution", None)
    if stripped != serial or mpi["run"].get("distribution", {}).get("mode") != "mpi":
        fails.append("the two example configs differ by more than run.distribution")
    acc = json.load(open(os.path.join(REPO, "input", "v1_example_train_accumulate.json")))
    expected = json.loads(json.dumps(serial))
    expected["run"]["batch_size"] = 2
    expected["train"]["accumulate"] = 2
    expected["output"]["output_dir"] = acc["output"]["output_dir"]
    if acc != expected or serial["run"]["batch_size"] != 4:
        fails.append("the accumulation example differs from the serial one by more than batch 2 x accumulate 2")
    carry = json.load(open(os.path.join(REPO, "input", "v1_example_train_carry_state.json")))
    expected = json.loads(json.dumps(serial))
    expected["train"].update({"warmup_ms": 50.0, "carry_state": True})
    expected["output"]["output_dir"] = carry["output"]["output_dir"]
    if carry != expected:
        fails.append("the carried-state example differs from the serial one by more than warmup_ms + carry_state")
    tmp = tempfile.mkdtemp(prefix="dpointnet_example_")
    try:
        run([a.bin, "generate", "--out", os.path.join(tmp, "v1_example"), "--neurons", "300", "--seed", "1", "--gzip"])
        shutil.copy(os.path.join(REPO, "input", "v1_example_observed_rates.csv"), tmp)
        ratedist = json.load(open(os.path.join(REPO, "input", "v1_example_train_rate_distribution.json")))
        for name, cfg in (("serial", serial), ("mpi", mpi), ("accumulate", acc), ("rate_distribution", ratedist),
                          ("carry_state", carry)):
            cfg = json.loads(json.dumps(cfg))
            cfg["output"]["output_dir"] = os.path.join(tmp, "out_" + name)
            path = os.path.join(tmp, name + ".json")  # same directory layout as input/: network path stays relative
            json.dump(cfg, open(path, "w"))
            if name != "mpi":
                run([a.bin, "train", path, "--no-progress", "--stop-after", "2"])
            else:
                mpirun(a.ranks, [a.mpi_bin, "train", path, "--no-progress", "--stop-after", "2"])
            if not os.path.exists(os.path.join(tmp, "out_" + name, "checkpoints", "step_2.h5")):
                fails.append(f"{name}: no checkpoint after 2 updates")
            elif not os.path.exists(os.path.join(tmp, "out_" + name, "rates.h5")):
                fails.append(f"{name}: no rates.h5 after 2 updates")
            else:
                how = f"mpirun -n {a.ranks}" if name == "mpi" else "serial driver"
                with h5py.File(os.path.join(tmp, "out_" + name, "rates.h5"), "r") as f:
                    has_obs = "observed" in f and len(f["observed"]) == 5
                    means = [float(f["rates_hz/first"][()].mean()), float(f["rates_hz/last"][()].mean())]
                # the pooled per-neuron rates average to the metrics' mean rate of the same updates
                with open(os.path.join(tmp, "out_" + name, "metrics.csv")) as f:
                    rows = [ln.strip().split(",") for ln in f if ln.strip()]
                col = rows[0].index("rate_hz")
                for mean, row in zip(means, (rows[1], rows[-1])):
                    if abs(mean - float(row[col])) > 1e-6 * max(1.0, float(row[col])):
                        fails.append(f"{name}: rates.h5 mean {mean} vs metrics rate_hz {row[col]}")
                if name == "carry_state":
                    with h5py.File(os.path.join(tmp, "out_" + name, "checkpoints", "step_2.h5"), "r") as f:
                        slots = f["carried_state/records"].shape[0] if "carried_state/records" in f else 0
                    if slots != 4:
                        fails.append(f"{name}: the checkpoint holds {slots} carried sample slots, not 4")
                if name == "rate_distribution" and not has_obs:
                    fails.append(f"{name}: rates.h5 lacks the 5 observed distributions")
                print(f"  {name} ({how}): 2 updates done, rates.h5 written")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
