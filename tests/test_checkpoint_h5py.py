#!/usr/bin/env python3
"""Checkpoint files between dpointnet and h5py (docs/training.md "Outputs", docs/reliability.md "Checkpoint
files"). Three checks, each against values this script chooses and h5py reads or writes:

1. A checkpoint written by dpointnet (through tests/checkpoint_h5py_tool.cpp) read with h5py: root attributes,
   every dataset's values and type (int64 counters, float64 weights), weight_pA's units, no Adam state on frozen
   surfaces, /carried_state/records [slots][record], and every dataset's "checksum" attribute = FNV-1a 64 of its
   values' bytes, computed here.
2. A checkpoint written by h5py (with checksums computed here) read by dpointnet: every value comes back.
3. The h5py file with one value changed but its checksum kept: dpointnet refuses it (exit code 2), naming the file,
   the dataset and the checksum.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def fnv1a64(data: bytes) -> str:
    # Fowler/Noll/Vo FNV-1a, 64 bits: offset basis 0xcbf29ce484222325, prime 0x100000001b3
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


assert fnv1a64(b"a") == "af63dc4c8601ec8c" and fnv1a64(b"foobar") == "85944171f73967e8"  # published vectors

STATE = {
    "step": 5, "optimizer": "exp_adam", "approach": "series", "optimizer_iterations": 10,
    "next_sample": 40, "seed": 3141592653, "config_hash": "0123456789abcdef",
    "network_hash": "fedcba9876543210", "precision": "float32", "global_batch": 8, "replicas": 2, "batch_size": 4,
    "surfaces": [
        {"name": "recurrent", "trainable": True, "weight": [0.5, -0.125, 0.0, 1e-300], "initial_weight":
         [0.25, -0.5, -0.0, 2.0], "weight_pA": [12.5, -3.25, 0.0, 7.0], "adam_m": [0.1, -0.2, 0.3, 1 / 3],
         "adam_v": [1e-3, 2e-3, 3e-3, 4e-3]},
        {"name": "lgn", "trainable": False, "weight": [2.0, 3.0], "initial_weight": [2.0, 3.0],
         "weight_pA": [20.0, 30.0]},
    ],
    "carried": {"slots": 2, "record_size": 3, "end_step": 60, "records": [1.0, 2.0, 3.0, -4.0, 0.5, 6.0]},
}


def run_tool(tool, *args, expect_rc=0):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    if p.returncode != expect_rc:
        sys.exit(f"FAIL: {' '.join([tool, *args])}: exit code {p.returncode}, expected {expect_rc}\n"
                 f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def dataset(f, name, dtype, want):
    ds = f[name]
    check(ds.dtype == np.dtype(dtype), f"{name}: dtype {ds.dtype}, expected {dtype}")
    values = ds[()]
    check(np.array_equal(np.asarray(values).reshape(-1), np.asarray(want, dtype=dtype).reshape(-1)),
          f"{name}: {values}, expected {want}")
    check(np.signbit(np.asarray(values)).reshape(-1).tolist() ==
          np.signbit(np.asarray(want, dtype=dtype)).reshape(-1).tolist(), f"{name}: signs differ from {want}")
    checksum = ds.attrs["checksum"]
    checksum = checksum.decode() if isinstance(checksum, bytes) else str(checksum)
    check(checksum == fnv1a64(np.ascontiguousarray(values).tobytes()), f"{name}: checksum {checksum}")


def written_by_dpointnet(tool, tmp):
    src, out = os.path.join(tmp, "state.json"), os.path.join(tmp, "step_5.h5")
    with open(src, "w") as f:
        json.dump(STATE, f)
    run_tool(tool, "write", src, out)
    check(not os.path.exists(out + ".tmp"), "the .tmp file is left behind")
    with h5py.File(out, "r") as f:
        attr = lambda k: f.attrs[k].decode() if isinstance(f.attrs[k], bytes) else f.attrs[k]
        check(attr("format") == "dpointnet-checkpoint", f"format {attr('format')}")
        check(int(np.asarray(attr("format_version")).reshape(-1)[0]) == 2, "format_version")
        for k in ("config_hash", "network_hash", "precision"):
            check(attr(k) == STATE[k], f"{k}: {attr(k)}")
        dataset(f, "step", "int64", [5])
        check(attr("optimizer") == "exp_adam" and attr("approach") == "series",
              f"optimizer {attr('optimizer')}, approach {attr('approach')}")
        dataset(f, "optimizer_iterations", "int64", [10])
        dataset(f, "rng/next_sample", "int64", [40])
        dataset(f, "rng/seed", "int64", [3141592653])
        dataset(f, "schedule/global_batch", "int64", [8])
        dataset(f, "schedule/replicas", "int64", [2])
        dataset(f, "schedule/batch_size", "int64", [4])
        check(sorted(f["surfaces"].keys()) == ["lgn", "recurrent"], f"surfaces {list(f['surfaces'])}")
        for s in STATE["surfaces"]:
            g = f["surfaces"][s["name"]]
            trainable = g.attrs["trainable"]
            trainable = trainable.decode() if isinstance(trainable, bytes) else trainable
            check(trainable == ("true" if s["trainable"] else "false"), f"{s['name']}: trainable {trainable}")
            keys = ["weight", "initial_weight", "weight_pA"] + (["adam_m", "adam_v"] if s["trainable"] else [])
            check(sorted(g.keys()) == sorted(keys), f"{s['name']}: datasets {sorted(g.keys())}")
            for k in keys:
                dataset(f, f"surfaces/{s['name']}/{k}", "float64", s[k])
            units = g["weight_pA"].attrs["units"]
            check((units.decode() if isinstance(units, bytes) else units) == "pA", "weight_pA units")
        k = STATE["carried"]
        check(f["carried_state/records"].shape == (2, 3), f"records shape {f['carried_state/records'].shape}")
        dataset(f, "carried_state/records", "float64", k["records"])
        dataset(f, "carried_state/end_step", "int64", [60])
    print("ok: a checkpoint written by dpointnet reads as documented with h5py")


def write_h5py(path, state, tamper=False):
    def put(f, name, values, dtype):
        arr = np.asarray(values, dtype=dtype)
        ds = f.create_dataset(name, data=arr)
        ds.attrs["checksum"] = fnv1a64(np.ascontiguousarray(arr).tobytes())
        if tamper and name.endswith("/weight") and "recurrent" in name:
            ds[0] = arr.reshape(-1)[0] + 1.0  # the value changes, its checksum does not
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "dpointnet-checkpoint"
        f.attrs["format_version"] = np.array([2], dtype=np.uint32)
        for k in ("config_hash", "network_hash", "precision"):
            f.attrs[k] = state[k]
        put(f, "step", [state["step"]], np.int64)
        put(f, "rng/next_sample", [state["next_sample"]], np.int64)
        put(f, "rng/seed", [state["seed"]], np.int64)
        for k in ("global_batch", "replicas", "batch_size"):
            put(f, f"schedule/{k}", [state[k]], np.int64)
        for s in state["surfaces"]:
            g = f.create_group(f"surfaces/{s['name']}")
            g.attrs["trainable"] = "true" if s["trainable"] else "false"
            for k in ["weight", "initial_weight", "weight_pA"] + (["adam_m", "adam_v"] if s["trainable"] else []):
                put(f, f"surfaces/{s['name']}/{k}", s[k], np.float64)
        k = state["carried"]
        put(f, "carried_state/records", np.reshape(k["records"], (k["slots"], k["record_size"])), np.float64)
        put(f, "carried_state/end_step", [k["end_step"]], np.int64)


def written_by_h5py(tool, tmp):
    state = json.loads(json.dumps(STATE))
    state.update(step=9, next_sample=72, seed=11, precision="float64")
    state["surfaces"][0]["weight"] = [0.75, -1.5, 0.0, 5e-324]
    state["carried"] = {"slots": 3, "record_size": 2, "end_step": 90, "records": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}
    path = os.path.join(tmp, "by_h5py.h5")
    write_h5py(path, state)
    got = json.loads(run_tool(tool, "read", path).stdout)
    got["surfaces"].sort(key=lambda s: s["name"] != "recurrent")
    for k in ("step", "next_sample", "seed", "config_hash", "network_hash", "precision", "global_batch",
              "replicas", "batch_size", "carried"):
        check(got[k] == state[k], f"{k}: dpointnet read {got[k]}, h5py wrote {state[k]}")
    # a file without the optimizer's fields is an Adam run's accumulating its conditions, one step per update
    for k, want in (("optimizer", "adam"), ("approach", "accumulate"), ("optimizer_iterations", 9)):
        check(got[k] == want, f"{k}: dpointnet read {got[k]} from a file without it, expected {want}")
    check(got["surfaces"] == state["surfaces"], f"surfaces: dpointnet read {got['surfaces']}")
    print("ok: a checkpoint written by h5py reads back in dpointnet")

    bad = os.path.join(tmp, "tampered.h5")
    write_h5py(bad, state, tamper=True)
    err = run_tool(tool, "read", bad, expect_rc=2).stderr
    for part in (bad, "/surfaces/recurrent/weight", "field 'checksum'", "corrupt"):
        check(part in err, f"the refusal does not name {part!r}: {err}")
    print("ok: a changed value under its old checksum is refused naming the file and the dataset")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tool", required=True, help="the checkpoint_h5py_tool executable")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dpointnet_ckpt_h5py_") as tmp:
        written_by_dpointnet(args.tool, tmp)
        written_by_h5py(args.tool, tmp)


if __name__ == "__main__":
    main()
