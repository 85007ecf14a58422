#!/usr/bin/env python3
"""run.dynamics = "nest" against Brian2 (Debian's python3-brian), an independent simulator nobody here wrote.

  brian2_nest_mode.py --dpointnet BUILD/dpointnet [--cells single|network] [--dt 0.1 --dt 1.0] [--tstop 500]

Writes a small SONATA network (bmtk layout: iaf_psc_alpha cells, some with I_e, and GLIF1 glif_psc cells with two
receptor ports; a virtual input population with spike times on and off the grid; recurrent edges with mixed signs
and delays), runs `dpointnet simulate` on it with dynamics "nest" (float64), and builds the same network in Brian2
from bmtk_network.Network: the membrane and both alpha channels as linear ODEs integrated with Brian2's `exact`
method, `v` frozen (`unless refractory`) for NEST's RC steps, a reset to V_reset in the spike step, threshold
v >= V_th - E_L (iaf) or v > (glif), each spike adding w e / tau to its channel's y1 after the target's update of
the arrival step. What Brian2 does not decide (NEST's grid rules: delay rounding, refractory counts, input stamping)
is given to it from nest_reference.py; what it computes independently is the integration, the event timing and the
refractory/reset logic. GLIF3 after-spike currents are left out: NEST (and the nest mode) use a step-mean
approximation of them, which an exact integrator does not reproduce. Pass: identical (node, spike step) sets.
"""
import argparse
import json
import math
import os
import shutil
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bmtk_network  # noqa: E402
import nest_reference as ref  # noqa: E402
from compare_nest_mode import dpointnet_run  # noqa: E402

IAF = {'I_e': 0.0, 'tau_m': 20.0, 'C_m': 200.0, 't_ref': 2.0, 'E_L': -70.0, 'V_th': -50.0, 'V_reset': -65.0,
       'V_m': -68.0, 'tau_syn_ex': 1.5, 'tau_syn_in': 4.0}
IAF_TONIC = dict(IAF, I_e=230.0, t_ref=1.45, V_m=-70.0, tau_m=15.0)
GLIF1 = {'V_m': -72.0, 'V_th': -48.0, 'g': 5.0, 'E_L': -72.0, 'C_m': 80.0, 't_ref': 2.4000000000000004,
         'V_reset': -70.0, 'asc_init': [0.0, 0.0], 'asc_decay': [0.003, 0.1], 'asc_amps': [0.0, 0.0],
         'tau_syn': [2.5, 7.0], 'spike_dependent_threshold': False, 'after_spike_currents': False,
         'adapting_threshold': False}


