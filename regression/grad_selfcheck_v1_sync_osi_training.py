"""Training-oracle self-checks of Synchronization and OrientationSelectivity in training, on the 24-neuron fixture
(v1_loss_fixture.py, sync_osi=True): the normaliser carried across updates and the update index of the shuffles
(against a re-run forward pass), per-condition batches, finite differences, the CLI's /loss and /loss_state."""
import copy
import os
import subprocess
import sys

import h5py
import numpy as np
import torch
from oracle.config import load_config
from oracle.optim import osi_normaliser
from oracle.train import Trainer, TrainConfig, compute_losses
from oracle.v1_sync_osi import osi_loss, osi_rates, sync_loss
from grad_selfcheck_common import HERE, TMP, check, rel_err
import v1_loss_fixture as fx

OWN = ['Synchronization_1', 'Synchronization_2', 'OrientationSelectivity']


def batch_z(tr, w, samples):
    """Spikes [S, T, N] of the given samples at weights w (no gradient)."""
    with torch.no_grad():
        wt = {s: torch.as_tensor(a) for s, a in w.items()}
        return tr.model.forward(wt, tr.input_counts(samples), tr.spike_fn, tr.vdamp, tr.rdamp, warmup=tr.W)['z']


def spec_of(tr, name):
    return [L for L in tr.tc.losses if L['name'] == name][0]


def normaliser_and_updates():
    tr = Trainer(load_config(fx.write_fixture(os.path.join(TMP, 'so_state'), sync_osi=True)))
    Lo = spec_of(tr, 'OrientationSelectivity')
    e = np.full(tr.model.N, 0.003)
    worst_e = worst_l = 0.0
    for k in range(3):
        w = copy.deepcopy(tr.w)
        res = tr.step()
        samples = np.arange(2 * k, 2 * k + 2)
        z = batch_z(tr, w, samples)
        e = 0.9 * e + 0.1 * (osi_rates(Lo, z, 1.0).numpy().mean(0))
        worst_e = max(worst_e, rel_err(res['loss_state']['OrientationSelectivity'], e))
        exp = {n: float(sync_loss(spec_of(tr, n), z, 1.0, k)) for n in OWN[:2]}
        exp['OrientationSelectivity'] = float(osi_loss(Lo, z, 1.0, samples, e))
        worst_l = max(worst_l, max(abs(res['terms'][n] - v) / abs(v) for n, v in exp.items()))
        if k == 1:
            other = float(sync_loss(spec_of(tr, OWN[0]), z, 1.0, 0))
    check('normaliser across 3 updates: e_k = 0.9 e_(k-1) + 0.1 mean_b r of update k (from 0.003)', worst_e < 1e-15,
          '%.2e' % worst_e)
    check('update k: Synchronization with the shuffles of update k, OSI with directions[g mod 8] and e_k '
          '(re-run forward pass)', worst_l < 1e-13 and abs(other - exp[OWN[0]]) > 1e-9 * exp[OWN[0]], '%.2e' % worst_l)


def per_condition_batches():
    """Two conditions with the same inputs: each condition's batch has its own plan (G = B) and normaliser."""
    base = os.path.join(TMP, 'so_cond')
    for approach in ('accumulate', 'series'):
        cfg = fx.write_fixture(base + approach, B=2, sync_osi=True,
                               train_extra={"conditions": [{}, {}], "approach": approach})
        tr = Trainer(load_config(cfg))
        w = copy.deepcopy(tr.w)
        res = tr.step()
        z = batch_z(tr, w, np.arange(4))
        Lo, ok = spec_of(tr, 'OrientationSelectivity'), True
        for c in range(2 if approach == 'accumulate' else 1):    # series: condition 1 runs at updated weights
            zc, samples = z[2 * c:2 * c + 2], np.arange(2 * c, 2 * c + 2)
            e = osi_normaliser(Lo, zc, 1.0)
            st = res['loss_state']['condition_%d/OrientationSelectivity' % c]
            terms = res['conditions']['condition_%d' % c]['terms']
            ok &= rel_err(st, e) < 1e-15
            ok &= abs(terms['OrientationSelectivity'] - float(osi_loss(Lo, zc, 1.0, samples, e))) < 1e-13
            ok &= abs(terms[OWN[0]] - float(sync_loss(spec_of(tr, OWN[0]), zc, 1.0, 0))) < 1e-13
        mean = all(abs(res['terms'][n] - 0.5 * sum(res['conditions']['condition_%d' % c]['terms'][n]
                                                   for c in range(2))) < 1e-13 for n in OWN)
        check('%s, 2 conditions: Synchronization / OSI per condition batch (plan G = B, update 0, own normaliser '
              '/loss_state/condition_c/...), the update term their mean' % approach,
              ok and mean and len(res['loss_state']) == 2,
              str(sorted(res['loss_state'])))


