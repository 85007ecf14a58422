#!/usr/bin/python3
"""How the cost of a training update grows: runs dpointnet-bench-train over sizes x batches and
writes a CSV and a PNG of the reverse sweep's time against E x B x T and of the forward pass's time against
the synaptic events (spikes x fan-out, from the measured rate).

  scripts/bench_scaling.py [--sizes 1000,5000,10000,66000] [--batches 1,4,16,32] [--steps 100] [--updates 3]
                           [--out DIR]

Each point is the mean of --updates timed updates after one warm-up update (one update alone varies by 10-20 %
at the small sizes).
"""
import argparse
import csv
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LINE = re.compile(r"(\d+) neurons\s+(\d+) edges T=(\d+) B=(\d+) C=(\d+)\s+(\w+)(?: W=\d+)?: step\s+([\d.]+) s = forward ([\d.]+) "
                  r"\+ recompute ([\d.]+) \+ backward ([\d.]+) \+ update ([\d.]+).*rate ([\d.]+) Hz")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,5000,10000,66000")
    ap.add_argument("--batches", default="1,4,16,32")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--interval", type=int, default=25)
    ap.add_argument("--updates", type=int, default=3, help="timed updates per point (their mean)")
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "build", "dpointnet-bench-train"))
    ap.add_argument("--workdir", default="/tmp/dpointnet-bench")
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    try:  # before minutes of benchmarks, not after
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit(f"bench_scaling.py: {e} (run it with /usr/bin/python3 and python3-matplotlib installed)")
    rows = []
    for n in a.sizes.split(","):
        for b in a.batches.split(","):
            cmd = [a.bin, "--neurons", n, "--steps", str(a.steps), "--batch", b, "--checkpoint-interval",
                   str(a.interval), "--updates", str(a.updates), "--workdir", a.workdir]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            m = LINE.search(out)
            if not m:
                sys.exit("unexpected benchmark output: " + out)
            print(out.strip(), flush=True)
            N, E, T, B = (int(m.group(i)) for i in (1, 2, 3, 4))
            step, fwd, rec, bwd, upd, rate = (float(m.group(i)) for i in (7, 8, 9, 10, 11, 12))
            events = rate * N * B * T / 1000.0 * (E / N)  # spikes x mean fan-out (dt = 1 ms)
            rows.append(dict(neurons=N, edges=E, T=T, B=B, step_s=step, forward_s=fwd, recompute_s=rec,
                             backward_s=bwd, update_s=upd, rate_hz=rate, EBT=E * B * T, events=events))
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "scaling.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("wrote", path)
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for b in sorted({r["B"] for r in rows}):
        rs = [r for r in rows if r["B"] == b]
        ax[0].loglog([r["EBT"] for r in rs], [r["backward_s"] for r in rs], "o-", label=f"B = {b}")
        ax[1].loglog([r["events"] for r in rs], [r["forward_s"] for r in rs], "o-", label=f"B = {b}")
    ax[0].set_xlabel("E x B x T (edge-sample-steps)")
    ax[0].set_ylabel("reverse sweep per update (s)")
    ax[1].set_xlabel("synaptic events per forward pass (spikes x fan-out)")
    ax[1].set_ylabel("forward pass per update (s)")
    for x in ax:
        x.grid(True, which="both", alpha=0.3)
        x.legend()
    fig.suptitle(f"dpointnet training update, T = {a.steps}, C = {a.interval}, sizes {a.sizes}")
    fig.tight_layout()
    png = os.path.join(a.out, "scaling.png")
    fig.savefig(png, dpi=110)
    print("wrote", png)


if __name__ == "__main__":
    main()
