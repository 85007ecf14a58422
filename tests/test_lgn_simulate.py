#!/usr/bin/python3
"""`simulate` with an LGN input (docs/visual-input.md, "Outputs"), on a generated visual network:

* stimulus_samples.csv: one row per sample with the list entry it got (direction list cycled over the samples);
* lgn_rates.h5: /rates [sample][step][unit] for the asked samples, /node_ids the LGN population's, a grey screen
  at every unit's spontaneous rate (a two-subunit cell: both halves; FilterNet's cell metrics, spec numbers);
* input_spikes.h5 per sample: the LGN units' spikes, whose mean count per unit over the samples matches
  sum_t (1 - exp(-r_t dt / 1000)) of the written rates (within 5 standard deviations of the Bernoulli sum).

  test_lgn_simulate.py --bin build/dpointnet
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

# FilterNet's spontaneous rates (Hz) of the V1 model's classes: the cell metrics' group means
SPONT = {"sON_TF1": 5.2, "sON_TF2": 3.533333, "sON_TF4": 8.25, "sON_TF8": 1.766667, "sOFF_TF1": 3.95,
         "sOFF_TF2": 4.531778, "sOFF_TF4": 3.679074, "sOFF_TF8": 3.62, "sOFF_TF15": 5.075, "tOFF_TF4": 3.944550,
         "tOFF_TF8": 2.437778, "tOFF_TF15": 1.050667, "sONsOFF_001": 4.0, "sONtOFF_001": 5.5}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr[-4000:])
        raise SystemExit(f"command failed ({r.returncode}): {' '.join(cmd)}")


def simulate(binary, net, out, stimulus, batch, extra_output):
    c = json.load(open(os.path.join(net, "config.simulation.json")))
    c["network"] = os.path.join(net, c["network"])
    c["run"].update({"tstop": 300.0, "batch_size": batch, "seed": 5})
    c["inputs"]["LGN"]["stimulus"] = stimulus
    c["output"] = dict({"output_dir": out, "overwrite_output_dir": True}, **extra_output)
    path = out + ".json"
    json.dump(c, open(path, "w"), indent=1)
    run([binary, "simulate", path])


def pop_names(net):
    with h5py.File(os.path.join(net, "network", "lgn_nodes.h5"), "r") as f:
        types = f["nodes/lgn/node_type_id"][()]
    rows = list(csv.reader(open(os.path.join(net, "network", "lgn_node_types.csv")), delimiter=" "))
    col = rows[0].index("pop_name")
    by_type = {int(r[0]): r[col] for r in rows[1:]}
    return [by_type[int(t)] for t in types]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_lgn_sim_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        run([a.bin, "generate", "--out", net, "--neurons", "40", "--seed", "2", "--visual", "--lgn-tiles-x", "2",
             "--lgn-tiles-y", "1"])
        names = pop_names(net)
        # grey screen: the spontaneous rates
        out = os.path.join(tmp, "grey")
        simulate(a.bin, net, out, {"type": "grey_screen"}, 1, {"lgn_rates": {"samples": [0]}})
        with h5py.File(os.path.join(out, "lgn_rates.h5"), "r") as f:
            rates = f["rates"][()]
            ids = f["node_ids"][()]
        want = np.array([SPONT[n] for n in names])
        worst = np.abs(rates[0] - want[None, :]).max()
        print(f"  {'ok  ' if worst < 1e-5 else 'FAIL'} grey screen: {rates.shape} rates, worst |r - spont| {worst:.2e} Hz")
        if worst >= 1e-5 or len(ids) != len(names):
            fails.append(f"grey screen: worst deviation from the spontaneous rates {worst}, {len(ids)} node ids")
        # drifting gratings: the samples' directions, and spike counts against the rates
        B = 16
        out = os.path.join(tmp, "grating")
        simulate(a.bin, net, out, {"type": "drifting_grating", "direction": [30, 30, 30, 30, 210, 210, 210, 210],
                                   "temporal_frequency": 4.0, "contrast": 1.0},
                 B, {"lgn_rates": {"samples": [0, 4]}, "input_spikes_file": "input_spikes.h5"})
        rows = list(csv.DictReader(open(os.path.join(out, "stimulus_samples.csv"))))
        dirs = [float(r["direction"]) for r in rows]
        if dirs != [30.0 if (s % 8) < 4 else 210.0 for s in range(B)]:
            fails.append(f"stimulus_samples.csv directions {dirs}")
        with h5py.File(os.path.join(out, "lgn_rates.h5"), "r") as f:
            rates = f["rates"][()].astype(np.float64)
        for s0, r in ((0, rates[0]), (4, rates[1])):
            p = 1 - np.exp(-r / 1000.0)  # [step][unit], dt = 1 ms
            samples = [s for s in range(B) if (s % 8 < 4) == (s0 == 0)]
            counts = np.zeros(len(names))
            for s in samples:
                with h5py.File(os.path.join(out, f"input_spikes_sample{s}.h5"), "r") as f:
                    nid = f["spikes/lgn/node_ids"][()]
                    t = f["spikes/lgn/timestamps"][()]
                if len(t) and (t.min() <= 0 or t.max() > 300.0):
                    fails.append(f"sample {s}: spike times outside (0, 300] ms")
                pos = np.searchsorted(ids, nid)
                np.add.at(counts, pos, 1)
            expected = p.sum() * len(samples)
            sd = np.sqrt((p * (1 - p)).sum() * len(samples))
            z = (counts.sum() - expected) / sd
            modulated = np.abs(r.max(axis=0) - r.min(axis=0)).mean()
            print(f"  {'ok  ' if abs(z) < 5 else 'FAIL'} direction {dirs[s0]:.0f}: {counts.sum():.0f} LGN spikes in "
                  f"{len(samples)} samples, expected {expected:.1f} +- {sd:.1f} (z = {z:+.2f}); mean rate modulation "
                  f"{modulated:.1f} Hz")
            if abs(z) >= 5 or modulated < 1.0:
                fails.append(f"direction {dirs[s0]}: z = {z}, modulation {modulated}")
        if np.array_equal(rates[0], rates[1]):
            fails.append("opposite directions gave identical LGN rates")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if fails:
        print("FAIL:\n  " + "\n  ".join(fails))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
