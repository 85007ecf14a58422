#!/usr/bin/python3
"""Run the training oracle (BPTT + Adam, PyTorch float64) on a SONATA config with a "train" section.

usage: /usr/bin/python3 regression/run_grad_oracle.py TRAIN_CONFIG.json --out result.h5 [--updates K]

Writes HDF5 (all weights normalized, i.e. weight_pA / (V_th - E_L) of the target):
  /loss/total [K], /loss/<LossType> [K] (suffix _1, _2.. when a type appears more than once; the terms of
                                   train.losses when every condition uses them)
  /loss/<condition>/total, /loss/<condition>/<LossType> [K]   with train.conditions: each condition's losses
  /grad/<surface> [E_s]            gradient of the FIRST optimizer step's loss (before clipping), trainable surfaces
  /weights/<surface> [K+1, E_s]    before the first update and after each update, all surfaces
  /adam/m/<surface>, /adam/v/<surface> after the last update (trainable surfaces), /adam@step = optimizer
                                   steps (K, or K x conditions for train.approach "series")
  /rate_mean_hz [K]                mean rate over samples and neurons of each update's batch
  /loss_state/<name> [K, N]        OrientationSelectivity's normaliser after each update's EMA step
                                   (/loss_state/<condition>/<name> with train.conditions)
"""
import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h5py                                           # noqa: E402
import numpy as np                                    # noqa: E402
from oracle.config import load_config                 # noqa: E402
from oracle.train import Trainer                      # noqa: E402


def run_training(config_path, K, log=print):
    conf = load_config(config_path)
    t0 = time.time()
    tr = Trainer(conf)
    m = tr.model
    log('grad oracle: %s; N=%d, J=%d, E=%d, R=%d, max delay %d; surfaces %s; trainable %s'
        % (tr.run, m.N, m.J, m.E, m.R, m.D,
           ', '.join('%s(%d)' % (s, len(m.surface_edges[s])) for s in m.surface_names),
           [s for s in m.surface_names if tr.tc.trainable[s]]))
    hist = {'total': [], 'terms': {}, 'conditions': {}, 'rate': [], 'loss_state': {},
            'weights': {s: [tr.w[s].copy()] for s in m.surface_names}}
    first_grad = None
    for k in range(K):
        t1 = time.time()
        res = tr.step()
        if first_grad is None:
            first_grad = res['grads']
        hist['total'].append(res['total'])
        for n, v in res['terms'].items():
            hist['terms'].setdefault(n, []).append(v)
        for c, d in res['conditions'].items():
            hist['conditions'].setdefault(c + '/total', []).append(d['total'])
            for n, v in d['terms'].items():
                hist['conditions'].setdefault(c + '/' + n, []).append(v)
        hist['rate'].append(res['rate_mean_hz'])
        for n, v in res['loss_state'].items():
            hist['loss_state'].setdefault(n, []).append(v)
        for s in m.surface_names:
            hist['weights'][s].append(tr.w[s].copy())
        log('update %d: samples %d..%d loss %.10g [%s] rate %.4f Hz spikes %d |grad| %.6g (%.2f s)'
            % (k + 1, k * tr.B, k * tr.B + tr.B - 1, res['total'],
               ' '.join('%s=%.6g' % kv for kv in res['terms'].items()), res['rate_mean_hz'],
               res['n_spikes'], res['grad_norm'], time.time() - t1))
    log('total %.2f s' % (time.time() - t0))
    return tr, hist, first_grad


def write_result(path, tr, hist, first_grad, K):
    m = tr.model
    with h5py.File(path, 'w') as h:
        h.attrs['config'] = tr.conf.get('config_path', '')
        h.attrs['surfaces'] = np.array(m.surface_names, dtype=h5py.string_dtype())
        h.attrs['batch_size'] = tr.B
        h.attrs['n_steps'] = tr.T
        h.attrs['dt'] = tr.dt
        h.create_dataset('loss/total', data=np.array(hist['total'], np.float64))
        for n, v in list(hist['terms'].items()) + list(hist['conditions'].items()):
            h.create_dataset('loss/' + n, data=np.array(v, np.float64))
        for s, g in (first_grad or {}).items():
            h.create_dataset('grad/' + s, data=np.asarray(g, np.float64))
        for s in m.surface_names:
            d = h.create_dataset('weights/' + s, data=np.array(hist['weights'][s], np.float64).reshape(
                K + 1, len(m.surface_edges[s])))
            d.attrs['trainable'] = int(tr.tc.trainable[s])
        g = h.create_group('adam')
        g.attrs['step'] = tr.adam.k
        for s in m.surface_names:
            if s in tr.adam.m:
                g.create_dataset('m/' + s, data=tr.adam.m[s])
                g.create_dataset('v/' + s, data=tr.adam.v[s])
        h.create_dataset('rate_mean_hz', data=np.array(hist['rate'], np.float64))
        for n, v in hist['loss_state'].items():
            h.create_dataset('loss_state/' + n, data=np.array(v, np.float64))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('config')
    ap.add_argument('--out', required=True)
    ap.add_argument('--updates', type=int, default=1, help='number of updates K (default 1)')
    a = ap.parse_args(argv)
    if a.updates < 1:
        ap.error('--updates must be >= 1')
    with warnings.catch_warnings():
        warnings.simplefilter('default')
        tr, hist, first_grad = run_training(a.config, a.updates)
    d = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(d, exist_ok=True)
    write_result(a.out, tr, hist, first_grad, a.updates)
    print('wrote %s' % a.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
