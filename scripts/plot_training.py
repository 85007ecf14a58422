#!/usr/bin/python3
"""Training curves of a `dpointnet train` output directory, as one PNG (Debian's matplotlib).

  plot_training.py OUTPUT_DIR [--out PNG] [--spikes FILE] [--title TEXT]

Reads OUTPUT_DIR/metrics.csv (columns step, loss, one column per loss term, rate_hz, grad_norm, samples_per_s,
seconds) and draws, against the update step:
  * the total loss and each loss term (log scale when the values are positive; zero values are left out);
  * the mean firing rate (Hz), with the target of each scalar TargetFiringRate loss in Hz read from
    OUTPUT_DIR/train_config.resolved.json when present;
  * the gradient norm (before clipping; the clip_global_norm threshold when one is set).
Steps that have a checkpoint in OUTPUT_DIR/checkpoints/ are marked with faint vertical lines.

If a spike file of a simulation of the trained network is given with --spikes, or if OUTPUT_DIR holds
spikes.h5 (or spikes_sample0.h5), a raster panel of it is added (BMTK layout, /spikes/<pop>/{timestamps,
node_ids}). The default PNG is OUTPUT_DIR/training.png.
"""
import argparse
import csv
import json
import math
import os
import re
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FIXED_AFTER = ["rate_hz", "grad_norm", "samples_per_s", "seconds"]


def read_metrics(path):
    with open(path) as f:
        rows = [r for r in csv.reader(f) if r]
    if not rows:
        raise SystemExit(f"plot_training.py: {path} is empty")
    header, body = rows[0], rows[1:]
    for c in ["step", "loss"] + FIXED_AFTER:
        if c not in header:
            raise SystemExit(f"plot_training.py: {path} has no column '{c}' (header: {','.join(header)})")
    data = {c: np.array([float(r[i]) if i < len(r) and r[i] != "" else math.nan for r in body])
            for i, c in enumerate(header)}
    terms = header[header.index("loss") + 1:header.index("rate_hz")]
    return data, terms


def read_train_config(out_dir):
    p = os.path.join(out_dir, "train_config.resolved.json")
    if not os.path.isfile(p):
        return {}
    with open(p) as f:
        return json.load(f).get("train", {})


def checkpoint_steps(out_dir):
    d = os.path.join(out_dir, "checkpoints")
    if not os.path.isdir(d):
        return []
    steps = []
    for fn in os.listdir(d):
        m = re.fullmatch(r"step_(\d+)\.h5", fn)
        if m:
            steps.append(int(m.group(1)))
    return sorted(steps)


def read_spikes(path):
    """{population: (timestamps ms, node_ids)} from a BMTK/SONATA spike file (current or legacy layout)."""
    out = {}
    with h5py.File(path, "r") as f:
        if "spikes" not in f:
            raise SystemExit(f"plot_training.py: {path} has no /spikes group")
        g = f["spikes"]
        if "timestamps" in g and "gids" in g:
            out["spikes"] = (g["timestamps"][()], g["gids"][()])
        else:
            for name in g:
                p = g[name]
                if isinstance(p, h5py.Group) and "timestamps" in p and "node_ids" in p:
                    t = p["timestamps"][()]
                    if p["timestamps"].attrs.get("units", b"ms") in (b"s", "s"):
                        t = t * 1000.0
                    out[name] = (t, p["node_ids"][()])
    return out


