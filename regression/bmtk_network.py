"""A BMTK SONATA network read the way BMTK PointNet hands it to NEST (bmtk pointnet: sonata_adaptors.py
get_batches, pointnetwork.py add_nodes/add_edges/add_spike_trains), without dpointnet and without its oracle:
the description both the NEST comparison (tests/nest) and the NEST-semantics reference (nest_reference.py) build
from. Written for the layout of BMTK's examples and of `dpointnet generate`: one nodes/edges population per file,
space-separated type tables, the edge columns nsyns, syn_weight and delay (each optional: the h5 column wins over
the type's, as in BMTK), the type columns syn_weight, delay, dynamics_params. The virtual populations are `lgn` and
those of `more_virtual` (a generated network's `bkg`), each fed by `INPUTS/<pop>_spikes.h5`.
"""
import csv
import json
import os

import h5py
import numpy as np


def _types(path, key):
    with open(path) as f:
        return {int(r[key]): r for r in csv.DictReader(f, delimiter=' ')}


def _spike_times(net, inputs, pop):
    """{node_id: sorted spike times} of virtual population pop, from INPUTS/<pop>_spikes.h5."""
    with h5py.File(os.path.join(net, pop + '_nodes.h5')) as h:
        ids = [int(x) for x in h['nodes/%s/node_id' % pop][()]]
    with h5py.File(os.path.join(inputs, pop + '_spikes.h5')) as h:
        s_ids = h['spikes/%s/node_ids' % pop][()]
        s_t = h['spikes/%s/timestamps' % pop][()]
    order = np.argsort(s_ids, kind='stable')
    s_ids, s_t = s_ids[order], s_t[order]
    times = {}
    for nid in ids:
        a, b = np.searchsorted(s_ids, [nid, nid + 1])
        st = np.sort(s_t[a:b]).astype(float)
        if np.any(st <= 0):
            raise ValueError('BMTK refuses spike times <= 0 (node %d)' % nid)
        times[nid] = st
    return times


class Network:
    """cells: [(node_id, model, params)] of the simulated population, grouped by node type in order of first
    appearance (NEST ids in this order); times: {virtual node_id: sorted spike times} of `lgn`; virtual:
    {population: its times dict} of every virtual population; edges: [dict(src_pop, src, trg, weight, delay,
    syn)] per edge type, syn the synaptic dynamics_params (receptor_type)."""

    def __init__(self, example, components, v1='v1', lgn='lgn', more_virtual=(), inputs=None):
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
        self.virtual = {pop: _spike_times(net, inputs or os.path.join(example, 'inputs'), pop)
                        for pop in (lgn,) + tuple(more_virtual)}
        self.times = self.virtual[lgn]
        self.virtual_ids = list(self.times)
        self.edges = []
        for src_pop in (v1,) + tuple(self.virtual):
            fname = os.path.join(net, '%s_%s_edges.h5' % (src_pop, v1))
            etypes = _types(fname.replace('_edges.h5', '_edge_types.csv'), 'edge_type_id')
            with h5py.File(fname) as h:
                g = h['edges/%s_to_%s' % (src_pop, v1)]
                src, trg, et = g['source_node_id'][()], g['target_node_id'][()], g['edge_type_id'][()]
                nsyns = g['0/nsyns'][()].astype(float) if '0/nsyns' in g else np.ones(len(src))
                delay = g['0/delay'][()].astype(float) if '0/delay' in g else None  # the h5 column wins
                syn_w = g['0/syn_weight'][()].astype(float) if '0/syn_weight' in g else None  # likewise
            for t in np.unique(et).tolist():
                m = et == t
                row = etypes[t]
                syn = json.load(open(os.path.join(components, 'synaptic_models', row['dynamics_params'])))
                self.edges.append({'src_pop': src_pop, 'src': src[m].astype(np.int64), 'trg': trg[m].astype(np.int64),
                                   'weight': nsyns[m] * (syn_w[m] if syn_w is not None else float(row['syn_weight'])),
                                   'delay': delay[m] if delay is not None else np.full(int(m.sum()), float(row['delay'])),
                                   'model': row['model_template'], 'syn': syn})
