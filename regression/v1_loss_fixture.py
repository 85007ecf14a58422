#!/usr/bin/python3
"""A tiny network and training config that use every key of the V1 papers' losses (for the C++ comparison).

usage: /usr/bin/python3 regression/v1_loss_fixture.py OUT_DIR [--tstop MS] [--batch B] [--sync-osi]
(defaults 40, 2). Writes OUT_DIR/config.json (SONATA config with a "train" section; manifest $D = OUT_DIR as an
absolute path, so the config may be copied elsewhere; run dt 1 ms, seed 5),
the network (12 glif_psc neurons "rec" with node types column pop_name and nodes x, z, tuning_angle; virtual "vin"
with a spike file and Poisson noise; 44 recurrent edges), and OUT_DIR/observed_rates.csv (a Neuropixels-style table:
quoted "cell_type", Ave_Rate(Hz) and Spont_Rate(Hz) with NaN entries). Prints the config path.
write_fixture(d, T, B) does the same from Python; v1_losses(target_file) returns the loss list.
--sync-osi (write_fixture(..., sync_osi=True)): 12 more neurons (24: 17 excitatory, 17 in the core of radius 100),
30 more recurrent edges, OUT_DIR/osi_dsi.csv (an OSI/DSI table in the Neuropixels layout, with rows that its
filters drop) and the losses of v1_sync_osi_losses(OUT_DIR/osi_dsi.csv, T) after those of v1_losses.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from oracle.tinynet import make_network, GLIF    # noqa: E402
from oracle.v1_sync_osi import sync_bin_sizes_ms  # noqa: E402

GLIF2 = dict(GLIF, tau_syn=[3.0, 6.0], asc_amps=[-5.0, 2.0], asc_decay=[0.2, 0.05], t_ref=3.0, C_m=60.0)
# node type -> (pop_name, params); merged types L2/3 Exc, L2/3 PV, L4 Exc, L5 Exc (ET + IT), L5 SST, L1 Htr3a
TYPES = {110: ('e23Cux2', GLIF), 111: ('i23Pvalb', GLIF2), 112: ('e4Rorb', GLIF), 113: ('e5ET', GLIF),
         114: ('e5IT', GLIF2), 115: ('i5Sst', GLIF2), 116: ('i1Htr3a', GLIF)}
NODE_TYPES = [110, 110, 110, 111, 111, 112, 112, 113, 114, 115, 116, 110]
# x, z (um): core radius 100 leaves neurons 2, 4, 6, 8 and 11 in the annulus
XZ = [(10.0, 20.0), (-50.0, 30.0), (120.0, 0.0), (0.0, -60.0), (90.0, 90.0), (30.0, 30.0), (-20.0, -150.0),
      (40.0, -70.0), (200.0, 10.0), (-60.0, 60.0), (5.0, 5.0), (0.0, 100.0)]
# sync_osi: 12 more neurons (9 excitatory); (130, 60) and (-110, -40) outside the core of radius 100
EXTRA_TYPES = [110, 112, 113, 114, 110, 112, 111, 115, 110, 113, 112, 116]
EXTRA_XZ = [(15.0, -25.0), (-35.0, 10.0), (60.0, 40.0), (-70.0, -20.0), (25.0, 75.0), (-5.0, -90.0), (80.0, -30.0),
            (-45.0, -45.0), (130.0, 60.0), (50.0, -10.0), (-20.0, 35.0), (-110.0, -40.0)]
OBSERVED = {'L2/3 Exc': (3.0, 12), 'L2/3 PV': (12.0, 8), 'L4 Exc': (5.0, 10), 'L5 Exc': (8.0, 15),
            'L5 SST': (10.0, 6), 'L5 PV': (15.0, 5), 'L1 Htr3a': (2.0, 6)}


def write_observed(path, seed=3):
    """Neuropixels-style table (space-separated, quoted cell_type): per type, log-normal rates around the given
    mean; every 4th Spont_Rate(Hz) and every 5th Ave_Rate(Hz) NaN."""
    rng = np.random.default_rng(seed)
    lines = ['ecephys_unit_id DSI Ave_Rate(Hz) cell_type Spont_Rate(Hz)']
    uid = 950000000
    for ct, (mean, n) in OBSERVED.items():
        for k in range(n):
            uid += 1
            ave = repr(float(rng.lognormal(np.log(mean), 0.7)))
            ave = 'NaN' if k % 5 == 4 else ave
            spont = 'NaN' if k % 4 == 3 else repr(float(rng.lognormal(np.log(4.0), 0.5)))
            lines.append('%d %s %s "%s" %s' % (uid, 'NaN' if k % 3 else '0.1', ave, ct, spont))
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def tuning_angles(n):
    """tuning_angle (degrees) of neuron i: (47 i + 13) mod 360."""
    return [float((47 * i + 13) % 360) for i in range(n)]


def write_osi_table(path, seed=4):
    """OSI/DSI table in the Neuropixels v4 layout: per fixture type 5 kept rows, and per type one row with
    max_mean_rate(Hz) < 0.5, one with Ave_Rate(Hz) 0 and one with a NaN DSI (all three dropped by the filters);
    plus a type absent from the network."""
    rng = np.random.default_rng(seed)
    lines = ['ecephys_unit_id DSI OSI preferred_angle max_mean_rate(Hz) Ave_Rate(Hz) cell_type Spont_Rate(Hz)']
    uid = 960000000
    for ct in list(OBSERVED) + ['L6 VIP']:
        for k in range(8):
            uid += 1
            dsi, osi = rng.uniform(0.02, 0.5), rng.uniform(0.05, 0.7)
            mx, ave = rng.uniform(1.0, 30.0), rng.uniform(0.5, 20.0)
            if k == 5:
                mx = 0.4
            elif k == 6:
                ave = 0.0
            dsi = 'NaN' if k == 7 else repr(float(dsi))
            lines.append('%d %s %r 90.0 %r %r "%s" NaN' % (uid, dsi, float(osi), float(mx), float(ave), ct))
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def v1_sync_osi_losses(target_file, T=40.0):
    """Synchronization over the excitatory pool (window 5..T-3 ms, 20 pools, seed 7), over all core neurons (window
    4..T ms, 5 pools, default seed), both with listed targets (one per bin size of the window), and
    OrientationSelectivity with core + annulus, 8 directions, EMA decay 0.9; target_file: the OSI/DSI table."""
    targets = lambda w: [round(0.9 + 0.04 * k, 6) for k in range(len(sync_bin_sizes_ms(w)))]
    return [{"type": "Synchronization", "cost": 1.5, "pre_ms": 5.0, "post_ms": 3.0, "targets": targets(T - 8.0),
             "n_samples": 20, "seed": 7, "pool": "excitatory"},
            {"type": "Synchronization", "cost": 2.0, "pre_ms": 4.0, "targets": targets(T - 4.0), "n_samples": 5,
             "pool": "all", "core_radius": 100.0},
            {"type": "OrientationSelectivity", "cost": 20.0, "target_file": target_file, "pre_ms": 2.0,
             "post_ms": 1.0, "core_radius": 100.0, "annulus_weight": 0.1,
             "directions": [0.0, 45.0, 90.0, 135.0, 180.0, 225.0, 270.0, 315.0], "ema_decay": 0.9}]


def v1_losses(target_file):
    """Every key of the V1 losses: the paper's rate distribution (sampled, huber_quantile, spikes_per_step, per
    neuron, windows, core + annulus), a second one (quantiles, huber, Hz, per group, NaN-skipping column), a
    windowed TargetFiringRate and EMDWeightRegularization."""
    return [{"type": "TargetFiringRate", "cost": 1e-4, "target": 20.0, "pre_ms": 5.0, "post_ms": 3.0},
            {"type": "RateDistribution", "cost": 100.0, "target_file": target_file, "group_by": "cell_type",
             "rate_column": "Ave_Rate(Hz)", "append_zero": True, "targets": "sampled", "seed": 7,
             "penalty": "huber_quantile", "delta": 0.002, "unit": "spikes_per_step", "normalize": "neurons",
             "pre_ms": 10.0, "post_ms": 2.0, "core_radius": 100.0, "annulus_weight": 0.3},
            {"type": "RateDistribution", "cost": 0.01, "target_file": target_file, "group_by": "cell_type",
             "rate_column": "Spont_Rate(Hz)", "targets": "quantiles", "penalty": "huber", "delta": 5.0,
             "unit": "Hz", "normalize": "per_group", "pre_ms": 4.0},
            {"type": "VoltageRegularization", "cost": 0.1, "mode": "range"},
            {"type": "EMDWeightRegularization", "cost": 10.0, "group_by": "cell_type"}]


def edges(seed=11, extra=False):
    """vin -> each neuron (strong enough to make it spike), 44 distinct recurrent edges without self-loops; with
    extra, then vin -> each extra neuron and 30 more recurrent edges, each touching an extra neuron."""
    out = base_edges(seed)
    if not extra:
        return out
    rng = np.random.default_rng(seed + 1)
    types = NODE_TYPES + EXTRA_TYPES
    n0, n = len(NODE_TYPES), len(types)
    for i in range(n0, n):
        out.append(('vin', i % 3, i, float(rng.uniform(40, 90)), 1.0, 1 if i % 2 == 0 else 2, 1))
    pairs = set()
    while len(pairs) < 30:
        s, t = (int(v) for v in rng.integers(0, n, 2))
        if s != t and max(s, t) >= n0:
            pairs.add((s, t))
    for s, t in sorted(pairs, key=lambda p: (p[1], p[0])):
        nports = len(TYPES[types[t]][1]['tau_syn'])
        w = float(rng.uniform(5, 30)) * (-1.0 if TYPES[types[s]][0][0] == 'i' else 1.0)
        out.append(('rec', s, t, w, float(rng.integers(1, 4)), int(rng.integers(1, nports + 1)), 1))
    return out


def base_edges(seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(len(NODE_TYPES)):
        port = 1 if i % 2 == 0 else 2
        out.append(('vin', i % 3, i, float(rng.uniform(40, 90)), 1.0, port, 1))
    pairs = set()
    while len(pairs) < 44:
        s, t = (int(v) for v in rng.integers(0, len(NODE_TYPES), 2))
        if s != t:
            pairs.add((s, t))
    for s, t in sorted(pairs, key=lambda p: (p[1], p[0])):
        nports = len(TYPES[NODE_TYPES[t]][1]['tau_syn'])
        w = float(rng.uniform(5, 30)) * (-1.0 if TYPES[NODE_TYPES[s]][0][0] == 'i' else 1.0)
        out.append(('rec', s, t, w, float(rng.integers(1, 4)), int(rng.integers(1, nports + 1)), 1))
    return out


SPIKES = {'vin': {0: [1.0, 4.0, 5.0, 9.0, 13.0, 14.0, 18.0, 22.0, 25.0, 31.0, 36.0],
                  1: [2.0, 3.0, 10.0, 16.0, 24.0, 28.0, 35.0], 2: [1.0, 2.0, 3.0, 6.0, 8.0, 12.0, 20.0, 21.0, 33.0]}}
INPUTS = {"stim": {"input_type": "spikes", "module": "sonata", "input_file": "$D/spk_vin.h5", "node_set": "vin"},
          "noise": {"input_type": "poisson", "rate": 150.0, "node_set": "vin"}}


def write_fixture(d, T=40.0, B=2, train_extra=None, sync_osi=False, coverage=False):
    """Network, observed table and config in d; returns the config path. sync_osi: the 24-neuron network, the
    OSI/DSI table and the Synchronization / OrientationSelectivity losses (module docstring); coverage (with
    sync_osi): also what the floors and the pools' rows must get right (below)."""
    os.makedirs(d, exist_ok=True)
    target = os.path.join(os.path.abspath(d), 'observed_rates.csv')
    write_observed(target)
    losses = v1_losses(target)
    types, xz = NODE_TYPES + (EXTRA_TYPES if sync_osi else []), XZ + (EXTRA_XZ if sync_osi else [])
    if sync_osi:
        osi_table = os.path.join(os.path.abspath(d), 'osi_dsi.csv')
        write_osi_table(osi_table)
        losses += v1_sync_osi_losses(osi_table, T)
    train = {"surrogate": {"type": "triangle", "dampening_factor": 0.3, "sigma": 0.28},
             "voltage_gradient_dampening": 0.5, "recurrent_dampening_factor": 0.1,
             "trainable": {"recurrent": True, "vin": True}, "losses": losses,
             "optimizer": {"type": "adam", "lr": 0.01}}
    train.update(train_extra or {})
    cells = [('nest:glif_psc', TYPES[t][1], t) for t in types]
    virtual, eds, inputs = [('vin', 3)], edges(extra=sync_osi), dict(INPUTS)
    if sync_osi and coverage:
        # a running mean that reaches the 0.0005 floor, silent pools (a 3 ms window), and batch rows that differ
        # (a Poisson-driven virtual population): what the floors and the pools' rows must get right
        for L in losses:
            if L['type'] == 'OrientationSelectivity':
                L['ema_decay'] = 0.1
        losses.append({"type": "Synchronization", "cost": 1.0, "post_ms": T - 3.0, "targets": [0.9, 0.94],
                       "n_samples": 4, "pool": "all"})
        virtual.append(('vnz', 4))
        rng = np.random.default_rng(17)
        for i in range(len(types)):
            eds.append(('vnz', i % 4, i, float(rng.uniform(20, 50)), 1.0, 1 if i % 2 == 0 else 2, 1))
        inputs['noise2'] = {"input_type": "poisson", "rate": 100.0, "node_set": "vnz"}
        train['trainable']['vnz'] = True
    path = make_network(d, cells, virtual, eds,
                        {"dt": 1.0, "tstop": T, "seed": 5, "batch_size": B}, inputs, SPIKES, train,
                        type_columns={'pop_name': {t: p for t, (p, _) in TYPES.items()}},
                        node_attrs={'x': [p[0] for p in xz], 'z': [p[1] for p in xz],
                                    'tuning_angle': tuning_angles(len(types))})
    with open(path) as f:
        conf = json.load(f)
    conf['manifest']['$D'] = os.path.abspath(d)
    with open(path, 'w') as f:
        json.dump(conf, f, indent=1)
    return path


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out_dir')
    ap.add_argument('--tstop', type=float, default=40.0, help='run.tstop in ms (dt 1 ms)')
    ap.add_argument('--batch', type=int, default=2, help='run.batch_size')
    ap.add_argument('--sync-osi', action='store_true', help='24 neurons, plus Synchronization and OrientationSelectivity')
    a = ap.parse_args()
    print(write_fixture(a.out_dir, a.tstop, a.batch, sync_osi=a.sync_osi))
