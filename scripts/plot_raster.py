#!/usr/bin/python3
"""Spike raster and population rate of a SONATA spike file (BMTK layout), as a PNG (Debian's matplotlib).

  plot_raster.py spikes.h5 --out raster.png [--dt 1.0] [--title TEXT]
"""
import argparse

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spikes")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dt", type=float, default=1.0, help="bin width of the rate panel (ms)")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    with h5py.File(a.spikes, "r") as f:
        pops = {p: (f["spikes"][p]["timestamps"][()], f["spikes"][p]["node_ids"][()]) for p in f["spikes"]}
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    tmax = 0.0
    n_nodes = 0
    for name, (t, n) in pops.items():
        ax1.scatter(t, n, s=1, marker="|", label=f"{name} ({len(t)} spikes)")
        if len(t):
            tmax = max(tmax, float(np.max(t)))
            n_nodes = max(n_nodes, int(np.max(n)) + 1)
    ax1.set_ylabel("node id")
    ax1.legend(loc="upper right")
    ax1.set_title(a.title)
    bins = np.arange(0, tmax + 10, 10.0)
    allt = np.concatenate([t for t, _ in pops.values()]) if pops else np.array([])
    h, e = np.histogram(allt, bins=bins)
    ax2.plot(e[:-1], h / max(1, n_nodes) / 0.010, lw=1)
    ax2.set_ylabel("rate (Hz)")
    ax2.set_xlabel("time (ms)")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
