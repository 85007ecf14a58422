"""Files of the comparison: the LGN node table as a CSV for FilterNet (tools/lgn_rates.py) and as SONATA files for
dpointnet (same attributes, same order: lgn_nodes.h5 group 0 + lgn_node_types.csv with pop_name), one GLIF neuron
with an edge from every LGN node (an input population needs edges), the movie file and one simulation config per
stimulus set. Every path in the configs is absolute."""
import copy
import json
import os

import h5py
import numpy as np

from . import cases

GLIF = {"V_m": -70.0, "V_th": -50.0, "g": 5.0, "E_L": -70.0, "C_m": 50.0, "t_ref": 2.0, "V_reset": -70.0,
        "asc_init": [0.0, 0.0], "asc_decay": [0.1, 0.3], "asc_amps": [-10.0, -20.0], "tau_syn": [5.0, 2.0],
        "spike_dependent_threshold": False, "after_spike_currents": True, "adapting_threshold": False}
FLOAT_COLUMNS = [c for c in cases.COLUMNS if c not in ('node_id', 'pop_name')]


def write_csv(path, rows):
    with open(path, 'w') as f:
        f.write(','.join(cases.COLUMNS) + '\n')
        for r in rows:
            f.write(','.join('' if isinstance(r[c], float) and np.isnan(r[c]) else
                             (repr(float(r[c])) if c in FLOAT_COLUMNS else str(r[c])) for c in cases.COLUMNS) + '\n')


def _type_ids(rows):
    return {cls: 100 + i for i, cls in enumerate(dict.fromkeys(r['pop_name'] for r in rows))}


def write_lgn_sonata(net, rows):
    types = _type_ids(rows)
    with open(os.path.join(net, 'lgn_node_types.csv'), 'w') as f:
        f.write('node_type_id model_type pop_name ei location\n')
        f.writelines('%d virtual %s e LGN\n' % (t, cls) for cls, t in types.items())
    n = len(rows)
    with h5py.File(os.path.join(net, 'lgn_nodes.h5'), 'w') as h:
        g = h.create_group('nodes/lgn')
        g.create_dataset('node_id', data=np.array([r['node_id'] for r in rows], np.uint64))
        g.create_dataset('node_type_id', data=np.array([types[r['pop_name']] for r in rows], np.uint32))
        g.create_dataset('node_group_id', data=np.zeros(n, np.uint32))
        g.create_dataset('node_group_index', data=np.arange(n, dtype=np.uint64))
        g0 = g.create_group('0')
        for c in FLOAT_COLUMNS:
            g0.create_dataset(c, data=np.array([r[c] for r in rows], np.float64))


def write_v1_and_edges(net, comp, n_lgn):
    os.makedirs(os.path.join(comp, 'cell_models'), exist_ok=True)
    os.makedirs(os.path.join(comp, 'synaptic_models'), exist_ok=True)
    json.dump(GLIF, open(os.path.join(comp, 'cell_models', 'glif.json'), 'w'))
    json.dump({'receptor_type': 1}, open(os.path.join(comp, 'synaptic_models', 'lgn_to_v1.json'), 'w'))
    with open(os.path.join(net, 'v1_node_types.csv'), 'w') as f:
        f.write('node_type_id model_type model_template ei dynamics_params\n1 point_neuron nest:glif_psc e glif.json\n')
    with h5py.File(os.path.join(net, 'v1_nodes.h5'), 'w') as h:
        g = h.create_group('nodes/v1')
        for k, v in (('node_id', np.uint64), ('node_type_id', np.uint32), ('node_group_id', np.uint32),
                     ('node_group_index', np.uint64)):
            g.create_dataset(k, data=np.array([1 if k == 'node_type_id' else 0], v))
        g.create_group('0')
    with open(os.path.join(net, 'lgn_v1_edge_types.csv'), 'w') as f:
        f.write('edge_type_id model_template syn_weight delay dynamics_params\n'
                '100 static_synapse 0.5 2.0 lgn_to_v1.json\n')
    with h5py.File(os.path.join(net, 'lgn_v1_edges.h5'), 'w') as h:
        g = h.create_group('edges/lgn_to_v1')
        g.create_dataset('source_node_id', data=np.arange(n_lgn, dtype=np.uint64)).attrs['node_population'] = 'lgn'
        g.create_dataset('target_node_id', data=np.zeros(n_lgn, np.uint64)).attrs['node_population'] = 'v1'
        g.create_dataset('edge_type_id', data=np.full(n_lgn, 100, np.uint32))
        g.create_dataset('edge_group_id', data=np.zeros(n_lgn, np.uint16))
        g.create_dataset('edge_group_index', data=np.arange(n_lgn, dtype=np.uint32))
        g.create_group('0')


def write_movie(path):
    with h5py.File(path, 'w') as h:
        h.create_dataset('movie', data=cases.movie_frames(cases.MOVIE['rows'], cases.MOVIE['cols'],
                                                           cases.MOVIE['frames']).astype(np.float32))


def write_config(work, name, tstop, batch, spec, movie_path):
    net, comp = os.path.join(work, 'network'), os.path.join(work, 'components')
    spec = copy.deepcopy(spec)
    spec.update(input_type='lgn', node_set='lgn')
    if spec['stimulus']['type'] == 'movie':
        spec['stimulus']['movie_file'] = movie_path
    cfg = {'run': {'dt': 1.0, 'tstop': tstop, 'batch_size': batch, 'seed': 1},
           'components': {'point_neuron_models_dir': os.path.join(comp, 'cell_models'),
                          'synaptic_models_dir': os.path.join(comp, 'synaptic_models')},
           'networks': {'nodes': [{'nodes_file': os.path.join(net, 'v1_nodes.h5'),
                                   'node_types_file': os.path.join(net, 'v1_node_types.csv')},
                                  {'nodes_file': os.path.join(net, 'lgn_nodes.h5'),
                                   'node_types_file': os.path.join(net, 'lgn_node_types.csv')}],
                        'edges': [{'edges_file': os.path.join(net, 'lgn_v1_edges.h5'),
                                   'edge_types_file': os.path.join(net, 'lgn_v1_edge_types.csv')}]},
           'inputs': {'lgn': spec},
           'output': {'output_dir': os.path.join(work, 'out_' + name), 'overwrite_output_dir': True,
                      'lgn_rates': {'samples': list(range(batch))}}}
    path = os.path.join(work, 'config_%s.json' % name)
    json.dump(cfg, open(path, 'w'), indent=1)
    return path


def write_all(work):
    """Writes everything under work; returns (rows, csv path, {set name: config path})."""
    net = os.path.join(work, 'network')
    os.makedirs(net, exist_ok=True)
    rows = cases.node_rows()
    csv = os.path.join(work, 'lgn_nodes_filternet.csv')
    write_csv(csv, rows)
    write_lgn_sonata(net, rows)
    write_v1_and_edges(net, os.path.join(work, 'components'), len(rows))
    movie = os.path.join(work, 'movie.h5')
    write_movie(movie)
    configs = {name: write_config(work, name, tstop, batch, spec, movie)
               for name, (tstop, batch, spec) in cases.STIMULUS_SETS.items()}
    return rows, csv, configs
