"""Training-oracle self-checks of the V1 papers' losses in training: EMDWeightRegularization against closed forms,
finite differences of every V1 loss on the fixture network (v1_loss_fixture.py), the CLI's result file."""
import copy
import os
import subprocess
import sys

import h5py
import numpy as np
import torch
from oracle.config import load_config
from oracle.train import Trainer, TrainConfig, compute_losses
from grad_selfcheck_common import HERE, TMP, check, rel_err
import v1_loss_fixture as fx

# unmerged cell type of each fixture node type (V1-PAPER.md section 3.4: L5 subtypes kept)
FX_UNMERGED = {110: 'L2/3 Exc', 111: 'L2/3 PV', 112: 'L4 Exc', 113: 'L5 ET', 114: 'L5 IT', 115: 'L5 SST',
               116: 'L1 Htr3a'}


def emd_groups():
    """{(source type, target type): positions in the recurrent surface}, from the fixture's edge list."""
    rec = [e for e in fx.edges() if e[0] == 'rec']
    g = {}
    for k, e in enumerate(rec):
        key = (FX_UNMERGED[fx.NODE_TYPES[e[1]]], FX_UNMERGED[fx.NODE_TYPES[e[2]]])
        g.setdefault(key, []).append(k)
    return {k: np.array(v) for k, v in g.items()}


def emd_reference(w, w0, cost):
    """Loss and gradient of V1-PAPER.md section 3.4 in numpy."""
    groups = emd_groups()
    G = len(groups)
    loss, grad = 0.0, np.zeros_like(w)
    for idx in groups.values():
        ow, o0 = np.argsort(w[idx], kind='stable'), np.sort(w0[idx])
        d = w[idx][ow] - o0
        loss += np.mean(np.abs(d))
        grad[idx[ow]] = cost / (G * len(idx)) * np.sign(d)
    return cost * loss / G, grad


def emd_closed_forms():
    tr = Trainer(load_config(fx.write_fixture(os.path.join(TMP, 'emd'), T=12.0, B=1)))
    m = tr.model
    groups = emd_groups()
    G, cost = len(groups), 10.0
    tc = TrainConfig({"losses": [{"type": "EMDWeightRegularization", "cost": cost},
                                 {"type": "EMDWeightRegularization", "cost": cost, "group_by": "pop_name"}]}, m)
    w0 = tr.w['recurrent']
    z = torch.zeros(1, 12, m.N)

    def run(w):
        wt = {'recurrent': torch.tensor(w, requires_grad=True)}
        tot, terms, _ = compute_losses(tc.losses[:1], z, None, 1.0, wt, {'recurrent': torch.as_tensor(w0)},
                                       {'recurrent': True}, ['recurrent'])
        tot.backward()
        return float(tot), wt['recurrent'].grad.numpy()

    L0, g0 = run(w0.copy())
    check('EMD: %d groups of the fixture; 0 with zero gradient at w = w0 (sign(0) = 0)' % G,
          len(tc.losses[0]['groups']) == G and L0 == 0.0 and np.all(g0 == 0), '%g' % L0)
    big = max(groups, key=lambda k: len(groups[k]))
    idx = groups[big]
    for delta in (0.01, -0.02):
        w = w0.copy()
        w[idx] += delta
        L, g = run(w)
        exp_g = np.zeros_like(w)
        exp_g[idx] = np.sign(delta) * cost / (G * len(idx))
        check('EMD: group %s (%d edges) shifted by %g: loss = cost |delta| / G, gradient sign(delta) cost/(G n_g) '
              'on the group, 0 elsewhere' % (big, len(idx), delta),
              abs(L - cost * abs(delta) / G) < 1e-12 * L and rel_err(g, exp_g) < 1e-14, '%r %r' % (L, cost * abs(delta) / G))
    w = w0.copy()
    w[idx] = w0[idx][::-1]
    L, g = run(w)
    check('EMD: a permutation inside a group costs nothing (sorted distributions)', L == 0.0 and np.all(g == 0))
    w = w0 + 0.03 * np.random.default_rng(4).standard_normal(len(w0))
    L, g = run(w)
    Lr, gr = emd_reference(w, w0, cost)
    check('EMD: random w against numpy (sorted per group, sign gradient)', abs(L - Lr) < 1e-13 * Lr and rel_err(g, gr) < 1e-14,
          '%r %r' % (L, Lr))
    tot2, _, _ = compute_losses(tc.losses[1:], z, None, 1.0, {'recurrent': torch.as_tensor(w)},
                                {'recurrent': torch.as_tensor(w0)}, {'recurrent': True}, ['recurrent'])
    check('EMD group_by pop_name (a node types column; same partition here)', abs(float(tot2) - Lr) < 1e-13 * Lr)