def positive(y):
    y = np.asarray(y, dtype=float).copy()
    y[~(y > 0)] = np.nan
    return y


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output_dir", help="the train command's output directory (holds metrics.csv)")
    ap.add_argument("--out", help="PNG to write (default OUTPUT_DIR/training.png)")
    ap.add_argument("--spikes", help="spike file of a simulation of the trained network (raster panel)")
    ap.add_argument("--title", help="figure title (default: the output directory)")
    a = ap.parse_args()

    metrics = os.path.join(a.output_dir, "metrics.csv")
    if not os.path.isfile(metrics):
        raise SystemExit(f"plot_training.py: {metrics} does not exist")
    data, terms = read_metrics(metrics)
    step = data["step"]
    if step.size == 0:
        raise SystemExit(f"plot_training.py: {metrics} has no rows yet")
    tc = read_train_config(a.output_dir)
    ck = checkpoint_steps(a.output_dir)

    spikes_path = a.spikes
    if spikes_path is None:
        for cand in ("spikes.h5", "spikes_sample0.h5"):
            p = os.path.join(a.output_dir, cand)
            if os.path.isfile(p):
                spikes_path = p
                break
    spikes = read_spikes(spikes_path) if spikes_path else None

    n_panels = 3 + (1 if spikes is not None else 0)
    ratios = [3, 2, 2] + ([3] if spikes is not None else [])
    fig = plt.figure(figsize=(10, 2.6 * sum(ratios) / 2.0 + 0.6))
    gs = fig.add_gridspec(n_panels, 1, height_ratios=ratios)
    ax_loss = fig.add_subplot(gs[0])
    ax_rate = fig.add_subplot(gs[1], sharex=ax_loss)
    ax_grad = fig.add_subplot(gs[2], sharex=ax_loss)

    # --- losses
    series = [(t, data[t], dict(lw=1.2)) for t in terms] + [("total", data["loss"], dict(color="black", lw=1.5, ls="--", zorder=5))]
    use_log = any(np.any(y > 0) for _, y, _ in series)
    for name, y, style in series:
        label = f"{name} (last {y[-1]:.4g})"
        if use_log:
            yp = positive(y)
            if np.all(np.isnan(yp)):
                label = f"{name} (never > 0: not shown)"
            ax_loss.plot(step, yp, marker="." if step.size <= 60 else None, label=label, **style)
        else:
            ax_loss.plot(step, y, label=label, **style)
    if use_log:
        ax_loss.set_yscale("log")
    ax_loss.set_ylabel("loss" + (" (log)" if use_log else ""))
    ax_loss.legend(loc="best", fontsize=8)

    # --- rate
    ax_rate.plot(step, data["rate_hz"], color="tab:blue", marker="." if step.size <= 60 else None, label="mean rate")
    for i, l in enumerate(tc.get("losses", [])):
        if (isinstance(l, dict) and l.get("type") == "TargetFiringRate" and "target" in l
                and "target_by_node_type" not in l and l.get("unit", "Hz") == "Hz"):
            ax_rate.axhline(float(l["target"]), color="tab:red", ls="--", lw=1,
                            label=f"target {float(l['target']):g} Hz" + (f" (loss {i})" if i else ""))
    ax_rate.set_ylabel("rate (Hz)")
    ax_rate.set_ylim(bottom=0)
    ax_rate.legend(loc="best", fontsize=8)

    # --- gradient norm
    g = data["grad_norm"]
    glog = np.any(g > 0)
    ax_grad.plot(step, positive(g) if glog else g, color="tab:green", marker="." if step.size <= 60 else None,
                 label="|grad| (before clipping)")
    clip = tc.get("optimizer", {}).get("clip_global_norm", 0) if isinstance(tc.get("optimizer"), dict) else 0
    if clip and clip > 0:
        ax_grad.axhline(float(clip), color="tab:red", ls="--", lw=1, label=f"clip_global_norm {float(clip):g}")
    if glog:
        ax_grad.set_yscale("log")
    ax_grad.set_ylabel("gradient norm" + (" (log)" if glog else ""))
    ax_grad.set_xlabel("update step")
    ax_grad.legend(loc="best", fontsize=8)

    for ax in (ax_loss, ax_rate, ax_grad):
        for s in ck:
            ax.axvline(s, color="0.8", lw=0.8, zorder=0)
        ax.grid(True, which="major", alpha=0.3)
    for ax in (ax_loss, ax_rate):
        plt.setp(ax.get_xticklabels(), visible=False)
    if step.size <= 30:
        ax_grad.set_xticks(step)

    # --- raster
    if spikes is not None:
        ax_r = fig.add_subplot(gs[3])
        total = 0
        for name, (t, n) in spikes.items():
            ax_r.scatter(t, n, s=2, marker="|", label=f"{name} ({len(t)} spikes)")
            total += len(t)
        ax_r.set_xlabel("time (ms)")
        ax_r.set_ylabel("node id")
        ax_r.set_title(f"trained network: {os.path.basename(spikes_path)}", fontsize=9)
        if spikes:
            ax_r.legend(loc="upper right", fontsize=8, markerscale=4)

    speed = data["samples_per_s"]
    info = (f"{int(step[-1])} steps, last loss {data['loss'][-1]:.4g}, rate {data['rate_hz'][-1]:.3g} Hz, "
            f"median {np.nanmedian(speed):.3g} samples/s")
    fig.suptitle((a.title or os.path.abspath(a.output_dir)) + "\n" + info, fontsize=10)
    fig.tight_layout()
    out = a.out or os.path.join(a.output_dir, "training.png")
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
