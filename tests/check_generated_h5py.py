#!/usr/bin/python3
"""Independent check of a network written by `dpointnet generate`, with h5py/numpy only.

usage: /usr/bin/python3 tests/check_generated_h5py.py OUT_DIR

Opens every nodes/edges h5 file under OUT_DIR/network and checks the SONATA layout that BMTK and dpointnet
read (SONATA.md sections 2, 3): root magic/version, dataset names, dtypes and lengths, node ids, the scalar
variable-length UTF-8 `node_population` attributes, id ranges, sorting by target, no duplicate (source,
target) pairs, no self-connections, weight signs, delays, the index groups (recomputed from the edge arrays),
the types CSVs, the component JSONs and the two config files; for a `--visual` network also the LGN filter
attributes (float64, one per unit) and the LGN edges' synapse counts (>= 1). Prints one line per file and exits 0 when
everything holds, 1 (listing every failure) otherwise.
"""
import csv
import json
import os
import re
import sys

import h5py
import numpy as np

failures = []
LGN_ATTRIBUTES = ('x', 'y', 'spatial_size', 'kpeaks_dom_0', 'kpeaks_dom_1', 'weight_dom_0', 'weight_dom_1',
                  'delay_dom_0', 'delay_dom_1', 'kpeaks_non_dom_0', 'kpeaks_non_dom_1', 'weight_non_dom_0',
                  'weight_non_dom_1', 'delay_non_dom_0', 'delay_non_dom_1', 'tuning_angle', 'sf_sep')


