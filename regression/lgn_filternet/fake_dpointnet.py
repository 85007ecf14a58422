#!/usr/bin/python3
"""A stand-in for `dpointnet simulate CONFIG` that writes only what the FilterNet comparison reads, from FilterNet's
own rates: <output_dir>/lgn_rates.h5 (/rates float32 [sample][step][unit]) and stimulus_samples.csv ("random"
values drawn here). It tests the harness: against it the comparison must pass and every mutation must fail.

  fake_dpointnet.py --filternet DIR simulate CONFIG.json

FAKE_DPOINTNET_BUG (to see the harness fail): "shift" (rates one step late), "csv" (direction + 1 in
stimulus_samples.csv), "float64" (rates written as float64).
"""
import argparse
import csv
import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lgn_filternet import cases, compare, filternet  # noqa: E402


def inject_bug(bug, rates, table):
    if bug == 'shift':
        rates = np.concatenate([rates[:, :1], rates[:, :-1]], axis=1)
    if bug == 'csv':
        for row in table.values():
            if row['direction'] not in ('', None):
                row['direction'] = repr(float(row['direction']) + 1.0)
    return rates, table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--filternet', required=True, help='the unpacked FilterNet tarball')
    ap.add_argument('command', choices=['simulate'])
    ap.add_argument('config')
    a = ap.parse_args()
    bug = os.environ.get('FAKE_DPOINTNET_BUG', '')
    filternet.load(a.filternet)
    cfg = json.load(open(a.config))
    spec = cfg['inputs']['lgn']
    T, batch = int(round(cfg['run']['tstop'] / cfg['run']['dt'])), cfg['run']['batch_size']
    lgn = [n for n in cfg['networks']['nodes'] if n['nodes_file'].endswith('lgn_nodes.h5')][0]
    cells = filternet.build_cells(filternet.read_nodes(lgn['nodes_file'], lgn['node_types_file']))
    table = cases.samples_table(spec['stimulus'], batch, np.random.default_rng(cfg['run'].get('seed', 0)))
    params, problems = compare.resolve_params(spec['stimulus'], batch, table)
    assert not problems, problems
    rates = compare.filternet_set(cells, spec, T, params, compare.read_movie(spec))
    rates, table = inject_bug(os.environ.get('FAKE_DPOINTNET_BUG', ''), rates, table)
    samples = cfg['output']['lgn_rates']['samples']
    out = cfg['output']['output_dir']
    os.makedirs(out, exist_ok=True)
    with h5py.File(os.path.join(out, 'lgn_rates.h5'), 'w') as h:
        h.create_dataset('rates', data=rates[samples].astype(np.float64 if bug == 'float64' else np.float32))
    with open(os.path.join(out, 'stimulus_samples.csv'), 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=cases.SAMPLES_COLUMNS)
        w.writeheader()
        w.writerows(table[k] for k in range(batch))
    return 0


if __name__ == '__main__':
    sys.exit(main())
