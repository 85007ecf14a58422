"""Training-oracle self-checks: the surrogate, ScaleGrad, and the torch forward against the forward oracle."""
import json
import os
import time

import numpy as np
import torch
from oracle.config import load_config
from oracle.model import simulate
from oracle.train import Trainer, SpikeFunction, scale_grad
from grad_selfcheck_common import EXAMPLE, TMP, check, tiny_config


def surrogate_shapes():
    v = torch.tensor([-0.5, 0.0, 0.5, 0.99, 1.0, 1.0 + 1e-12, 1.4, 2.0, 2.5, 1.2])
    free = torch.tensor([True] * 9 + [False])
    for kind in ('triangle', 'gauss'):
        vv = v.clone().requires_grad_(True)
        z = SpikeFunction.apply(vv, free, kind, 0.3, 0.28)
        check('%s: forward strict v > 1 and free' % kind,
              z.tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1, 0])
        z.sum().backward()
        x = v.numpy() - 1.0
        if kind == 'triangle':
            exp = 0.3 * np.maximum(0.0, 1.0 - np.abs(x))
        else:
            exp = 0.3 * np.exp(-(x / 0.28) ** 2)
        exp[~free.numpy()] = 0.0
        check('%s: backward = surrogate, zero where r\' > 0' % kind,
              np.allclose(vv.grad.numpy(), exp, rtol=1e-15, atol=0) and vv.grad[-1] == 0)
    x = torch.tensor([1.5, -2.0], requires_grad=True)
    y = scale_grad(0.25)(x)
    (y * torch.tensor([2.0, 3.0])).sum().backward()
    check('ScaleGrad: forward identity, backward scaled', y.tolist() == [1.5, -2.0] and x.grad.tolist() == [0.5, 0.75])


def forward_matches_forward_oracle_tiny():
    cfg = tiny_config('fwd_tiny', scale=4.0, T=40.0, B=3)
    conf = load_config(cfg)
    tr = Trainer(conf)
    samples = np.array([3, 4, 5])
    x = tr.input_counts(samples)
    ref = simulate(tr.net, tr.inputs, tr.T, 3, first_sample=3, record_v=True)
    with torch.no_grad():
        out = tr.model.forward({s: torch.as_tensor(w) for s, w in tr.w.items()}, x, tr.spike_fn, tr.vdamp, tr.rdamp)
    z = out['z'].numpy().astype(bool)
    check('tiny net (mixed delays 1-4, glif+iaf, 3 channels, 3 input kinds): z bitwise == forward oracle',
          np.array_equal(z, ref['z']), 'spikes %d vs %d' % (z.sum(), ref['z'].sum()))
    check('tiny net: v bitwise == forward oracle', np.array_equal(out['v'].numpy(), ref['v']))
    check('tiny net: some spikes in every neuron', np.all(ref['z'].sum((0, 1)) > 0), str(ref['z'].sum((0, 1))))
    m = tr.model
    # edges.h5 holds bkg_to_rec, rec_to_rec, vin_to_rec: h5 (name) order, so edges 0-2 bkg, 3-11 rec, 12-16 vin
    check('surfaces: recurrent, then virtual populations in config order; edges in edge-read order',
          m.surface_names == ['recurrent', 'vin', 'bkg']
          and m.surface_edges['recurrent'].tolist() == list(range(3, 12))
          and m.surface_edges['vin'].tolist() == list(range(12, 17))
          and m.surface_edges['bkg'].tolist() == [0, 1, 2]
          and np.array_equal(tr.w['recurrent'], tr.net.e_w[3:12]))
    check('surface weights are the normalized weights (pA / vs of target)',
          tr.w['recurrent'][6] == 12 * 4.0 * 2 / 20.0 and tr.w['vin'][2] == 150 * 4.0 / 20.0)


def forward_matches_forward_oracle_450():
    if not os.path.isdir(EXAMPLE):
        check('point_450glifs present', False)
        return
    for name, inputs, B, first in (
            ('spike file only, 1 sample', {"LGN": {"input_type": "spikes", "module": "sonata",
                                                   "input_file": EXAMPLE + "/inputs/lgn_spikes.h5",
                                                   "node_set": "lgn"}}, 1, 0),
            ('spike file + Bernoulli 15 Hz, samples 2..3',
             {"LGN": {"input_type": "spikes", "module": "sonata", "input_file": EXAMPLE + "/inputs/lgn_spikes.h5",
                      "node_set": "lgn"}, "LGN_noise": {"input_type": "rates", "rate": 15.0, "node_set": "lgn"}}, 2, 2)):
        p = os.path.join(TMP, 'ex450_%d.json' % B)
        json.dump({"run": {"dt": 1.0, "tstop": 200.0, "seed": 11, "batch_size": B}, "inputs": inputs,
                   "network": EXAMPLE + "/config.circuit.json", "train": {}}, open(p, 'w'))
        tr = Trainer(load_config(p))
        x = tr.input_counts(np.arange(first, first + B))
        t0 = time.time()
        with torch.no_grad():
            out = tr.model.forward({s: torch.as_tensor(w) for s, w in tr.w.items()}, x, tr.spike_fn,
                                   tr.vdamp, tr.rdamp)
        t1 = time.time()
        ref = simulate(tr.net, tr.inputs, 200, B, first_sample=first, record_v=True)
        z = out['z'].numpy().astype(bool)
        check('point_450glifs 200 ms dt 1 (%s): spikes identical to the forward oracle' % name,
              np.array_equal(z, ref['z']) and ref['z'].sum() > 100,
              '%d vs %d spikes, torch forward %.1f s' % (z.sum(), ref['z'].sum(), t1 - t0))
        check('point_450glifs (%s): v bitwise identical' % name, np.array_equal(out['v'].numpy(), ref['v']))


TESTS = [surrogate_shapes, forward_matches_forward_oracle_tiny, forward_matches_forward_oracle_450]