def fail(msg):
    failures.append(msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    return bool(cond)


def read_types_csv(path):
    with open(path, newline='') as f:
        rows = list(csv.reader(f, delimiter=' '))
    if not rows:
        raise ValueError('%s is empty' % path)
    header = rows[0]
    return [dict(zip(header, r)) for r in rows[1:] if r]


def check_root(f, path):
    magic = f.attrs.get('magic')
    version = f.attrs.get('version')
    check(magic is not None and int(np.asarray(magic).ravel()[0]) == 0x0A7A, '%s: root attribute magic != 0x0A7A' % path)
    check(version is not None and list(np.asarray(version).ravel()) == [0, 1], '%s: root attribute version != [0, 1]' % path)


def check_dataset(g, name, dtype, length, path):
    if name not in g or not isinstance(g[name], h5py.Dataset):
        fail('%s: dataset %s/%s is missing' % (path, g.name, name))
        return None
    ds = g[name]
    check(ds.dtype == np.dtype(dtype), '%s: %s has dtype %s, expected %s' % (path, ds.name, ds.dtype, np.dtype(dtype)))
    if length is not None:
        check(ds.shape == (length,), '%s: %s has shape %s, expected (%d,)' % (path, ds.name, ds.shape, length))
    return ds[()]


def check_string_attr(ds, name, expected, path):
    if name not in ds.attrs:
        fail('%s: %s has no attribute %s' % (path, ds.name, name))
        return
    aid = ds.attrs.get_id(name)
    t = aid.get_type()
    ok = isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str() and t.get_cset() == h5py.h5t.CSET_UTF8
    check(ok, '%s: %s@%s is not a variable-length UTF-8 string' % (path, ds.name, name))
    check(aid.shape == (), '%s: %s@%s is not scalar (shape %s)' % (path, ds.name, name, aid.shape))
    v = ds.attrs[name]
    if isinstance(v, bytes):
        v = v.decode()
    check(v == expected, '%s: %s@%s = %r, expected %r' % (path, ds.name, name, v, expected))


def check_index(g, direction, key, n_nodes, n_edges, path):
    """node_id_to_range [n,2] -> rows of range_to_edge_id [R,2] -> half-open edge ranges; every edge with
    key == node must be listed exactly once under that node."""
    base = 'indices/%s' % direction
    if base not in g:
        fail('%s: %s/%s is missing' % (path, g.name, base))
        return
    n2r_ds, r2e_ds = g[base + '/node_id_to_range'], g[base + '/range_to_edge_id']
    for ds in (n2r_ds, r2e_ds):
        check(ds.dtype == np.uint64, '%s: %s has dtype %s, expected uint64' % (path, ds.name, ds.dtype))
        check(ds.ndim == 2 and ds.shape[1] == 2, '%s: %s has shape %s, expected [n, 2]' % (path, ds.name, ds.shape))
    if not check(n2r_ds.shape[0] == n_nodes, '%s: %s has %d rows, expected %d nodes'
                 % (path, n2r_ds.name, n2r_ds.shape[0], n_nodes)):
        return
    n2r = n2r_ds[()].astype(np.int64)
    r2e = r2e_ds[()].astype(np.int64)
    R = r2e.shape[0]
    a, b = n2r[:, 0], n2r[:, 1]
    if not check(np.all(a <= b) and np.all(a >= 0) and np.all(b <= R),
                 '%s: %s: node ranges out of bounds or reversed' % (path, n2r_ds.name)):
        return
    lengths = b - a
    # dpointnet writes the node ranges back to back; that makes the check below a simple expansion.
    if not check(n_nodes == 0 or (a[0] == 0 and np.all(a[1:] == b[:-1]) and b[-1] == R),
                 '%s: %s: node ranges are not contiguous from 0 to %d' % (path, n2r_ds.name, R)):
        return
    e0, e1 = r2e[:, 0], r2e[:, 1]
    if not check(np.all(e0 < e1) and np.all(e0 >= 0) and np.all(e1 <= n_edges),
                 '%s: %s: empty, reversed or out-of-bounds edge ranges' % (path, r2e_ds.name)):
        return
    range_node = np.repeat(np.arange(n_nodes, dtype=np.int64), lengths)
    elen = e1 - e0
    if not check(int(elen.sum()) == n_edges, '%s: %s covers %d edges, expected %d'
                 % (path, r2e_ds.name, int(elen.sum()), n_edges)):
        return
    starts = np.repeat(e0 - np.concatenate(([0], np.cumsum(elen)[:-1])), elen)
    edge_ids = np.arange(n_edges, dtype=np.int64) + starts
    check(np.array_equal(np.sort(edge_ids), np.arange(n_edges)), '%s: %s does not list every edge exactly once'
          % (path, base))
    bad = np.count_nonzero(key[edge_ids] != np.repeat(range_node, elen))
    check(bad == 0, '%s: %s lists %d edges under the wrong node' % (path, base, bad))
    if direction == 'target_to_source':
        with_edges = np.count_nonzero(np.bincount(key, minlength=n_nodes))
        check(R == with_edges, '%s: %s has %d ranges; edges sorted by target need exactly %d' % (path, base, R, with_edges))


def resolve(s, variables):
    def sub(m):
        return variables.get(m.group(1), m.group(0))
    prev = None
    while prev != s:
        prev, s = s, re.sub(r'\$\{?(\w+)\}?', sub, s)
    return s


def check_configs(out):
    paths = {}
    circuit_path = os.path.join(out, 'config.circuit.json')
    sim_path = os.path.join(out, 'config.simulation.json')
    try:
        with open(circuit_path) as f:
            circuit = json.load(f)
        with open(sim_path) as f:
            sim = json.load(f)
    except Exception as e:  # noqa: BLE001
        fail('configs: %s' % e)
        return paths
    variables = {'configdir': os.path.abspath(out)}
    for k, v in circuit.get('manifest', {}).items():
        variables[k.lstrip('$')] = v
    variables = {k: resolve(v, variables) for k, v in variables.items()}
    comp = circuit.get('components', {})
    for key in ('point_neuron_models_dir', 'synaptic_models_dir'):
        p = resolve(comp.get(key, ''), variables)
        if not os.path.isabs(p):
            p = os.path.join(out, p)
        check(os.path.isdir(p), 'config.circuit.json: components.%s -> %s is not a directory' % (key, p))
        paths[key] = p
    nets = circuit.get('networks', {})
    listed = []
    for kind, fkey, tkey in (('nodes', 'nodes_file', 'node_types_file'), ('edges', 'edges_file', 'edge_types_file')):
        for entry in nets.get(kind, []):
            for k in (fkey, tkey):
                p = resolve(entry.get(k, ''), variables)
                if not os.path.isabs(p):
                    p = os.path.join(out, p)
                check(os.path.isfile(p), 'config.circuit.json: networks.%s.%s -> %s does not exist' % (kind, k, p))
                listed.append(os.path.basename(p))
    for name in ('v1', 'lgn', 'bkg'):
        check('%s_nodes.h5' % name in listed, 'config.circuit.json does not list %s_nodes.h5' % name)
        check('%s_v1_edges.h5' % name in listed, 'config.circuit.json does not list %s_v1_edges.h5' % name)
    check(sim.get('network') == 'config.circuit.json', 'config.simulation.json: "network" must be "config.circuit.json"')
    run = sim.get('run', {})
    dt, tstop = run.get('dt'), run.get('tstop')
    if check(isinstance(dt, (int, float)) and dt > 0 and isinstance(tstop, (int, float)) and tstop >= dt,
             'config.simulation.json: run.dt / run.tstop invalid (%r, %r)' % (dt, tstop)):
        check(abs(round(tstop / dt) * dt - tstop) <= 1e-6 * dt, 'config.simulation.json: tstop is not a multiple of dt')
    check(isinstance(run.get('seed'), int) and run.get('seed') >= 0, 'config.simulation.json: run.seed missing')
    inputs = sim.get('inputs', {})
    lgn, bkg = inputs.get('LGN', {}), inputs.get('BKG', {})
    if lgn.get('input_type') == 'lgn':  # a visual network: the LGN filter model under drifting gratings
        stim = lgn.get('stimulus', {})
        check(lgn.get('node_set') == 'lgn' and stim.get('type') == 'drifting_grating' and
              len(stim.get('direction', [])) == 8 and lgn.get('direction_convention') == 'dpointnet',
              'config.simulation.json: inputs.LGN must show drifting gratings of 8 directions to node_set lgn on '
              'the V1 model\'s y-up screen (direction_convention dpointnet): %r' % lgn)
    else:
        check(lgn.get('input_type') == 'rates' and lgn.get('node_set') == 'lgn' and lgn.get('rate', 0) > 0,
              'config.simulation.json: inputs.LGN must be rates on node_set lgn with rate > 0: %r' % lgn)
    check(bkg.get('input_type') == 'poisson' and bkg.get('node_set') == 'bkg' and bkg.get('rate', 0) > 0,
          'config.simulation.json: inputs.BKG must be poisson on node_set bkg with rate > 0: %r' % bkg)
    o = sim.get('output', {})
    for k in ('output_dir', 'spikes_file', 'log_file'):
        check(isinstance(o.get(k), str) and o.get(k), 'config.simulation.json: output.%s missing' % k)
    paths['dt'] = dt if isinstance(dt, (int, float)) else 1.0
    return paths


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    out = argv[1]
    net = os.path.join(out, 'network')
    if not os.path.isdir(net):
        print('FAIL: %s is not a generated network directory (no network/)' % out)
        return 1
    paths = check_configs(out)
    cell_dir = paths.get('point_neuron_models_dir', os.path.join(out, 'components', 'cell_models'))
    syn_dir = paths.get('synaptic_models_dir', os.path.join(out, 'components', 'synaptic_models'))
    dt = paths.get('dt', 1.0)

    # ---- nodes
    sizes, ei = {}, {}
    lgn_csv = os.path.join(net, 'lgn_node_types.csv')  # --visual: one node type per LGN filter class, not 'lgn'
    visual = os.path.exists(lgn_csv) and any(r.get('pop_name') != 'lgn' for r in read_types_csv(lgn_csv))
    for pop in ('v1', 'lgn', 'bkg'):
        path = os.path.join(net, '%s_nodes.h5' % pop)
        try:
            types = {int(r['node_type_id']): r for r in read_types_csv(os.path.join(net, '%s_node_types.csv' % pop))}
            with h5py.File(path, 'r') as f:
                check_root(f, path)
                pops = list(f['nodes'])
                check(pops == [pop], '%s: /nodes holds %s, expected [%r]' % (path, pops, pop))
                g = f['nodes'][pop]
                n = g['node_id'].shape[0]
                sizes[pop] = n
                nid = check_dataset(g, 'node_id', np.uint64, n, path)
                ntype = check_dataset(g, 'node_type_id', np.uint64, n, path)
                gid = check_dataset(g, 'node_group_id', np.uint32, n, path)
                gidx = check_dataset(g, 'node_group_index', np.uint64, n, path)
                check(nid is not None and np.array_equal(nid, np.arange(n)), '%s: node_id is not 0..N-1' % path)
                check(gid is not None and np.all(gid == 0), '%s: node_group_id is not all 0' % path)
                check(gidx is not None and np.array_equal(gidx, np.arange(n)), '%s: node_group_index is not 0..N-1' % path)
                check('0' in g and isinstance(g['0'], h5py.Group), '%s: group 0 is missing' % path)
                if ntype is not None:
                    unknown = set(np.unique(ntype).tolist()) - set(types)
                    check(not unknown, '%s: node types %s are not in the types CSV' % (path, sorted(unknown)))
                    lookup = {t: (types[t].get('ei', 'e') == 'e') for t in types}
                    uniq, inv = np.unique(ntype, return_inverse=True)
                    ei[pop] = np.array([lookup.get(int(u), True) for u in uniq], dtype=bool)[inv]
                if pop == 'v1':
                    for prop in ('x', 'y', 'z', 'tuning_angle'):
                        check_dataset(g['0'], prop, np.float64, n, path)
                    x, z = g['0/x'][()], g['0/z'][()]
                    r_max = 60.0 / 0.07 if visual else 400.0  # visual: the column's visual field on the screen
                    check(np.all(x * x + z * z <= r_max ** 2 + 1e-6), '%s: positions outside the %g um cylinder' % (path, r_max))
                    check(10 <= n <= 200000, '%s: %d neurons outside 10..200000' % (path, n))
                    n_exc = int(np.count_nonzero(ei['v1']))
                    check(abs(n_exc - 0.8 * n) <= 1, '%s: %d excitatory of %d, expected 80%%' % (path, n_exc, n))
                if pop == 'lgn' and visual:
                    for prop in LGN_ATTRIBUTES:
                        check_dataset(g['0'], prop, np.float64, n, path)
            for t, r in types.items():
                if pop == 'v1':
                    check(r.get('model_type') == 'point_process' and r.get('model_template') == 'nest:glif_psc',
                          '%s_node_types.csv: type %d is not point_process nest:glif_psc' % (pop, t))
                    p = os.path.join(cell_dir, r.get('dynamics_params', ''))
                    try:
                        with open(p) as jf:
                            params = json.load(jf)
                        for k in ('V_th', 'E_L', 'V_reset', 'g', 'C_m', 't_ref', 'asc_amps', 'asc_decay', 'tau_syn'):
                            check(k in params, '%s: key %s missing' % (p, k))
                        check(len(params.get('tau_syn', [])) == 4, '%s: tau_syn must have 4 ports' % p)
                    except Exception as e:  # noqa: BLE001
                        fail('%s_node_types.csv: type %d: dynamics_params %s: %s' % (pop, t, p, e))
                else:
                    check(r.get('model_type') == 'virtual', '%s_node_types.csv: type %d is not virtual' % (pop, t))
            print('%s: %d nodes' % (os.path.relpath(path, out), sizes.get(pop, 0)))
        except Exception as e:  # noqa: BLE001
            fail('%s: %s: %s' % (path, type(e).__name__, e))

    # ---- edges
    receptor_expected = {(True, True): 1, (True, False): 3, (False, True): 2, (False, False): 4}
    for src in ('v1', 'lgn', 'bkg'):
        name = '%s_to_v1' % src
        path = os.path.join(net, '%s_v1_edges.h5' % src)
        if src not in sizes or 'v1' not in sizes:
            fail('%s: skipped, the node files did not load' % path)
            continue
        try:
            etypes = {int(r['edge_type_id']): r for r in read_types_csv(os.path.join(net, '%s_v1_edge_types.csv' % src))}
            receptor = {}
            for t, r in etypes.items():
                check(r.get('model_template') == 'static_synapse', '%s_v1_edge_types.csv: type %d model_template' % (src, t))
                for col in ('target_query', 'source_query', 'syn_weight', 'delay'):
                    check(col in r, '%s_v1_edge_types.csv: column %s missing' % (src, col))
                p = os.path.join(syn_dir, r.get('dynamics_params', ''))
                try:
                    with open(p) as jf:
                        receptor[t] = json.load(jf).get('receptor_type')
                except Exception as e:  # noqa: BLE001
                    fail('%s_v1_edge_types.csv: type %d: %s: %s' % (src, t, p, e))
            with h5py.File(path, 'r') as f:
                check_root(f, path)
                pops = list(f['edges'])
                check(pops == [name], '%s: /edges holds %s, expected [%r]' % (path, pops, name))
                g = f['edges'][name]
                E = g['source_node_id'].shape[0]
                s = check_dataset(g, 'source_node_id', np.uint64, E, path)
                t = check_dataset(g, 'target_node_id', np.uint64, E, path)
                et = check_dataset(g, 'edge_type_id', np.uint32, E, path)
                eg = check_dataset(g, 'edge_group_id', np.uint16, E, path)
                egi = check_dataset(g, 'edge_group_index', np.uint32, E, path)
                check_string_attr(g['source_node_id'], 'node_population', src, path)
                check_string_attr(g['target_node_id'], 'node_population', 'v1', path)
                w = check_dataset(g['0'], 'syn_weight', np.float64, E, path)
                d = check_dataset(g['0'], 'delay', np.float64, E, path)
                ns = check_dataset(g['0'], 'nsyns', np.uint32, E, path)
                if s is None or t is None:
                    continue
                s, t = s.astype(np.int64), t.astype(np.int64)
                n_src, n_trg = sizes[src], sizes['v1']
                check(E == 0 or (s.min() >= 0 and s.max() < n_src), '%s: source ids outside 0..%d' % (path, n_src - 1))
                check(E == 0 or (t.min() >= 0 and t.max() < n_trg), '%s: target ids outside 0..%d' % (path, n_trg - 1))
                check(np.all(np.diff(t) >= 0), '%s: edges are not sorted by target_node_id' % path)
                key = t * max(n_src, 1) + s
                check(np.unique(key).size == E, '%s: %d duplicate (source, target) pairs' % (path, E - np.unique(key).size))
                if src == 'v1':
                    check(not np.any(s == t), '%s: %d self-connections' % (path, int(np.count_nonzero(s == t))))
                if eg is not None:
                    check(np.all(eg == 0), '%s: edge_group_id is not all 0' % path)
                if egi is not None:
                    check(np.array_equal(egi, np.arange(E)), '%s: edge_group_index is not 0..E-1' % path)
                if ns is not None and visual and src == 'lgn':
                    check(np.all(ns >= 1), '%s: nsyns below 1' % path)
                elif ns is not None:
                    check(np.all(ns == 1), '%s: nsyns is not all 1' % path)
                if d is not None:
                    check(np.all(np.isfinite(d)) and np.all(d >= max(1.0, dt) - 1e-12) and np.all(d <= max(5.0, dt) + 1e-12),
                          '%s: delays outside [max(1, dt), 5] ms' % path)
                if w is not None:
                    check(np.all(np.isfinite(w)) and np.all(w != 0), '%s: zero or non-finite weights' % path)
                    if src == 'v1':
                        src_exc = ei['v1'][s]
                        check(np.all((w > 0) == src_exc), '%s: weight sign does not follow the source E/I class' % path)
                    else:
                        check(np.all(w > 0), '%s: input weights must be positive' % path)
                if et is not None:
                    unknown = set(np.unique(et).tolist()) - set(etypes)
                    check(not unknown, '%s: edge types %s not in the types CSV' % (path, sorted(unknown)))
                    trg_exc = ei['v1'][t]
                    src_exc = ei['v1'][s] if src == 'v1' else np.ones(E, bool)
                    for typ in np.unique(et).tolist():
                        m = et == typ
                        pairs = set(zip(src_exc[m].tolist(), trg_exc[m].tolist()))
                        want = {receptor_expected[p] if src == 'v1' else 1 for p in pairs}
                        check(len(want) == 1 and receptor.get(typ) in want,
                              '%s: edge type %d has receptor_type %r, expected %s' % (path, typ, receptor.get(typ), want))
                check_index(g, 'source_to_target', s, n_src, E, path)
                check_index(g, 'target_to_source', t, n_trg, E, path)
                indeg = np.bincount(t, minlength=n_trg)
                print('%s: %d edges, in-degree mean %.2f (min %d, max %d)'
                      % (os.path.relpath(path, out), E, E / max(n_trg, 1), indeg.min() if n_trg else 0,
                         indeg.max() if n_trg else 0))
        except Exception as e:  # noqa: BLE001
            fail('%s: %s: %s' % (path, type(e).__name__, e))

    if failures:
        for m in failures:
            print('FAIL: ' + m)
        print('FAILED: %d problem(s) in %s' % (len(failures), out))
        return 1
    print('OK: %s is a valid dpointnet-generated SONATA network' % out)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
