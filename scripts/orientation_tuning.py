#!/usr/bin/python3
"""Orientation and direction selectivity of the V1 cells of a `dpointnet simulate` run of drifting gratings,
per cell type, against the Neuropixels table (Debian's numpy, h5py and matplotlib).

  orientation_tuning.py OUTPUT_DIR [--population v1] [--nodes H5 --node-types CSV] [--neuropixels CSV]
                        [--skip-ms 100] [--min-rate 0.5] [--out-dir DIR] [--title TEXT] [--quiet]

Reads from OUTPUT_DIR (a simulate output directory): stimulus_samples.csv (each sample's grating direction),
spikes_sample<b>.h5 (spikes.h5 for a single sample), simulation_config.resolved.json (run.tstop and the nodes
files; --nodes/--node-types override) and, when present, lgn_rates.h5.

Per V1 cell, r(theta) = the mean rate over the samples of direction theta, counted from --skip-ms (default
100 ms, the onset transient of the LGN filters) to tstop. The global indices of the Allen Brain Observatory
(AllenSDK's ecephys stimulus analysis, the definitions behind the table's OSI and DSI columns):
  OSI = |sum_theta r(theta) e^(2 i theta)| / sum_theta r(theta),  DSI = |sum_theta r(theta) e^(i theta)| / sum r.
Cells whose largest r(theta) is below --min-rate (default 0.5 Hz) get no OSI/DSI, as the V1 trainers drop the
table's units whose max_mean_rate(Hz) is below 0.5 Hz. pop_name maps to the V1 papers' 17 cell types by their
rule: layer from the second character (2 = L2/3, 1 = L1 Htr3a), Pvalb -> PV, Sst -> SST, Vip/Htr3a -> VIP,
anything else Exc.

Writes to --out-dir (default OUTPUT_DIR):
  tuning_cells.csv  per cell: node_id, pop_name, cell_type, tuning_angle, r(theta) per direction, mean and max
                    rate, spikes counted, OSI, DSI, preferred direction, and the noise floor sqrt(pi)/2/sqrt(spikes)
                    (the expected OSI/DSI of an untuned Poisson cell with that many spikes);
  tuning_types.csv  per cell type, model and Neuropixels: cells, cells with OSI/DSI, median OSI and DSI, mean rate;
  tuning.png        tuning curves of six cells (each the cell nearest its type's median OSI), the preferred
                    direction against tuning_angle, and OSI and DSI per type, model against Neuropixels;
  lgn_rates.png     with lgn_rates.h5: the rates of four LGN units (sON_TF2, sOFF_TF2, tOFF_TF8, sONsOFF_001,
                    each the unit nearest the screen centre) for two saved samples (the first and one 90 degrees
                    from it when saved, else the second).
Prints the per-type table (Markdown), the alignment of the preferred orientation (angle of the orientation
vector sum, halved) with +tuning_angle and -tuning_angle (mean resultant length of e^(2i(pref - s angle)) and
its mean offset), and a line starting `result:` (median OSI/DSI of the excitatory cells, mean rate); --quiet
prints only that line. When lgn_rates.h5 holds a sample of every direction it also prints the tuning of each
V1 cell's LGN drive D(t) = sum over its LGN edges of syn_weight x nsyns x rate_source(t), over the whole
grating cycles from --skip-ms: its mean (F0) and its amplitude at the temporal frequency (F1) per direction,
the median OSI/DSI of both, and the alignment of F1's preferred direction (angle of sum F1 e^(i theta)) with
+-tuning_angle.
"""
import argparse
import csv
import json
import math
import os

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NEUROPIXELS = os.path.join(HERE, "..", "input", "neuropixels", "OSI_DSI_neuropixels_v4.csv")
LAYERS = ["1", "2/3", "4", "5", "6"]
CLASSES = ["Exc", "PV", "SST", "VIP"]
CELL_TYPES = ["L1 Htr3a"] + [f"L{la} {c}" for la in LAYERS[1:] for c in CLASSES]
FLOOR = math.sqrt(math.pi) / 2.0
EXAMPLE_TYPES = ["L2/3 Exc", "L4 Exc", "L5 Exc", "L6 Exc", "L4 PV", "L5 PV"]
LGN_CLASSES = ["sON_TF2", "sOFF_TF2", "tOFF_TF8", "sONsOFF_001"]


