"""Training-oracle self-checks of training: losses, config, Adam, sign constraint, batches, the CLI."""
import math
import os
import subprocess
import sys
import time

import h5py
import numpy as np
import torch
from oracle.config import load_config
from oracle.train import (Trainer, TrainConfig, TrainError, compute_losses, Adam, sign_constraint,
                          clip_by_global_norm)
from grad_selfcheck_common import HERE, TMP, TRAIN, check, tiny_config, rel_err


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


TESTS = [losses_formulas, adam_quadratic, sign_constraint_and_frozen, batch_sample_addressing, cli_end_to_end]
