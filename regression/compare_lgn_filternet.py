#!/usr/bin/python3
"""dpointnet's LGN input (input_type "lgn") against BMTK FilterNet itself, rate for rate.

  compare_lgn_filternet.py --filternet DIR [--dpointnet BUILD/dpointnet | --fake | --filternet-only]
                           [--sets drifting,grey,...] [--workdir DIR]

--filternet: the unpacked vendored FilterNet (bmtk-filternet-7e040d05.tar.gz: bmtk/ and tools/; scripts/
  compare-lgn-filternet unpacks it), default $DPOINTNET_FILTERNET_DIR.
The harness writes 140 LGN nodes (the 14 classes of the V1 model at five positions, RFs partly off-screen at the
edges and the corner, and the two ends of the size range; lgn_filternet/cases.py) as a CSV for FilterNet and as
SONATA files for dpointnet, with one GLIF neuron fed by every LGN node, and one config per stimulus set: drifting
gratings (directions 0, 45, 90, 200.5; 1, 2, 8 Hz; 0.02, 0.04, 0.08 cycles/degree; contrasts 0.8, 0.3), static
gratings, grey before and after a grating (pre_ms, post_ms), "direction_convention": "dpointnet", random direction and
phase (FilterNet then uses the values of stimulus_samples.csv), a grey screen, uniform screens, an 80-frame movie.
dpointnet runs `simulate` on each and writes lgn_rates.h5; FilterNet's cells (default_cell_loader) are evaluated on
the same stimuli (separable cursor, as the V1 model's FilterNet config). Pass: every unit within the tolerance of
lgn_filternet/compare.py, the closed forms of the grey and uniform screens hold for both, stimulus_samples.csv agrees
with the configs, and each mutated FilterNet (flipped direction, composite cells without latency alignment, no edge
renormalization of cut kernels, FilterNet's own grey + grating concatenation) FAILS the same tolerance (required
when all sets run; with --sets a mutation the chosen sets cannot show is only reported).
--fake: lgn_filternet/fake_dpointnet.py instead of the binary (FilterNet's own rates in float32): tests the harness.
--filternet-only: no dpointnet; FilterNet's own rates rounded to float32 stand in for them (no files).
Exit 0 only on PASS.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lgn_filternet import cases, compare, filternet, network  # noqa: E402

MUTATIONS = [('a', 'direction flipped (FilterNet theta negated)'),
             ('b', 'composite cells without latency alignment'),
             ('c', 'no edge renormalization (cut kernel / uncut sum)'),
             ('d', "FilterNet's grey + grating concatenation (pre_ms)")]


def check_same_nodes(csv_nodes, h5_nodes):
    """The CSV FilterNet reads and the SONATA files dpointnet reads hold the same attributes in the same order."""
    if len(csv_nodes) != len(h5_nodes):
        return ['%d nodes in the CSV, %d in the SONATA files' % (len(csv_nodes), len(h5_nodes))]
    bad = []
    for (i, a), (j, b) in zip(csv_nodes, h5_nodes):
        for c in cases.COLUMNS[1:]:
            x, y = a.get(c), b.get(c)
            same = x == y or (isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y))
            if i != j or not same:
                bad.append('node %d/%d: %s %r (CSV) != %r (SONATA)' % (i, j, c, x, y))
    return bad


def run_dpointnet(cmd, config, batch, T, n_units):
    t0 = time.time()
    r = subprocess.run(cmd + ['simulate', config], capture_output=True, text=True)
    if r.returncode != 0:
        return None, None, ['dpointnet simulate %s failed (exit %d):\n%s' % (config, r.returncode, r.stderr[-3000:])], \
            time.time() - t0
    out = json.load(open(config))['output']['output_dir']
    rates, rows, problems = compare.read_dpointnet(out, batch, T, n_units)
    return rates, rows, problems, time.time() - t0


def print_table(dev, sets):
    classes = list(next(iter(dev.values())))
    w = max(11, max(len(s) for s in sets) + 1)
    print('worst relative deviation per class (rows) and stimulus set (columns), |d - f| / max(%g Hz, peak of f); '
          'tolerance %g, "!" above it' % (compare.FLOOR_HZ, compare.TOL))
    print('%-12s' % 'class' + ''.join('%*s' % (w, s) for s in sets))
    for c in classes:
        print('%-12s' % c + ''.join('%*s' % (w, '%.1e%s' % (dev[s][c], '!' if dev[s][c] > compare.TOL else ' '))
                                    for s in sets))


def check_concat_frames(runs):
    """FilterNet's gray_screen_dur movie differs from the harness's (dpointnet's definition) in frame pre_ms only."""
    bad = []
    for n, r in runs.items():
        s = r['spec']['stimulus']
        if s['type'] in cases.GRATINGS and s.get('pre_ms', 0) > 0:
            p = r['params'][0]
            th = compare.theta(p['direction'], r['spec'].get('direction_convention'))
            frames = filternet.concat_differing_frames(s, r['T'], p, th, s['pre_ms'], s.get('post_ms', 0))
            print('      %s: FilterNet\'s concatenation differs from dpointnet\'s definition in frames %s (pre_ms %d)'
                  % (n, frames, s['pre_ms']))
            if frames != [s['pre_ms']]:
                bad.append('%s: FilterNet\'s concatenation differs in frames %s, expected [%d]'
                           % (n, frames, s['pre_ms']))
    return bad


def mutation_rates(key, cells, nodes, composite, runs):
    """{set: (FilterNet rates of mutation key, unit indices they cover)} for the sets the mutation changes."""
    out = {}
    if key == 'b':
        with filternet.no_latency_alignment():
            mcells = filternet.build_cells([nodes[i] for i in composite])
    for name, r in runs.items():
        spec, T, params, movie = r['spec'], r['T'], r['params'], r['movie']
        stype = spec['stimulus']['type']
        if key == 'a' and stype in cases.GRATINGS:
            out[name] = (compare.filternet_set(cells, spec, T, params, movie, flipped=True), None)
        elif key == 'b':
            out[name] = (compare.filternet_set(mcells, spec, T, params, movie), composite)
        elif key == 'c':
            with filternet.no_edge_renormalization():
                out[name] = (compare.filternet_set(cells, spec, T, params, movie), None)
        elif key == 'd' and spec['stimulus'].get('pre_ms', 0) > 0:
            out[name] = (compare.filternet_set(cells, spec, T, params, movie, filternet_concat=True), None)
    return out


class Harness:
    """The written files, FilterNet's cells, and per stimulus set dpointnet's (d) and FilterNet's (f) rates."""

    def __init__(self, work, filternet_dir):
        self.work = work
        self.rows, self.csv, self.configs = network.write_all(work)
        self.classes = [r['pop_name'] for r in self.rows]
        self.composite = [i for i, c in enumerate(self.classes) if c in cases.COMPOSITE]
        self.failures, self.runs, self.t_fn, self.t_dp = [], {}, 0.0, 0.0
        t0 = time.time()
        filternet.load(filternet_dir)
        self.nodes = filternet.read_nodes(self.csv)
        net = os.path.join(work, 'network')
        self.failures += check_same_nodes(self.nodes, filternet.read_nodes(os.path.join(net, 'lgn_nodes.h5'),
                                                                           os.path.join(net, 'lgn_node_types.csv')))
        self.cells = filternet.build_cells(self.nodes)
        self.t_fn += time.time() - t0

    def run_set(self, name, cmd):
        """Runs dpointnet (cmd None: FilterNet in float32 stands in) and FilterNet on one stimulus set."""
        cfg = json.load(open(self.configs[name]))
        spec, T, batch = cfg['inputs']['lgn'], int(cfg['run']['tstop']), cfg['run']['batch_size']
        if cmd is None:
            d, table, problems = None, cases.samples_table(spec['stimulus'], batch, np.random.default_rng(1)), []
        else:
            d, table, problems, dt = run_dpointnet(cmd, self.configs[name], batch, T, len(self.rows))
            self.t_dp += dt
        if table is not None:
            params, more = compare.resolve_params(spec['stimulus'], batch, table)
            problems += more
        self.failures += ['%s: %s' % (name, p) for p in problems]
        if d is None and cmd is not None:
            return
        t0 = time.time()
        movie = compare.read_movie(spec)
        f = compare.filternet_set(self.cells, spec, T, params, movie)
        self.t_fn += time.time() - t0
        if d is None:
            d = f.astype(np.float32).astype(np.float64)
        self.runs[name] = dict(spec=spec, T=T, params=params, movie=movie, d=d, f=f)

    def report_set(self, name):
        r = self.runs[name]
        w, (s, t, u), diff = compare.worst(r['d'], r['f'])
        ok = w <= compare.TOL
        print('%-10s worst %.2e (sample %d, step %d, unit %d %s: |d - f| = %.3g Hz): %s'
              % (name, w, s, t, u, self.classes[u], diff, 'ok' if ok else 'FAIL'))
        if not ok:
            self.failures.append('%s: deviation %.3g above the tolerance %g' % (name, w, compare.TOL))
        for who, rates in (('dpointnet', r['d']), ('FilterNet', r['f'])):
            for what, err, ok in compare.closed_form_checks(name, rates, self.rows, r['params'], r['T']):
                print('  closed form, %s: %s: worst |r - closed form| %.2e Hz: %s'
                      % (who, what, err, 'ok' if ok else 'FAIL'))
                if not ok:
                    self.failures.append('%s: closed form (%s) fails for %s' % (name, what, who))

    def check_mutation(self, key, what, required):
        t0 = time.time()
        res = mutation_rates(key, self.cells, self.nodes, self.composite, self.runs)
        self.t_fn += time.time() - t0
        if not res:
            print('  (%s) %-52s not exercised by these sets' % (key, what))
            return
        best = (-1.0, None)
        for n, (fm, units) in res.items():
            d = self.runs[n]['d'] if units is None else self.runs[n]['d'][:, :, units]
            w, (s, t, u), diff = compare.worst(d, fm)
            if w > best[0]:
                best = (w, (n, s, t, self.classes[u if units is None else units[u]], diff))
        caught = best[0] > compare.TOL
        print('  (%s) %-52s worst %.2e (set %s, sample %d, step %d, %s: %.3g Hz): %s'
              % ((key, what, best[0]) + best[1] + ('caught' if caught else 'NOT CAUGHT',)))
        if not caught and required:
            self.failures.append('mutation (%s) %s is not caught' % (key, what))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--filternet', default=os.environ.get('DPOINTNET_FILTERNET_DIR'),
                    help='the unpacked FilterNet tarball (default $DPOINTNET_FILTERNET_DIR)')
    ap.add_argument('--dpointnet', default=os.path.join(os.path.dirname(HERE), 'build', 'dpointnet'))
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument('--fake', action='store_true', help='the fake dpointnet (FilterNet rates in float32)')
    mode.add_argument('--filternet-only', action='store_true', help='no dpointnet at all')
    ap.add_argument('--sets', help='comma-separated stimulus sets (default all: %s)' % ','.join(cases.STIMULUS_SETS))
    ap.add_argument('--workdir', help='keep the files here (default a temporary directory, removed)')
    a = ap.parse_args()
    if not a.filternet or not os.path.isdir(os.path.join(a.filternet, 'bmtk')):
        sys.exit('--filternet: the unpacked FilterNet tarball (with bmtk/ and tools/) is needed, got %r' % a.filternet)
    cmd = None
    if a.fake:
        cmd = [sys.executable, os.path.join(HERE, 'lgn_filternet', 'fake_dpointnet.py'), '--filternet', a.filternet]
    elif not a.filternet_only:
        cmd = [os.path.abspath(a.dpointnet)]
        if not os.access(cmd[0], os.X_OK):
            sys.exit('dpointnet binary not found: %s (--dpointnet, or --fake / --filternet-only)' % cmd[0])
    sets = a.sets.split(',') if a.sets else list(cases.STIMULUS_SETS)
    unknown = [s for s in sets if s not in cases.STIMULUS_SETS]
    if unknown:
        sys.exit('unknown stimulus sets %s (known: %s)' % (unknown, ', '.join(cases.STIMULUS_SETS)))
    work = a.workdir or tempfile.mkdtemp(prefix='dpointnet-lgn-filternet-')
    os.makedirs(work, exist_ok=True)

    h = Harness(work, a.filternet)
    print('%d LGN units (%d classes), FilterNet from %s; work directory %s'
          % (len(h.rows), len(set(h.classes)), a.filternet, work))
    for name in sets:
        h.run_set(name, cmd)
    if h.runs:
        print_table({n: compare.class_worst(r['d'], r['f'], h.classes) for n, r in h.runs.items()}, list(h.runs))
    for name in h.runs:
        h.report_set(name)
    print('sensitivity: each mutated FilterNet must fail the tolerance against %s'
          % ('dpointnet' if cmd else 'FilterNet in float32'))
    for key, what in MUTATIONS:
        h.check_mutation(key, what, required=not a.sets)
    h.failures += check_concat_frames(h.runs)
    print('time: FilterNet side (import, build, evaluation, mutations) %.1f s; %s %.1f s'
          % (h.t_fn, 'fake dpointnet' if a.fake else 'dpointnet', h.t_dp))
    for f in h.failures:
        print('FAIL: ' + f)
    ok = not h.failures and len(h.runs) == len(sets)
    print('PASS' if ok else 'FAIL')
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
