"""A BMTK SONATA network read the way BMTK PointNet hands it to NEST (bmtk pointnet: sonata_adaptors.py
get_batches, pointnetwork.py add_nodes/add_edges/add_spike_trains), without dpointnet and without its oracle:
the description both the NEST comparison (tests/nest) and the NEST-semantics reference (nest_reference.py) build
from. Written for the layout of BMTK's examples: one nodes/edges population per file, space-separated type
tables, the edge columns nsyns (optional), the type columns syn_weight, delay, dynamics_params.
"""
import csv
import json
import os

import h5py
import numpy as np


def _types(path, key):
    with open(path) as f:
        return {int(r[key]): r for r in csv.DictReader(f, delimiter=' ')}


class Network:
    """cells: [(node_id, model, params)] of the simulated population, grouped by node type in order of first
    appearance (NEST ids in this order); times: {virtual node_id: sorted spike times}; edges: [dict(src_pop,
    src, trg, weight, delay, syn)] per edge type, syn the synaptic dynamics_params (receptor_type)."""

    def __init__(self, example, components, v1='v1', lgn='lgn'):
        net = os.path.join(example, 'network')
        with h5py.File(os.path.join(net, v1 + '_nodes.h5')) as h:
            node_id = h['nodes/%s/node_id' % v1][()]
            type_id = h['nodes/%s/node_type_id' % v1][()]
        types = _types(os.path.join(net, v1 + '_node_types.csv'), 'node_type_id')
        order = []
        for t in type_id:
            if int(t) not in order:
                order.append(int(t))
        self.types = []  # (type id, model, params, node ids)
        for t in order:
            row = types[t]
            params = json.load(open(os.path.join(components, 'cell_models', row['dynamics_params'])))
            self.types.append((t, row['model_template'].split(':')[1], params, [int(x) for x in node_id[type_id == t]]))
        self.cells = [(nid, m, p) for _, m, p, ids in self.types for nid in ids]
        with h5py.File(os.path.join(net, lgn + '_nodes.h5')) as h:
            self.virtual_ids = [int(x) for x in h['nodes/%s/node_id' % lgn][()]]
        with h5py.File(os.path.join(example, 'inputs', 'lgn_spikes.h5')) as h:
            s_ids = h['spikes/%s/node_ids' % lgn][()]
            s_t = h['spikes/%s/timestamps' % lgn][()]
        self.times = {}
        for nid in self.virtual_ids:
            st = np.sort(s_t[s_ids == nid]).astype(float)
            if np.any(st <= 0):
                raise ValueError('BMTK refuses spike times <= 0 (node %d)' % nid)
            self.times[nid] = st
        self.edges = []
        for src_pop in (v1, lgn):
            fname = os.path.join(net, '%s_%s_edges.h5' % (src_pop, v1))
            etypes = _types(fname.replace('_edges.h5', '_edge_types.csv'), 'edge_type_id')
            with h5py.File(fname) as h:
                g = h['edges/%s_to_%s' % (src_pop, v1)]
                src, trg, et = g['source_node_id'][()], g['target_node_id'][()], g['edge_type_id'][()]
                nsyns = g['0/nsyns'][()].astype(float) if '0/nsyns' in g else np.ones(len(src))
                delay = g['0/delay'][()].astype(float) if '0/delay' in g else None  # the h5 column wins
            for t in sorted(set(int(x) for x in et)):
                m = et == t
                row = etypes[t]
                syn = json.load(open(os.path.join(components, 'synaptic_models', row['dynamics_params'])))
                self.edges.append({'src_pop': src_pop, 'src': src[m].astype(np.int64), 'trg': trg[m].astype(np.int64),
                                   'weight': nsyns[m] * float(row['syn_weight']),
                                   'delay': delay[m] if delay is not None else np.full(int(m.sum()), float(row['delay'])),
                                   'model': row['model_template'], 'syn': syn})
