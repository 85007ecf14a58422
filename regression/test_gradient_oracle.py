#!/usr/bin/python3
"""Gradient regression: dpointnet's BPTT against the independent PyTorch autograd oracle.

  test_gradient_oracle.py --bin build/dpointnet [--neurons 300] [--steps 50] [--batch 4] [--precision float64|float32|bfloat16]
                          [--updates K] [--clip C] [--warmup-ms W] [--accumulate K]
                          [--rate-distribution squared|huber] [--double-alpha] [--per-node-dynamics]
                          [--optimizer adam|exp_adam] [--approach accumulate|series|series_accumulate]
                          [--condition-objects] [--carry-state] [--from-input] [--conditions]

Generates a network with `dpointnet generate`, trains recurrent, LGN and background weights with
TargetFiringRate + VoltageRegularization + WeightRegularization, and compares one batch: the loss (relative
1e-6), every surface's gradient (relative L2 1e-5) and the first Adam update (relative L2 1e-5 of the weights
after it, and of the update itself; --tol-* set other bounds, as the 16-bit runs need). Prints the worst errors and
'N passed, M failed'.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

from network_variants import add_per_node_dynamics, make_double_alpha, make_iaf

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    print("  $ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-4000:])
        print(r.stderr[-4000:])
        raise SystemExit(f"command failed ({r.returncode})")
    return r


def rel_l2(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    den = max(np.linalg.norm(b), 1e-300)
    return float(np.linalg.norm(a - b) / den)


def write_observed_rates(net, path, group_by=None):
    """Observed rates for every node type of the generated network (or, with group_by, every value of that column
    of the recurrent node types tables): 25 to 60 log-normal draws each (fixed seed), as a space-separated table
    <node_type_id|group_by> rate_hz."""
    keys = set()
    for root, _, files in os.walk(net):
        for name in files:
            if not group_by and name.endswith("nodes.h5"):
                with h5py.File(os.path.join(root, name), "r") as f:
                    for pop in f["nodes"]:
                        keys.update(str(int(t)) for t in f["nodes"][pop]["node_type_id"][()])
            if group_by and name.endswith("node_types.csv") and not name.startswith(("lgn", "bkg")):
                with open(os.path.join(root, name)) as f:
                    rows = [ln.split() for ln in f if ln.strip()]
                keys.update(r[rows[0].index(group_by)] for r in rows[1:])
    rng = np.random.default_rng(11)
    with open(path, "w") as f:
        f.write(f"{group_by or 'node_type_id'} rate_hz\n")
        for k in sorted(keys):
            for r in rng.lognormal(np.log(8.0), 0.8, size=int(rng.integers(25, 61))):
                f.write(f"{k} {r:.6f}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--neurons", type=int, default=300)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--precision", default="float64")
    ap.add_argument("--checkpoint-interval", type=int, default=25)
    ap.add_argument("--surrogate", default="triangle")
    ap.add_argument("--tol-loss", type=float, default=1e-6)
    ap.add_argument("--tol-grad", type=float, default=1e-5)
    ap.add_argument("--tol-update", type=float, default=None,
                    help="relative L2 of each Adam update (default: --tol-grad); Adam's first update is about "
                         "lr sign(g), so a gradient component near zero whose sign differs moves it by 2 lr")
    ap.add_argument("--loss-scale", type=float, default=None,
                    help="train.optimizer.loss_scale.initial_scale (float16 runs; default: dpointnet's, 2^15)")
    ap.add_argument("--updates", type=int, default=1, help="Adam updates to compare (losses and weights after each)")
    ap.add_argument("--clip", type=float, default=0.0, help="optimizer.clip_global_norm (0: off)")
    ap.add_argument("--warmup-ms", type=float, default=0.0, help="train.warmup_ms (0: none)")
    ap.add_argument("--accumulate", type=int, default=1, help="train.accumulate (micro-batches of --batch)")
    ap.add_argument("--carry-state", action="store_true", help="train.carry_state (use with --updates >= 2)")
    ap.add_argument("--from-input", action="store_true",
                    help="train.initial_state from_input (the LGN input at 3 Hz) with epochs 2 x steps_per_epoch 2 "
                         "(use with --updates 4)")
    ap.add_argument("--conditions", action="store_true",
                    help="two stimulus conditions (train.conditions): LGN at 10 Hz and at 40 Hz")
    ap.add_argument("--condition-objects", action="store_true",
                    help="two named conditions (condition objects): 'evoked' with LGN at 40 Hz and train.losses, "
                         "'spont' with the base inputs and its own losses (TargetFiringRate 5 Hz, voltage threshold, "
                         "weights)")
    ap.add_argument("--optimizer", choices=["adam", "exp_adam"], default="adam", help="train.optimizer.type")
    ap.add_argument("--approach", choices=["accumulate", "series", "series_accumulate"], default=None,
                    help="train.approach")
    ap.add_argument("--group-by", default=None,
                    help="RateDistribution group_by: a node-types column (observed rates written per value)")
    ap.add_argument("--rate-distribution", choices=["squared", "huber"], default=None,
                    help="also a RateDistribution loss with this penalty (observed rates written by this script)")
    ap.add_argument("--double-alpha", action="store_true",
                    help="every other V1 node type as nest:glif_psc_double_alpha (regression/network_variants.py)")
    ap.add_argument("--dynamics", choices=["discrete", "nest"], default="discrete", help="run.dynamics")
    ap.add_argument("--iaf", action="store_true",
                    help="inhibitory types as iaf_psc_alpha with I_e, V_min, V_m (with --dynamics nest)")
    ap.add_argument("--v1-fixture", action="store_true",
                    help="the V1 papers' losses on regression/v1_loss_fixture.py's network and config (windows, "
                         "cell types, core + annulus, sampled targets, huber_quantile, EMD) instead of a generated one")
    ap.add_argument("--v1-sync-osi", action="store_true",
                    help="with --v1-fixture: its 24-neuron variant with Synchronization and OrientationSelectivity "
                         "too (the normaliser /loss_state compared as well)")
    ap.add_argument("--per-node-dynamics", action="store_true",
                    help="every V1 node its own V_th, C_m, tau_syn, asc_amps (SONATA per-node dynamics_params)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_grad_")
    try:
        net = os.path.join(tmp, "net")
        if args.v1_fixture:
            sys.path.insert(0, HERE)
            from v1_loss_fixture import write_fixture
            with open(write_fixture(net, T=float(args.steps), B=args.batch, sync_osi=args.v1_sync_osi,
                                       coverage=args.v1_sync_osi)) as f:
                cfg = json.load(f)
            cfg["inputs"].pop("noise")  # one input per virtual population in dpointnet: the spike file
            cfg["run"].update({"seed": 99, "precision": args.precision, "dynamics": args.dynamics})
            cfg["output"] = {"output_dir": os.path.join(tmp, "out")}
            cfg["train"].update({"steps": 1, "checkpoint_interval": args.checkpoint_interval,
                                 "accumulate": args.accumulate})
            return compare(args, tmp, cfg)
        run([args.bin, "generate", "--out", net, "--neurons", str(args.neurons), "--seed", "5", "--lgn-rate", "20"])
        if args.double_alpha:
            make_double_alpha(net)
        if args.iaf:
            make_iaf(net)
        if args.per_node_dynamics:
            add_per_node_dynamics(net)
        with open(os.path.join(net, "config.simulation.json")) as f:
            cfg = json.load(f)
        cfg["network"] = os.path.join(net, cfg["network"])
        cfg["run"].update({"tstop": float(args.steps), "dt": 1.0, "batch_size": args.batch, "seed": 99,
                           "precision": args.precision, "dynamics": args.dynamics})
        cfg["output"] = {"output_dir": os.path.join(tmp, "out")}
        cfg["train"] = {
            "steps": 1,
            "checkpoint_interval": args.checkpoint_interval,
            "surrogate": {"type": args.surrogate, "dampening_factor": 0.3, "sigma": 0.28},
            "voltage_gradient_dampening": 0.5,
            "recurrent_dampening_factor": 0.1,
            "trainable": {"recurrent": True, "lgn": True, "bkg": True},
            "losses": [
                {"type": "TargetFiringRate", "cost": 1.0, "target": 20.0},
                {"type": "VoltageRegularization", "cost": 0.5, "mode": "range"},
                {"type": "WeightRegularization", "cost": 0.1},
            ],
            "optimizer": {"type": args.optimizer, "lr": 0.01, "clip_global_norm": args.clip or None},
        }
        if args.loss_scale is not None:
            cfg["train"]["optimizer"]["loss_scale"] = {"initial_scale": args.loss_scale}
        if args.warmup_ms:
            cfg["train"]["warmup_ms"] = args.warmup_ms
        if args.accumulate != 1:
            cfg["train"]["accumulate"] = args.accumulate
        if args.carry_state:
            cfg["train"]["carry_state"] = True
        if args.from_input:
            lgn = [k for k, v in cfg["inputs"].items() if v.get("node_set") == "lgn"][0]
            cfg["train"].pop("steps")
            cfg["train"].update({"epochs": 2, "steps_per_epoch": 2, "initial_state": {
                "type": "from_input", "inputs": {lgn: dict(cfg["inputs"][lgn], rate=3.0)}}})
        if args.conditions:
            lgn = [k for k, v in cfg["inputs"].items() if v.get("node_set") == "lgn"][0]
            cfg["train"]["conditions"] = [{lgn: dict(cfg["inputs"][lgn], rate=r)} for r in (10.0, 40.0)]
        if args.condition_objects:
            lgn = [k for k, v in cfg["inputs"].items() if v.get("node_set") == "lgn"][0]
            cfg["train"]["conditions"] = [
                {"name": "evoked", "inputs": {lgn: dict(cfg["inputs"][lgn], rate=40.0)}},
                {"name": "spont", "losses": [{"type": "TargetFiringRate", "cost": 2.0, "target": 5.0},
                                             {"type": "VoltageRegularization", "cost": 0.3, "mode": "threshold"},
                                             {"type": "WeightRegularization", "cost": 0.4}]}]
        if args.approach:
            cfg["train"]["approach"] = args.approach
        if args.rate_distribution:
            target = os.path.join(tmp, "observed_rates.csv")
            write_observed_rates(net, target, args.group_by)
            cfg["train"]["losses"].append({"type": "RateDistribution", "cost": 0.5, "target_file": target,
                                           "penalty": args.rate_distribution, "delta": 4.0})
            if args.group_by:
                cfg["train"]["losses"][-1]["group_by"] = args.group_by
        return compare(args, tmp, cfg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(args, tmp, cfg):
    """Trains with both sides on config `cfg` and compares losses, gradients and updates; the exit status."""
    passed = failed = 0
    cpath = os.path.join(tmp, "train.json")
    with open(cpath, "w") as f:
        json.dump(cfg, f, indent=1)
    run([args.bin, "train", cpath, "--gradient-check", os.path.join(tmp, "cpp.h5"), "--gradient-check-updates",
         str(args.updates)])
    run(["/usr/bin/python3", os.path.join(HERE, "run_grad_oracle.py"), cpath, "--out", os.path.join(tmp, "ref.h5"),
         "--updates", str(args.updates)])
    with h5py.File(os.path.join(tmp, "cpp.h5"), "r") as c, h5py.File(os.path.join(tmp, "ref.h5"), "r") as r:
        checks = []
        names = []  # every loss dataset of the oracle (per condition: <condition>/<term>)
        r["loss"].visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        for k in range(args.updates):
            for name in names:
                if name not in c["loss"]:
                    checks.append((f"loss {name} written by dpointnet", 1.0, 0.0, "missing"))
                    continue
                a, b = float(c["loss"][name][k]), float(r["loss"][name][k])
                err = abs(a - b) / abs(b) if b != 0 else abs(a - b)
                checks.append((f"update {k + 1} loss {name}", err, args.tol_loss, f"{a:.12g} vs {b:.12g}"))
        states = []  # loss states of the oracle (e.g. OrientationSelectivity's normaliser [K, N])
        if "loss_state" in r:
            r["loss_state"].visititems(lambda n, o: states.append(n) if isinstance(o, h5py.Dataset) else None)
        for name in states:
            if "loss_state" not in c or name not in c["loss_state"]:
                checks.append((f"loss_state {name} written by dpointnet", 1.0, 0.0, "missing"))
                continue
            for k in range(args.updates):
                checks.append((f"update {k + 1} loss_state {name}", rel_l2(c["loss_state"][name][k],
                                                                          r["loss_state"][name][k]), args.tol_loss, ""))
        for s in r["grad"]:
            g_c, g_r = c["grad"][s][()], r["grad"][s][()]
            checks.append((f"grad {s} ({len(g_r)} edges)", rel_l2(g_c, g_r), args.tol_grad,
                           f"|g| {np.linalg.norm(g_r):.6g}"))
        for s in r["weights"]:
            w_c, w_r = c["weights"][s][()], r["weights"][s][()]
            checks.append((f"weights {s} before", rel_l2(w_c[0], w_r[0]), 1e-12 if args.precision == "float64" else 1e-6,
                           ""))
            for k in range(1, args.updates + 1):
                d_c, d_r = w_c[k] - w_c[k - 1], w_r[k] - w_r[k - 1]
                err = rel_l2(d_c, d_r) if np.any(d_r != 0) else rel_l2(w_c[k], w_r[k])
                checks.append((f"Adam update {k} {s}", err,
                               args.tol_grad if args.tol_update is None else args.tol_update, ""))
        print(f"  rate: dpointnet {float(c['rate_mean_hz'][0]):.4f} Hz, oracle {float(r['rate_mean_hz'][0]):.4f} Hz")
        worst = 0.0
        for name, err, tol, info in checks:
            ok = err <= tol
            worst = max(worst, err if err == err else float("inf"))  # NaN: an infinite loss
            print(f"  {'ok  ' if ok else 'FAIL'} {name}: relative error {err:.3e} (tolerance {tol:g}) {info}")
            passed += ok
            failed += not ok
        print(f"  worst relative error {worst:.3e}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