def fail(msg):
    raise SystemExit(f"orientation_tuning.py: {msg}")


def cell_type(pop_name):
    """The V1 papers' cell type of a V1 model pop_name (e23Cux2 -> L2/3 Exc, i4Pvalb -> L4 PV)."""
    if len(pop_name) < 2 or pop_name[1] not in "123456":
        fail(f"pop_name '{pop_name}' does not follow the V1 model's naming (e/i, layer digit, marker)")
    if pop_name[1] == "1":
        return "L1 Htr3a"
    layer = "2/3" if pop_name[1] == "2" else pop_name[1]
    for marker, cls in (("Pvalb", "PV"), ("Sst", "SST"), ("Vip", "VIP"), ("Htr3a", "VIP")):
        if marker in pop_name:
            return f"L{layer} {cls}"
    return f"L{layer} Exc"


def selectivity(rates, directions_deg):
    """Global OSI and DSI of tuning curves rates [..., direction]; NaN where the curve sums to 0."""
    th = np.deg2rad(np.asarray(directions_deg, dtype=float))
    total = rates.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        osi = np.abs(rates @ np.exp(2j * th)) / total
        dsi = np.abs(rates @ np.exp(1j * th)) / total
    return np.where(total > 0, osi, np.nan), np.where(total > 0, dsi, np.nan)


def preferred_orientation(rates, directions_deg):
    """Angle (degrees, 0 .. 180) of the orientation vector sum sum r e^(2 i theta), halved."""
    th = np.deg2rad(np.asarray(directions_deg, dtype=float))
    return np.rad2deg(np.angle(rates @ np.exp(2j * th)) / 2.0) % 180.0


def read_stimulus(out_dir):
    path = os.path.join(out_dir, "stimulus_samples.csv")
    if not os.path.isfile(path):
        fail(f"{path} not found (simulate writes it for an LGN input)")
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r["type"] == "drifting_grating"]
    if not rows:
        fail(f"{path} has no drifting_grating sample")
    inputs = sorted({r["input"] for r in rows})
    if len(inputs) > 1:
        fail(f"{path} has gratings of several inputs ({', '.join(inputs)})")
    for key in ("temporal_frequency", "spatial_frequency", "contrast"):
        if len({float(r[key]) for r in rows}) > 1:
            fail(f"{path}: the samples differ in {key}; the tuning compares directions only")
    return {int(r["sample"]): float(r["direction"]) for r in rows}, rows[0]


def spikes_path(out_dir, sample, n_samples):
    path = os.path.join(out_dir, f"spikes_sample{sample}.h5")
    if not os.path.isfile(path) and n_samples == 1:
        path = os.path.join(out_dir, "spikes.h5")
    if not os.path.isfile(path):
        fail(f"{path} not found")
    return path


def read_resolved(out_dir):
    path = os.path.join(out_dir, "simulation_config.resolved.json")
    if not os.path.isfile(path):
        fail(f"{path} not found")
    with open(path) as f:
        return json.load(f)


def find_nodes(resolved, population):
    for entry in resolved.get("networks", {}).get("nodes", []):
        with h5py.File(entry["nodes_file"], "r") as f:
            if population in f.get("nodes", {}):
                return entry["nodes_file"], entry["node_types_file"]
    fail(f"no nodes file of the resolved config holds population '{population}'")


def read_node_types(path):
    with open(path) as f:
        rows = list(csv.DictReader(f, delimiter=" "))
    if not rows or "pop_name" not in rows[0]:
        fail(f"{path} has no pop_name column")
    return {int(r["node_type_id"]): r["pop_name"] for r in rows}


