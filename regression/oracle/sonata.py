"""SONATA file readers (SONATA.md sections 2-4), plain h5py/numpy."""
import csv
import json
import os
import warnings

import h5py
import numpy as np


class SonataError(Exception):
    pass


def _str(x):
    if isinstance(x, bytes):
        return x.decode('utf-8')
    if isinstance(x, np.ndarray) and x.shape == ():
        return _str(x[()])
    return x if isinstance(x, str) else str(x)


def read_ids(ds):
    """Read an integer dataset of any width as native int64."""
    return np.asarray(ds[()]).astype(np.int64)


# --------------------------------------------------------------------------- CSV
class TypesTable:
    """Space-separated types CSV; NONE or empty cell = None; columns by header name."""

    def __init__(self, path, key):
        self.path = path
        with open(path, newline='') as fh:
            rows = [r for r in csv.reader(fh, delimiter=' ', quotechar='"') if r]
        if not rows:
            raise SonataError('%s: empty types file' % path)
        self.columns = rows[0]
        if key not in self.columns:
            raise SonataError('%s: no %s column' % (path, key))
        self.rows = {}
        for r in rows[1:]:
            rec = {}
            for i, c in enumerate(self.columns):
                v = r[i] if i < len(r) else ''
                rec[c] = None if v in ('', 'NONE') else v
            k = int(rec[key])
            if k in self.rows:
                raise SonataError('%s: duplicate %s %d' % (path, key, k))
            self.rows[k] = rec

    def get(self, type_id, col):
        if type_id not in self.rows:
            raise SonataError('%s: unknown type id %d' % (self.path, type_id))
        return self.rows[type_id].get(col)


def _num(v):
    if v is None:
        return None
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    return float(v)


# --------------------------------------------------------------------------- nodes
class NodePopulation:
    """name, node_ids (int64), and per node: model_type, model_template, params (dict or None),
    params_file."""

    def __init__(self, name, node_ids):
        self.name = name
        self.node_ids = node_ids
        self.model_type = []
        self.model_template = []
        self.params = []
        self.params_file = []
        self.node_type_id = None

    @property
    def is_virtual(self):
        return all(m == 'virtual' for m in self.model_type)

    def index_of(self, ids):
        """Positions of node ids inside this population (error if unknown)."""
        ids = np.asarray(ids, dtype=np.int64)
        order = np.argsort(self.node_ids, kind='stable')
        sorted_ids = self.node_ids[order]
        pos = np.searchsorted(sorted_ids, ids)
        pos_c = np.minimum(pos, len(sorted_ids) - 1) if len(sorted_ids) else pos
        if len(sorted_ids) == 0 or np.any(sorted_ids[pos_c] != ids):
            bad = ids[(len(sorted_ids) == 0) | (sorted_ids[pos_c] != ids)] if len(sorted_ids) else ids
            raise SonataError('node ids %s not in population %s' % (bad[:5].tolist(), self.name))
        return order[pos_c]


_JSON_CACHE = {}


def load_json(path):
    if path not in _JSON_CACHE:
        if not os.path.exists(path):
            raise SonataError('dynamics_params file %s not found' % path)
        with open(path) as fh:
            _JSON_CACHE[path] = json.load(fh)
    return _JSON_CACHE[path]


POINT_TYPES = ('point_neuron', 'point_process', 'point_soma')


