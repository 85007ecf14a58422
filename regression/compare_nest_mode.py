#!/usr/bin/env python3
"""dpointnet's run.dynamics = "nest" against an independent reference, spike for spike.

  compare_nest_mode.py --dpointnet BUILD/dpointnet --reference nest|spec [--dt 0.1 --dt 1.0] [--tstop 1000]
                       [--example DIR] [--workdir DIR]

--reference nest: NEST 3.8 itself (PyNEST from scripts/setup-nest, on PYTHONPATH; CI), with BMTK's point_450glifs
  set up the way BMTK PointNet does (bmtk pointnet: pointnetwork.py, sonata_adaptors.py, pointsimulator.py):
  one CopyModel + Create per node type in order of first appearance, spike_generators with precise_times and the
  file's sorted times, one_to_one Connect per edge type with weight = nsyns * syn_weight, the type's delay and
  synaptic dynamics_params (receptor_type).
--reference spec: nest_reference.py, the float64 NEST-semantics reference of this directory (no NEST needed).
dpointnet runs `simulate` on the same SONATA files with run.dynamics = "nest", float64. Pass: the same set of
(node_id, spike step) at every dt, every difference listed; V_m within 1e-3 mV (dpointnet's membrane report is
float32). Exit 0 only then.
--variant: first a copy of the example with the semantic points point_450glifs does not exercise: per-edge h5
  delays of 1, 1.25, 1.5, 2.5, 3.5 ms (NEST rounds 1.25 / 0.1 and 2.5 / 1 half up), input times moved off the grid
  (+0.05, +0.0001, +0.5 ms), iaf cells with I_e = 150 pA and V_min, GLIF cells with asc_r = (0.6, 0.9) and
  V_m != E_L, every other GLIF cell model as glif_psc_double_alpha (tau_syn_slow = 3 tau_syn, amp_slow 0.2-0.35), one
  IntFire1 type with t_ref = 1.45 ms.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bmtk_network  # noqa: E402
import nest_reference  # noqa: E402

DATA = os.path.join(os.path.dirname(HERE), 'tests', 'data', 'bmtk')


def nest_run(nest, net, dt, tstop):
    nest.ResetKernel()
    nest.set_verbosity('M_ERROR')
    nest.SetKernelStatus({'resolution': dt, 'local_num_threads': 1})  # before any Create (pointsimulator.py)
    gid = {}
    for t, model, params, node_ids in net.types:
        name = 'bmtk_type_%d' % t
        nest.CopyModel(model, name, params)  # the type's dynamics_params as the model's defaults
        for nid, g in zip(node_ids, nest.Create(name, len(node_ids)).tolist()):
            gid[('v1', nid)] = g
    sgs = nest.Create('spike_generator', len(net.virtual_ids), {'precise_times': True})
    for nid, g in zip(net.virtual_ids, sgs.tolist()):
        gid[('lgn', nid)] = g
        nest.SetStatus(nest.NodeCollection([g]), {'spike_times': net.times[nid].tolist()})
    for e in net.edges:
        syn = {'synapse_model': e['model'], 'weight': e['weight'], 'delay': e['delay']}
        syn.update(e['syn'])
        s = np.array([gid[(e['src_pop'], int(x))] for x in e['src']], dtype=np.int64)
        d = np.array([gid[('v1', int(x))] for x in e['trg']], dtype=np.int64)
        nest.Connect(s, d, 'one_to_one', syn)
    v1 = nest.NodeCollection(sorted(g for (p, _), g in gid.items() if p == 'v1'))
    sr = nest.Create('spike_recorder')
    nest.Connect(v1, sr)
    mm = nest.Create('multimeter', {'record_from': ['V_m'], 'interval': dt})
    nest.Connect(mm, v1)
    nest.Simulate(tstop)
    back = {g: nid for (p, nid), g in gid.items() if p == 'v1'}
    ev = sr.get('events')
    spikes = set((back[int(s)], int(round(t / dt))) for s, t in zip(ev['senders'], ev['times']))
    ids = [c[0] for c in net.cells]
    col = {nid: i for i, nid in enumerate(ids)}
    V = np.full((int(round(tstop / dt)), len(ids)), np.nan)
    e = mm.get('events')
    for s, t, v in zip(e['senders'], e['times'], e['V_m']):  # the sample at k dt: V after step k - 1
        V[int(round(t / dt)) - 1, col[back[int(s)]]] = v
    return spikes, V, ids


def dpointnet_run(binary, example, dt, tstop, work):
    cfg = json.load(open(os.path.join(example, 'config.simulation.json')))
    out = os.path.join(work, 'out_dt%g' % dt)
    cfg['manifest']['$BASE_DIR'] = example
    cfg['manifest']['$OUTPUT_DIR'] = out
    cfg['network'] = os.path.join(example, 'config.circuit.json')
    cfg['run'] = {'tstop': tstop, 'dt': dt, 'dynamics': 'nest', 'precision': 'float64'}
    cfg['reports'] = {'v': {'module': 'membrane_report', 'variable_name': 'V_m', 'cells': 'v1', 'file_name': 'v.h5'}}
    cfg.setdefault('output', {})['overwrite_output_dir'] = True
    path = os.path.join(work, 'config_dt%g.json' % dt)
    json.dump(cfg, open(path, 'w'), indent=1)
    r = subprocess.run([binary, 'simulate', path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('dpointnet simulate failed (exit %d):\n%s' % (r.returncode, r.stderr[-3000:]))
    with h5py.File(os.path.join(out, 'spikes.h5')) as h:
        spikes = set((int(n), int(round(t / dt)))
                     for n, t in zip(h['spikes/v1/node_ids'][()], h['spikes/v1/timestamps'][()]))
    with h5py.File(os.path.join(out, 'v.h5')) as h:
        return spikes, h['report/v1/data'][()], [int(x) for x in h['report/v1/mapping/node_ids'][()]]


def make_variant(example, work):
    root = os.path.join(work, 'variant')
    if os.path.exists(root):
        shutil.rmtree(root)
    shutil.copytree(os.path.dirname(example), root)
    ex = os.path.join(root, os.path.basename(example))
    rng = np.random.default_rng(20261201)
    for f, pop in (('v1_v1_edges.h5', 'v1_to_v1'), ('lgn_v1_edges.h5', 'lgn_to_v1')):
        with h5py.File(os.path.join(ex, 'network', f), 'r+') as h:
            n = h['edges/%s/source_node_id' % pop].shape[0]
            h['edges/%s/0' % pop].create_dataset('delay', data=rng.choice([1.0, 1.25, 1.5, 2.5, 3.5], n))
    with h5py.File(os.path.join(ex, 'inputs', 'lgn_spikes.h5'), 'r+') as h:
        t = h['spikes/lgn/timestamps']
        t[...] = t[()] + rng.choice([0.0, 0.05, 0.0001, 0.5], t.shape[0])
    cells = os.path.join(root, 'point_components', 'cell_models')
    glifs = sorted(n for n in os.listdir(cells) if 'asc_amps' in json.load(open(os.path.join(cells, n))))
    double = set(glifs[::2])  # these types as glif_psc_double_alpha
    types = os.path.join(ex, 'network', 'v1_node_types.csv')
    rows = [ln.split(' ') for ln in open(types).read().splitlines()]
    col = rows[0].index('dynamics_params')
    for r in rows[1:]:
        if r[col] in double:
            r[rows[0].index('model_template')] = 'nest:glif_psc_double_alpha'
    open(types, 'w').write('\n'.join(' '.join(r) for r in rows) + '\n')
    for name in os.listdir(cells):
        p = json.load(open(os.path.join(cells, name)))
        if 'tau_m' in p:  # iaf_psc_alpha (IntFire1 and the *_point.json types)
            p.update({'I_e': 150.0, 'V_min': p['E_L'] - 5.0})
            if name.startswith('IntFire1_inh'):
                p['t_ref'] = 1.45
        elif 'asc_amps' in p:
            p.update({'asc_r': [0.6, 0.9], 'V_m': p['E_L'] + 5.0})
            if name in double:
                tau = p.pop('tau_syn')
                p.update({'tau_syn_fast': tau, 'tau_syn_slow': [3.0 * t for t in tau],
                          'amp_slow': [0.2, 0.25, 0.3, 0.35][:len(tau)]})
        json.dump(p, open(os.path.join(cells, name), 'w'))
    return ex


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--dpointnet', required=True)
    ap.add_argument('--reference', choices=('nest', 'spec'), required=True)
    ap.add_argument('--dt', type=float, action='append')
    ap.add_argument('--tstop', type=float, default=1000.0)
    ap.add_argument('--example', default=os.path.join(DATA, 'point_450glifs'))
    ap.add_argument('--workdir')
    ap.add_argument('--variant', action='store_true')
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix='dpointnet-nest-')
    os.makedirs(work, exist_ok=True)
    if a.variant:
        a.example = make_variant(a.example, work)
    components = os.path.join(os.path.dirname(a.example), 'point_components')
    net = bmtk_network.Network(a.example, components)
    nest = None
    if a.reference == 'nest':
        try:
            import nest
        except ImportError as e:
            sys.exit('PyNEST is not importable (%s): run scripts/setup-nest and put the path that '
                     '`scripts/setup-nest --pythonpath` prints on PYTHONPATH' % e)
        print('NEST %s from %s' % (nest.__version__, os.path.dirname(nest.__file__)))
    ok = True
    for dt in a.dt or [0.1, 1.0]:
        if nest is not None:
            rs, rv, rids = nest_run(nest, net, dt, a.tstop)
        else:
            rs, rv, rids = nest_reference.simulate(net, dt, a.tstop)
        ds, dv, dids = dpointnet_run(a.dpointnet, a.example, dt, a.tstop, work)
        only_r, only_d = sorted(rs - ds), sorted(ds - rs)
        same = not only_r and not only_d
        print('dt %g ms, %g ms: %s %d spikes, dpointnet %d spikes: %s' %
              (dt, a.tstop, a.reference, len(rs), len(ds), 'identical' if same else
               '%d only in %s, %d only in dpointnet' % (len(only_r), a.reference, len(only_d))))
        for nid, k in only_r[:10]:
            print('  only %s: node %d at %.4f ms' % (a.reference, nid, k * dt))
        for nid, k in only_d[:10]:
            print('  only dpointnet: node %d at %.4f ms' % (nid, k * dt))
        col = {nid: i for i, nid in enumerate(rids)}
        ref = rv[:, [col[n] for n in dids]]
        n = min(ref.shape[0], dv.shape[0])
        diff = np.abs(dv[:n].astype(float) - ref[:n])
        have = ~np.isnan(diff)
        worst = float(diff[have].max()) if have.any() else float('inf')
        k, c = np.unravel_index(np.nanargmax(np.where(have, diff, -1)), diff.shape)
        print('  V_m: %d cells x %d steps compared, worst |dpointnet - %s| = %.3g mV (node %d, %.4f ms; the '
              'report is float32)' % (len(dids), int(have.sum() // max(1, len(dids))), a.reference, worst, dids[c],
                                     (k + 1) * dt))
        ok = ok and same and worst < 1e-3 and len(rs) > 0
    print('PASS' if ok else 'FAIL')
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