def read_nodes(h5_path, types_path, population):
    """node_id, pop_name and tuning_angle (NaN where absent) of every node, in the file's row order."""
    pop_names = read_node_types(types_path)
    with h5py.File(h5_path, "r") as f:
        g = f["nodes"][population]
        node_id = g["node_id"][()].astype(np.int64)
        type_id = g["node_type_id"][()]
        group_id = g["node_group_id"][()]
        group_index = g["node_group_index"][()]
        angle = np.full(node_id.size, np.nan)
        for gid in np.unique(group_id):
            grp = g[str(gid)]
            if "tuning_angle" in grp:
                sel = group_id == gid
                angle[sel] = grp["tuning_angle"][()][group_index[sel]]
    missing = sorted(set(type_id.tolist()) - set(pop_names))
    if missing:
        fail(f"{types_path} lacks node_type_id {missing[0]}")
    pops = np.array([pop_names[int(t)] for t in type_id])
    return node_id, pops, angle


def spike_counts(path, population, node_id, t0, t1):
    """Spikes per node in [t0, t1) ms."""
    with h5py.File(path, "r") as f:
        if population not in f["spikes"]:
            return np.zeros(node_id.size)
        ts = f["spikes"][population]["timestamps"][()]
        ids = f["spikes"][population]["node_ids"][()]
    ids = ids[(ts >= t0) & (ts < t1)]
    row = np.full(int(max(node_id.max(), ids.max(initial=0))) + 1, -1, dtype=np.int64)
    row[node_id] = np.arange(node_id.size)
    rows = row[ids]
    if np.any(rows < 0):
        fail(f"{path} has spikes of node ids missing from the nodes file")
    return np.bincount(rows, minlength=node_id.size).astype(float)


def tuning(out_dir, population, node_id, sample_dir, t0, t1):
    """Tuning curves [cell][direction] (Hz), spikes counted per cell, and the sorted directions."""
    directions = sorted(set(sample_dir.values()))
    counts = np.zeros((node_id.size, len(directions)))
    trials = np.zeros(len(directions))
    for sample, d in sample_dir.items():
        k = directions.index(d)
        counts[:, k] += spike_counts(spikes_path(out_dir, sample, len(sample_dir)), population, node_id, t0, t1)
        trials[k] += 1
    rates = counts / (trials * (t1 - t0) / 1000.0)
    return rates, counts.sum(axis=1), directions


def cell_table(node_id, pops, angle, rates, spikes, directions, min_rate):
    osi, dsi = selectivity(rates, directions)
    tuned = rates.max(axis=1) >= min_rate
    with np.errstate(divide="ignore"):
        floor = np.where(spikes > 0, FLOOR / np.sqrt(spikes), np.nan)
    return {
        "node_id": node_id, "pop_name": pops, "cell_type": np.array([cell_type(p) for p in pops]),
        "tuning_angle": angle, "rates": rates, "mean_rate": rates.mean(axis=1), "max_rate": rates.max(axis=1),
        "spikes": spikes, "osi": np.where(tuned, osi, np.nan), "dsi": np.where(tuned, dsi, np.nan),
        "pref_dir": np.asarray(directions)[rates.argmax(axis=1)], "pref_ori": preferred_orientation(rates, directions),
        "floor": floor, "tuned": tuned,
    }


def read_neuropixels(path, min_rate):
    """Per type: OSI and DSI of the units the V1 trainers keep, and Ave_Rate(Hz) of all units."""
    with open(path) as f:
        rows = list(csv.DictReader(f, delimiter=" ", quotechar='"'))
    out = {t: {"osi": [], "dsi": [], "rate": []} for t in CELL_TYPES}
    for r in rows:
        t = out.setdefault(r["cell_type"], {"osi": [], "dsi": [], "rate": []})
        ave = float(r["Ave_Rate(Hz)"])
        t["rate"].append(ave)
        osi, dsi = float(r["OSI"] or "nan"), float(r["DSI"] or "nan")
        if float(r["max_mean_rate(Hz)"]) >= min_rate and ave > 0 and not (math.isnan(osi) or math.isnan(dsi)):
            t["osi"].append(osi)
            t["dsi"].append(dsi)
    return {k: {c: np.array(v) for c, v in d.items()} for k, d in out.items()}


