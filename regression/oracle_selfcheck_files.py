"""Forward-oracle self-checks: config loading, the BMTK example, the spike writer and compare_spikes.py."""
import json
import os
import subprocess
import sys

import h5py
import numpy as np
from oracle.config import load_config, RunParams, ConfigError
from oracle.model import load_model
from oracle.sonata import write_spike_file
from oracle_selfcheck_common import HERE, EXAMPLE, TMP, check


def config_loading():
    d = os.path.join(TMP, 'single_1')
    conf = load_config(os.path.join(d, 'sim.json'))
    check('child config: relative paths anchored at its own directory',
          conf['networks']['nodes'][1]['nodes_file'] == os.path.join(d, 'circ/net/vin_nodes.h5')
          and conf['components']['point_neuron_models_dir'] == os.path.join(d, 'circ/comp/cells'))
    check('manifest ${configdir} / $VAR / ${VAR} chains resolved',
          conf['networks']['edges'][0]['edges_file'] == os.path.join(d, 'circ/net/edges.h5')
          and conf['components']['synaptic_models_dir'] == os.path.join(d, 'circ/comp/syn'))
    check('parent manifest path anchored at parent directory',
          conf['inputs']['stim']['input_file'] == os.path.join(d, 'in/spk.h5'))
    check('shallow merge: child keys win', conf['target_simulator'] == 'child' and conf['run']['dt'] == 1.0)
    p = os.path.join(TMP, 'cyc.json')
    json.dump({"manifest": {"$A": "$B/x", "$B": "$A/y"}, "run": {"dt": 1, "tstop": 1}}, open(p, 'w'))
    try:
        load_config(p)
        check('manifest cycle refused', False)
    except ConfigError:
        check('manifest cycle refused', True)
    p = os.path.join(TMP, 'typed.json')
    json.dump({"manifest": {"$N": 5, "$S": "a"}, "x": "$N", "y": "${S}$N", "z": "$UNKNOWN/q",
               "run": {"dt": 0.1, "tstop": 1.0}}, open(p, 'w'))
    c = load_config(p)
    check('typed variable value / concatenation / unknown left as is',
          c['x'] == 5 and c['y'] == 'a5' and c['z'] == '$UNKNOWN/q')
    check('T = round(tstop/dt) (1.0/0.1 -> 10)', RunParams(c).n_steps == 10)


def load_example():
    if not os.path.isdir(EXAMPLE):
        check('point_450glifs present', False)
        return
    p = os.path.join(TMP, 'ex.json')
    json.dump({"run": {"dt": 1.0, "tstop": 10.0},
               "inputs": {"LGN": {"input_type": "spikes", "module": "sonata",
                                  "input_file": EXAMPLE + "/inputs/lgn_spikes.h5", "node_set": "lgn"}},
               "network": EXAMPLE + "/config.circuit.json"}, open(p, 'w'))
    net, inputs, run = load_model(load_config(p))
    check('point_450glifs: 450 recurrent + 100 virtual nodes', net.N == 450 and net.J == 100)
    check('point_450glifs: 28555 + 36035 edges',
          net.edge_counts == {'v1_to_v1': 28555, 'lgn_to_v1': 36035} and len(net.e_w) == 64590)
    check('point_450glifs: 300 glif_psc + 150 iaf_psc_alpha',
          net.kind.count('glif_psc') == 300 and net.kind.count('iaf_psc_alpha') == 150)
    check('point_450glifs: LGN spikes 3044 in file', inputs[0].n_ignored + len(inputs[0].k) == 3044)
    check('point_450glifs: all delays 2 steps at dt=1', np.all(net.e_d == 2))


def writer_and_compare():
    d = os.path.join(TMP, 'cmp')
    os.makedirs(d, exist_ok=True)
    a, b = os.path.join(d, 'a.h5'), os.path.join(d, 'b.h5')
    write_spike_file(a, [('p', [3, 1, 2], [2.0, 2.0, 1.0])])
    with h5py.File(a, 'r') as h:
        ok = (h.attrs['magic'] == 2682 and list(h.attrs['version']) == [0, 1]
              and h['spikes/p'].attrs['sorting'] == 'by_time' and h['spikes/p/timestamps'].attrs['units'] == 'ms'
              and h['spikes/p/node_ids'].dtype == np.int64 and h['spikes/p/timestamps'].dtype == np.float64
              and h['spikes/p/node_ids'][()].tolist() == [2, 1, 3]
              and h['spikes/p/timestamps'][()].tolist() == [1.0, 2.0, 2.0])
    check('spike file layout and (time, node_id) order', ok)
    write_spike_file(b, [('p', [3, 1, 2], [2.0 + 1e-9, 2.0, 1.0])])
    tool = os.path.join(HERE, 'compare_spikes.py')
    r = subprocess.run([sys.executable, tool, a, b], capture_output=True)
    check('compare_spikes: equal after 1e-6 rounding -> exit 0', r.returncode == 0)
    write_spike_file(b, [('p', [3, 1, 2], [3.0, 2.0, 1.0])])
    r = subprocess.run([sys.executable, tool, a, b], capture_output=True, text=True)
    check('compare_spikes: differing -> exit 1, 2 in common', r.returncode == 1 and 'in common: 2' in r.stdout)


TESTS = [config_loading, load_example, writer_and_compare]
