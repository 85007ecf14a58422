"""Cell types and core masks of the V1 papers' losses (V1-PAPER.md section 3, "Cell-type mapping").

pop_name -> "L{layer} {Exc|PV|SST|VIP}": the layer is the pop_name's 2nd character ("2" means "2/3" and the
class then starts at index 3, else at index 2); layer "1" is "L1 Htr3a"; class Pvalb -> PV, Sst -> SST,
Vip or Htr3a -> VIP, anything else Exc. With merge_l5=False an excitatory L5 neuron keeps its class string
(e5ET -> "L5 ET"), which gives the 19 unmerged types of EMDWeightRegularization.
A recurrent neuron's attribute (pop_name, x, z) is its nodes h5 group dataset when there is one, else the
column of its node types table.
"""
import numpy as np

# the 17 merged types (V1-PAPER.md section 3)
CELL_TYPES_17 = ['L1 Htr3a',
                 'L2/3 Exc', 'L2/3 PV', 'L2/3 SST', 'L2/3 VIP',
                 'L4 Exc', 'L4 PV', 'L4 SST', 'L4 VIP',
                 'L5 Exc', 'L5 PV', 'L5 SST', 'L5 VIP',
                 'L6 Exc', 'L6 PV', 'L6 SST', 'L6 VIP']


class CellTypeError(ValueError):
    pass


def pop_name_to_cell_type(pop_name, merge_l5=True):
    if len(pop_name) < 3:
        raise CellTypeError('pop_name %r is too short for a cell type' % pop_name)
    layer, start = pop_name[1], 2
    if layer == '2':
        layer, start = '2/3', 3
    elif layer == '1':
        return 'L1 Htr3a'
    cls = pop_name[start:]
    if cls == 'Pvalb':
        sub = 'PV'
    elif cls == 'Sst':
        sub = 'SST'
    elif cls in ('Vip', 'Htr3a'):
        sub = 'VIP'
    elif layer == '5' and not merge_l5:
        sub = cls
    else:
        sub = 'Exc'
    return 'L%s %s' % (layer, sub)


def _text(v):
    if isinstance(v, bytes):
        return v.decode('utf-8')
    if isinstance(v, np.ndarray) and v.shape == ():
        return _text(v[()])
    return v if isinstance(v, str) else str(v)


def node_attribute(pops, name):
    """Per recurrent neuron (populations in order, nodes in h5 order): its nodes h5 group dataset `name`, else
    the node types table's column `name` (text). Raises CellTypeError when a neuron has neither."""
    out = []
    for p in pops:
        gid = getattr(p, 'node_group_id', np.zeros(len(p.node_type_id), np.int64))
        gidx = getattr(p, 'node_group_index', np.arange(len(p.node_type_id)))
        props = getattr(p, 'group_props', {})
        for k, t in enumerate(p.node_type_id):
            g = props.get(str(int(gid[k])), {})
            if name in g:
                v = g[name][int(gidx[k])]
                out.append(_text(v) if isinstance(v, (bytes, str)) else v)
                continue
            v = p.types.get(int(t), name)
            if v is None:
                raise CellTypeError('population %s node %d (node type %d): no %s in its nodes group or in %s'
                                    % (p.name, int(p.node_ids[k]), int(t), name, p.types.path))
            out.append(v)
    return out


def cell_types(pops, merge_l5=True):
    """Cell type (str) of every recurrent neuron, from its pop_name."""
    return np.array([pop_name_to_cell_type(_text(v), merge_l5) for v in node_attribute(pops, 'pop_name')],
                    dtype=object)


def core_mask(pops, radius):
    """True for the neurons with sqrt(x^2 + z^2) < radius (um)."""
    x = np.array([float(v) for v in node_attribute(pops, 'x')])
    z = np.array([float(v) for v in node_attribute(pops, 'z')])
    return np.sqrt(x * x + z * z) < radius