def write_network(root, kind, rng):
    ex = os.path.join(root, 'example')
    comp = os.path.join(root, 'point_components')
    for d in (os.path.join(ex, 'network'), os.path.join(ex, 'inputs'), os.path.join(comp, 'cell_models'),
              os.path.join(comp, 'synaptic_models')):
        os.makedirs(d, exist_ok=True)
    cells = {'iaf.json': IAF, 'iaf_tonic.json': IAF_TONIC, 'glif1.json': GLIF1}
    for name, p in cells.items():
        json.dump(p, open(os.path.join(comp, 'cell_models', name), 'w'))
    for name, p in {'to_iaf.json': {}, 'port1.json': {'receptor_type': 1}, 'port2.json': {'receptor_type': 2}}.items():
        json.dump(p, open(os.path.join(comp, 'synaptic_models', name), 'w'))
    types = [(100, 'iaf_psc_alpha', 'iaf.json', 'e'), (101, 'iaf_psc_alpha', 'iaf_tonic.json', 'e'),
             (102, 'glif_psc', 'glif1.json', 'i')]
    counts = {'single': [0, 0, 1], 'network': [8, 4, 8]}[kind]
    type_of = np.concatenate([np.full(c, t[0]) for c, t in zip(counts, types)]).astype(np.uint64)
    n = len(type_of)
    n_in = 1 if kind == 'single' else 10

    def nodes(path, pop, tids):
        with h5py.File(path, 'w') as h:
            g = h.create_group('nodes/' + pop)
            g['node_id'] = np.arange(len(tids), dtype=np.uint64)
            g['node_type_id'] = tids
            g['node_group_id'] = np.zeros(len(tids), np.uint32)
            g['node_group_index'] = np.arange(len(tids), dtype=np.uint64)
            g.create_group('0')['x'] = np.zeros(len(tids))
    nodes(os.path.join(ex, 'network', 'v1_nodes.h5'), 'v1', type_of)
    nodes(os.path.join(ex, 'network', 'lgn_nodes.h5'), 'lgn', np.full(n_in, 100, np.uint64))
    with open(os.path.join(ex, 'network', 'v1_node_types.csv'), 'w') as f:
        f.write('node_type_id model_type model_template model_name ei dynamics_params\n')
        for t, m, dp, ei in types:
            f.write('%d point_neuron nest:%s t%d %s %s\n' % (t, m, t, ei, dp))
    with open(os.path.join(ex, 'network', 'lgn_node_types.csv'), 'w') as f:
        f.write('node_type_id model_type ei\n100 virtual e\n')

    def edges(name, src_pop, src, trg, etype, rows):
        with h5py.File(os.path.join(ex, 'network', '%s_v1_edges.h5' % src_pop), 'w') as h:
            g = h.create_group('edges/%s_to_v1' % src_pop)
            g['source_node_id'] = np.array(src, np.uint64)
            g['source_node_id'].attrs['node_population'] = src_pop
            g['target_node_id'] = np.array(trg, np.uint64)
            g['target_node_id'].attrs['node_population'] = 'v1'
            g['edge_type_id'] = np.array(etype, np.uint32)
            g['edge_group_id'] = np.zeros(len(src), np.uint16)
            g['edge_group_index'] = np.arange(len(src), dtype=np.uint32)
            g0 = g.create_group('0')
            g0['nsyns'] = rng.integers(1, 4, len(src)).astype(np.uint32)
            g0['delay'] = rng.choice([1.0, 1.5, 2.0, 3.0], len(src))
        with open(os.path.join(ex, 'network', '%s_v1_edge_types.csv' % src_pop), 'w') as f:
            f.write('edge_type_id target_query source_query model_template syn_weight dynamics_params delay\n')
            for r in rows:
                f.write('%d * * static_synapse %r %s 1.0\n' % r)
    glif = type_of == 102
    # edge types: 100/101 into iaf (+/-), 102/103 into glif port 1 (+) / port 2 (-)
    def etype_for(t, sign):
        return (100 if sign > 0 else 101) if not glif[t] else (102 if sign > 0 else 103)
    rows = [(100, 60.0, 'to_iaf.json'), (101, -45.0, 'to_iaf.json'), (102, 55.0, 'port1.json'),
            (103, -40.0, 'port2.json')]
    src, trg, et = [], [], []
    if kind == 'network':
        for s in range(n):
            for t in range(n):
                if s != t and rng.random() < 0.25:
                    src.append(s), trg.append(t), et.append(etype_for(t, +1 if type_of[s] != 102 else -1))
    else:
        src, trg, et = [0], [0], [103]  # an autapse, inhibitory
    edges('v1_v1', 'v1', src, trg, et, rows)
    src, trg, et = [], [], []
    for s in range(n_in):
        for t in range(n):
            if kind == 'single' or rng.random() < 0.5:
                src.append(s), trg.append(t), et.append(etype_for(t, +1))
    edges('lgn_v1', 'lgn', src, trg, et, [(100, 90.0, 'to_iaf.json'), (102, 85.0, 'port1.json')])
    ids, times = [], []
    for s in range(n_in):
        t = np.sort(rng.uniform(0.05, 490.0, 60 if kind == 'network' else 120))
        t[::4] = np.round(t[::4], 1)  # some on the 0.1 ms grid
        ids += [s] * len(t)
        times += list(t)
    with h5py.File(os.path.join(ex, 'inputs', 'lgn_spikes.h5'), 'w') as h:
        g = h.create_group('spikes/lgn')
        g['node_ids'] = np.array(ids, np.uint64)
        g['timestamps'] = np.array(times)
        g['timestamps'].attrs['units'] = 'ms'
    json.dump({'manifest': {'$BASE_DIR': '.', '$NETWORK_DIR': '$BASE_DIR/network',
                            '$MODELS_DIR': '$BASE_DIR/../point_components'},
               'components': {'point_neuron_models_dir': '$MODELS_DIR/cell_models',
                              'synaptic_models_dir': '$MODELS_DIR/synaptic_models'},
               'networks': {'nodes': [{'nodes_file': '$NETWORK_DIR/%s_nodes.h5' % p,
                                       'node_types_file': '$NETWORK_DIR/%s_node_types.csv' % p} for p in ('v1', 'lgn')],
                            'edges': [{'edges_file': '$NETWORK_DIR/%s_v1_edges.h5' % p,
                                       'edge_types_file': '$NETWORK_DIR/%s_v1_edge_types.csv' % p}
                                      for p in ('v1', 'lgn')]}},
              open(os.path.join(ex, 'config.circuit.json'), 'w'), indent=1)
    json.dump({'manifest': {'$BASE_DIR': '.', '$OUTPUT_DIR': '$BASE_DIR/output', '$INPUT_DIR': '$BASE_DIR/inputs'},
               'run': {'tstop': 500.0, 'dt': 0.1},
               'inputs': {'LGN_spikes': {'input_type': 'spikes', 'module': 'sonata',
                                         'input_file': '$INPUT_DIR/lgn_spikes.h5', 'node_set': 'lgn'}},
               'output': {'output_dir': '$OUTPUT_DIR', 'spikes_file': 'spikes.h5'},
               'network': 'config.circuit.json'},
              open(os.path.join(ex, 'config.simulation.json'), 'w'), indent=1)
    return ex, comp