def load_nodes(nodes_file, node_types_file, components):
    types = TypesTable(node_types_file, 'node_type_id')
    pops = []
    with h5py.File(nodes_file, 'r') as h:
        if 'nodes' not in h:
            raise SonataError('%s: no /nodes group' % nodes_file)
        for pname in h['nodes']:
            g = h['nodes'][pname]
            if not isinstance(g, h5py.Group):
                continue
            ntid = read_ids(g['node_type_id'])
            n = len(ntid)
            node_ids = read_ids(g['node_id']) if 'node_id' in g else np.arange(n, dtype=np.int64)
            gid = read_ids(g['node_group_id']) if 'node_group_id' in g else np.zeros(n, np.int64)
            gidx = read_ids(g['node_group_index']) if 'node_group_index' in g else np.arange(n, dtype=np.int64)
            pop = NodePopulation(pname, node_ids)
            pop.node_type_id = ntid
            pop.types = types  # the node types table (RateDistribution group_by reads its columns)
            groups = {}
            for i in range(n):
                gname = str(int(gid[i]))
                if gname not in groups:
                    if gname not in g:
                        raise SonataError('%s: population %s lacks node group %s' % (nodes_file, pname, gname))
                    grp = g[gname]
                    props = {k: grp[k][()] for k in grp if isinstance(grp[k], h5py.Dataset)}
                    dyn = {}
                    if 'dynamics_params' in grp and isinstance(grp['dynamics_params'], h5py.Group):
                        dyn = {k: grp['dynamics_params'][k][()] for k in grp['dynamics_params']}
                    groups[gname] = (props, dyn)
                props, dyn = groups[gname]
                r = int(gidx[i])
                t = int(ntid[i])

                def prop(name):
                    if name in props:
                        return _str(props[name][r])
                    return types.get(t, name)
                mtype = prop('model_type')
                if mtype is None:
                    raise SonataError('%s: node type %d has no model_type' % (node_types_file, t))
                mtemp = prop('model_template')
                pop.model_type.append(mtype)
                pop.model_template.append(mtemp)
                dp = prop('dynamics_params')
                params, pfile = None, None
                if mtype in POINT_TYPES:
                    if dp is not None:
                        d = components.get('point_neuron_models_dir')
                        if d is None:
                            raise SonataError('components.point_neuron_models_dir missing (node type %d)' % t)
                        pfile = os.path.join(d, dp)
                        params = dict(load_json(pfile))
                    else:
                        params = {}
                    for k, arr in dyn.items():   # per-node overrides
                        v = arr[r]
                        params[k] = v.tolist() if isinstance(v, np.ndarray) else (
                            v.item() if hasattr(v, 'item') else v)
                pop.params.append(params)
                pop.params_file.append(pfile if pfile else '%s (node type %d)' % (node_types_file, t))
            # per-node attributes (cell_types.node_attribute): group datasets by node_group_id/index
            pop.node_group_id, pop.node_group_index = gid, gidx
            pop.group_props = {k: v[0] for k, v in groups.items()}
            kinds = set('virtual' if m == 'virtual' else 'sim' for m in pop.model_type)
            if len(kinds) > 1:
                raise SonataError('%s: population %s mixes virtual and simulated nodes' % (nodes_file, pname))
            pops.append(pop)
    return pops


# --------------------------------------------------------------------------- edges
class EdgePopulation:
    """name, source/target population names, per edge: source, target (node ids, int64),
    weight (pA, syn_weight*nsyns), delay (ms), receptor (int)."""

    def __init__(self, name):
        self.name = name