def finite_differences_v1():
    """Sigmoid spikes, frozen stop-gradient inputs, dampers neutral (as finite_differences_smooth), on the fixture
    network with every V1 loss key: autograd == central differences for every weight of both surfaces."""
    cfg = fx.write_fixture(os.path.join(TMP, 'fdv1'), T=40.0, B=2)
    tr = Trainer(load_config(cfg))
    m = tr.model
    sig = lambda v, free: torch.sigmoid((v - 1.0) / 0.15)
    x = tr.input_counts(np.array([0, 1]))
    rng = np.random.default_rng(2)
    w_base = {s: w + 0.05 * rng.standard_normal(w.shape) for s, w in tr.w.items()}
    w0 = {s: torch.as_tensor(w) for s, w in tr.w.items()}
    losses = fx.v1_losses(os.path.join(TMP, 'fdv1', 'observed_rates.csv'))
    losses[1]['delta'] = 0.05      # both Huber regimes
    specs = TrainConfig({"losses": losses, "trainable": {"recurrent": True, "vin": True}}, m)
    with torch.no_grad():
        base = m.forward({s: torch.as_tensor(w) for s, w in w_base.items()}, x, sig)
    sg_z = [base['z'][:, t].clone() for t in range(x.shape[1])]

    def f(wd, grad=False):
        wt = {s: torch.tensor(w, requires_grad=grad) for s, w in wd.items()}
        out = m.forward(wt, x, sig, sg_z=sg_z)
        tot, terms, _ = compute_losses(specs.losses, out['z'], out['v'], 1.0, wt, w0, {s: True for s in wt},
                                       m.surface_names)
        if grad:
            tot.backward()
            return float(tot), {s: wt[s].grad.numpy() for s in wt}, terms
        return float(tot)

    L0, g, terms = f(w_base, grad=True)
    check('FD V1 setup: every loss term non-zero', all(abs(float(v)) > 0 for v in terms.values()),
          ' '.join('%s=%.3g' % (k, float(v)) for k, v in terms.items()))
    h = 1e-6
    for s in m.surface_names:
        fd = np.zeros_like(w_base[s])
        for e in range(len(fd)):
            wp, wm = copy.deepcopy(w_base), copy.deepcopy(w_base)
            wp[s][e] += h
            wm[s][e] -= h
            fd[e] = (f(wp) - f(wm)) / (2 * h)
        err = rel_err(g[s], fd)
        check('FD (sigmoid spikes, V1 losses: windows, sampled, huber_quantile, core + annulus, EMD) surface %s'
              % s, err < 1e-6, 'max rel err %.2e, |g|max %.3g' % (err, np.max(np.abs(fd))))


def cli_v1():
    cfg = fx.write_fixture(os.path.join(TMP, 'cliv1'))
    out = os.path.join(TMP, 'cliv1', 'res.h5')
    r = subprocess.run([sys.executable, os.path.join(HERE, 'run_grad_oracle.py'), cfg, '--out', out, '--updates', '2'],
                       capture_output=True, text=True)
    check('CLI on the V1 fixture: exit 0', r.returncode == 0, (r.stdout + r.stderr)[-400:])
    with h5py.File(out, 'r') as f:
        names = sorted(f['loss'])
        check('CLI: /loss/<Type> of every V1 loss, /grad of both surfaces',
              names == ['EMDWeightRegularization', 'RateDistribution_1', 'RateDistribution_2', 'TargetFiringRate',
                        'VoltageRegularization', 'total'] and sorted(f['grad']) == ['recurrent', 'vin'], str(names))
        W = f['weights/recurrent'][()]
        emd = f['loss/EMDWeightRegularization'][()]
        exp, _ = emd_reference(W[1], W[0], 10.0)
        check('CLI: EMD 0 at update 1, numpy value of the stored weights at update 2',
              emd[0] == 0.0 and abs(emd[1] - exp) < 1e-13 * exp, '%r %r' % (emd.tolist(), exp))
        tot = f['loss/total'][()]
        check('CLI: total = sum of the terms', np.allclose(tot, sum(f['loss/' + n][()] for n in names if n != 'total'),
                                                           rtol=1e-14, atol=0))


TESTS = [emd_closed_forms, finite_differences_v1, cli_v1]