def median(x):
    return float(np.median(x)) if len(x) else math.nan


def type_rows(cells, npx):
    rows = []
    for t in CELL_TYPES:
        sel = cells["cell_type"] == t
        if not sel.any() and not len(npx[t]["rate"]):
            continue
        ok = sel & cells["tuned"]
        rows.append({
            "cell_type": t, "model_n": int(sel.sum()), "model_n_tuned": int(ok.sum()),
            "model_osi": median(cells["osi"][ok]), "model_dsi": median(cells["dsi"][ok]),
            "model_floor": median(cells["floor"][ok]),
            "model_rate": float(cells["mean_rate"][sel].mean()) if sel.any() else math.nan,
            "np_n": int(len(npx[t]["rate"])), "np_n_tuned": int(len(npx[t]["osi"])),
            "np_osi": median(npx[t]["osi"]), "np_dsi": median(npx[t]["dsi"]),
            "np_rate": float(npx[t]["rate"].mean()) if len(npx[t]["rate"]) else math.nan,
        })
    return rows


def write_cells(path, cells, directions):
    cols = ["node_id", "pop_name", "cell_type", "tuning_angle"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols + [f"rate_{d:g}" for d in directions]
                   + ["mean_rate", "max_rate", "spikes", "osi", "dsi", "pref_dir", "floor"])
        for i in range(cells["node_id"].size):
            w.writerow([cells[c][i] for c in cols] + [f"{r:.6g}" for r in cells["rates"][i]]
                       + [f"{cells[c][i]:.6g}" for c in ("mean_rate", "max_rate", "spikes", "osi", "dsi",
                                                           "pref_dir", "floor")])


def write_types(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})


def fmt(x, spec=".2f"):
    return "-" if isinstance(x, float) and math.isnan(x) else format(x, spec)


def markdown(rows):
    lines = ["| cell type | cells | with OSI | OSI | DSI | floor | rate (Hz) | NP units | NP with OSI | NP OSI "
             "| NP DSI | NP rate (Hz) |", "|---" * 12 + "|"]
    for r in rows:
        lines.append(f"| {r['cell_type']} | {r['model_n']} | {r['model_n_tuned']} | {fmt(r['model_osi'])} | "
                     f"{fmt(r['model_dsi'])} | {fmt(r['model_floor'])} | {fmt(r['model_rate'], '.1f')} | "
                     f"{r['np_n']} | {r['np_n_tuned']} | {fmt(r['np_osi'])} | {fmt(r['np_dsi'])} | "
                     f"{fmt(r['np_rate'], '.1f')} |")
    return "\n".join(lines)


def alignment(cells):
    """Mean resultant length and mean offset (degrees) of pref_ori - s * tuning_angle, s = +1 and -1."""
    ok = cells["tuned"] & np.isfinite(cells["tuning_angle"])
    out = {}
    for sign in (1, -1):
        z = np.exp(2j * np.deg2rad(cells["pref_ori"][ok] - sign * cells["tuning_angle"][ok]))
        m = z.mean() if z.size else math.nan
        out[sign] = (abs(m), np.rad2deg(np.angle(m)) / 2.0, int(z.size))
    return out


def example_cells(cells):
    """One cell per example type (else per other type): the tuned cell nearest its type's median OSI."""
    present = [t for t in EXAMPLE_TYPES + CELL_TYPES if np.any((cells["cell_type"] == t) & cells["tuned"])]
    picks = []
    for t in dict.fromkeys(present):
        idx = np.flatnonzero((cells["cell_type"] == t) & cells["tuned"])
        picks.append(idx[np.argmin(np.abs(cells["osi"][idx] - np.median(cells["osi"][idx])))])
        if len(picks) == 6:
            break
    return picks


