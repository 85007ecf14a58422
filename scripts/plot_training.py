#!/usr/bin/python3
"""Training curves of a `dpointnet train` output directory, as one PNG (Debian's matplotlib).

  plot_training.py OUTPUT_DIR [--out PNG] [--spikes FILE] [--title TEXT] [--rates-out PNG]

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

If OUTPUT_DIR holds rates.h5 (written by the trainer at the end of a run: /node_type_id [N], /rates_hz/first
and /rates_hz/last [N] with attributes first_update and last_update on /rates_hz, optional
/observed/<node_type_id> and /target_hz), a second PNG (default OUTPUT_DIR/rate_distributions.png, --rates-out)
shows one panel per node type: each neuron's rate (Hz) sorted against its rank quantile (k + 0.5)/n, for the
first and the last update, with the target: the observed distribution's quantiles at the same positions when
/observed/<id> is present (RateDistribution loss), else the type's mean /target_hz (TargetFiringRate loss in Hz).
A malformed rates.h5 is an error. The path of every PNG written is printed.
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


def read_rates(path):
    """The per-neuron rates of rates.h5 (see the module docstring), checked; a malformed file is an error."""
    def bad(what):
        raise SystemExit(f"plot_training.py: {path}: {what}")

    def dataset(f, name):
        if name not in f or not isinstance(f[name], h5py.Dataset):
            bad(f"missing dataset {name}")
        v = np.asarray(f[name][()])
        if v.ndim != 1:
            bad(f"dataset {name} is not one-dimensional (shape {v.shape})")
        return v

    with h5py.File(path, "r") as f:
        ids = dataset(f, "/node_type_id").astype(np.int64)
        r = {"ids": ids, "observed": {}, "target": None}
        names = ["/rates_hz/first", "/rates_hz/last"] + (["/target_hz"] if "target_hz" in f else [])
        for name in names:
            v = dataset(f, name).astype(np.float64)
            if v.size != ids.size:
                bad(f"dataset {name} has {v.size} values, /node_type_id has {ids.size}")
            r[name.rsplit("/", 1)[1].replace("_hz", "")] = v
        for k in ("first_update", "last_update"):
            if k not in f["rates_hz"].attrs:
                bad(f"missing attribute {k} on /rates_hz")
            r[k] = int(f["rates_hz"].attrs[k])
        r["group_by"] = "node_type_id"
        r["groups"] = {}  # group value -> node type ids (group_by another node-types column)
        if "observed" in f:
            r["group_by"] = str(f["observed"].attrs.get("group_by", "node_type_id"))
            for name in f["observed"]:
                if r["group_by"] == "node_type_id" and not re.fullmatch(r"-?\d+", name):
                    bad(f"/observed/{name} is not named by a node_type_id")
                v = dataset(f, f"/observed/{name}").astype(np.float64)
                if v.size == 0:
                    bad(f"dataset /observed/{name} is empty")
                if r["group_by"] == "node_type_id":
                    r["observed"][int(name)] = np.sort(v)
                else:
                    if "node_type_ids" not in f["observed"][name].attrs:
                        bad(f"/observed/{name} lacks the node_type_ids attribute")
                    r["observed"][name] = np.sort(v)
                    r["groups"][name] = np.asarray(f["observed"][name].attrs["node_type_ids"], np.int64)
    return r


def plot_rates(r, out, title):
    """One panel per node type: sorted rates of the first and last update against rank quantile, and the target."""
    if r["groups"]:  # one panel per value of the group_by column
        panels = [(f"{r['group_by']} {g}", np.isin(r["ids"], ids), g) for g, ids in sorted(r["groups"].items())]
    else:
        panels = [(f"node type {int(t)}", r["ids"] == t, int(t)) for t in np.unique(r["ids"])]
    types = np.arange(len(panels))
    if types.size == 0:
        raise SystemExit("plot_training.py: rates.h5 has no neurons")
    ncol = min(4, types.size)
    nrow = math.ceil(types.size / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.4 * ncol, 2.8 * nrow + 0.7), squeeze=False)
    flat = axes.ravel()
    for i, (label, sel, key) in enumerate(panels):
        ax = flat[i]
        n = int(sel.sum())
        p = (np.arange(n) + 0.5) / n
        mk = "." if n <= 60 else None
        ax.plot(p, np.sort(r["first"][sel]), color="tab:blue", marker=mk, label=f"update {r['first_update']}")
        ax.plot(p, np.sort(r["last"][sel]), color="tab:orange", marker=mk, label=f"update {r['last_update']}")
        if key in r["observed"]:
            ax.plot(p, np.quantile(r["observed"][key], p, method="linear"), color="tab:red", ls="--",
                    label="observed (target)")
        elif r["target"] is not None and np.any(np.isfinite(r["target"][sel])):
            tgt = float(np.nanmean(r["target"][sel]))
            ax.axhline(tgt, color="tab:red", ls="--", lw=1, label=f"target {tgt:.3g} Hz")
        ax.set_title(f"{label} ({n} neurons)", fontsize=9)
        ax.set_xlim(0, 1)
        ax.grid(True, alpha=0.3)
        if i % ncol == 0:
            ax.set_ylabel("rate (Hz)")
        if i >= types.size - ncol:
            ax.set_xlabel("rank quantile")
        if i == 0:
            ax.legend(loc="best", fontsize=7)
    for ax in flat[types.size:]:
        ax.set_visible(False)
    per = "node type" if not r["groups"] else r["group_by"]
    fig.suptitle(title + f"\nsorted firing rates per {per}, update {r['first_update']} and {r['last_update']}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out} ({types.size} {'node-type' if not r['groups'] else r['group_by']} panels)")


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
    ap.add_argument("--rates-out", help="rate-distribution PNG when OUTPUT_DIR/rates.h5 exists "
                    "(default OUTPUT_DIR/rate_distributions.png)")
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
    rates_path = os.path.join(a.output_dir, "rates.h5")
    rates = read_rates(rates_path) if os.path.isfile(rates_path) else None

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
    plt.close(fig)
    print(f"wrote {out}")
    if rates is not None:
        plot_rates(rates, a.rates_out or os.path.join(a.output_dir, "rate_distributions.png"),
                   a.title or os.path.abspath(a.output_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