def brian_run(net, dt, tstop):
    import brian2 as b2
    b2.prefs.codegen.target = 'numpy'
    b2.start_scope()
    b2.defaultclock.dt = dt * b2.ms
    ms, mV, pA, pF = b2.ms, b2.mV, b2.pA, b2.pF
    eqs = '''
    dv/dt = -v / tau_m + (y2_0 + y2_1 + I_e) / C : volt (unless refractory)
    dy2_0/dt = -y2_0 / tau_0 + y1_0 : amp
    dy1_0/dt = -y1_0 / tau_0 : amp/second
    dy2_1/dt = -y2_1 / tau_1 + y1_1 : amp
    dy1_1/dt = -y1_1 / tau_1 : amp/second
    tau_m : second (constant)
    C : farad (constant)
    I_e : amp (constant)
    tau_0 : second (constant)
    tau_1 : second (constant)
    th : volt (constant)
    vr : volt (constant)
    ref : second (constant)
    '''
    groups, where = {}, {}  # model -> NeuronGroup; node_id -> (model, index)
    for model in ('iaf_psc_alpha', 'glif_psc'):
        cells = [(nid, p) for nid, m, p in net.cells if m == model]
        if not cells:
            continue
        g = b2.NeuronGroup(len(cells), eqs, method='exact', threshold='v >= th' if model == 'iaf_psc_alpha' else 'v > th',
                           reset='v = vr', refractory='ref')
        for k, (nid, p0) in enumerate(cells):
            where[nid] = (model, k)
            p = dict(ref.IAF_DEFAULTS, **p0) if model == 'iaf_psc_alpha' else dict(p0)
            taus = [p['tau_syn_ex'], p['tau_syn_in']] if model == 'iaf_psc_alpha' else list(p['tau_syn'])
            g.tau_m[k] = (p['tau_m'] if model == 'iaf_psc_alpha' else p['C_m'] / p['g']) * ms
            g.C[k] = p['C_m'] * pF
            g.I_e[k] = p.get('I_e', 0.0) * pA
            g.tau_0[k], g.tau_1[k] = taus[0] * ms, taus[1] * ms
            g.th[k] = (p['V_th'] - p['E_L']) * mV
            g.vr[k] = (p['V_reset'] - p['E_L']) * mV
            # NEST holds V for RC steps after the spike step; Brian2 integrates again once t - lastspike >= ref
            g.ref[k] = (ref.refractory_steps(p['t_ref'], dt) + 1) * dt * ms
            g.v[k] = (p.get('V_m', ref.IAF_DEFAULTS['V_m'] if model == 'iaf_psc_alpha' else ref.GLIF_V_M_DEFAULT)
                      - p['E_L']) * mV
        groups[model] = g
    # the generators: a file time t acts like a spike emitted in step fromstamp(t) - 1 (NEST's rule, given)
    gi, gt = [], []
    for k, nid in enumerate(net.virtual_ids):
        steps = sorted(set(ref.stamp_step(t, dt) - 1 for t in net.times[nid]))
        mult = {s: 0 for s in steps}
        for t in net.times[nid]:
            mult[ref.stamp_step(t, dt) - 1] += 1
        for s in steps:
            if s * dt < tstop:
                for _ in range(mult[s]):
                    gi.append(k), gt.append(s * dt)
    objs = list(groups.values())
    # one generator group per multiplicity layer (a SpikeGeneratorGroup emits a source at most once per step)
    layers = {}
    for k, t in zip(gi, gt):
        layer = 0
        while (k, t) in layers.get(layer, set()):
            layer += 1
        layers.setdefault(layer, set()).add((k, t))
    gens = []
    for layer, ev in sorted(layers.items()):
        ev = sorted(ev)
        sg = b2.SpikeGeneratorGroup(len(net.virtual_ids), [k for k, _ in ev], [t for _, t in ev] * ms)
        gens.append(sg)
        objs.append(sg)
    on_pre = '''y1_0_post += (chan == 0) * w * exp(1) / tau_0_post
                y1_1_post += (chan == 1) * w * exp(1) / tau_1_post'''
    index_of_virtual = {nid: k for k, nid in enumerate(net.virtual_ids)}
    for e in net.edges:
        for model in groups:
            for sm in (groups if e['src_pop'] == 'v1' else {None: None}):
                sel = [q for q in range(len(e['src'])) if where[int(e['trg'][q])][0] == model and
                       (e['src_pop'] != 'v1' or where[int(e['src'][q])][0] == sm)]
                if not sel:
                    continue
                sources = [groups[sm]] if e['src_pop'] == 'v1' else gens
                for src_group in sources:
                    syn = b2.Synapses(src_group, groups[model], 'w : amp\nchan : integer', on_pre=on_pre)
                    i = [where[int(e['src'][q])][1] if e['src_pop'] == 'v1' else index_of_virtual[int(e['src'][q])]
                         for q in sel]
                    j = [where[int(e['trg'][q])][1] for q in sel]
                    syn.connect(i=np.array(i), j=np.array(j))
                    wts = e["weight"][sel]
                    syn.w = wts * pA
                    if model == 'iaf_psc_alpha':
                        syn.chan = np.where(wts > 0, 0, 1)
                    else:
                        syn.chan = int(e['syn']['receptor_type']) - 1
                    syn.delay = np.array([ref.delay_steps(d, dt) * dt for d in e['delay'][sel]]) * ms
                    objs.append(syn)
    mons = {m: b2.SpikeMonitor(g) for m, g in groups.items()}
    vmon = {m: b2.StateMonitor(g, 'v', record=True) for m, g in groups.items()}
    b2.Network(*objs, *mons.values(), *vmon.values()).run(tstop * ms)
    back = {(m, k): nid for nid, (m, k) in where.items()}
    spikes = set()
    for m, mon in mons.items():
        for k, t in zip(mon.i[:], mon.t[:] / ms):
            spikes.add((back[(m, int(k))], int(round(t / dt)) + 1))  # Brian2 stamps the step start, NEST its end
    return spikes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--dpointnet', required=True)
    ap.add_argument('--cells', choices=('single', 'network'), default='network')
    ap.add_argument('--dt', type=float, action='append')
    ap.add_argument('--tstop', type=float, default=500.0)
    ap.add_argument('--seed', type=int, default=7)
    a = ap.parse_args()
    try:
        import brian2
    except ImportError as e:
        sys.exit('Brian2 is not importable (%s): Debian package python3-brian (scripts/setup installs it)' % e)
    work = tempfile.mkdtemp(prefix='dpointnet-brian2-')
    try:
        ex, comp = write_network(work, a.cells, np.random.default_rng(a.seed))
        net = bmtk_network.Network(ex, comp)
        ok = True
        for dt in a.dt or [0.1, 1.0]:
            bs = brian_run(net, dt, a.tstop)
            ds, _, _ = dpointnet_run(a.dpointnet, ex, dt, a.tstop, work)
            only_b, only_d = sorted(bs - ds), sorted(ds - bs)
            same = not only_b and not only_d
            print('%s, dt %g ms, %g ms: Brian2 %s %d spikes, dpointnet %d spikes: %s' %
                  (a.cells, dt, a.tstop, brian2.__version__, len(bs), len(ds), 'identical' if same else
                   '%d only in Brian2, %d only in dpointnet' % (len(only_b), len(only_d))))
            for nid, k in only_b[:10]:
                print('  only Brian2: node %d at %.4f ms' % (nid, k * dt))
            for nid, k in only_d[:10]:
                print('  only dpointnet: node %d at %.4f ms' % (nid, k * dt))
            ok = ok and same and len(bs) > 0
        print('PASS' if ok else 'FAIL')
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
