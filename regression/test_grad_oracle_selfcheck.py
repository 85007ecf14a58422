#!/usr/bin/python3
"""Self-test of the training oracle (oracle/train.py, run_grad_oracle.py). Plain script: prints each
check, then 'N passed, M failed'; exit status 0 only if all pass.
Usage: /usr/bin/python3 regression/test_grad_oracle_selfcheck.py"""
import copy
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import h5py                                           # noqa: E402
import numpy as np                                    # noqa: E402
import torch                                          # noqa: E402
from oracle.config import load_config                 # noqa: E402
from oracle.model import load_model, simulate         # noqa: E402
from oracle.tinynet import make_network, GLIF, IAF    # noqa: E402
from oracle.train import (Trainer, TorchModel, TrainConfig, TrainError, SpikeFunction, surrogate_spike,  # noqa: E402
                          scale_grad, compute_losses, Adam, sign_constraint, clip_by_global_norm)

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


# ============================================================================ tests
@test
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


@test
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


@test
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


@test
def finite_differences_smooth():
    """Spike nonlinearity swapped for a sigmoid; the stop-gradient inputs (reset, ASC jump, r) are fed a
    frozen copy of the base run's z (exactly what sg() means); dampers neutral. Then autograd must equal
    central finite differences for every weight of every surface."""
    cfg = tiny_config('fd', scale=3.0, T=30.0, B=2)
    tr = Trainer(load_config(cfg))
    m = tr.model
    sig = lambda v, free: torch.sigmoid((v - 1.0) / 0.15)
    x = tr.input_counts(np.array([0, 1]))
    rng = np.random.default_rng(1)
    w_base = {s: w + 0.05 * rng.standard_normal(w.shape) for s, w in tr.w.items()}
    w0 = {s: torch.as_tensor(w) for s, w in tr.w.items()}
    specs = TrainConfig({"losses": [{"type": "TargetFiringRate", "cost": 1e-4, "target": 30.0},
                                    {"type": "TargetFiringRate", "cost": 2.0, "unit": "spikes_per_step",
                                     "target_by_node_type": {"100": 0.05, "101": 0.1, "102": 0.02}},
                                    {"type": "VoltageRegularization", "cost": 1.0, "mode": "range"},
                                    {"type": "VoltageRegularization", "cost": 0.3, "mode": "threshold"},
                                    {"type": "WeightRegularization", "cost": 0.7}],
                         "trainable": {"recurrent": True, "vin": True, "bkg": True}}, m)
    with torch.no_grad():
        base = m.forward({s: torch.as_tensor(w) for s, w in w_base.items()}, x, sig)
    sg_z = [base['z'][:, t].clone() for t in range(x.shape[1])]

    def f(wd, grad=False):
        wt = {s: torch.tensor(w, requires_grad=grad) for s, w in wd.items()}
        out = m.forward(wt, x, sig, sg_z=sg_z)
        tot, terms, _ = compute_losses(specs.losses, out['z'], out['v'], 1.0, wt, w0,
                                       {s: True for s in wt}, m.surface_names)
        if grad:
            tot.backward()
            return float(tot), {s: wt[s].grad.numpy() for s in wt}, terms
        return float(tot)

    L0, g, terms = f(w_base, grad=True)
    check('FD setup: every loss term non-zero', all(abs(float(v)) > 0 for v in terms.values()),
          ' '.join('%s=%.3g' % (k, float(v)) for k, v in terms.items()))
    h = 1e-6
    worst = 0.0
    for s in m.surface_names:
        fd = np.zeros_like(w_base[s])
        for e in range(len(fd)):
            wp = copy.deepcopy(w_base)
            wm = copy.deepcopy(w_base)
            wp[s][e] += h
            wm[s][e] -= h
            fd[e] = (f(wp) - f(wm)) / (2 * h)
        err = rel_err(g[s], fd)
        worst = max(worst, err)
        check('FD (sigmoid spikes, frozen sg, all losses) surface %s: autograd == finite differences' % s,
              err < 1e-6, 'max rel err %.2e, |g|max %.3g' % (err, np.max(np.abs(fd))))
    # the same check with the production surrogate Function replaced only in the backward is not possible
    # by FD; instead check that the frozen-sg run equals the sg run in forward values at the base point
    with torch.no_grad():
        plain = m.forward({s: torch.as_tensor(w) for s, w in w_base.items()}, x, sig, sg_z=sg_z)
    check('FD: frozen-sg forward equals the base forward', torch.equal(plain['v'], base['v']))


