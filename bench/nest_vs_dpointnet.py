#!/usr/bin/env python3
"""NEST 3.8 against dpointnet's nest mode (`run.dynamics: "nest"`, float64) on generated networks: the same SONATA
files, the same fixed Poisson spike-file inputs, spike for spike, with the time of each phase.

  scripts/bench-vs-nest [--sizes 1000,5000,20000] [--dts 1,0.1] [--tstop 1000] [--repeats 3] [--threads 1,2] [--busy]
                        [--build DIR] [--workdir DIR]

Per size N: `dpointnet generate -n N --seed 1` into WORKDIR/net_N (kept and reused), and one input spike file per
virtual population (lgn, bkg) in WORKDIR/net_N/inputs_tTSTOP: Poisson trains at the rates of the generated config
(LGN 10 Hz, background 250 Hz; numpy seed 1), every time in the middle of a 0.1 ms bin, so that both simulators put
it in the same step at dt 1 and 0.1. Both read these files: NEST through regression/bmtk_network.py, set up the way
BMTK PointNet does (one CopyModel + Create per node type, spike_generators with precise_times, one_to_one Connect
per edge type, local_num_threads 1), dpointnet through `dpointnet simulate` with spike-file inputs.
Per size and dt, REPEATS rounds, each in the order NEST, dpointnet with each of THREADS (OMP_NUM_THREADS,
OMP_PROC_BIND=false, DPOINTNET_ADAPT_THREADS=0: exactly that many); medians. With --busy, dpointnet again beside one
spinning process, with the threads fixed and with them fitted to the cores (DPOINTNET_ADAPT_THREADS=1). Every run's set of (node id, spike step) must equal the first NEST run's: any
difference stops the script (exit 1) with the first differences listed.
Times: NEST read = bmtk_network reading the files in Python (once per size); load = ResetKernel to the last Connect;
Prepare, Run, Cleanup timed apart, Simulate = their sum. dpointnet's own `phases:` log line: load (reading the files and
preparing the inputs), build (the simulator's set-up and reset), run (the step loop, spike recording included) and
the steps per min-delay window; process = the whole command's wall time (Kokkos start-up and exit included).
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'regression'))
import bmtk_network  # noqa: E402

BIN_MS = 0.1  # input times lie in the middle of bins of this width


def floats(s):
    return [float(x) for x in s.split(',')]


def generate(binary, work, n):
    net = os.path.join(work, 'net_%d' % n)
    if not os.path.exists(os.path.join(net, 'config.simulation.json')):  # written last
        r = subprocess.run([binary, 'generate', '--out', net, '-n', str(n), '--seed', '1', '--overwrite'],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit('dpointnet generate failed (exit %d):\n%s' % (r.returncode, r.stderr[-3000:]))
    return net


def write_inputs(net, tstop, seed=1):
    """One SONATA spike file per virtual population, Poisson at the generated config's rates; {pop: path}."""
    gen = json_load(os.path.join(net, 'config.simulation.json'))
    out = os.path.join(net, 'inputs_t%g' % tstop)
    os.makedirs(out, exist_ok=True)
    files = {}
    for k, (name, inp) in enumerate(sorted(gen['inputs'].items())):
        pop = inp['node_set']
        path = files[pop] = os.path.join(out, pop + '_spikes.h5')
        if os.path.exists(path):
            continue
        with h5py.File(os.path.join(net, 'network', pop + '_nodes.h5')) as h:
            ids = h['nodes/%s/node_id' % pop][()].astype(np.int64)
        rng = np.random.default_rng([seed, k])
        counts = rng.poisson(float(inp['rate']) * tstop / 1000.0, len(ids))
        nid = np.repeat(ids, counts)
        t = (np.floor(rng.uniform(0.0, tstop, len(nid)) / BIN_MS) + 0.5) * BIN_MS
        order = np.lexsort((nid, t))
        with h5py.File(path + '.tmp', 'w') as h:
            h.attrs['magic'] = np.uint32(0x0A7A)
            h.attrs['version'] = np.array([0, 1], np.uint32)
            g = h.create_group('spikes/' + pop)
            g.attrs['sorting'] = 'by_time'
            g.create_dataset('timestamps', data=t[order]).attrs['units'] = 'ms'
            g.create_dataset('node_ids', data=nid[order])
        os.replace(path + '.tmp', path)
    return files


