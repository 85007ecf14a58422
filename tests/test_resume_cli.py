#!/usr/bin/python3
"""Restore identity, with real processes: 6 updates straight vs 3 updates, the process
stops (--stop-after 3 writes a checkpoint and exits), a NEW process resumes from that checkpoint and does 3
more. The final checkpoints must be identical dataset by dataset (weights, initial weights, Adam moments,
step, RNG counter) and the metrics logs identical in every column but the timings.

--v1-features runs the same with a 10 ms warm-up, two stimulus conditions (LGN 5 and 25 Hz), accumulate 2 and
a RateDistribution loss: resume identity with those.

--carry adds train.carry_state: the checkpoint then holds every sample slot's carried state,
and the resumed process must continue from it bit-identically.

--series trains with train.approach "series" and train.optimizer.type "exp_adam" over two condition objects
(their own inputs and losses): the checkpoints must hold 2 optimizer steps per update, and resuming the step-3
checkpoint with another approach or optimizer must be refused naming it.

  test_resume_cli.py --bin build/dpointnet [--v1-features] [--carry] [--series]
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


def run(cmd, expect_fail=False):
    print("  $ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if expect_fail:
        return r
    if r.returncode != 0:
        print(r.stderr[-4000:])
        raise SystemExit(f"command failed ({r.returncode})")


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def metrics(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    # timings (seconds, samples_per_s, <phase>_s) and memory differ between processes
    return [{k: v for k, v in r.items() if not (k in ("seconds", "peak_rss_mib") or k.endswith("_s"))} for r in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--v1-features", action="store_true")
    ap.add_argument("--carry", action="store_true")
    ap.add_argument("--series", action="store_true")
    ap.add_argument("--precision", default="float32", help="run.precision")
    ap.add_argument("--v1-losses", action="store_true",
                    help="a visual network, series over a grating and a grey screen with the V1 papers' losses")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_resume_")
    failures = []
    try:
        run([a.bin, "generate", "--out", os.path.join(tmp, "net"), "--neurons", "80", "--seed", "6"] +
            (["--visual", "--lgn-tiles-x", "2", "--lgn-tiles-y", "1"] if a.v1_losses else []))
        base = json.load(open(os.path.join(tmp, "net", "config.simulation.json")))
        base["network"] = os.path.join(tmp, "net", base["network"])
        base["run"].update({"tstop": 40.0, "batch_size": 2, "seed": 8, "precision": a.precision})
        base["train"] = {"steps": 6, "checkpoint_interval": 10,
                         "trainable": {"recurrent": True, "lgn": True, "bkg": True},
                         "losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 4.0},
                                    {"type": "WeightRegularization", "cost": 0.1}],
                         "optimizer": {"lr": 0.01}}
        if a.precision == "float16":
            # a scale that overflows float16 at first (skipped steps, halved) and grows every 2 finite steps: the
            # resumed run must continue the scale's state
            base["train"]["optimizer"]["loss_scale"] = {"initial_scale": 2.0 ** 16, "dynamic_growth_steps": 2}
        if a.v1_features:
            obs = os.path.join(tmp, "observed.csv")
            with open(obs, "w") as f:
                f.write("node_type_id rate_hz\n" + "".join(f"{t} {r}\n" for t in range(1000) for r in (1.0, 5.0, 12.0)))
            lgn = {"input_type": "rates", "node_set": "lgn"}
            base["train"].update({"warmup_ms": 10.0, "accumulate": 2,
                                  "conditions": [{"LGN": dict(lgn, rate=5.0)}, {"LGN": dict(lgn, rate=25.0)}]})
            base["train"]["losses"].append({"type": "RateDistribution", "cost": 0.5, "target_file": obs})
        if a.carry:
            base["train"]["carry_state"] = True
        if a.series:
            lgn = {"input_type": "rates", "node_set": "lgn"}
            base["train"].update({"approach": "series", "optimizer": {"type": "exp_adam", "lr": 0.01}, "conditions": [
                {"name": "evoked", "inputs": {"LGN": dict(lgn, rate=25.0)}},
                {"name": "spont", "losses": [{"type": "TargetFiringRate", "cost": 2.0, "target": 1.0},
                                             {"type": "VoltageRegularization", "cost": 0.5}]}]})
        if a.v1_losses:
            table = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "input", "neuropixels",
                                 "OSI_DSI_neuropixels_v4.csv")
            lgn = {"input_type": "lgn", "node_set": "lgn"}
            common = [{"type": "Synchronization", "cost": 1.5, "n_samples": 6, "pool": "all",
                       "targets": [1.0, 1.02, 1.05, 1.1, 1.12, 1.15, 1.2, 1.22, 1.2]},
                      {"type": "EMDWeightRegularization", "cost": 10.0}]
            base["train"].update({"approach": "series", "optimizer": {"type": "exp_adam", "lr": 0.01}, "conditions": [
                {"name": "evoked", "inputs": {"LGN": dict(lgn, stimulus={"type": "drifting_grating",
                                                                         "direction": "random"})},
                 "losses": common + [{"type": "OrientationSelectivity", "cost": 20.0, "target_file": table},
                                     {"type": "RateDistribution", "cost": 1.0, "group_by": "cell_type",
                                      "target_file": table, "rate_column": "Ave_Rate(Hz)", "append_zero": True,
                                      "targets": "sampled", "penalty": "huber_quantile", "delta": 0.002,
                                      "unit": "spikes_per_step", "normalize": "neurons", "pre_ms": 10.0}]},
                {"name": "spont", "inputs": {"LGN": dict(lgn, stimulus={"type": "grey_screen"})}, "losses": common}]})
            # from_input start states regenerated every 2 updates: the interruption after update 3 is mid-epoch
            del base["train"]["steps"]
            base["train"].update({"epochs": 3, "steps_per_epoch": 2, "initial_state": {
                "type": "from_input", "inputs": {"LGN": dict(lgn, stimulus={"type": "grey_screen"})}}})
        cfgs = {}
        for name in ("straight", "interrupted"):
            c = json.loads(json.dumps(base))
            c["output"] = {"output_dir": os.path.join(tmp, name)}
            cfgs[name] = os.path.join(tmp, name + ".json")
            json.dump(c, open(cfgs[name], "w"), indent=1)
        run([a.bin, "train", cfgs["straight"], "--no-progress"])
        run([a.bin, "train", cfgs["interrupted"], "--no-progress", "--stop-after", "3"])
        ck3 = os.path.join(tmp, "interrupted", "checkpoints", "step_3.h5")
        if not os.path.exists(ck3):
            failures.append("no checkpoint after the interruption")
        if a.precision != "float32":
            # the checkpoint names its precision; a resume in another is refused, naming it, before any output
            with h5py.File(ck3, "r") as f:
                got = f.attrs["precision"]
                got = got.decode() if isinstance(got, bytes) else str(got)
            if got != a.precision:
                failures.append(f"the checkpoint's precision attribute is {got!r}, not {a.precision!r}")
            c = json.load(open(cfgs["interrupted"]))
            c["run"]["precision"] = "float32"
            c["train"]["optimizer"].pop("loss_scale", None)
            c["output"] = {"output_dir": os.path.join(tmp, "refused_precision")}
            p = os.path.join(tmp, "refused_precision.json")
            json.dump(c, open(p, "w"), indent=1)
            r = run([a.bin, "train", p, "--no-progress", "--resume", ck3], expect_fail=True)
            if r.returncode == 0 or "field 'precision'" not in r.stderr or ck3 not in r.stderr:
                failures.append(f"resume in float32: exit {r.returncode}, {r.stderr[-300:]}")
            elif os.path.exists(os.path.join(tmp, "refused_precision", "metrics.csv")):
                failures.append("resume in float32: metrics.csv written before the refusal")
            else:
                print("  refused: resume in another precision")
        if a.series:
            # another approach or optimizer than the checkpoint's: refused, naming it, before any output
            for key, change in (("approach", {"approach": "series_accumulate"}),
                                ("optimizer", {"optimizer": {"type": "adam", "lr": 0.01}})):
                c = json.load(open(cfgs["interrupted"]))
                c["train"].update(change)
                c["output"] = {"output_dir": os.path.join(tmp, "refused_" + key)}
                p = os.path.join(tmp, "refused_" + key + ".json")
                json.dump(c, open(p, "w"), indent=1)
                r = run([a.bin, "train", p, "--no-progress", "--resume", ck3], expect_fail=True)
                if r.returncode == 0 or f"field '{key}'" not in r.stderr or ck3 not in r.stderr:
                    failures.append(f"resume with another {key}: exit {r.returncode}, {r.stderr[-300:]}")
                elif os.path.exists(os.path.join(tmp, "refused_" + key, "metrics.csv")):
                    failures.append(f"resume with another {key}: metrics.csv written before the refusal")
                else:
                    print(f"  refused: resume with another {key}")
        run([a.bin, "train", cfgs["interrupted"], "--no-progress", "--resume", ck3])
        A = datasets(os.path.join(tmp, "straight", "checkpoints", "step_6.h5"))
        B = datasets(os.path.join(tmp, "interrupted", "checkpoints", "step_6.h5"))
        if sorted(A) != sorted(B):
            failures.append(f"different datasets: {sorted(A)} vs {sorted(B)}")
        for k in sorted(A):
            if k in B and not np.array_equal(A[k], B[k]):
                failures.append(f"{k}: differs (max abs {np.max(np.abs(np.asarray(A[k], float) - np.asarray(B[k], float)))})")
            else:
                print(f"  identical: {k}")
        if a.carry:
            slots = 2 * (4 if a.v1_features else 1)  # batch 2 x micro-batches
            rec = A.get("carried_state/records")
            if rec is None or rec.shape[0] != slots or not np.any(rec):
                failures.append(f"carried_state/records: expected {slots} non-zero slots, got "
                                f"{None if rec is None else rec.shape}")
            else:
                print(f"  carried state: {rec.shape[0]} slots of {rec.shape[1]} values")
        if a.v1_losses and (A.get("loss_state") is None or not np.any(A["loss_state"] != 0.003)):
            failures.append("loss_state: the running mean of OrientationSelectivity is missing or never moved")
        if a.series:
            its = A.get("optimizer_iterations")
            if its is None or int(np.asarray(its).reshape(-1)[0]) != 12:
                failures.append(f"optimizer_iterations after 6 series updates of 2 conditions: {its}, expected 12")
            cols = list(csv.DictReader(open(os.path.join(tmp, "straight", "metrics.csv"))).fieldnames)
            want = ["loss.evoked", "loss.evoked.TargetFiringRate", "loss.spont", "loss.spont.TargetFiringRate"]
            if any(w not in cols for w in want):
                failures.append(f"metrics.csv lacks per-condition columns {want}: {cols}")
            # loss = the mean over the conditions of their totals; a condition's total = the sum of its terms
            for row in csv.DictReader(open(os.path.join(tmp, "straight", "metrics.csv"))):
                tot = {c: float(row["loss." + c]) for c in ("evoked", "spont")}
                parts = {c: sum(float(v) for k, v in row.items() if k.startswith("loss." + c + ".")) for c in tot}
                if (abs(float(row["loss"]) - 0.5 * (tot["evoked"] + tot["spont"])) > 1e-6 * abs(float(row["loss"]))
                        or any(abs(tot[c] - parts[c]) > 1e-6 * abs(tot[c]) for c in tot)):
                    failures.append(f"metrics.csv row {row['step']}: loss {row['loss']}, totals {tot}, terms {parts}")
        if a.precision == "float16":
            rows = list(csv.DictReader(open(os.path.join(tmp, "straight", "metrics.csv"))))
            scales = [float(r["loss_scale"]) for r in rows]
            skipped = [int(r["skipped"]) for r in rows]
            print(f"  loss scale per update: {scales}, skipped: {skipped}")
            if not any(skipped) or max(scales[1:]) <= min(scales) or "loss_scale" not in A:
                failures.append(f"float16: expected skipped steps, a growing scale and /loss_scale: {scales} "
                                f"{skipped} {sorted(A)}")
        moved = not np.array_equal(A["surfaces/recurrent/weight"], A["surfaces/recurrent/initial_weight"])
        if not moved:
            failures.append("the weights did not change: the comparison would be vacuous")
        ma = metrics(os.path.join(tmp, "straight", "metrics.csv"))
        mb = metrics(os.path.join(tmp, "interrupted", "metrics.csv"))
        if len(ma) != 6 or ma != mb:
            failures.append(f"metrics differ:\n{ma}\n{mb}")
        else:
            print("  metrics.csv: 6 rows, identical but for timings")
        for name in ("straight", "interrupted"):
            exp = os.path.join(tmp, name, "network", "v1_v1_edges.h5")
            if not os.path.exists(exp):
                failures.append(f"no exported edges in {name}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f)
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