@test
def voltage_damper_closed_form():
    """One GLIF neuron below threshold, one input edge: with damping a, dv_t/dw damped =
    sum_s (a*decay)^(t-s) q_s where q_s = v1_s - decay*v1_{s-1} is the per-unit-weight input."""
    cells = [('nest:glif_psc', dict(GLIF, after_spike_currents=False), 100)]
    edges = [('vin', 0, 0, 15.0, 2.0, 1, 1)]
    cfg = make_network(os.path.join(TMP, 'vdamp'), cells, [('vin', 3)], edges,
                       {"dt": 1.0, "tstop": 40.0}, {"stim": INPUTS["stim"]}, SPIKES, {})
    tr = Trainer(load_config(cfg))
    m = tr.model
    x = tr.input_counts(np.array([0]))
    for vgd in (0.0, 0.3, 0.5, 1.0):
        a = 1.0 - vgd
        wt = {'recurrent': torch.zeros(0), 'vin': torch.tensor(tr.w['vin'].copy(), requires_grad=True)}
        out = m.forward(wt, x, tr.spike_fn, scale_grad(a), scale_grad(0.1))
        v = out['v'][0, :, 0]
        L = ((v - 1.0) ** 2).sum()
        L.backward()
        vn = v.detach().numpy()
        w = tr.w['vin'][0]
        v1 = vn / w
        dec = float(m.decay[0])
        D, prev, expg = 0.0, 0.0, 0.0
        for t in range(len(vn)):
            q = v1[t] - dec * prev
            prev = v1[t]
            D = a * dec * D + q
            expg += 2.0 * (vn[t] - 1.0) * D
        got = float(wt['vin'].grad[0])
        check('voltage damper (dampening %.1f): autograd == closed form' % vgd,
              out['z'].sum() == 0 and abs(got - expg) <= 1e-12 * abs(expg), 'got %.15g exp %.15g' % (got, expg))


@test
def recurrent_damper_scaling():
    """Chain input -> 0 -> 1: the gradient of a loss on v of neuron 1 w.r.t. the input weight passes one
    recurrent read, so it scales linearly with recurrent_dampening_factor; the recurrent weight's own
    gradient and a loss read of z (rate of neuron 0) do not."""
    cells = [('nest:glif_psc', GLIF, 100), ('nest:glif_psc', GLIF, 100)]
    edges = [('vin', 0, 0, 150.0, 1.0, 1, 1), ('vin', 2, 0, 90.0, 1.0, 2, 1), ('rec', 0, 1, 40.0, 2.0, 1, 1)]
    cfg = make_network(os.path.join(TMP, 'rdamp'), cells, [('vin', 3)], edges,
                       {"dt": 1.0, "tstop": 40.0}, {"stim": INPUTS["stim"]}, SPIKES, {})
    tr = Trainer(load_config(cfg))
    m = tr.model
    x = tr.input_counts(np.array([0]))
    res = {}
    for rho in (1.0, 0.1, 0.0):
        wt = {s: torch.tensor(w.copy(), requires_grad=True) for s, w in tr.w.items()}
        out = m.forward(wt, x, tr.spike_fn, scale_grad(0.5), scale_grad(rho))
        L1 = ((out['v'][0, :, 1] - 1.0) ** 2).sum()
        g1 = torch.autograd.grad(L1, [wt['vin'], wt['recurrent']], retain_graph=True)
        L2 = ((out['z'][0, :, 0].sum() - 3.0) ** 2)
        g2 = torch.autograd.grad(L2, [wt['vin']])
        res[rho] = (g1[0].numpy(), g1[1].numpy(), g2[0].numpy(), int(out['z'][0, :, 0].sum()))
    gi1, gr1, gz1, n0 = res[1.0]
    gi, gr, gz, _ = res[0.1]
    check('recurrent damper: setup (neuron 0 spikes, non-zero gradients)', n0 > 0 and np.all(gi1 != 0), 'spikes %d' % n0)
    check('recurrent damper: input-weight gradient through one recurrent read scales by 0.1',
          rel_err(gi, 0.1 * gi1) < 1e-13 and np.all(res[0.0][0] == 0))
    check('recurrent damper: the recurrent weight gradient is not damped', rel_err(gr, gr1) < 1e-14)
    check('recurrent damper: losses read z undamped', rel_err(gz, gz1) < 1e-14 and np.all(gz1 != 0))


