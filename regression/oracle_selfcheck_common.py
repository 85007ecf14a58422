"""Shared part of the forward-oracle self-test: check/test, a tiny SONATA network writer, run_cfg."""
import json
import os
import tempfile
import traceback
import warnings

import h5py
import numpy as np
from oracle.config import load_config
from oracle.model import load_model, simulate
from oracle.sonata import write_spike_file

HERE = os.path.dirname(os.path.abspath(__file__))
warnings.simplefilter('ignore')
# BMTK's point_450glifs, vendored in tests/data/bmtk (found from this script's location).
EXAMPLE = os.path.join(os.path.dirname(HERE), 'tests', 'data', 'bmtk', 'point_450glifs')
RESULTS = []


def check(name, cond, detail=''):
    RESULTS.append((name, bool(cond)))
    print('%s %s%s' % ('PASS' if cond else 'FAIL', name, ('  [' + detail + ']') if detail else ''))


def test(fn):
    try:
        fn()
    except Exception:
        traceback.print_exc()
        check(fn.__name__ + ' (raised)', False)
    return fn


# ------------------------------------------------------------------ tiny SONATA network writer
GLIF = {"V_m": -70.0, "V_th": -50.0, "g": 5.0, "E_L": -70.0, "C_m": 50.0, "t_ref": 2.0,
        "V_reset": -70.0, "asc_init": [0.0, 0.0], "asc_decay": [0.1, 0.3], "asc_amps": [-10.0, -20.0],
        "tau_syn": [5.0, 2.0, 8.0], "spike_dependent_threshold": False, "after_spike_currents": True,
        "adapting_threshold": False}
IAF = {"I_e": 0.0, "tau_m": 20.0, "C_m": 100.0, "t_ref": 3.0, "E_L": -70.0, "V_th": -50.0, "V_reset": -60.0}


def write_h5_nodes(path, pop, n, type_ids):
    with h5py.File(path, 'w') as h:
        h.attrs.create('magic', 2682, dtype=np.uint32)
        g = h.create_group('nodes/' + pop)
        g.create_dataset('node_id', data=np.arange(n, dtype=np.uint32))       # odd width on purpose
        g.create_dataset('node_type_id', data=np.asarray(type_ids, np.uint16))
        g.create_dataset('node_group_id', data=np.zeros(n, np.uint32))
        g.create_dataset('node_group_index', data=np.arange(n, dtype=np.uint64))
        g.create_group('0')


def make_network(d, cells, n_virtual, edges, spikes, run, extra_inputs=None):
    """cells: list of (template, params); edges: (src_kind 'v'|'r', src, tgt, syn_weight, delay,
    receptor, nsyns). Returns path of the simulation config (which names a circuit config in
    a subdirectory, using manifest variables and relative paths)."""
    os.makedirs(os.path.join(d, 'circ/net'), exist_ok=True)
    os.makedirs(os.path.join(d, 'circ/comp/cells'), exist_ok=True)
    os.makedirs(os.path.join(d, 'circ/comp/syn'), exist_ok=True)
    os.makedirs(os.path.join(d, 'in'), exist_ok=True)
    lines = ['node_type_id model_type model_template dynamics_params']
    for i, (tmpl, params) in enumerate(cells):
        json.dump(params, open(os.path.join(d, 'circ/comp/cells/cell%d.json' % i), 'w'))
        lines.append('%d point_neuron %s cell%d.json' % (100 + i, tmpl, i))
    open(os.path.join(d, 'circ/net/rec_types.csv'), 'w').write('\n'.join(lines) + '\n')
    open(os.path.join(d, 'circ/net/vin_types.csv'), 'w').write('node_type_id model_type\n1 virtual\n')
    write_h5_nodes(os.path.join(d, 'circ/net/rec_nodes.h5'), 'rec', len(cells), [100 + i for i in range(len(cells))])
    write_h5_nodes(os.path.join(d, 'circ/net/vin_nodes.h5'), 'vin', n_virtual, [1] * n_virtual)
    recs = sorted(set(e[5] for e in edges)) or [0]
    etl = ['edge_type_id model_template syn_weight delay dynamics_params']
    for r in recs:
        json.dump({'receptor_type': r} if r else {}, open(os.path.join(d, 'circ/comp/syn/r%d.json' % r), 'w'))
        etl.append('%d static_synapse 999.0 99.0 r%d.json' % (100 + r, r))
    open(os.path.join(d, 'circ/net/edge_types.csv'), 'w').write('\n'.join(etl) + '\n')
    with h5py.File(os.path.join(d, 'circ/net/edges.h5'), 'w') as h:
        for kind, pname, spop in (('v', 'vin_to_rec', 'vin'), ('r', 'rec_to_rec', 'rec')):
            es = [e for e in edges if e[0] == kind]
            g = h.create_group('edges/' + pname)
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
    circ = {"manifest": {"$CIRC": "${configdir}", "$NET": "$CIRC/net", "$COMP": "./comp"},
            "components": {"point_neuron_models_dir": "$COMP/cells", "synaptic_models_dir": "${COMP}/syn"},
            "networks": {"nodes": [{"nodes_file": "$NET/rec_nodes.h5", "node_types_file": "$NET/rec_types.csv"},
                                   {"nodes_file": "./net/vin_nodes.h5", "node_types_file": "net/vin_types.csv"}],
                         "edges": [{"edges_file": "$NET/edges.h5", "edge_types_file": "$NET/edge_types.csv"}]},
            "target_simulator": "child"}
    json.dump(circ, open(os.path.join(d, 'circ/circuit.json'), 'w'))
    ids = sorted((j, t) for j, ts in spikes.items() for t in ts)
    write_spike_file(os.path.join(d, 'in/spk.h5'),
                     [('vin', [i for i, _ in ids], [t for _, t in ids])])
    inputs = {"stim": {"input_type": "spikes", "module": "h5", "input_file": "$IN/spk.h5", "node_set": "vin"}}
    if extra_inputs is not None:
        inputs = extra_inputs
    sim = {"manifest": {"$IN": "./in"}, "target_simulator": "parent", "run": run, "inputs": inputs, "network": "circ/circuit.json"}
    p = os.path.join(d, 'sim.json')
    json.dump(sim, open(p, 'w'))
    return p


def run_cfg(path, batch=1, first_sample=0, record=None):
    conf = load_config(path)
    net, inputs, run = load_model(conf)
    res = simulate(net, inputs, run.n_steps, batch, first_sample=first_sample, record_v=True, record=record)
    return net, run, res


TMP = tempfile.mkdtemp(prefix='oracle_selfcheck_')
