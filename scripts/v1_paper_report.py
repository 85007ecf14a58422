#!/usr/bin/python3
"""Per cell type, the V1 papers' training targets against `dpointnet simulate` runs of a visual network (e.g.
untrained and trained): rates against the Neuropixels distribution, OSI/DSI against the OrientationSelectivity
loss's targets, Fano factors against the 300 ms Synchronization targets (Debian's numpy, h5py, matplotlib).

  v1_paper_report.py --run LABEL EVOKED_DIR SPONTANEOUS_DIR [--run ...] [--out-dir DIR] [--neuropixels CSV]
                     [--skip-ms 100] [--fano-window-ms 300] [--pools 500] [--seed 42] [--min-rate 0.5] ...

EVOKED_DIR: a simulate output of drifting gratings (stimulus_samples.csv, spikes_sample<b>.h5, its resolved
config); SPONTANEOUS_DIR: one of a grey screen. Spike times (k + 1) dt are step k. Per run:
* rates (Hz) over steps [skip, T), mean over samples; per type the quartiles of the evoked rates against the
  table's Ave_Rate(Hz) and of the spontaneous ones against Spont_Rate(Hz) (NaN rows left out);
* OSI, DSI per type: `osi`/`dsi`, the mean over the cells whose best direction reaches --min-rate of their tuning
  curves' global indices (scripts/orientation_tuning.py); `crowd_osi`/`crowd_dsi`, the loss's estimate (V1-PAPER
  3.5): per sample b, mean_n r~ cos 2(theta_b - phi_n) / max(mean_n r~, 5e-4) (cos without the 2 for DSI) over
  the type's cells, averaged over samples, r~ = r / max(e_n, 5e-4), r and e_n (the cell's mean evoked rate, the
  running mean's fixed point) in spikes per ms, theta_b the sample's direction, phi_n the tuning_angle; targets:
  per-type means of the table's OSI, DSI over rows with max_mean_rate(Hz) >= 0.5, Ave_Rate(Hz) > 0, both finite;
* Fano factors (V1-PAPER 3.3): --pools pools of the excitatory cells P (pop_name starting with 'e'), sizes
  clip(trunc(N(70, 30)), 15, |P|) from numpy's default_rng(--seed), members from shuffled copies of P, pool k on
  sample floor(k / ceil(pools / B)); over the last --fano-window-ms, per bin size d (the loss's 14 for 300 ms),
  var / max(mean, 1e-7) of the pool's spikes per bin, averaged over pools; against the Neuropixels 300 ms tables,
  with mse = mean over d of (F* - F)^2 (the Synchronization loss / its cost).
Writes to --out-dir v1_paper_types.csv (per run and cell type), v1_paper_fano.csv (per run, condition and bin),
v1_paper_report.md and v1_paper_report.png; prints the Markdown.
"""
import argparse
import csv
import importlib.util
import math
import os

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("orientation_tuning", os.path.join(HERE, "orientation_tuning.py"))
ot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ot)

FANO_EVOKED = [1.01881, 1.03436, 1.05102, 1.08038, 1.11356, 1.15149, 1.20246, 1.23919, 1.20588, 1.19266,
               1.15404, 1.14281, 1.09735, 0.86053]
FANO_SPONT = [0.99255, 0.98534, 0.99029, 0.98106, 0.97466, 0.97277, 0.95597, 0.97380, 0.90051, 0.92299,
              0.88363, 0.81033, 0.67958, 0.47098]
CONDITIONS = ("evoked", "spontaneous")
RATE_COLUMN = {"evoked": "Ave_Rate(Hz)", "spontaneous": "Spont_Rate(Hz)"}


def fail(msg):
    raise SystemExit(f"v1_paper_report.py: {msg}")


def fano_bins(window_ms):
    """The Synchronization loss's bin sizes (ms): max(1, round(1000 b)) for b in logspace(-3, 0, 20) s, b < W/2."""
    return [max(1, int(np.round(1000.0 * b))) for b in np.logspace(-3, 0, 20) if b < window_ms / 2000.0]


