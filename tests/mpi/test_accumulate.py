#!/usr/bin/python3
"""Gradient accumulation (train.accumulate) and the warm-up (train.warmup_ms = 10 ms in every run
here) composed with sample-parallel training, with real processes: serial batch 8 is the reference; serial batch 4 x accumulate 2, mirrored 2 x batch 2 x accumulate 2
and `mpirun -n N` batch 8 / (N K) x accumulate K must give the same losses of three updates, gradients of the
first and weights after each (worst relative L2 below 1e-6; float32, the distributed path's precision), and the
logged sample ranges of every rank must cover each global batch of 8 exactly once. Terminal states are only kept
of each replica's last micro-batch, so they are compared only where a run has one micro-batch.
--pooled adds a RateDistribution loss, which pools the spike counts of the whole global batch:
then the same runs (and mirrored 2 x batch 4, mpirun -n N batch 8 / N without accumulation) must equal serial
batch 8 too.
--carry turns on train.carry_state in every run, without the warm-up (so that the carried spike
history before step 0 is read): each sample slot of the global batch starts update k + 1 from its state at the end of
update k, whichever replica and micro-batch holds the slot, so every run must still equal serial batch 8.

--approach series|series_accumulate (with --conditions) names the two conditions as condition objects, the
second with its own losses (the pooled loss then pools the first condition's samples only), and trains with that
approach: series makes one optimizer step (and one gradient allreduce) per condition.

  test_accumulate.py --bin build/dpointnet [--mpi-bin build/dpointnet-mpi --ranks 2] [--pooled] [--carry]
                     [--conditions [--approach series|series_accumulate]]
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_common import make_network, mpirun, parse_binaries, rank_list, read_h5, rel_l2, report, run, train_config  # noqa: E402

GLOBAL_BATCH = 8
K = 2
WARMUP = {"warmup_ms": 10.0}


def main():
    ap = parse_binaries(mpi_required=False)
    ap.add_argument("--ranks", type=rank_list, default=[], help="mpirun rank counts (each dividing 8 / K)")
    ap.add_argument("--pooled", action="store_true", help="add a RateDistribution loss (pooled over the batch)")
    ap.add_argument("--conditions", action="store_true",
                    help="two stimulus conditions (LGN 5 and 30 Hz) instead of accumulation: serial batch 4 x 2 "
                         "conditions is the reference of mirrored 2 x 2 x 2 and mpirun -n N batch 4/N x 2")
    ap.add_argument("--carry", action="store_true", help="train.carry_state in every run (no warm-up)")
    ap.add_argument("--visual", action="store_true",
                    help="with --conditions: a visual network whose LGN input shows drifting gratings of a random "
                         "direction per sample (evoked) and a grey screen (spontaneous)")
    ap.add_argument("--approach", choices=["series", "series_accumulate"], default=None,
                    help="with --conditions: train.approach, the conditions as condition objects")
    ap.add_argument("--v1-losses", action="store_true",
                    help="with --visual --approach: the V1 papers' losses per condition (rate targets per cell type "
                         "of the Neuropixels table, synchronization, crowd OSI/DSI on the gratings, EMD)")
    a = ap.parse_args()
    global WARMUP
    if a.carry:
        WARMUP = {"carry_state": True}
    if a.v1_losses:
        WARMUP = {}  # the from_input start states replace the warm-up
    if any((GLOBAL_BATCH // K) % n for n in a.ranks):
        ap.error(f"every rank count must divide {GLOBAL_BATCH // K}: {a.ranks}")
    if a.ranks and not a.mpi_bin:
        ap.error("--mpi-bin is required with --ranks")
    tmp = tempfile.mkdtemp(prefix="dpointnet_accumulate_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        make_network(a.bin, net, visual=a.visual)
        updates = "3"
        runs, logs = {}, {}

        observed = os.path.join(tmp, "observed.csv")
        with open(observed, "w") as f:  # every node type id 0..199 (the generator's are small integers)
            f.write("node_type_id rate_hz\n" + "".join(f"{t} {r}\n" for t in range(200) for r in (2.0, 6.0, 9.0, 20.0)))

        def pooled(cfg):
            if a.pooled:
                c = json.load(open(cfg))
                c["train"]["losses"].append({"type": "RateDistribution", "cost": 0.5, "target_file": observed,
                                             "penalty": "huber", "delta": 5.0})
                json.dump(c, open(cfg, "w"), indent=1)
            return cfg

        def serial(name, batch, extra=None, distribution=None):
            cfg = pooled(train_config(os.path.join(tmp, name + ".json"), net, os.path.join(tmp, "o_" + name), batch,
                                      extra_train=dict(WARMUP, **(extra or {})), distribution=distribution))
            r = run([a.bin, "train", cfg, "--gradient-check", os.path.join(tmp, name + ".h5"),
                     "--gradient-check-updates", updates])
            return os.path.join(tmp, name + ".h5"), r.stderr

        if a.conditions:
            lgn = {"input_type": "rates", "node_set": "lgn"}
            cond = {"conditions": [{"LGN": dict(lgn, rate=5.0)}, {"LGN": dict(lgn, rate=30.0)}]}
            if a.visual:
                lgn = {"input_type": "lgn", "node_set": "lgn"}
                cond = {"conditions": [
                    {"LGN": dict(lgn, stimulus={"type": "drifting_grating", "direction": "random",
                                                "temporal_frequency": 8.0, "phase": "random"})},
                    {"LGN": dict(lgn, stimulus={"type": "grey_screen"})}]}
            if a.approach:
                c0, c1 = cond["conditions"]
                cond = {"approach": a.approach, "conditions": [
                    {"name": "evoked", "inputs": c0},
                    {"name": "spont", "inputs": c1,
                     "losses": [{"type": "TargetFiringRate", "cost": 2.0, "target": 2.0},
                                {"type": "VoltageRegularization", "cost": 0.5, "mode": "threshold"}]}]}
            if a.v1_losses:
                table = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "input", "neuropixels",
                                     "OSI_DSI_neuropixels_v4.csv")
                fano = [1.0, 1.02, 1.05, 1.1, 1.12, 1.15, 1.2, 1.22, 1.2]  # one per bin size of the 40 ms window
                rate = {"type": "RateDistribution", "cost": 1.0, "group_by": "cell_type", "target_file": table,
                        "append_zero": True, "targets": "sampled", "penalty": "huber_quantile", "delta": 0.002,
                        "unit": "spikes_per_step", "normalize": "neurons", "pre_ms": 10.0}
                sync = {"type": "Synchronization", "cost": 1.5, "targets": fano, "n_samples": 12, "pool": "all"}
                for c, col in zip(cond["conditions"], ("Ave_Rate(Hz)", "Spont_Rate(Hz)")):
                    c["losses"] = [dict(rate, rate_column=col), sync,
                                   {"type": "VoltageRegularization", "cost": 0.5, "mode": "threshold"},
                                   {"type": "EMDWeightRegularization", "cost": 10.0}]
                cond["conditions"][0]["losses"].append(
                    {"type": "OrientationSelectivity", "cost": 20.0, "target_file": table, "pre_ms": 5.0})
                cond["initial_state"] = {"type": "from_input", "inputs": {"LGN": dict(lgn, stimulus={"type": "grey_screen"})}}
                cond["epochs"], cond["steps_per_epoch"] = 3, 2
            ref_name = "serial batch 4 x 2 conditions"
            runs[ref_name], _ = serial("serial_c", GLOBAL_BATCH // 2, cond)
            runs["mirrored 2 x batch 2 x 2 conditions"], logs["mirrored"] = serial(
                "mirrored_c", GLOBAL_BATCH // 4, cond, {"mode": "mirrored", "devices": ["cpu", "cpu"]})
            for n in a.ranks:
                b = GLOBAL_BATCH // (n * 2)
                cfg = pooled(train_config(os.path.join(tmp, f"mpi{n}_c.json"), net, os.path.join(tmp, f"o_mpi{n}_c"),
                                          b, distribution={"mode": "mpi"}, global_batch=GLOBAL_BATCH,
                                          extra_train=dict(WARMUP, **cond)))
                r = mpirun(n, [a.mpi_bin, "train", cfg, "--gradient-check", os.path.join(tmp, f"mpi{n}_c.h5"),
                               "--gradient-check-updates", updates])
                runs[f"mpirun -n {n} batch {b} x 2 conditions"] = os.path.join(tmp, f"mpi{n}_c.h5")
                logs[n] = r.stderr
            a.ranks = []  # done
        else:
            ref_name = "serial batch 8"
            runs["serial batch 8"], _ = serial("serial8", GLOBAL_BATCH)
            runs[f"serial batch 4 x accumulate {K}"], _ = serial("serial4k", GLOBAL_BATCH // K, {"accumulate": K})
        if not a.conditions:
            runs[f"mirrored 2 x batch 2 x accumulate {K}"], logs["mirrored"] = serial(
                "mirrored", GLOBAL_BATCH // (2 * K), {"accumulate": K}, {"mode": "mirrored", "devices": ["cpu", "cpu"]})
        if a.pooled and not a.conditions:
            runs["mirrored 2 x batch 4"], logs["mirrored 2 x 4"] = serial(
                "mirrored4", GLOBAL_BATCH // 2, None, {"mode": "mirrored", "devices": ["cpu", "cpu"]})
        for n in a.ranks:
            for k in ([K, 1] if a.pooled else [K]):
                b = GLOBAL_BATCH // (n * k)
                tag = f"mpi{n}_{k}"
                cfg = pooled(train_config(os.path.join(tmp, tag + ".json"), net, os.path.join(tmp, "o_" + tag), b,
                                          distribution={"mode": "mpi"}, global_batch=GLOBAL_BATCH,
                                          extra_train=dict(WARMUP, accumulate=k)))
                r = mpirun(n, [a.mpi_bin, "train", cfg, "--gradient-check", os.path.join(tmp, tag + ".h5"),
                               "--gradient-check-updates", updates])
                runs[f"mpirun -n {n} batch {b} x accumulate {k}"] = os.path.join(tmp, tag + ".h5")
                logs[f"{n} x {k}"] = r.stderr
        ref = read_h5(runs[ref_name])
        worst = 0.0
        for name, path in runs.items():
            if name == ref_name:
                continue
            got = read_h5(path)
            for key in sorted(ref):
                if key.startswith("terminal/") and (f"accumulate {K}" in name or "conditions" in name):
                    continue
                if key not in got:
                    fails.append(f"{name}: {key} missing")
                    continue
                e = rel_l2(got[key], ref[key])
                worst = max(worst, e)
                ok = e < 1e-6
                if not ok:
                    fails.append(f"{name}: {key} relative L2 {e:.3e}")
                print(f"  {'ok  ' if ok else 'FAIL'} {name}: {key} relative L2 {e:.3e}")
        print(f"  worst relative L2: {worst:.3e} (limit 1e-6)")
        for n, text in logs.items():
            per_update = {}
            for rank, rep, upd, lo, hi in re.findall(r"rank (\d+) replica (\d+): update (\d+) samples \[(\d+), (\d+)\)",
                                                     text):
                per_update.setdefault(int(upd), []).extend(range(int(lo), int(hi)))
            for upd in (1, 2, 3):
                got = sorted(per_update.get(upd, []))
                if got != list(range((upd - 1) * GLOBAL_BATCH, upd * GLOBAL_BATCH)):
                    fails.append(f"{n}: update {upd} covers samples {got}")
            print(f"  ownership {n}: " + "; ".join(f"update {u}: {len(v)} samples" for u, v in sorted(per_update.items())))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