def json_load(path):
    with open(path) as f:
        return json.load(f)


def nest_run(nest, net, dt, tstop):
    """NEST as BMTK PointNet sets it up (compare_nest_mode.py's nest_run, ids mapped by arrays); spike set, times."""
    t0 = time.perf_counter()
    nest.ResetKernel()
    nest.set_verbosity('M_ERROR')
    nest.SetKernelStatus({'resolution': dt, 'local_num_threads': 1})  # before any Create (pointsimulator.py)
    gid = {'v1': np.zeros(1 + max(c[0] for c in net.cells), np.int64)}
    for t, model, params, node_ids in net.types:
        name = 'bmtk_type_%d' % t
        nest.CopyModel(model, name, params)
        gid['v1'][node_ids] = nest.Create(name, len(node_ids)).tolist()
    for pop, times in net.virtual.items():
        ids = list(times)
        sgs = nest.Create('spike_generator', len(ids), {'precise_times': True})
        sgs.set([{'spike_times': times[i].tolist()} for i in ids])
        gid[pop] = np.zeros(1 + max(ids), np.int64)
        gid[pop][ids] = sgs.tolist()
    for e in net.edges:
        syn = {'synapse_model': e['model'], 'weight': e['weight'], 'delay': e['delay']}
        syn.update(e['syn'])
        nest.Connect(gid[e['src_pop']][e['src']], gid['v1'][e['trg']], 'one_to_one', syn)
    v1_ids = [c[0] for c in net.cells]
    sr = nest.Create('spike_recorder')
    nest.Connect(nest.NodeCollection(sorted(gid['v1'][v1_ids].tolist())), sr)
    t1 = time.perf_counter()
    nest.Prepare()
    t2 = time.perf_counter()
    nest.Run(tstop)
    t3 = time.perf_counter()
    nest.Cleanup()
    t4 = time.perf_counter()
    back = np.full(1 + int(gid['v1'].max()), -1, np.int64)
    back[gid['v1'][v1_ids]] = v1_ids
    ev = sr.get('events')
    steps = np.rint(np.asarray(ev['times']) / dt).astype(np.int64)
    spikes = set(zip(back[np.asarray(ev['senders'], np.int64)].tolist(), steps.tolist()))
    return spikes, {'load': t1 - t0, 'prepare': t2 - t1, 'run': t3 - t2, 'cleanup': t4 - t3, 'simulate': t4 - t1}


def dpointnet_config(work, net, files, n, dt, tstop):
    gen = json_load(os.path.join(net, 'config.simulation.json'))
    cfg = {'network': os.path.join(net, 'config.circuit.json'), 'target_simulator': 'NEST',
           'run': {'dt': dt, 'tstop': tstop, 'seed': 1, 'dynamics': 'nest', 'precision': 'float64'},
           'inputs': {name: {'input_type': 'spikes', 'module': 'sonata', 'node_set': inp['node_set'],
                             'input_file': files[inp['node_set']]} for name, inp in gen['inputs'].items()},
           'output': {'output_dir': os.path.join(work, 'out_%d_dt%g' % (n, dt)), 'spikes_file': 'spikes.h5',
                      'log_file': 'log.txt', 'overwrite_output_dir': True}}
    path = os.path.join(work, 'simulate_%d_dt%g.json' % (n, dt))
    with open(path, 'w') as f:
        json.dump(cfg, f, indent=1)
    return path, cfg['output']['output_dir']


STAMP = re.compile(r'^\[(\d\d):(\d\d):(\d\d)\.(\d\d\d)\] \[\w+\] (.*)$')


