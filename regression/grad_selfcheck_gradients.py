"""Training-oracle self-checks of the gradient: finite differences, the voltage and recurrent dampers."""
import copy
import os

import numpy as np
import torch
from oracle.config import load_config
from oracle.tinynet import make_network, GLIF
from oracle.train import Trainer, TrainConfig, scale_grad, compute_losses
from grad_selfcheck_common import TMP, INPUTS, SPIKES, check, tiny_config, rel_err


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


TESTS = [finite_differences_smooth, voltage_damper_closed_form, recurrent_damper_scaling]
