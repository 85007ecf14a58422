#!/usr/bin/python3
"""A training update on a busy node: `dpointnet train` quiet and beside one busy process (bench/README.md, "What
does a busy process on the same cores cost?").

The network is `dpointnet generate -n N --seed 1` (kept in WORKDIR/net_N, shared with scripts/bench-vs-nest); the
config trains it with B samples of T ms (dt 1 ms, Poisson LGN 10 Hz and background 250 Hz, TargetFiringRate
4 Hz, recurrent and LGN weights trainable, Adam) for U updates. Per round, in this order: 1 thread and 2 threads on
a quiet machine, then beside one spinning process (a Python loop started before and killed after): 1 thread, 2
threads kept (DPOINTNET_ADAPT_THREADS=0, "fixed") and 2 threads fitted to the cores at start-up (the default,
"fitted"; the threads it ran are read from its warning). A run's time is the median of the `seconds` column of
metrics.csv over updates 2..U (the first update pays first touches). Prints each run and, per mode, every round's
time and its ratio to the same round's quiet 2-thread time.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import time

MODES = [('1T quiet', 1, False, False), ('2T quiet', 2, False, False), ('1T busy', 1, False, True),
         ('2T busy fixed', 2, False, True), ('2T busy fitted', 2, True, True)]


def network(binary, work, n):
    net = os.path.join(work, 'net_%d' % n)
    if not os.path.exists(os.path.join(net, 'config.circuit.json')):
        subprocess.run([binary, 'generate', '--out', net, '-n', str(n), '--seed', '1', '--overwrite'], check=True,
                       stdout=subprocess.DEVNULL)
    return net


def write_config(path, net, out, a):
    cfg = {'network': os.path.join(net, 'config.circuit.json'),
           'run': {'dt': 1.0, 'tstop': float(a.steps), 'seed': 7, 'batch_size': a.batch, 'precision': 'float32'},
           'inputs': {'LGN': {'input_type': 'rates', 'node_set': 'lgn', 'rate': 10.0},
                      'BKG': {'input_type': 'poisson', 'node_set': 'bkg', 'rate': 250.0}},
           'output': {'output_dir': out, 'log_file': 'log.txt', 'overwrite_output_dir': True},
           'train': {'steps': a.updates, 'checkpoint_interval': 25, 'save_checkpoint_every': 1000000,
                     'trainable': {'recurrent': True, 'lgn': True, 'bkg': False},
                     'losses': [{'type': 'TargetFiringRate', 'cost': 1.0, 'target': 4.0, 'unit': 'Hz'}],
                     'optimizer': {'type': 'adam', 'lr': 0.01}}}
    with open(path, 'w') as f:
        json.dump(cfg, f, indent=1)


def run(binary, cfg, out, threads, fitted):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND='false')
    env.pop('DPOINTNET_ADAPT_THREADS', None)
    if not fitted:
        env['DPOINTNET_ADAPT_THREADS'] = '0'
    p = subprocess.run([binary, 'train', cfg, '--no-progress'], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit('dpointnet train failed (exit %d):\n%s' % (p.returncode, p.stderr))
    with open(os.path.join(out, 'metrics.csv')) as f:
        rows = list(csv.DictReader(f))
    m = re.search(r'running (\d+) host threads? instead of', p.stderr)
    return statistics.median(float(r['seconds']) for r in rows[1:]), int(m.group(1)) if m else threads


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--bin', default='build/dpointnet', help='the dpointnet executable (default %(default)s)')
    ap.add_argument('--neurons', type=int, default=5000)
    ap.add_argument('--batch', type=int, default=16)
    ap.add_argument('--steps', type=int, default=100, help='T, ms at dt 1 (default %(default)s)')
    ap.add_argument('--updates', type=int, default=5, help='updates per run, >= 2 (default %(default)s)')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--workdir', default=os.path.join(os.environ.get('DPOINTNET_BENCH_DIR', '/tmp/dpointnet-bench'),
                                                      'nest'))
    a = ap.parse_args()
    if a.updates < 2 or a.rounds < 1:
        ap.error('--updates must be at least 2 and --rounds at least 1')
    binary = os.path.abspath(a.bin)
    net = network(binary, a.workdir, a.neurons)
    out = os.path.join(a.workdir, 'train_busy_out')
    cfg = os.path.join(a.workdir, 'train_busy_%d.json' % a.neurons)
    write_config(cfg, net, out, a)
    print('# %s, %d cores, load average %s; %d neurons, B %d, T %d, median of updates 2-%d' %
          (time.strftime('%Y-%m-%d'), os.cpu_count(), ' '.join('%.2f' % x for x in os.getloadavg()), a.neurons,
           a.batch, a.steps, a.updates), flush=True)
    res = {m[0]: [] for m in MODES}
    for r in range(a.rounds):
        spin = None
        try:
            for name, threads, fitted, busy in MODES:
                if busy and spin is None:
                    spin = subprocess.Popen(['/usr/bin/python3', '-c', 'while True: pass'])
                    time.sleep(1)
                res[name].append(run(binary, cfg, out, threads, fitted))
                print('# round %d, %s: %.3f s per update (%d thread(s))' % (r + 1, name, *res[name][-1]), flush=True)
        finally:
            if spin is not None:
                spin.kill()
                spin.wait()
    quiet2 = [t for t, _ in res['2T quiet']]
    print('\n| mode | seconds per update (threads run), by round | / quiet 2 threads |\n|---|---|---|')
    for name, v in res.items():
        print('| %s | %s | %s |' % (name, ', '.join('%.3f (%d)' % tu for tu in v),
                                    ', '.join('%.2fx' % (t / q) for (t, _), q in zip(v, quiet2))))
    print('\nload average after ' + ' '.join('%.2f' % x for x in os.getloadavg()))


if __name__ == '__main__':
    main()
