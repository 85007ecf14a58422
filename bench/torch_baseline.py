#!/usr/bin/python3
"""PyTorch baseline of one dpointnet training update, for the benchmark comparison of the performance issue.

"A PyTorch implementation of the same model and size, written the way a careful PyTorch user would (sparse
products through embedding_bag, event-driven forward, 2 threads)": float32 on the CPU, torch.set_num_threads(2).

usage: /usr/bin/python3 bench/torch_baseline.py --config DIR/net_N/bench_train.json [--updates 2] [--threads 2]
       /usr/bin/python3 bench/torch_baseline.py --config ... --check [--steps T] [--batch B]   (float64 check)
scripts/bench-train-vs-torch runs the C++ benchmark and then this script on the config it wrote.

The config is the one `build/dpointnet-bench-train --neurons N --steps T --batch B --workdir DIR` writes
(DIR/net_N/bench_train.json). It is read with the independent oracle's loaders (regression/oracle: config,
SONATA, normalization of MODEL.md section 2, inputs, the "train" section), none of which share code with the C++.

One update = what dpointnet's `train_step` does (and bench/bench_train.cpp times):
  forward   input draws, T steps of MODEL.md section 4 for a batch of B samples from the zero state, losses
            (section 7: TargetFiringRate target 5 Hz cost 1 + VoltageRegularization cost 0.1 in the bench config);
  backward  loss.backward() through autograd (BPTT over all T steps, no time checkpointing: autograd keeps the
            graph of every step, which fits easily at the bench sizes);
  update    torch.optim.Adam (lr 1e-3, betas 0.9/0.999, eps 1e-11 from the config, same formula as section 8)
            on the three surfaces recurrent, lgn, bkg (one nn.Parameter-like leaf each), optional global-norm
            clipping, then the sign constraint (Dale's law) of section 8.
One warm-up update, then --updates timed ones; the line printed gives the mean per timed update.

Model and sparse products: the neuron step and the training update (class Baseline) are in
bench/torch_baseline_model.py; the sparse drive and transposed products (class Edges, the autograd functions
EventDrive and BagDrive, the --drive and --transpose options) are in bench/torch_baseline_ops.py, whose
docstrings describe them. This file holds the command line, the --check comparison, the timing and printing.

torch.set_flush_denormal(True) is on by default (--no-flush-denormal to keep subnormals): the float32 PSC states
and adjoints decay into subnormal numbers after some tens of steps, which makes every elementwise op 10-30x
slower (an update at N=5000, T=100, --drive events: 21.8 s without the flush, 1.77 s with it).

Inputs. The bench config's Bernoulli "rates" (LGN) and "poisson" (background) inputs are drawn with torch's RNG at
the configured per-node rates (p = 1 - exp(-rate dt), Poisson with mean rate dt): the same activity level as
dpointnet's counter-based Philox draws, not the same draws. Spike-file inputs are read as they are.
--inputs oracle takes the exact Philox draws of MODEL.md section 6.3 from the oracle instead (slow, numpy).

Correctness check (--check): float64, --inputs oracle (the exact Philox draws), the first update's samples
0..B-1 at the initial weights; then the oracle's Trainer (float64 autograd, dense EdgeDrive) on the same config
and samples; prints both losses, spike counts and the largest gradient difference per surface, and fails unless
the spike counts agree, the losses agree to 1e-9 relative and the gradients to 1e-8 of the largest gradient.
On the dpointnet-bench-train network N=1000, T=50, B=16 (404256 edges, `--check` as is, 10-60 s): the same
11632 spikes, the same loss 282.650020037515 (difference 0), gradients equal to 3.4e-16 relative per surface
(float64 sums in another order), with both --drive options and all three --transpose options (checked at
T=20, B=4 for the non-default ones). In float32 with torch draws the mean rate of that network is 14.0-14.7 Hz,
as the C++ run's printed "rate" (14.60 Hz).
"""
import argparse
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'regression'))

import numpy as np                                                   # noqa: E402
import torch                                                         # noqa: E402

from oracle.config import load_config                                # noqa: E402
from torch_baseline_model import Baseline                            # noqa: E402


def peak_rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024.0 * 1024.0)