def aligned_sign(cells):
    """+1 or -1: the sign s for which the preferred orientations follow s x tuning_angle more closely."""
    return max(alignment(cells).items(), key=lambda kv: kv[1][0])[0]


def plot_curves(axes, cells, directions):
    picks = example_cells(cells)
    sign = aligned_sign(cells)
    d = np.append(directions, directions[0] + 360.0)
    for ax, i in zip(axes, picks):
        r = cells["rates"][i]
        ax.plot(d, np.append(r, r[0]), "o-", color="C0")
        if np.isfinite(cells["tuning_angle"][i]):
            ax.axvline((sign * cells["tuning_angle"][i]) % 360.0, color="0.5", ls="--", lw=1,
                       label=f"{'' if sign > 0 else '-'}tuning_angle")
        ax.set_title(f"{cells['cell_type'][i]} (node {cells['node_id'][i]})\n"
                     f"OSI {cells['osi'][i]:.2f}, DSI {cells['dsi'][i]:.2f}", fontsize=9)
        ax.set_xticks(np.arange(0, 361, 90))
        ax.set_xlabel("direction (deg)", fontsize=8)
        ax.set_ylim(bottom=0)
    for ax in axes[len(picks):]:
        ax.axis("off")
    if picks:
        axes[0].set_ylabel("rate (Hz)")
        axes[0].legend(fontsize=7, loc="lower left")


def plot_alignment(ax, cells):
    """Preferred orientation against +-tuning_angle (the sign with the larger resultant), excitatory cells."""
    ok = cells["tuned"] & np.isfinite(cells["tuning_angle"]) & np.char.endswith(cells["cell_type"], "Exc")
    sign = aligned_sign(cells)
    ax.scatter((sign * cells["tuning_angle"][ok]) % 180.0, cells["pref_ori"][ok], s=2, alpha=0.3)
    ax.set_xlim(0, 180)
    ax.set_ylim(0, 180)
    ax.set_xticks([0, 90, 180])
    ax.set_yticks([0, 90, 180])
    ax.set_xlabel(f"{'' if sign > 0 else '-'}tuning_angle mod 180", fontsize=8)
    ax.set_ylabel("preferred orientation", fontsize=8)
    ax.set_title(f"Exc cells with OSI ({ok.sum()})", fontsize=9)


def plot_boxes(ax, cells, npx, key, label):
    types = [t for t in CELL_TYPES if np.any(cells["cell_type"] == t) or len(npx[t]["osi"])]
    model = [cells[key][(cells["cell_type"] == t) & cells["tuned"]] for t in types]
    data = [npx[t][key] for t in types]
    x = np.arange(len(types))
    for vals, off, color, name in ((model, -0.2, "C0", "model"), (data, 0.2, "C1", "Neuropixels")):
        keep = [i for i, v in enumerate(vals) if len(v)]
        bp = ax.boxplot([vals[i] for i in keep], positions=x[keep] + off, widths=0.35, patch_artist=True,
                        showfliers=False, manage_ticks=False)
        for box in bp["boxes"]:
            box.set_facecolor(color)
            box.set_alpha(0.6)
        ax.plot([], [], color=color, lw=6, alpha=0.6, label=name)
    ax.set_xticks(x)
    ax.set_xticklabels(types, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(label)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8, loc="upper right")


def plot_tuning(path, cells, npx, directions, title):
    fig = plt.figure(figsize=(16, 10))
    grid = fig.add_gridspec(3, 7, height_ratios=[1, 1.2, 1.2])
    plot_curves([fig.add_subplot(grid[0, k]) for k in range(6)], cells, directions)
    plot_alignment(fig.add_subplot(grid[0, 6]), cells)
    plot_boxes(fig.add_subplot(grid[1, :]), cells, npx, "osi", "OSI")
    plot_boxes(fig.add_subplot(grid[2, :]), cells, npx, "dsi", "DSI")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def lgn_units(h5_path, types_path, population, unit_nodes):
    """Row (in lgn_rates' unit order) and class of the unit of each LGN_CLASSES class nearest the screen centre."""
    classes = read_node_types(types_path)
    with h5py.File(h5_path, "r") as f:
        g = f["nodes"][population]
        node_id = g["node_id"][()]
        type_id = g["node_type_id"][()]
        x, y = g["0"]["x"][()], g["0"]["y"][()]
    pos = {int(n): i for i, n in enumerate(node_id)}
    rows = np.array([pos[int(n)] for n in unit_nodes])
    picks = []
    for cls in LGN_CLASSES:
        idx = np.flatnonzero(np.array([classes[int(t)] == cls for t in type_id[rows]]))
        if idx.size:
            d = np.hypot(x[rows[idx]] - 60.0, y[rows[idx]] - 40.0)
            picks.append((int(idx[np.argmin(d)]), cls))
    return picks


