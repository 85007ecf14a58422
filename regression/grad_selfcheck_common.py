"""Shared part of the training-oracle self-test: check/test, the tiny network and its config."""
import os
import tempfile
import time
import traceback
import warnings

import numpy as np
import torch
from oracle.tinynet import make_network, GLIF, IAF

HERE = os.path.dirname(os.path.abspath(__file__))
warnings.simplefilter('ignore')
torch.set_default_dtype(torch.float64)
# BMTK's point_450glifs, vendored in tests/data/bmtk (found from this script's location).
EXAMPLE = os.path.join(os.path.dirname(HERE), 'tests', 'data', 'bmtk', 'point_450glifs')
RESULTS = []
TMP = tempfile.mkdtemp(prefix='grad_selfcheck_')


def check(name, cond, detail=''):
    RESULTS.append((name, bool(cond)))
    print('%s %s%s' % ('PASS' if cond else 'FAIL', name, ('  [' + detail + ']') if detail else ''), flush=True)


def test(fn):
    t0 = time.time()
    try:
        fn()
    except Exception:
        traceback.print_exc()
        check(fn.__name__ + ' (raised)', False)
    print('  (%s: %.1f s)' % (fn.__name__, time.time() - t0), flush=True)
    return fn


GLIF2 = dict(GLIF, tau_syn=[3.0, 6.0], asc_amps=[-5.0, 2.0], asc_decay=[0.2, 0.05], t_ref=3.0, C_m=60.0)
CELLS = [('nest:glif_psc', GLIF, 100), ('nest:glif_psc', GLIF2, 101), ('nest:iaf_psc_alpha', IAF, 102),
         ('nest:glif_psc', GLIF, 100)]
VIRT = [('vin', 3), ('bkg', 2)]


def tiny_edges(scale=1.0):
    s = scale
    return [('vin', 0, 0, 60 * s, 1.0, 1, 1), ('vin', 1, 1, 40 * s, 2.0, 2, 1), ('vin', 2, 2, 150 * s, 1.0, 0, 1),
            ('vin', 0, 3, 50 * s, 3.0, 3, 1), ('vin', 1, 0, -10 * s, 1.0, 2, 1),
            ('rec', 0, 1, 20 * s, 1.0, 1, 1), ('rec', 1, 0, -15 * s, 2.0, 2, 1), ('rec', 0, 0, 5 * s, 3.0, 3, 1),
            ('rec', 2, 0, 10 * s, 2.0, 1, 1), ('rec', 1, 2, -30 * s, 1.0, 0, 1), ('rec', 0, 2, 25 * s, 2.0, 0, 1),
            ('rec', 3, 1, 12 * s, 4.0, 1, 2), ('rec', 2, 3, 0.0, 1.0, 1, 1), ('rec', 3, 3, -8 * s, 2.0, 2, 1),
            ('bkg', 0, 0, 8 * s, 1.0, 1, 1), ('bkg', 1, 2, 20 * s, 1.0, 0, 1), ('bkg', 0, 3, -5 * s, 2.0, 2, 1)]


SPIKES = {'vin': {0: [1.0, 4.0, 5.0, 9.0, 13.0, 14.0, 18.0, 22.0, 25.0], 1: [2.0, 3.0, 10.0, 16.0, 24.0],
                  2: [1.0, 2.0, 3.0, 6.0, 8.0, 12.0, 20.0, 21.0]}}
INPUTS = {"stim": {"input_type": "spikes", "module": "sonata", "input_file": "$D/spk_vin.h5", "node_set": "vin"},
          "noise": {"input_type": "rates", "rate": 100.0, "node_set": "vin"},
          "bkg": {"input_type": "poisson", "rate": 400.0, "node_set": "bkg"}}
TRAIN = {"surrogate": {"type": "triangle", "dampening_factor": 0.3, "sigma": 0.28},
         "voltage_gradient_dampening": 0.5, "recurrent_dampening_factor": 0.1,
         "trainable": {"recurrent": True, "vin": True},
         "losses": [{"type": "TargetFiringRate", "cost": 1e-3, "target": 20.0},
                    {"type": "VoltageRegularization", "cost": 0.1, "mode": "range"},
                    {"type": "WeightRegularization", "cost": 0.5}],
         "optimizer": {"type": "adam", "lr": 0.01}}


def tiny_config(name, scale=3.0, T=30.0, B=2, train=None, edges=None, seed=5):
    return make_network(os.path.join(TMP, name), CELLS, VIRT, edges or tiny_edges(scale),
                        {"dt": 1.0, "tstop": T, "seed": seed, "batch_size": B}, INPUTS, SPIKES,
                        TRAIN if train is None else train)


def rel_err(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)) if a.size else 0.0