def load_edges(edges_file, edge_types_file, components):
    types = TypesTable(edge_types_file, 'edge_type_id')
    out = []
    syn_dir = components.get('synaptic_models_dir')
    warned = set()
    with h5py.File(edges_file, 'r') as h:
        if 'edges' not in h:
            raise SonataError('%s: no /edges group' % edges_file)
        for pname in h['edges']:
            g = h['edges'][pname]
            if not isinstance(g, h5py.Group):
                continue
            ep = EdgePopulation(pname)
            ep.source_population = _str(g['source_node_id'].attrs['node_population'])
            ep.target_population = _str(g['target_node_id'].attrs['node_population'])
            ep.source = read_ids(g['source_node_id'])
            ep.target = read_ids(g['target_node_id'])
            E = len(ep.source)
            etid = read_ids(g['edge_type_id'])
            egid = read_ids(g['edge_group_id']) if 'edge_group_id' in g else np.zeros(E, np.int64)
            egidx = read_ids(g['edge_group_index']) if 'edge_group_index' in g else np.arange(E, dtype=np.int64)
            ep.edge_type_id = etid
            w = np.empty(E, np.float64)
            dl = np.empty(E, np.float64)
            rec = np.empty(E, np.int64)
            gcache = {}
            tcache = {}
            for e in range(E):
                gname = str(int(egid[e]))
                if gname not in gcache:
                    if gname in g and isinstance(g[gname], h5py.Group):
                        grp = g[gname]
                        gcache[gname] = {k: grp[k][()] for k in grp if isinstance(grp[k], h5py.Dataset)}
                    else:
                        gcache[gname] = {}
                props = gcache[gname]
                r = int(egidx[e])
                t = int(etid[e])
                if t not in tcache:
                    wf = types.get(t, 'weight_function')
                    if wf is not None and t not in warned:
                        warned.add(t)
                        warnings.warn('%s: edge type %d has weight_function %s which cannot be executed; '
                                      'using syn_weight*nsyns' % (edge_types_file, t, wf))
                    dpf = types.get(t, 'dynamics_params')
                    receptor = 0
                    if dpf is not None:
                        if syn_dir is None:
                            raise SonataError('components.synaptic_models_dir missing (edge type %d)' % t)
                        sj = load_json(os.path.join(syn_dir, dpf))
                        receptor = int(sj.get('receptor_type', 0))
                    tcache[t] = (types.get(t, 'syn_weight'), types.get(t, 'delay'), types.get(t, 'nsyns'), receptor)
                csw, cdl, cns, receptor = tcache[t]
                sw = float(props['syn_weight'][r]) if 'syn_weight' in props else _num(csw)
                if sw is None:
                    raise SonataError('%s/%s: edge %d (type %d) has no syn_weight' % (edges_file, edge_types_file, e, t))
                d = float(props['delay'][r]) if 'delay' in props else _num(cdl)
                if d is None:
                    raise SonataError('%s/%s: edge %d (type %d) has no delay' % (edges_file, edge_types_file, e, t))
                ns = float(props['nsyns'][r]) if 'nsyns' in props else (_num(cns) if cns is not None else 1.0)
                w[e] = sw * ns
                dl[e] = d
                rec[e] = receptor
            ep.weight, ep.delay, ep.receptor = w, dl, rec
            out.append(ep)
    return out


# --------------------------------------------------------------------------- spikes
def read_spike_file(path):
    """Return {population_or_None: (node_ids int64, timestamps ms float64)}."""
    res = {}
    with h5py.File(path, 'r') as h:
        if 'spikes' not in h:
            raise SonataError('%s: no /spikes group' % path)
        sp = h['spikes']
        subgroups = [k for k in sp if isinstance(sp[k], h5py.Group)]

        def times(ds):
            t = np.asarray(ds[()], dtype=np.float64)
            units = _str(ds.attrs['units']) if 'units' in ds.attrs else 'ms'
            if units == 's':
                t = t * 1000.0
            elif units != 'ms':
                raise SonataError('%s: unknown timestamp units %r' % (path, units))
            return t
        if subgroups:
            for k in subgroups:
                grp = sp[k]
                if 'node_ids' not in grp or 'timestamps' not in grp:
                    warnings.warn('%s: population %s lacks node_ids/timestamps, skipped' % (path, k))
                    continue
                res[k] = (read_ids(grp['node_ids']), times(grp['timestamps']))
        elif 'gids' in sp and 'timestamps' in sp:
            res[None] = (read_ids(sp['gids']), times(sp['timestamps']))
    return res


def write_spike_file(path, pops):
    """pops: list of (population name, node_ids int64, times ms). Sorted by (time, node_id)."""
    with h5py.File(path, 'w') as h:
        h.attrs.create('magic', 2682, dtype=np.uint32)
        h.attrs.create('version', np.array([0, 1], dtype=np.uint32))
        sp = h.create_group('spikes')
        for name, ids, ts in pops:
            ids = np.asarray(ids, dtype=np.int64)
            ts = np.asarray(ts, dtype=np.float64)
            order = np.lexsort((ids, ts))
            g = sp.create_group(name)
            g.attrs['sorting'] = 'by_time'
            d = g.create_dataset('timestamps', data=ts[order])
            d.attrs['units'] = 'ms'
            g.create_dataset('node_ids', data=ids[order])