def finite_differences_sync_osi():
    """Sigmoid spikes, frozen stop-gradient inputs (as finite_differences_v1): autograd == central differences of
    Synchronization (both pools) + OrientationSelectivity (core + annulus) at update 1, samples 2, 3."""
    d = os.path.join(TMP, 'fd_so')
    tr = Trainer(load_config(fx.write_fixture(d, T=40.0, B=2, sync_osi=True)))
    m = tr.model
    sig = lambda v, free: torch.sigmoid((v - 1.0) / 0.15)
    x = tr.input_counts(np.array([2, 3]))
    rng = np.random.default_rng(3)
    w_base = {s: w + 0.05 * rng.standard_normal(w.shape) for s, w in tr.w.items()}
    specs = TrainConfig({"losses": fx.v1_sync_osi_losses(os.path.join(d, 'osi_dsi.csv'), 40.0)}, m)
    ctx = {'update': 1, 'samples': np.array([2, 3]),
           'ema': {'OrientationSelectivity': 0.002 + 0.03 * rng.uniform(size=m.N)}}
    with torch.no_grad():
        base = m.forward({s: torch.as_tensor(w) for s, w in w_base.items()}, x, sig)
    sg_z = [base['z'][:, t].clone() for t in range(x.shape[1])]

    def f(wd, grad=False):
        wt = {s: torch.tensor(w, requires_grad=grad) for s, w in wd.items()}
        out = m.forward(wt, x, sig, sg_z=sg_z)
        tot, terms, _ = compute_losses(specs.losses, out['z'], out['v'], 1.0, wt, wt, {s: True for s in wt},
                                       m.surface_names, ctx=ctx)
        if grad:
            tot.backward()
            return {s: wt[s].grad.numpy() for s in wt}, terms
        return float(tot)

    g, terms = f(w_base, grad=True)
    check('FD setup: Synchronization_1, _2 and OrientationSelectivity non-zero',
          all(abs(float(v)) > 0 for v in terms.values()), ' '.join('%s=%.3g' % (k, float(v)) for k, v in terms.items()))
    for s in m.surface_names:
        fd = np.zeros_like(w_base[s])
        for e in range(len(fd)):
            wp, wm = copy.deepcopy(w_base), copy.deepcopy(w_base)
            wp[s][e] += 1e-6
            wm[s][e] -= 1e-6
            fd[e] = (f(wp) - f(wm)) / 2e-6
        err = rel_err(g[s], fd)
        check('FD (sigmoid spikes, Synchronization + OrientationSelectivity) surface %s' % s, err < 1e-6,
              'max rel err %.2e, |g|max %.3g' % (err, np.max(np.abs(fd))))


def cli_sync_osi():
    cfg = fx.write_fixture(os.path.join(TMP, 'so_cli'), sync_osi=True)
    out = os.path.join(TMP, 'so_cli', 'res.h5')
    r = subprocess.run([sys.executable, os.path.join(HERE, 'run_grad_oracle.py'), cfg, '--out', out, '--updates', '2'],
                       capture_output=True, text=True)
    check('CLI on the sync/OSI fixture: exit 0', r.returncode == 0, (r.stdout + r.stderr)[-400:])
    tr = Trainer(load_config(cfg))
    res = [tr.step() for _ in range(2)]
    with h5py.File(out, 'r') as f:
        names = sorted(f['loss'])
        st = f['loss_state/OrientationSelectivity'][()]
        check('CLI: /loss/Synchronization_1, _2, /loss/OrientationSelectivity with the other V1 losses',
              all(n in names for n in OWN) and len(names) == 9, str(names))
        check('CLI: /loss_state/OrientationSelectivity [2, 24] == the in-process normaliser after each update',
              st.shape == (2, 24) and all(np.array_equal(st[k], res[k]['loss_state']['OrientationSelectivity'])
                                          for k in range(2)) and list(f['loss_state']) == ['OrientationSelectivity'])
        check('CLI: loss terms == in-process', all(f['loss/' + n][k] == res[k]['terms'][n] for n in OWN for k in (0, 1)))


TESTS = [normaliser_and_updates, per_condition_batches, finite_differences_sync_osi, cli_sync_osi]
