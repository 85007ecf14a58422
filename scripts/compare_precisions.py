#!/usr/bin/python3
"""One training config in several run.precision values, side by side (docs/training-update.md, "Storage types").

  compare_precisions.py CONFIG --bin build/dpointnet [--precisions float32,bfloat16,float16] [--out DIR]
                        [--loss-margin 0.1] [--rate-margin 0.1] [--check]

Trains CONFIG once per precision (the same config but run.precision and the output directory, DIR/<precision>),
then prints per precision the loss and the mean rate of the first update and the mean over the last 10 updates,
and the relative difference of the latter to the first precision's; DIR/precisions.png draws the loss and rate
curves of all of them in one figure. With --check the exit code is 1 when a later precision's final loss or rate
differs from the first's by more than its margin (relative), or when the first updates' losses differ by more than
1e-5 (16-bit runs share float32's forward pass). A float16 run's loss_scale and skipped columns are summarized. DIR defaults to CONFIG's output directory + "_precisions".
"""
import argparse
import csv
import json
import os
import subprocess
import sys

TAIL = 10  # updates averaged for the final values


def read_metrics(path):
    rows = list(csv.DictReader(open(path)))
    if not rows:
        raise SystemExit(f"{path}: no rows")
    return [int(r["step"]) for r in rows], [float(r["loss"]) for r in rows], [float(r["rate_hz"]) for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--precisions", default="float32,bfloat16,float16")
    ap.add_argument("--out", default=None)
    ap.add_argument("--loss-margin", type=float, default=0.1)
    ap.add_argument("--rate-margin", type=float, default=0.1)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    precisions = [p for p in a.precisions.split(",") if p]
    if len(precisions) < 2:
        ap.error("--precisions needs at least two values")
    cfg_dir = os.path.dirname(os.path.abspath(a.config))
    base = json.load(open(a.config))

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(cfg_dir, p)

    if "network" in base:
        base["network"] = absolute(base["network"])
    out = a.out or absolute(base.get("output", {}).get("output_dir", "output")) + "_precisions"
    os.makedirs(out, exist_ok=True)
    curves = {}
    for p in precisions:
        c = json.loads(json.dumps(base))
        c["run"]["precision"] = p
        c.setdefault("output", {})
        c["output"].update({"output_dir": os.path.join(out, p), "overwrite_output_dir": True})
        c["output"].pop("log_file", None)
        path = os.path.join(out, f"config_{p}.json")
        json.dump(c, open(path, "w"), indent=1)
        print(f"  $ {a.bin} train {path} --no-progress", flush=True)
        r = subprocess.run([a.bin, "train", path, "--no-progress"], capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr[-3000:])
            raise SystemExit(f"{p}: dpointnet train exited {r.returncode}")
        curves[p] = read_metrics(os.path.join(out, p, "metrics.csv"))

    ref = precisions[0]
    fails = []
    print(f"{'precision':>10} {'loss first':>12} {'loss final':>12} {'rel. diff':>10} {'rate first':>11} "
          f"{'rate final':>11} {'rel. diff':>10}")
    final = {p: (sum(v[1][-TAIL:]) / len(v[1][-TAIL:]), sum(v[2][-TAIL:]) / len(v[2][-TAIL:]))
             for p, v in curves.items()}
    for p in precisions:
        steps, loss, rate = curves[p]
        dl = abs(final[p][0] - final[ref][0]) / abs(final[ref][0])
        dr = abs(final[p][1] - final[ref][1]) / abs(final[ref][1])
        d0 = abs(loss[0] - curves[ref][1][0]) / abs(curves[ref][1][0])
        print(f"{p:>10} {loss[0]:12.5g} {final[p][0]:12.5g} {dl:10.3g} {rate[0]:11.4g} {final[p][1]:11.4g} "
              f"{dr:10.3g}")
        if p == ref:
            continue
        if len(steps) != len(curves[ref][0]):
            fails.append(f"{p}: {len(steps)} updates, {ref}: {len(curves[ref][0])}")
        if d0 > 1e-5:
            fails.append(f"{p}: first update's loss differs from {ref}'s by {d0:.3g} (1e-5)")
        if dl > a.loss_margin:
            fails.append(f"{p}: final loss differs from {ref}'s by {dl:.3g} (margin {a.loss_margin})")
        if dr > a.rate_margin:
            fails.append(f"{p}: final rate differs from {ref}'s by {dr:.3g} (margin {a.rate_margin})")
    print(f"(final: the mean over the last {TAIL} updates; relative differences to {ref})")
    for p in precisions:
        rows = list(csv.DictReader(open(os.path.join(out, p, "metrics.csv"))))
        if rows and "loss_scale" in rows[0]:
            print(f"{p}: loss scale {float(rows[0]['loss_scale']):g} -> {float(rows[-1]['loss_scale']):g}, "
                  f"{sum(int(r['skipped']) for r in rows)} optimizer steps skipped")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for p in precisions:
        steps, loss, rate = curves[p]
        ax[0].plot(steps, loss, label=p, lw=1.2)
        ax[1].plot(steps, rate, label=p, lw=1.2)
    ax[0].set_yscale("log")
    ax[0].set_xlabel("update")
    ax[0].set_ylabel("loss")
    ax[1].set_xlabel("update")
    ax[1].set_ylabel("mean rate (Hz)")
    for x in ax:
        x.legend()
        x.grid(alpha=0.3)
    fig.suptitle(f"{os.path.basename(a.config)} in " + ", ".join(precisions))
    fig.tight_layout()
    png = os.path.join(out, "precisions.png")
    fig.savefig(png, dpi=110)
    print(png)
    for f in fails:
        print("FAIL: " + f)
    if a.check:
        print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
        return 1 if fails else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