@test
def losses_formulas():
    rng = np.random.default_rng(3)
    B, T, N = 2, 7, 4
    z = torch.as_tensor((rng.random((B, T, N)) < 0.3).astype(np.float64))
    v = torch.as_tensor(rng.normal(0.5, 0.8, (B, T, N)))

    class M:
        pass
    m = M()
    m.N, m.surface_names, m.node_type_id = N, ['recurrent', 'a', 'b'], np.array([7, 8, 7, 9])
    tc = TrainConfig({"losses": [{"type": "TargetFiringRate", "cost": 2.0, "target": 50.0},
                                 {"type": "TargetFiringRate", "cost": 3.0, "unit": "spikes_per_step",
                                  "target_by_node_type": {"7": 0.1, "8": 0.2, "9": 0.0}},
                                 {"type": "VoltageRegularization", "cost": 0.5},
                                 {"type": "VoltageRegularization", "cost": 0.25, "mode": "threshold"},
                                 {"type": "WeightRegularization", "cost": 4.0}],
                      "trainable": {"a": True}}, m)
    w0 = {'recurrent': np.array([1.0, -2.0]), 'a': np.array([0.5]), 'b': np.array([3.0, 3.0])}
    w = {'recurrent': np.array([1.5, -2.0]), 'a': np.array([0.0]), 'b': np.array([9.0, 9.0])}
    tt = lambda d: {k: torch.as_tensor(a) for k, a in d.items()}
    tot, terms, rate = compute_losses(tc.losses, z, v, 0.5, tt(w), tt(w0), tc.trainable, m.surface_names)
    zn, vn = z.numpy(), v.numpy()
    r_hz = 1000.0 * zn.sum(1) / (T * 0.5)
    e1 = 2.0 * np.mean((r_hz - 50.0) ** 2)
    e2 = 3.0 * np.mean((zn.sum(1) / T - np.array([0.1, 0.2, 0.1, 0.0])) ** 2)
    e3 = 0.5 * np.mean(np.maximum(np.abs(vn - 0.5) - 0.5, 0) ** 2)
    e4 = 0.25 * np.mean((vn - 1) ** 2)
    e5 = 4.0 * np.mean(np.array([0.25, 0.0, 0.25]))    # recurrent (default trainable) and a; b frozen
    names = list(terms)
    check('loss names: duplicated types get _1/_2', names == ['TargetFiringRate_1', 'TargetFiringRate_2',
                                                               'VoltageRegularization_1', 'VoltageRegularization_2',
                                                               'WeightRegularization'], str(names))
    got = [float(terms[n]) for n in names]
    check('loss formulas (Hz rate, spikes_per_step + node types, range, threshold, weight mean over all '
          'trainable edges)', rel_err(got, [e1, e2, e3, e4, e5]) < 1e-14, '%s vs %s' % (got, [e1, e2, e3, e4, e5]))
    check('total = sum of terms, rate_mean in Hz', abs(float(tot) - sum(got)) < 1e-12 * abs(sum(got))
          and abs(rate - zn.mean() * 2000.0) < 1e-12)
    for bad, msg in (({"losses": [{"type": "Nope"}]}, 'unknown type'),
                     ({"trainable": {"zzz": True}}, 'neither'),
                     ({"losses": [{"type": "TargetFiringRate", "target_by_node_type": {"7": 1.0}}]}, 'lacks node types'),
                     ({"surrogate": {"type": "box"}}, 'triangle'),
                     ({"optimizer": {"type": "sgd"}}, 'adam')):
        try:
            TrainConfig(bad, m)
            check('refused: ' + msg, False)
        except TrainError as e:
            check('refused: ' + msg, msg in str(e), str(e))
    tcd = TrainConfig({}, m)
    check('defaults: recurrent trainable, inputs frozen, triangle 0.1/0.28, dampers 0.5/0.1, Adam 1e-3/0.9/0.999/1e-11',
          tcd.trainable == {'recurrent': True, 'a': False, 'b': False} and tcd.surrogate == 'triangle'
          and tcd.gamma == 0.1 and tcd.sigma == 0.28 and tcd.voltage_gradient_dampening == 0.5
          and tcd.recurrent_dampening_factor == 0.1 and (tcd.lr, tcd.beta1, tcd.beta2, tcd.epsilon) == (0.001, 0.9, 0.999, 1e-11)
          and tcd.clip_global_norm is None)