def read_table(path):
    """Per cell type: the rate columns (NaN left out) and the OSI/DSI of the rows the loss keeps."""
    if not os.path.isfile(path):
        fail(f"{path} not found")
    with open(path) as f:
        rows = list(csv.DictReader(f, delimiter=" ", quotechar='"'))
    need = ["cell_type", "OSI", "DSI", "max_mean_rate(Hz)"] + list(RATE_COLUMN.values())
    missing = [c for c in need if not rows or c not in rows[0]]
    if missing:
        fail(f"{path} lacks the column {missing[0]}")
    out = {}
    for r in rows:
        t = out.setdefault(r["cell_type"], {"evoked": [], "spontaneous": [], "osi": [], "dsi": []})
        val = {k: float(r[k] or "nan") for k in need[1:]}
        for cond, col in RATE_COLUMN.items():
            if math.isfinite(val[col]):
                t[cond].append(val[col])
        if val["max_mean_rate(Hz)"] >= 0.5 and val["Ave_Rate(Hz)"] != 0 and all(
                math.isfinite(val[k]) for k in ("OSI", "DSI", "Ave_Rate(Hz)")):
            t["osi"].append(val["OSI"])
            t["dsi"].append(val["DSI"])
    return {k: {c: np.array(v) for c, v in d.items()} for k, d in out.items()}


def read_samples(out_dir, population, node_id):
    """Spike steps per sample: a list of (steps, rows) arrays, rows indexing node_id; with T and dt."""
    resolved = ot.read_resolved(out_dir)
    run = resolved["run"]
    dt, tstop = float(run.get("dt", 1.0)), float(run["tstop"])
    n = int(run.get("batch_size", 1))
    row = np.full(int(node_id.max()) + 1, -1, dtype=np.int64)
    row[node_id] = np.arange(node_id.size)
    samples = []
    for b in range(n):
        path = ot.spikes_path(out_dir, b, n)
        with h5py.File(path, "r") as f:
            g = f["spikes"].get(population)
            ts = g["timestamps"][()] if g is not None else np.zeros(0)
            ids = g["node_ids"][()].astype(np.int64) if g is not None else np.zeros(0, dtype=np.int64)
        if ids.size and (ids.max() >= row.size or np.any(row[ids] < 0)):
            fail(f"{path} has spikes of node ids missing from the nodes file")
        samples.append((np.rint(ts / dt).astype(np.int64) - 1, row[ids]))
    return samples, int(round(tstop / dt)), dt


def rates_hz(samples, n_cells, k0, k1, dt):
    """[sample][cell] rates over steps [k0, k1)."""
    out = np.zeros((len(samples), n_cells))
    for b, (steps, rows) in enumerate(samples):
        sel = (steps >= k0) & (steps < k1)
        out[b] = np.bincount(rows[sel], minlength=n_cells) / ((k1 - k0) * dt / 1000.0)
    return out


def crowd(rates, directions, angle, types, dt):
    """The OrientationSelectivity loss's crowd OSI and DSI per type (dict type -> (osi, dsi))."""
    r = rates * dt / 1000.0  # spikes per step
    rn = r / np.maximum(r.mean(axis=0), 5e-4)
    delta = np.deg2rad(np.asarray(directions)[:, None] - angle[None, :])
    out = {}
    for t in np.unique(types):
        sel = types == t
        d = np.maximum(rn[:, sel].mean(axis=1), 5e-4)
        out[t] = (float(np.mean((rn[:, sel] * np.cos(2 * delta[:, sel])).mean(axis=1) / d)),
                  float(np.mean((rn[:, sel] * np.cos(delta[:, sel])).mean(axis=1) / d)))
    return out


