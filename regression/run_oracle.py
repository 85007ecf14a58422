#!/usr/bin/python3
"""Run the Python oracle on a SONATA simulation config.

usage: /usr/bin/python3 regression/run_oracle.py CONFIG --out DIR [--batch-size B] [--record-v]
                                                 [--first-sample S]
Writes DIR/spikes_sample<b>.h5 (BMTK layout) and, with --record-v, DIR/v_sample<b>.npy
(normalized v' after each step, [T, N], neurons in population/file order)."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np                                    # noqa: E402
from oracle.config import load_config, RunParams      # noqa: E402
from oracle.model import load_model, simulate, spikes_by_population   # noqa: E402
from oracle.sonata import write_spike_file            # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('config')
    ap.add_argument('--out', required=True)
    ap.add_argument('--batch-size', type=int, default=None)
    ap.add_argument('--first-sample', type=int, default=0,
                    help='global index of the first sample (default 0)')
    ap.add_argument('--record-v', action='store_true')
    a = ap.parse_args(argv)
    t0 = time.time()
    conf = load_config(a.config)
    run = RunParams(conf)
    B = a.batch_size if a.batch_size is not None else run.batch_size
    net, inputs, run = load_model(conf, run)
    t1 = time.time()
    print('oracle: %s; N=%d recurrent, J=%d virtual, %d edges, R=%d, max delay %d steps; B=%d'
          % (run, net.N, net.J, len(net.e_w), net.R, net.D, B))
    res = simulate(net, inputs, run.n_steps, B, first_sample=a.first_sample, record_v=a.record_v)
    t2 = time.time()
    os.makedirs(a.out, exist_ok=True)
    T = run.n_steps
    for bi in range(B):
        b = a.first_sample + bi
        z = res['z'][bi]
        write_spike_file(os.path.join(a.out, 'spikes_sample%d.h5' % b), spikes_by_population(net, z, run.dt))
        if a.record_v:
            np.save(os.path.join(a.out, 'v_sample%d.npy' % b), res['v'][bi])
        n = int(z.sum())
        rate = n / (net.N * T * run.dt / 1000.0) if net.N and T else 0.0
        print('sample %d: %d spikes, mean rate %.4f Hz' % (b, n, rate))
    print('load %.2f s, simulate %.2f s' % (t1 - t0, t2 - t1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