@test
def adam_quadratic():
    a = np.array([1.0, 10.0, 0.1, 3.0, 0.0])
    c = np.array([0.5, -1.0, 2.0, 0.0, 1.0])
    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-11
    opt = Adam(lr, b1, b2, eps)
    w = {'s': np.array([0.0, 0.3, -0.2, 1.0, 1.0])}
    # hand-written reference
    wr = w['s'].copy()
    mr, vr = np.zeros(5), np.zeros(5)
    wt = torch.tensor(w['s'].copy(), requires_grad=True)
    topt = torch.optim.Adam([wt], lr=lr, betas=(b1, b2), eps=eps)
    for k in range(1, 201):
        opt.step(w, {'s': a * (w['s'] - c)})
        g = a * (wr - c)
        mr = b1 * mr + (1 - b1) * g
        vr = b2 * vr + (1 - b2) * g * g
        wr = wr - lr * (mr / (1 - b1 ** k)) / (np.sqrt(vr / (1 - b2 ** k)) + eps)
        topt.zero_grad()
        (0.5 * (torch.as_tensor(a) * (wt - torch.as_tensor(c)) ** 2).sum()).backward()
        topt.step()
    check('Adam on a quadratic == hand-written update (bitwise, 200 steps)', np.array_equal(w['s'], wr))
    check('Adam == torch.optim.Adam (rel 1e-10)', rel_err(w['s'], wt.detach().numpy()) < 1e-10,
          '%.2e' % rel_err(w['s'], wt.detach().numpy()))
    check('Adam step count and moments kept', opt.k == 200 and np.array_equal(opt.m['s'], mr) and np.array_equal(opt.v['s'], vr))
    check('Adam converges on the quadratic', np.max(np.abs(w['s'][:4] - c[:4])) < 0.05, str(w['s']))
    g, n = clip_by_global_norm({'x': np.array([3.0]), 'y': np.array([4.0])}, 1.0)
    g2, _ = clip_by_global_norm({'x': np.array([3.0]), 'y': np.array([4.0])}, 10.0)
    check('global-norm clip', n == 5.0 and abs(g['x'][0] - 0.6) < 1e-15 and abs(g['y'][0] - 0.8) < 1e-15
          and g2['x'][0] == 3.0)
    s = sign_constraint(np.array([-1.0, 2.0, -3.0, 4.0, -0.5, 0.5]), np.array([1.0, 1.0, -1.0, -1.0, 0.0, -0.0]))
    check('sign constraint (0 and -0 count as non-negative)', s.tolist() == [0.0, 2.0, -3.0, 0.0, 0.0, 0.5])


@test
def sign_constraint_and_frozen():
    train = dict(TRAIN, trainable={"recurrent": True}, optimizer={"type": "adam", "lr": 3.0},
                 losses=[{"type": "TargetFiringRate", "cost": 1.0, "target": 0.0}])
    cfg = tiny_config('sign', scale=4.0, T=30.0, B=2, train=train)
    tr = Trainer(load_config(cfg))
    w0 = {s: w.copy() for s, w in tr.w.items()}
    for _ in range(3):
        tr.step()
    check('frozen surfaces (vin, bkg) unchanged bitwise after 3 updates',
          np.array_equal(tr.w['vin'], w0['vin']) and np.array_equal(tr.w['bkg'], w0['bkg']))
    w, i0 = tr.w['recurrent'], w0['recurrent']
    check('recurrent weights keep the side of their initial sign',
          np.all(w[i0 >= 0] >= 0) and np.all(w[i0 < 0] <= 0))
    check('sign constraint active (some non-zero weight clipped to exactly 0), weights moved',
          np.any((w == 0) & (i0 != 0)) and not np.array_equal(w, i0), str(np.c_[i0, w].tolist()))
    check('Adam state only for trainable surfaces', sorted(tr.adam.m) == ['recurrent'] and tr.adam.k == 3)