def check(conf, args):
    """float64, the oracle's exact input draws: compare loss, spikes and gradients with the oracle Trainer."""
    from oracle.train import Trainer
    bl = Baseline(conf, torch.float64, args.drive, args.transpose, inputs='oracle')
    t0 = time.perf_counter()
    res = bl.step(keep_grads=True)
    t1 = time.perf_counter()
    tr = Trainer(conf)
    samples = np.arange(0, tr.B, dtype=np.int64)
    ref = tr.loss_and_grad(samples)
    t2 = time.perf_counter()
    print('check (float64, oracle input draws, samples 0..%d, T=%d): baseline loss %.15g spikes %d rate %.4f Hz '
          '(%.1f s); oracle loss %.15g spikes %d rate %.4f Hz (%.1f s); |loss diff| %.3g (rel %.3g)'
          % (tr.B - 1, tr.T, res['total'], res['spikes'], res['rate'], t1 - t0, ref['total'], ref['n_spikes'],
             ref['rate_mean_hz'], t2 - t1, abs(res['total'] - ref['total']),
             abs(res['total'] - ref['total']) / max(abs(ref['total']), 1e-300)))
    ok = res['spikes'] == ref['n_spikes'] and abs(res['total'] - ref['total']) <= 1e-9 * abs(ref['total'])
    for s, g in res['grads'].items():
        lo, hi = bl.edges.surfaces[s]
        orig = bl.edges.order[lo:hi]                       # edge indices, in this script's order
        inv = np.empty(bl.net.e_w.shape[0], np.int64)
        inv[bl.tm.surface_edges[s]] = np.arange(len(bl.tm.surface_edges[s]))
        gref = ref['grads'][s][inv[orig]]
        gm = g.numpy()
        scale = max(np.abs(gref).max(), 1e-300)
        diff = np.abs(gm - gref).max()
        print('  grad %-9s %8d edges: max |grad| %.6g, max |diff| %.3g (rel %.3g)' % (s, len(gm), scale, diff,
                                                                                       diff / scale))
        ok = ok and diff <= 1e-8 * scale
    print('check', 'OK' if ok else 'FAILED')
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--config', required=True, help='DIR/net_N/bench_train.json of dpointnet-bench-train')
    ap.add_argument('--updates', type=int, default=2, help='timed updates after one warm-up update')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--precision', choices=('float32', 'float64'), default='float32')
    ap.add_argument('--transpose', choices=('bag', 'index_add', 'csr'), default='bag',
                    help='implementation of the transposed sparse product (dL/dz)')
    ap.add_argument('--drive', choices=('bag', 'events'), default='bag',
                    help='forward drive: embedding_bag pull over all edges, or event-driven index_add_')
    ap.add_argument('--inputs', choices=('torch', 'oracle'), default='torch',
                    help='input draws: torch RNG at the configured rates, or the oracle\'s exact Philox draws')
    ap.add_argument('--no-flush-denormal', action='store_true',
                    help='keep subnormal floats (default: torch.set_flush_denormal(True))')
    ap.add_argument('--steps', type=int, help='override T (run.tstop / dt)')
    ap.add_argument('--batch', type=int, help='override B')
    ap.add_argument('--check', action='store_true', help='float64 comparison with the oracle Trainer')
    args = ap.parse_args()
    if args.updates < 1:
        ap.error('--updates must be >= 1')
    torch.set_num_threads(args.threads)
    flush = not args.no_flush_denormal and torch.set_flush_denormal(True)
    conf = load_config(args.config)
    if args.steps is not None:
        conf['run']['tstop'] = args.steps * float(conf['run']['dt'])
        conf['run'].pop('duration', None)
    if args.batch is not None:
        conf['run']['batch_size'] = args.batch
    if args.check:
        return check(conf, args)
    dtype = torch.float32 if args.precision == 'float32' else torch.float64
    bl = Baseline(conf, dtype, args.drive, args.transpose, args.inputs)
    bl.step()                                           # warm-up
    acc = {'forward': 0.0, 'backward': 0.0, 'update': 0.0}
    for _ in range(args.updates):
        last = bl.step()
        for k in acc:
            acc[k] += last[k]
    n = args.updates
    step = sum(acc.values()) / n
    print('torch %7d neurons %10d edges T=%d B=%d %s: step %8.3f s (forward %.3f + backward %.3f + update %.4f); '
          '%8.2f samples/s; peak RSS %.2f GiB; rate %.2f Hz; loss %.6g [drive %s, transpose %s, %d threads%s]'
          % (bl.net.N, bl.edges.E, bl.T, bl.B, args.precision, step, acc['forward'] / n, acc['backward'] / n,
             acc['update'] / n, bl.B / step, peak_rss_gib(), last['rate'], last['total'], args.drive,
             args.transpose, torch.get_num_threads(), ', flush denormals' if flush else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