def lgn_samples(saved, sample_dir):
    """Rows of lgn_rates.h5 to draw: the first saved sample and one 90 degrees from it, else the next saved."""
    if len(saved) < 2:
        return list(range(len(saved)))
    d0 = sample_dir.get(int(saved[0]), math.nan)
    for k, s in enumerate(saved[1:], start=1):
        if abs((sample_dir.get(int(s), math.nan) - d0) % 360.0 - 90.0) < 1e-9:
            return [0, k]
    return [0, 1]


def plot_lgn(path, out_dir, resolved, sample_dir, title):
    with h5py.File(os.path.join(out_dir, "lgn_rates.h5"), "r") as f:
        rates = f["rates"]
        population = rates.attrs["population"]
        population = population.decode() if isinstance(population, bytes) else str(population)
        saved, nodes, dt = f["samples"][()], f["node_ids"][()], float(f["dt"][0])
        h5_path, types_path = find_nodes(resolved, population)
        picks = lgn_units(h5_path, types_path, population, nodes)
        rows = lgn_samples(saved, sample_dir)
        order = sorted(k for k, _ in picks)
        data = np.stack([rates[r, :, :][:, order] for r in rows]) if order else None
    fig, axes = plt.subplots(len(picks), 1, figsize=(10, 2.2 * max(1, len(picks))), sharex=True, squeeze=False)
    for ax, (k, cls) in zip(axes[:, 0], picks):
        for j, r in enumerate(rows):
            s = int(saved[r])
            t = np.arange(data.shape[1]) * dt
            ax.plot(t, data[j, :, order.index(k)], lw=1,
                    label=f"sample {s}: {sample_dir.get(s, float('nan')):g} deg")
        ax.set_ylabel("rate (Hz)")
        ax.set_title(f"{population} node {nodes[k]} ({cls})", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def find_edges(resolved, source, target):
    """(edges h5, edge types CSV, edge population) of the projection source -> target."""
    for entry in resolved.get("networks", {}).get("edges", []):
        with h5py.File(entry["edges_file"], "r") as f:
            for name, g in f.get("edges", {}).items():
                pops = [g[k].attrs.get("node_population", b"") for k in ("source_node_id", "target_node_id")]
                pops = [p.decode() if isinstance(p, bytes) else str(p) for p in pops]
                if pops == [source, target]:
                    return entry["edges_file"], entry["edge_types_file"], name
    fail(f"no edges file of the resolved config holds {source} -> {target}")


def edge_weights(h5_path, types_path, name):
    """source ids, target ids and syn_weight x nsyns of every edge (group values win over the edge types')."""
    with open(types_path) as f:
        type_weight = {int(r["edge_type_id"]): float(r.get("syn_weight") or "nan")
                       for r in csv.DictReader(f, delimiter=" ")}
    with h5py.File(h5_path, "r") as f:
        g = f["edges"][name]
        src, tgt = g["source_node_id"][()].astype(np.int64), g["target_node_id"][()].astype(np.int64)
        w = np.array([type_weight[int(t)] for t in g["edge_type_id"][()]])
        nsyns = np.ones(src.size)
        gid, gidx = g["edge_group_id"][()], g["edge_group_index"][()]
        for k in np.unique(gid):
            sel, grp = gid == k, g[str(k)]
            if "syn_weight" in grp:
                w[sel] = grp["syn_weight"][()][gidx[sel]]
            if "nsyns" in grp:
                nsyns[sel] = grp["nsyns"][()][gidx[sel]]
    return src, tgt, w * nsyns


def lgn_drive(out_dir, resolved, population, node_id, sample_dir, t0, tf_hz):
    """Per V1 cell and direction: mean (F0) and amplitude at the grating's frequency (F1) of the LGN drive
    sum_source w x rate(t) over the whole cycles from t0, from lgn_rates.h5; None unless it holds every
    direction."""
    import scipy.sparse  # noqa: PLC0415 (only this analysis needs it)

    path = os.path.join(out_dir, "lgn_rates.h5")
    directions = sorted(set(sample_dir.values()))
    with h5py.File(path, "r") as f:
        samples = [int(s) for s in f["samples"][()]]
        first = {}
        for k, s in enumerate(samples):
            first.setdefault(sample_dir.get(s), k)
        if any(d not in first for d in directions):
            return None
        lgn_pop = f["rates"].attrs["population"]
        lgn_pop = lgn_pop.decode() if isinstance(lgn_pop, bytes) else str(lgn_pop)
        units = f["node_ids"][()].astype(np.int64)
        dt = float(f["dt"][0])
        src, tgt, w = edge_weights(*find_edges(resolved, lgn_pop, population))
        col = np.full(int(max(units.max(), src.max())) + 1, -1, dtype=np.int64)
        col[units] = np.arange(units.size)
        row = np.full(int(max(node_id.max(), tgt.max())) + 1, -1, dtype=np.int64)
        row[node_id] = np.arange(node_id.size)
        W = scipy.sparse.csr_matrix((w, (row[tgt], col[src])), shape=(node_id.size, units.size))
        k0 = int(round(t0 / dt))
        cycles = math.floor((f["rates"].shape[1] - k0) * dt / 1000.0 * tf_hz)
        k1 = k0 + int(round(cycles * 1000.0 / tf_hz / dt)) if cycles >= 1 else f["rates"].shape[1]
        f0 = np.zeros((node_id.size, len(directions)))
        f1 = np.zeros_like(f0)
        for j, d in enumerate(directions):
            drive = W @ f["rates"][first[d], k0:k1, :].astype(float).T
            t = (k0 + np.arange(drive.shape[1])) * dt / 1000.0
            f0[:, j] = drive.mean(axis=1)
            f1[:, j] = 2.0 * np.abs(drive @ np.exp(-2j * np.pi * tf_hz * t)) / t.size
    return f0, f1, directions


def drive_lines(f0, f1, directions, angle):
    osi0, _ = selectivity(f0, directions)
    osi1, dsi1 = selectivity(f1, directions)
    th = np.deg2rad(np.asarray(directions))
    pref = np.rad2deg(np.angle(f1 @ np.exp(1j * th)))
    lines = [f"LGN drive (sum of syn_weight x nsyns x rate over each cell's LGN sources): median F0 "
             f"{np.median(f0):.4g}, F1/F0 {np.median(f1 / f0):.2f}; median OSI of F0 {np.nanmedian(osi0):.3f}, of F1 "
             f"{np.nanmedian(osi1):.3f} (DSI {np.nanmedian(dsi1):.3f})"]
    ok = np.isfinite(angle)
    for sign in (1, -1):
        z = np.exp(1j * np.deg2rad(pref[ok] - sign * angle[ok])).mean()
        lines.append(f"LGN drive F1's preferred direction - {'+' if sign > 0 else '-'}tuning_angle: "
                     f"resultant length {abs(z):.3f}, mean {np.rad2deg(np.angle(z)):.1f} deg")
    return lines


def result_line(cells, rows):
    exc = cells["tuned"] & np.char.endswith(cells["cell_type"], "Exc")
    npx_osi = [r["np_osi"] for r in rows if r["cell_type"].endswith("Exc")]
    return (f"result: excitatory cells median OSI {median(cells['osi'][exc]):.2f}, DSI "
            f"{median(cells['dsi'][exc]):.2f} ({exc.sum()} of {np.char.endswith(cells['cell_type'], 'Exc').sum()} "
            f"with a rate >= the threshold; Neuropixels Exc types' median OSI {min(npx_osi):.2f}-{max(npx_osi):.2f}); "
            f"mean rate {cells['mean_rate'].mean():.2f} Hz")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("output_dir")
    ap.add_argument("--population", default="v1")
    ap.add_argument("--nodes", help="nodes h5 of the population (default: from the resolved config)")
    ap.add_argument("--node-types", help="node types CSV of the population (with --nodes)")
    ap.add_argument("--neuropixels", default=NEUROPIXELS)
    ap.add_argument("--skip-ms", type=float, default=100.0, help="onset transient left out (ms)")
    ap.add_argument("--min-rate", type=float, default=0.5, help="Hz: cells whose best direction is below get no OSI")
    ap.add_argument("--out-dir")
    ap.add_argument("--title", default="")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    out_dir = a.out_dir or a.output_dir
    os.makedirs(out_dir, exist_ok=True)
    resolved = read_resolved(a.output_dir)
    if bool(a.nodes) != bool(a.node_types):
        fail("--nodes and --node-types go together")
    h5_path, types_path = (a.nodes, a.node_types) if a.nodes else find_nodes(resolved, a.population)
    tstop = float(resolved["run"]["tstop"])
    if not 0 <= a.skip_ms < tstop:
        fail(f"--skip-ms {a.skip_ms} must be in [0, tstop = {tstop})")
    sample_dir, stim = read_stimulus(a.output_dir)
    node_id, pops, angle = read_nodes(h5_path, types_path, a.population)
    rates, spikes, directions = tuning(a.output_dir, a.population, node_id, sample_dir, a.skip_ms, tstop)
    cells = cell_table(node_id, pops, angle, rates, spikes, directions, a.min_rate)
    npx = read_neuropixels(a.neuropixels, a.min_rate)
    rows = type_rows(cells, npx)
    write_cells(os.path.join(out_dir, "tuning_cells.csv"), cells, directions)
    write_types(os.path.join(out_dir, "tuning_types.csv"), rows)
    title = a.title or f"{a.output_dir}: {len(sample_dir)} samples, {len(directions)} directions"
    written = [os.path.join(out_dir, n) for n in ("tuning_cells.csv", "tuning_types.csv", "tuning.png")]
    plot_tuning(written[-1], cells, npx, directions, title)
    if os.path.isfile(os.path.join(a.output_dir, "lgn_rates.h5")):
        written.append(os.path.join(out_dir, "lgn_rates.png"))
        plot_lgn(written[-1], a.output_dir, resolved, sample_dir, title)
    if not a.quiet:
        print("\n".join(f"wrote {p}" for p in written))
        print(f"window {a.skip_ms:g}-{tstop:g} ms; OSI/DSI of cells with max rate >= {a.min_rate:g} Hz; "
              "floor = median sqrt(pi)/2/sqrt(spikes), the OSI/DSI of an untuned cell\n")
        print(markdown(rows) + "\n")
        for sign, (length, offset, n) in alignment(cells).items():
            print(f"preferred orientation - {'+' if sign > 0 else '-'}tuning_angle over {n} cells: "
                  f"resultant length {length:.3f}, mean {offset:.1f} deg")
        if os.path.isfile(os.path.join(a.output_dir, "lgn_rates.h5")):
            drive = lgn_drive(a.output_dir, resolved, a.population, node_id, sample_dir, a.skip_ms,
                              float(stim["temporal_frequency"]))
            lines = drive_lines(drive[0], drive[1], drive[2], angle) if drive else [
                "LGN drive: lgn_rates.h5 does not hold every direction (output.lgn_rates.samples)"]
            print("\n".join(lines))
    print(result_line(cells, rows))


if __name__ == "__main__":
    main()
