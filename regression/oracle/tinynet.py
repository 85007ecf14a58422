"""Writer of tiny SONATA networks for the self-tests (one recurrent population "rec", any number of
virtual populations, edges with per-edge syn_weight / delay / nsyns in the h5 and receptor ports via
synaptic dynamics_params); optionally extra node types columns (e.g. pop_name) and per-node attributes
(e.g. x, z) of the recurrent population."""
import json
import os

import h5py
import numpy as np

from .sonata import write_spike_file

GLIF = {"V_m": -70.0, "V_th": -50.0, "g": 5.0, "E_L": -70.0, "C_m": 50.0, "t_ref": 2.0,
        "V_reset": -70.0, "asc_init": [0.0, 0.0], "asc_decay": [0.1, 0.3], "asc_amps": [-10.0, -20.0],
        "tau_syn": [5.0, 2.0, 8.0], "spike_dependent_threshold": False, "after_spike_currents": True,
        "adapting_threshold": False}
IAF = {"I_e": 0.0, "tau_m": 20.0, "C_m": 100.0, "t_ref": 3.0, "E_L": -70.0, "V_th": -50.0, "V_reset": -60.0}


def _cell(v):
    v = str(v)
    return '"%s"' % v if ' ' in v else v


def _nodes(path, pop, type_ids, attrs=None):
    n = len(type_ids)
    with h5py.File(path, 'w') as h:
        g = h.create_group('nodes/' + pop)
        g.create_dataset('node_id', data=np.arange(n, dtype=np.uint64))
        g.create_dataset('node_type_id', data=np.asarray(type_ids, np.uint32))
        g.create_dataset('node_group_id', data=np.zeros(n, np.uint32))
        g.create_dataset('node_group_index', data=np.arange(n, dtype=np.uint64))
        g0 = g.create_group('0')
        for k, v in (attrs or {}).items():
            if isinstance(v[0], str):
                g0.create_dataset(k, data=np.array(v, dtype=object), dtype=h5py.string_dtype())
            else:
                g0.create_dataset(k, data=np.asarray(v, np.float64))


def make_network(d, cells, virtual, edges, run, inputs, spikes=None, train=None, type_columns=None,
                 node_attrs=None):
    """cells: list of (template, params, node_type_id); virtual: list of (name, n);
    edges: list of (source population, src, tgt, syn_weight, delay, receptor, nsyns), written as
    one edge population per source population, in order of first appearance;
    spikes: {virtual pop: {node: [times]}} written to d/spk_<pop>.h5 (input_file "spk_<pop>.h5");
    type_columns: {column: {node_type_id: value}} extra columns of rec_types.csv (quoted when holding spaces);
    node_attrs: {name: per-cell values (numbers or str)} datasets of the rec nodes' group 0.
    Returns the path of the (single-file) config."""
    os.makedirs(os.path.join(d, 'cells'), exist_ok=True)
    os.makedirs(os.path.join(d, 'syn'), exist_ok=True)
    extra = list(type_columns or {})
    lines = [' '.join(['node_type_id model_type model_template dynamics_params'] + extra)]
    seen = set()
    for i, (tmpl, params, ntid) in enumerate(cells):
        if ntid in seen:
            continue
        seen.add(ntid)
        json.dump(params, open(os.path.join(d, 'cells/t%d.json' % ntid), 'w'))
        lines.append(' '.join(['%d point_neuron %s t%d.json' % (ntid, tmpl, ntid)]
                              + [_cell(type_columns[c][ntid]) for c in extra]))
    open(os.path.join(d, 'rec_types.csv'), 'w').write('\n'.join(lines) + '\n')
    _nodes(os.path.join(d, 'rec_nodes.h5'), 'rec', [c[2] for c in cells], node_attrs)
    nodes = [{"nodes_file": "$D/rec_nodes.h5", "node_types_file": "$D/rec_types.csv"}]
    open(os.path.join(d, 'virt_types.csv'), 'w').write('node_type_id model_type\n1 virtual\n')
    for name, n in virtual:
        _nodes(os.path.join(d, 'v_%s.h5' % name), name, [1] * n)
        nodes.append({"nodes_file": "$D/v_%s.h5" % name, "node_types_file": "$D/virt_types.csv"})
    recs = sorted(set(e[5] for e in edges)) or [0]
    etl = ['edge_type_id model_template syn_weight delay dynamics_params']
    for r in recs:
        json.dump({'receptor_type': r} if r else {}, open(os.path.join(d, 'syn/r%d.json' % r), 'w'))
        etl.append('%d static_synapse 999.0 99.0 r%d.json' % (100 + r, r))
    open(os.path.join(d, 'edge_types.csv'), 'w').write('\n'.join(etl) + '\n')
    order = []
    for e in edges:
        if e[0] not in order:
            order.append(e[0])
    with h5py.File(os.path.join(d, 'edges.h5'), 'w') as h:
        for spop in order:
            es = [e for e in edges if e[0] == spop]
            g = h.create_group('edges/%s_to_rec' % spop)
            s = g.create_dataset('source_node_id', data=np.array([e[1] for e in es], np.uint64))
            s.attrs['node_population'] = spop
            t = g.create_dataset('target_node_id', data=np.array([e[2] for e in es], np.uint64))
            t.attrs['node_population'] = 'rec'
            g.create_dataset('edge_type_id', data=np.array([100 + e[5] for e in es], np.uint32))
            g.create_dataset('edge_group_id', data=np.zeros(len(es), np.uint16))
            g.create_dataset('edge_group_index', data=np.arange(len(es), dtype=np.uint32))
            g0 = g.create_group('0')
            g0.create_dataset('syn_weight', data=np.array([e[3] for e in es], np.float64))
            g0.create_dataset('delay', data=np.array([e[4] for e in es], np.float64))
            g0.create_dataset('nsyns', data=np.array([e[6] for e in es], np.uint32))
    for pop, sp in (spikes or {}).items():
        ids = sorted((j, t) for j, ts in sp.items() for t in ts)
        write_spike_file(os.path.join(d, 'spk_%s.h5' % pop), [(pop, [i for i, _ in ids], [t for _, t in ids])])
    conf = {"manifest": {"$D": "${configdir}"},
            "components": {"point_neuron_models_dir": "$D/cells", "synaptic_models_dir": "$D/syn"},
            "networks": {"nodes": nodes,
                         "edges": [{"edges_file": "$D/edges.h5", "edge_types_file": "$D/edge_types.csv"}]},
            "run": run, "inputs": inputs}
    if train is not None:
        conf["train"] = train
    p = os.path.join(d, 'config.json')
    json.dump(conf, open(p, 'w'), indent=1)
    return p