def fano(samples, pool, k0, k1, bins, n_pools, seed):
    """Mean over the pools of var / max(mean, 1e-7) of the pool's spikes per bin, per bin size (steps)."""
    B, P = len(samples), pool.size
    if P == 0:
        fail("no excitatory cell (pop_name starting with 'e') for the Fano factors")
    per_trial = -(-n_pools // B)
    rng = np.random.default_rng(seed)
    sizes = np.clip(np.trunc(rng.normal(70.0, 30.0, B * per_trial)), 15, P).astype(np.int64)
    perm, offset = rng.permutation(pool), 0
    series = []
    for steps, rows in samples:
        sel = (steps >= k0) & (steps < k1)
        z = np.zeros((k1 - k0, int(max(pool.max(), rows.max(initial=0))) + 1))
        np.add.at(z, (steps[sel] - k0, rows[sel]), 1.0)
        series.append(z)
    f = np.zeros((len(sizes), len(bins)))
    for k, c in enumerate(sizes):
        if offset + c > P:
            perm, offset = rng.permutation(pool), 0
        y = series[k // per_trial][:, perm[offset:offset + c]].sum(axis=1)
        offset += c
        for j, d in enumerate(bins):
            x = y[:(y.size // d) * d].reshape(-1, d).sum(axis=1)
            f[k, j] = x.var() / max(x.mean(), 1e-7)
    return f.mean(axis=0)


def analyse(label, evoked_dir, spont_dir, a, table):
    resolved = ot.read_resolved(evoked_dir)
    h5_path, types_path = ot.find_nodes(resolved, a.population)
    node_id, pops, angle = ot.read_nodes(h5_path, types_path, a.population)
    types = np.array([ot.cell_type(p) for p in pops])
    absent = sorted(set(types) - set(table))
    if absent:
        fail(f"{a.neuropixels} has no row of cell type '{absent[0]}', which the network has")
    sample_dir, _ = ot.read_stimulus(evoked_dir)
    pool = np.flatnonzero(np.char.startswith(pops.astype(str), "e"))
    res = {"label": label, "types": types, "rates": {}, "fano": {}}
    for cond, d in (("evoked", evoked_dir), ("spontaneous", spont_dir)):
        samples, T, dt = read_samples(d, a.population, node_id)
        k0, kw = int(round(a.skip_ms / dt)), int(round(a.fano_window_ms / dt))
        if not 0 <= k0 < T or kw > T:
            fail(f"{d}: T = {T * dt:g} ms is too short for --skip-ms {a.skip_ms:g} and --fano-window-ms "
                 f"{a.fano_window_ms:g}")
        r = rates_hz(samples, node_id.size, k0, T, dt)
        res["rates"][cond] = r.mean(axis=0)
        bins = [max(1, int(round(b / dt))) for b in fano_bins(a.fano_window_ms)]
        res["fano"][cond] = fano(samples, pool, T - kw, T, bins, a.pools, a.seed)
        if cond == "evoked":
            if len(sample_dir) != len(samples):
                fail(f"{d}: stimulus_samples.csv has {len(sample_dir)} grating samples, the run {len(samples)}")
            dirs = [sample_dir[b] for b in range(len(samples))]
            res["crowd"] = crowd(r, dirs, angle, types, dt)
            uniq = sorted(set(dirs))
            curves = np.stack([r[[b for b in range(len(dirs)) if dirs[b] == u]].mean(axis=0) for u in uniq], 1)
            osi, dsi = ot.selectivity(curves, uniq)
            tuned = curves.max(axis=1) >= a.min_rate
            res["osi"], res["dsi"] = np.where(tuned, osi, np.nan), np.where(tuned, dsi, np.nan)
    return res


def type_rows(runs, table):
    rows = []
    for t in [t for t in ot.CELL_TYPES if t in set(runs[0]["types"])]:
        for res in runs:
            sel = res["types"] == t
            row = {"run": res["label"], "cell_type": t, "cells": int(sel.sum())}
            for cond in CONDITIONS:
                for name, x in (("model", res["rates"][cond][sel]), ("np", table[t][cond])):
                    v = np.percentile(x, [25, 50, 75]) if len(x) else np.full(3, np.nan)
                    row.update({f"{cond}_{name}_q{p}": float(x) for p, x in zip((25, 50, 75), v)})
            row["osi_cells"] = int(np.isfinite(res["osi"][sel]).sum())
            for k in ("osi", "dsi"):
                row[k] = float(np.nanmean(res[k][sel])) if row["osi_cells"] else math.nan
            row["crowd_osi"], row["crowd_dsi"] = res["crowd"][t]
            for k in ("osi", "dsi"):
                row[f"target_{k}"] = float(table[t][k].mean()) if len(table[t][k]) else math.nan
            rows.append(row)
    return rows


def fano_rows(runs, window_ms):
    rows = []
    for res in runs:
        for cond, target in (("evoked", FANO_EVOKED), ("spontaneous", FANO_SPONT)):
            tgt = target if abs(window_ms - 300.0) < 1e-9 else [math.nan] * len(res["fano"][cond])
            rows += [{"run": res["label"], "condition": cond, "bin": j, "bin_ms": d, "fano": float(f), "target": tgt[j]}
                     for j, (d, f) in enumerate(zip(fano_bins(window_ms), res["fano"][cond]))]
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def fmt(x, spec=".2f"):
    return "-" if isinstance(x, float) and math.isnan(x) else format(x, spec)


def iqr(r, key):
    return f"{fmt(r[key + '_q50'], '.1f')} [{fmt(r[key + '_q25'], '.1f')}, {fmt(r[key + '_q75'], '.1f')}]"


def markdown(trows, frows, labels):
    by = {(r["run"], r["cell_type"]): r for r in trows}
    types = list(dict.fromkeys(r["cell_type"] for r in trows))
    out = ["Rates (Hz): median [quartiles] of the cells against the Neuropixels units\n",
           "| cell type | cells | " + " | ".join(f"evoked {x}" for x in ["Neuropixels"] + labels) + " | "
           + " | ".join(f"spont. {x}" for x in ["Neuropixels"] + labels) + " |",
           "|---" * (2 + 2 * (1 + len(labels))) + "|"]
    for t in types:
        rs = [by[(lb, t)] for lb in labels]
        cells = [iqr(rs[0], f"{c}_np") + " | " + " | ".join(iqr(r, f"{c}_model") for r in rs) for c in CONDITIONS]
        out.append(f"| {t} | {rs[0]['cells']} | " + " | ".join(cells) + " |")
    for c in CONDITIONS:
        inside = [sum(r[f"{c}_np_q25"] <= r[f"{c}_model_q50"] <= r[f"{c}_np_q75"]
                      for r in trows if r["run"] == lb) for lb in labels]
        out.append(f"\n{c}: cell types whose median rate lies within the Neuropixels quartiles: "
                   + ", ".join(f"{lb} {n} of {len(types)}" for lb, n in zip(labels, inside)))
    out += ["\nOSI / DSI: target (Neuropixels mean), then per run the crowd estimate (the loss's) and the mean of "
            "the cells' tuning-curve indices\n",
            "| cell type | target OSI | " + " | ".join(f"{lb} OSI crowd, cells" for lb in labels)
            + " | target DSI | " + " | ".join(f"{lb} DSI crowd, cells" for lb in labels) + " |",
            "|---" * (3 + 2 * len(labels)) + "|"]
    for t in types:
        rs = [by[(lb, t)] for lb in labels]
        out.append(f"| {t} | {fmt(rs[0]['target_osi'])} | "
                   + " | ".join(f"{fmt(r['crowd_osi'])}, {fmt(r['osi'])}" for r in rs)
                   + f" | {fmt(rs[0]['target_dsi'])} | "
                   + " | ".join(f"{fmt(r['crowd_dsi'])}, {fmt(r['dsi'])}" for r in rs) + " |")
    out += ["\nFano factors of pooled excitatory cells per bin size\n",
            "| bin (ms) | " + " | ".join(f"{c} {x}" for c in CONDITIONS for x in ["target"] + labels) + " |",
            "|---" * (1 + 2 * (1 + len(labels))) + "|"]
    fb = {(r["run"], r["condition"], r["bin"]): r for r in frows}
    n_bins = max(r["bin"] for r in frows) + 1
    cols = [(labels[0], "target")] + [(lb, "fano") for lb in labels]
    for j in range(n_bins):
        cells = [fmt(fb[(lb, c, j)][k], ".3f") for c in CONDITIONS for lb, k in cols]
        out.append(f"| {fb[(labels[0], 'evoked', j)]['bin_ms']} | " + " | ".join(cells) + " |")
    mse = {(lb, c): np.mean([(fb[(lb, c, j)]["fano"] - fb[(lb, c, j)]["target"]) ** 2 for j in range(n_bins)])
           for lb in labels for c in CONDITIONS}
    out.append("| mse | " + " | ".join(v for c in CONDITIONS for v in ["-"] + [f"{mse[(lb, c)]:.4f}" for lb in labels])
               + " |")
    return "\n".join(out)


def plot(path, trows, frows, labels, title):
    plt = ot.plt  # matplotlib with the Agg backend
    types = list(dict.fromkeys(r["cell_type"] for r in trows))
    by = {(r["run"], r["cell_type"]): r for r in trows}
    fig, axes = plt.subplots(3, 2, figsize=(16, 13))
    x = np.arange(len(types))
    w = 0.8 / (1 + len(labels))
    series = [("Neuropixels", "np")] + [(lb, "model") for lb in labels]
    for ax, cond in zip(axes[0], CONDITIONS):
        for k, (name, kind) in enumerate(series):
            qs = np.array([[by[(labels[0] if kind == "np" else name, t)][f"{cond}_{kind}_q{p}"] for t in types]
                           for p in (25, 50, 75)])
            ax.errorbar(x + (k - len(labels) / 2) * w, qs[1], yerr=[qs[1] - qs[0], qs[2] - qs[1]], fmt="o",
                        capsize=2, label=name)
        ax.set(title=f"{cond} rates: median and quartiles ({RATE_COLUMN[cond]})", ylabel="rate (Hz)")
    for ax, key in zip(axes[1], ("osi", "dsi")):
        ax.plot(x, [by[(labels[0], t)][f"target_{key}"] for t in types], "k_", ms=14, mew=2, label="target")
        for k, lb in enumerate(labels):
            ax.plot(x + (k + 0.5 - len(labels) / 2) * w, [by[(lb, t)][f"crowd_{key}"] for t in types], "o",
                    color=f"C{k + 1}", label=f"{lb} crowd")
            ax.plot(x + (k + 0.5 - len(labels) / 2) * w, [by[(lb, t)][key] for t in types], "x",
                    color=f"C{k + 1}", label=f"{lb} tuning curves")
        ax.set_title(key.upper())
    for ax in axes[:2].ravel():
        ax.set_xticks(x)
        ax.set_xticklabels(types, rotation=45, ha="right", fontsize=8)
        ax.legend(fontsize=7)
    for ax, cond in zip(axes[2], CONDITIONS):
        for k, (lb, key) in enumerate([(labels[0], "target")] + [(lb, "fano") for lb in labels]):
            rr = [r for r in frows if r["condition"] == cond and r["run"] == lb]
            ax.plot([r["bin_ms"] for r in rr], [r[key] for r in rr], "-o", color=f"C{k}" if k else "k",
                    label=lb if k else "target")
        ax.set(xscale="log", xlabel="bin (ms)", ylabel="Fano factor", title=f"{cond}: pooled excitatory cells")
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", nargs=3, action="append", required=True, metavar=("LABEL", "EVOKED_DIR", "SPONT_DIR"))
    ap.add_argument("--out-dir", default=".")
    ap.add_argument("--population", default="v1")
    ap.add_argument("--neuropixels", default=ot.NEUROPIXELS)
    ap.add_argument("--skip-ms", type=float, default=100.0, help="rates and OSI/DSI from this time (ms)")
    ap.add_argument("--fano-window-ms", type=float, default=300.0, help="Fano factors over the last W ms")
    ap.add_argument("--pools", type=int, default=500, help="pools of excitatory cells for the Fano factors")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--min-rate", type=float, default=0.5, help="Hz: tuning-curve OSI/DSI of cells reaching it")
    ap.add_argument("--title", default="V1 papers' targets per cell type")
    a = ap.parse_args()
    labels = [r[0] for r in a.run]
    if len(set(labels)) != len(labels):
        fail("--run labels must differ")
    if a.pools < 1 or a.fano_window_ms < 3:
        fail("--pools must be >= 1 and --fano-window-ms >= 3")
    table = read_table(a.neuropixels)
    runs = [analyse(lb, ev, sp, a, table) for lb, ev, sp in a.run]
    if any(not np.array_equal(r["types"], runs[0]["types"]) for r in runs):
        fail("the runs' networks differ in their cells")
    trows, frows = type_rows(runs, table), fano_rows(runs, a.fano_window_ms)
    os.makedirs(a.out_dir, exist_ok=True)
    write_csv(os.path.join(a.out_dir, "v1_paper_types.csv"), trows)
    write_csv(os.path.join(a.out_dir, "v1_paper_fano.csv"), frows)
    md = markdown(trows, frows, labels)
    with open(os.path.join(a.out_dir, "v1_paper_report.md"), "w") as f:
        f.write(f"# {a.title}\n\n{md}\n")
    plot(os.path.join(a.out_dir, "v1_paper_report.png"), trows, frows, labels, a.title)
    print(md)


if __name__ == "__main__":
    main()