@test
def batch_sample_addressing():
    train = dict(TRAIN, optimizer={"type": "adam", "lr": 0.0})
    cfg2 = tiny_config('addr2', scale=3.0, T=30.0, B=2, train=train)
    tr2 = Trainer(load_config(cfg2))
    tr1 = Trainer(load_config(cfg2))
    r2 = tr2.step()
    r2 = tr2.step()          # update 2 uses samples 2, 3
    ra, rb = tr1.loss_and_grad([2]), tr1.loss_and_grad([3])
    check('update k uses samples kB..kB+B-1; batch loss = mean of per-sample losses',
          abs(r2['total'] - 0.5 * (ra['total'] + rb['total'])) < 1e-12 * abs(r2['total']))
    check('batch gradient = mean of per-sample gradients',
          all(rel_err(r2['grads'][s], 0.5 * (ra['grads'][s] + rb['grads'][s])) < 1e-12 for s in r2['grads']))
    r23 = tr1.loss_and_grad([2, 3])
    check('same sample gives identical loss and gradient whatever the trainer',
          r23['total'] == r2['total'] and all(np.array_equal(r23['grads'][s], r2['grads'][s]) for s in r2['grads']))


@test
def cli_end_to_end():
    train = dict(TRAIN, optimizer={"type": "adam", "lr": 0.02, "clip_global_norm": 1e-3},
                 losses=TRAIN["losses"] + [{"type": "TargetFiringRate", "cost": 10.0, "unit": "spikes_per_step",
                                            "target_by_node_type": {"100": 0.02, "101": 0.05, "102": 0.01}}])
    cfg = tiny_config('cli', scale=3.0, T=30.0, B=2, train=train)
    out = os.path.join(TMP, 'cli', 'res.h5')
    t0 = time.time()
    r = subprocess.run([sys.executable, os.path.join(HERE, 'run_grad_oracle.py'), cfg, '--out', out, '--updates', '3'],
                       capture_output=True, text=True)
    check('CLI exit 0 and one summary line per update', r.returncode == 0 and r.stdout.count('update ') == 3,
          (r.stdout + r.stderr)[-400:] + ' (%.1f s)' % (time.time() - t0))
    tr = Trainer(load_config(cfg))
    first = tr.loss_and_grad([0, 1])
    with h5py.File(out, 'r') as h:
        keys = sorted(h['loss'])
        check('loss datasets', keys == ['TargetFiringRate_1', 'TargetFiringRate_2', 'VoltageRegularization',
                                         'WeightRegularization', 'total'] and h['loss/total'].shape == (3,), str(keys))
        tot = h['loss/total'][()]
        parts = sum(h['loss/' + k][()] for k in keys if k != 'total')
        check('loss/total = sum of terms; first = Trainer loss', np.allclose(tot, parts, rtol=1e-14, atol=0)
              and tot[0] == first['total'])
        check('grad only for trainable surfaces, == Trainer gradient (before clipping)',
              sorted(h['grad']) == ['recurrent', 'vin']
              and all(np.array_equal(h['grad/' + s][()], first['grads'][s]) for s in ('recurrent', 'vin')))
        W = {s: h['weights/' + s][()] for s in h['weights']}
        check('weights [K+1, E_s] for all surfaces, row 0 = initial normalized weights',
              all(W[s].shape == (4, len(tr.w[s])) and np.array_equal(W[s][0], tr.w[s]) for s in tr.w))
        check('frozen bkg weights constant', np.all(W['bkg'] == W['bkg'][0]))
        g = first['grads']
        norm = math.sqrt(sum(float(np.sum(a * a)) for a in g.values()))
        # replay the 3 updates by hand from the stored batches' gradients
        check('clip applied: first Adam m = (1-b1) * g * c / |g|', norm > 1e-3)
        tr2 = Trainer(load_config(cfg))
        tr2.step()
        check('after update 1: m == 0.1 * g * c/norm', rel_err(tr2.adam.m['recurrent'], 0.1 * g['recurrent'] * 1e-3 / norm) < 1e-13)
        tr2.step(); tr2.step()
        check('adam m/v and step after last update', h['adam'].attrs['step'] == 3
              and all(np.array_equal(h['adam/m/' + s][()], tr2.adam.m[s]) and np.array_equal(h['adam/v/' + s][()], tr2.adam.v[s])
                      for s in ('recurrent', 'vin')) and 'bkg' not in h['adam/m'])
        check('weights after each update reproducible', all(np.array_equal(W[s][3], tr2.w[s]) for s in tr2.w))
        check('rate_mean_hz [K]', h['rate_mean_hz'].shape == (3,) and h['rate_mean_hz'][0] == first['rate_mean_hz'])


shutil.rmtree(TMP, ignore_errors=True)
npass = sum(1 for _, ok in RESULTS if ok)
nfail = len(RESULTS) - npass
print('%d passed, %d failed' % (npass, nfail))
sys.exit(0 if nfail == 0 and npass > 0 else 1)