def log_phases(text):
    """load, build, run (dpointnet's `phases:` line), threads, window, spikes of a simulate log."""
    msgs = [m[5] for m in map(STAMP.match, text.splitlines()) if m]
    find = lambda pat: next((x for x in msgs if x.startswith(pat)), None)
    done, phases, kokkos = find('done: '), find('phases: '), find('Kokkos ')
    if not (done and phases and kokkos):
        raise ValueError('unexpected simulate log:\n' + text[-3000:])
    ph = re.search(r'load ([0-9.]+) s, build ([0-9.]+) s, run ([0-9.]+) s \((\d+) steps per window\)', phases)
    return {'load': float(ph[1]), 'build': float(ph[2]), 'run': float(ph[3]), 'window': int(ph[4]),
            'threads': int(re.search(r'\((\d+) threads', kokkos)[1]),
            'spikes': int(re.search(r'done: (\d+) spikes', done)[1])}


def dpointnet_run(binary, cfg, out, dt, threads, fit=False):
    """One simulate run on `threads` OpenMP threads; with `fit`, dpointnet may fit them to the cores it gets
    (DPOINTNET_ADAPT_THREADS=1, its default) and ph['threads'] says how many ran."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND='false', DPOINTNET_ADAPT_THREADS=str(int(fit)))
    t0 = time.perf_counter()
    r = subprocess.run([binary, 'simulate', cfg, '--no-progress'], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if r.returncode:
        sys.exit('dpointnet simulate failed (exit %d):\n%s' % (r.returncode, (r.stdout + r.stderr)[-3000:]))
    ph = log_phases(r.stdout + '\n' + r.stderr)
    if ph['threads'] != threads and not fit:
        sys.exit('dpointnet ran on %d threads, not %d (OMP_NUM_THREADS)' % (ph['threads'], threads))
    ph['process'] = wall
    with h5py.File(os.path.join(out, 'spikes.h5')) as h:
        steps = np.rint(h['spikes/v1/timestamps'][()] / dt).astype(np.int64)
        spikes = set(zip(h['spikes/v1/node_ids'][()].astype(np.int64).tolist(), steps.tolist()))
    return spikes, ph


def check(ref, got, what, dt):
    if ref == got:
        return
    a, b = sorted(ref - got), sorted(got - ref)
    lines = ['SPIKES DIFFER: %s, dt %g ms: %d spikes only in NEST, %d only in %s' % (what, dt, len(a), len(b), what)]
    lines += ['  only NEST: node %d at %.4f ms' % (n, k * dt) for n, k in a[:10]]
    lines += ['  only %s: node %d at %.4f ms' % (what, n, k * dt) for n, k in b[:10]]
    sys.exit('\n'.join(lines))


def machine():
    model = next((ln.split(':', 1)[1].strip() for ln in open('/proc/cpuinfo') if ln.startswith('model name')), '?')
    return '%d cores, %s' % (os.cpu_count(), model)


def loadavg():
    return ' '.join('%.2f' % x for x in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--sizes', default='1000,5000,20000', help='neurons, comma-separated (%(default)s)')
    ap.add_argument('--dts', default='1,0.1', help='time steps (ms), comma-separated (%(default)s)')
    ap.add_argument('--tstop', type=float, default=1000.0, help='simulated time (ms; %(default)s)')
    ap.add_argument('--repeats', type=int, default=3, help='alternated rounds per size and dt, medians (%(default)s)')
    ap.add_argument('--threads', default='1,2', help="dpointnet's OpenMP thread counts, comma-separated (%(default)s)")
    ap.add_argument('--busy', action='store_true',
                    help='then run dpointnet again beside one busy process (a Python spin loop) and print busy / quiet')
    ap.add_argument('--build', default=os.environ.get('DPOINTNET_BUILD_DIR', os.path.join(ROOT, 'build')),
                    help='build folder with dpointnet ($DPOINTNET_BUILD_DIR, else build: %(default)s)')
    bench_dir = os.environ.get('DPOINTNET_BENCH_DIR', '/tmp/dpointnet-bench')
    ap.add_argument('--workdir', default=os.path.join(bench_dir, 'nest'),
                    help='networks, inputs, configs, outputs ($DPOINTNET_BENCH_DIR/nest: %(default)s)')
    a = ap.parse_args()
    sizes = [int(x) for x in floats(a.sizes)]
    dts, threads = floats(a.dts), [int(x) for x in floats(a.threads)]
    binary = os.path.abspath(os.path.join(a.build, 'dpointnet'))
    if not os.access(binary, os.X_OK):
        sys.exit('no dpointnet executable at %s (build it, or pass --build)' % binary)
    try:
        import nest
    except ImportError as e:
        sys.exit('PyNEST is not importable (%s): run scripts/setup-nest and put the path that '
                 '`scripts/setup-nest --pythonpath` prints on PYTHONPATH (scripts/bench-vs-nest does)' % e)
    os.makedirs(a.workdir, exist_ok=True)
    load0 = loadavg()
    print('# %s %s; load average %s' % (datetime.date.today().isoformat(), machine(), load0))
    print('# NEST %s (%s), local_num_threads 1; dpointnet %s, run.dynamics nest, float64, OMP_PROC_BIND=false'
          % (nest.__version__, os.path.dirname(nest.__file__), binary))
    print('# command: %s' % ' '.join(['scripts/bench-vs-nest'] + sys.argv[1:]), flush=True)
    rows, busy_rows = [], []
    for n in sizes:
        net = generate(binary, a.workdir, n)
        files = write_inputs(net, a.tstop)
        t0 = time.perf_counter()
        network = bmtk_network.Network(net, os.path.join(net, 'components'), lgn='lgn', more_virtual=('bkg',),
                                       inputs=os.path.dirname(files['lgn']))
        read = time.perf_counter() - t0
        n_edges = sum(len(e['src']) for e in network.edges)
        for dt in dts:
            cfg, out = dpointnet_config(a.workdir, net, files, n, dt, a.tstop)
            ref, nt, dp = None, [], {th: [] for th in threads}
            for k in range(a.repeats):
                spikes, tm = nest_run(nest, network, dt, a.tstop)
                ref = ref if ref is not None else spikes
                check(ref, spikes, 'NEST round %d' % (k + 1), dt)
                nt.append(tm)
                for th in threads:
                    spikes, ph = dpointnet_run(binary, cfg, out, dt, th)
                    check(ref, spikes, 'dpointnet %d thread(s)' % th, dt)
                    dp[th].append(ph)
                print('# %d neurons, dt %g ms, round %d: NEST Simulate %.3f s, %s; %d spikes identical' % (
                    n, dt, k + 1, nt[-1]['simulate'], ', '.join('dpointnet %dT run %.3f s' % (th, dp[th][-1]['run'])
                                                                for th in threads), len(ref)), flush=True)
            med = lambda xs, key: statistics.median(x[key] for x in xs)  # noqa: E731
            rows.append((n, n_edges, dt, len(ref), read, {k: med(nt, k) for k in nt[0]},
                         {th: {k: med(dp[th], k) for k in dp[th][0]} for th in threads}))
            if a.busy:
                busy_rows.append((n, dt, {th: med(dp[th], 'run') for th in threads},
                                  busy_runs(binary, cfg, out, dt, threads, a.repeats, ref)))
    print_tables(rows, threads, a)
    if a.busy:
        print('\nBeside one busy process (a Python spin loop started before and stopped after the runs): dpointnet '
              'run (s), medians of %d rounds, quiet figures from the table above.\n' % a.repeats)
        print('"fixed": DPOINTNET_ADAPT_THREADS=0, the requested threads; "fitted": the default, threads fitted to the '
              'cores a start-up probe obtains (the threads that ran in brackets; the probe itself, up to 60 ms, is '
              'before the run).\n')
        head = ['neurons', 'dt (ms)']
        head += [c % th if '%' in c else c for th in threads
                 for c in ('%dT quiet', '%dT busy fixed', 'fixed / quiet', '%dT busy fitted', 'fitted / quiet')]
        print('| ' + ' | '.join(head) + ' |\n|' + '---|' * len(head))
        for n, dt, quiet, busy in busy_rows:
            cells = ['{:,}'.format(n), '%g' % dt]
            for th in threads:
                fixed, fitted, used = busy[th]
                cells += ['%.3f | %.3f | %.2fx | %.3f (%s) | %.2fx' % (quiet[th], fixed, fixed / quiet[th], fitted,
                                                                      used, fitted / quiet[th])]
            print('| ' + ' | '.join(cells) + ' |')
    print('\nload average before %s, after %s' % (load0, loadavg()))


def busy_runs(binary, cfg, out, dt, threads, repeats, ref):
    """Per thread count, beside one spinning process: the medians of `repeats` runs with the requested threads
    fixed and with the threads fitted to the cores, and the thread counts the fitted runs used."""
    spin = subprocess.Popen([sys.executable, '-c', 'while True: pass'])
    try:
        time.sleep(0.5)
        runs = {(th, fit): [] for th in threads for fit in (False, True)}
        used = {th: set() for th in threads}
        for _ in range(repeats):
            for th in threads:
                for fit in (False, True):
                    spikes, ph = dpointnet_run(binary, cfg, out, dt, th, fit)
                    check(ref, spikes, 'dpointnet %d thread(s) beside a busy process' % th, dt)
                    runs[(th, fit)].append(ph['run'])
                    if fit:
                        used[th].add(ph['threads'])
        return {th: (statistics.median(runs[(th, False)]), statistics.median(runs[(th, True)]),
                     '/'.join(str(u) for u in sorted(used[th]))) for th in threads}
    finally:
        spin.kill()
        spin.wait()


def print_tables(rows, threads, a):
    print('\nMedians of %d alternated rounds; %g ms simulated; spikes identical (node id, step) in every run. '
          'NEST Simulate = Prepare + Run + Cleanup; dpointnet = its run (the step loop) from its phases line.\n'
          % (a.repeats, a.tstop))
    head = ['neurons', 'edges', 'dt (ms)', 'spikes', 'NEST Simulate (s)']
    head += ['dpointnet %d thread%s (s)' % (th, '' if th == 1 else 's') for th in threads]
    head += ['NEST / dpointnet (%s)' % ', '.join('%dT' % th for th in threads)]
    print('| ' + ' | '.join(head) + ' |\n|' + '---|' * len(head))
    for n, e, dt, s, _, nt, dp in rows:
        cells = ['{:,}'.format(n), '{:,}'.format(e), '%g' % dt, '{:,}'.format(s), '%.3f' % nt['simulate']]
        cells += ['%.3f' % dp[th]['run'] for th in threads]
        cells += [', '.join('%.3gx' % (nt['simulate'] / dp[th]['run']) for th in threads)]
        print('| ' + ' | '.join(cells) + ' |')
    print('\nPhases (s): NEST read = the SONATA files read in Python (once per size), load = Create + Connect; '
          'dpointnet load / build / run from its phases line, process = the whole command.\n')
    head = ['neurons', 'dt (ms)', 'NEST read', 'NEST load', 'NEST Prepare', 'NEST Run']
    for th in threads:
        head += ['dpointnet %dT load' % th, '%dT build' % th, '%dT run' % th, '%dT process' % th]
    print('| ' + ' | '.join(head) + ' |\n|' + '---|' * len(head))
    for n, e, dt, s, read, nt, dp in rows:
        cells = ['{:,}'.format(n), '%g' % dt, '%.2f' % read, '%.3f' % nt['load'], '%.3f' % nt['prepare'],
                 '%.3f' % nt['run']]
        for th in threads:
            cells += ['%.3f' % dp[th][k] for k in ('load', 'build', 'run', 'process')]
        print('| ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    sys.exit(main())
