"""The V1 papers' losses in the training oracle (V1-PAPER.md sections 3.1 and 3.4), float64 torch.

* Windows (`pre_ms`, `post_ms`, default 0, whole multiples of dt) of TargetFiringRate and RateDistribution:
  the loss reads the steps pre/dt <= t < T - post/dt of the BPTT window, T_w = T - (pre + post)/dt steps.
* RateDistribution: per group (node types column or "cell_type", the 17 merged types), the stable-sorted rates
  pooled over all samples of the update and the window against targets q_k drawn from the group's observed
  rates R (plus one 0 with `append_zero`): `quantiles` q_k = numpy linear quantile at (k + 0.5)/n, or
  `sampled` sort(interp(u, linspace(0, 1, |R|), sort(R))) with u = RandomState(seed).uniform(size=n),
  re-seeded for every group. Penalty of u_k = r_(k) - q_k: `squared` u^2; `huber` u^2/2 (|u| <= delta) else
  delta (|u| - delta/2); `huber_quantile` |tau_k - 1[u <= 0]| (u^2/(2 delta) (|u| <= delta) else |u| - delta/2)
  with tau_k = (k + 1)/n. `normalize`: `per_group` sum over groups of the group's mean penalty, `neurons` sum
  over groups and ranks / the neurons over all groups. `unit`: `Hz` rate = 1000 spikes / (S T_w dt), or
  `spikes_per_step` spikes / (S T_w) with the observed Hz scaled by dt/1000 (delta in the loss's unit).
  `core_radius`: only core neurons (sqrt(x^2 + z^2) < radius) form the groups; `annulus_weight` adds that
  weight times the same loss over the other neurons (own groups, targets and normaliser).
* EMDWeightRegularization on the recurrent surface: group = (type of source, type of target) with the 19
  unmerged types (or a node types column); cost / G sum_g mean_i |sort(w_g)_i - sort(w0_g)_i|.
"""
import csv
import math

import numpy as np
import torch

from .autograd_ops import DTYPE, TrainError
from .cell_types import CellTypeError, cell_types, core_mask

RD_CHOICES = {'penalty': ('squared', 'huber', 'huber_quantile'), 'targets': ('quantiles', 'sampled'),
              'unit': ('Hz', 'spikes_per_step'), 'normalize': ('per_group', 'neurons')}


def _steps(ms, dt, what):
    k = int(round(ms / dt))
    if k < 0 or abs(k * dt - ms) > 1e-9 * max(1.0, abs(ms)):
        raise TrainError('%s %g ms: must be a whole number (>= 0) of dt = %g ms steps' % (what, ms, dt))
    return k


def window_bounds(L, T, dt):
    """[a, b) of the BPTT window's steps that a loss with pre_ms/post_ms reads."""
    a = _steps(float(L.get('pre_ms', 0.0)), dt, '%s pre_ms' % L.get('name', L.get('type')))
    b = T - _steps(float(L.get('post_ms', 0.0)), dt, '%s post_ms' % L.get('name', L.get('type')))
    if b <= a:
        raise TrainError('%s: pre_ms + post_ms leave no step of the %d-step window' % (L.get('name'), T))
    return a, b


def loss_window(z, L, dt):
    a, b = window_bounds(L, z.shape[1], dt)
    return z[:, a:b]


def read_rate_table(path, group_col, rate_column='rate_hz'):
    """{group (str): sorted rates (Hz)} from a space-separated table whose "quoted values" may hold spaces.
    NaN rates are skipped; a group key of node_type_id is compared as its integer's text."""
    with open(path, newline='') as fh:
        rows = [r for r in csv.reader(fh, delimiter=' ', quotechar='"', skipinitialspace=True) if r]
    if not rows:
        raise TrainError('%s: empty rate table' % path)
    head = rows[0]
    for c in (group_col, rate_column):
        if c not in head:
            raise TrainError('%s: no column %r (columns %s)' % (path, c, head))
    ci, cr = head.index(group_col), head.index(rate_column)
    out = {}
    for n, r in enumerate(rows[1:], start=2):
        try:
            v = float(r[cr])
            key = str(int(r[ci])) if group_col == 'node_type_id' else r[ci]
        except (ValueError, IndexError):
            raise TrainError('%s line %d: unreadable row %s' % (path, n, r))
        if math.isnan(v):
            continue
        if not math.isfinite(v) or v < 0:
            raise TrainError('%s line %d: rate %r is not finite and >= 0' % (path, n, r[cr]))
        out.setdefault(key, []).append(v)
    return {k: np.sort(np.array(v, np.float64)) for k, v in sorted(out.items())}


def quantile_targets(R, n):
    return np.quantile(R, (np.arange(n) + 0.5) / n, method='linear')


def sampled_targets(R, n, seed=42):
    """V1-PAPER.md section 3.1 step 4: n draws of the empirical quantile function of R, ascending."""
    R = np.sort(np.asarray(R, np.float64))
    u = np.random.RandomState(seed).uniform(size=n)
    return np.sort(np.interp(u, np.linspace(0.0, 1.0, len(R)), R))


def huber_quantile(u, tau, delta):
    a = torch.abs(u)
    h = torch.where(a <= delta, u * u / (2.0 * delta), a - 0.5 * delta)
    return torch.abs(tau - (u <= 0).to(u.dtype)) * h


def penalty(u, kind, delta):
    if kind == 'squared':
        return u * u
    if kind == 'huber':
        a = torch.abs(u)
        return torch.where(a <= delta, 0.5 * u * u, delta * (a - 0.5 * delta))
    n = u.shape[0]
    tau = torch.as_tensor((np.arange(n) + 1.0) / n, dtype=u.dtype)
    return huber_quantile(u, tau, delta)


def _choice(L, key, default, where):
    v = L.get(key, default)
    if v not in RD_CHOICES[key]:
        raise TrainError('%s: %s %r must be one of %s' % (where, key, v, ', '.join(RD_CHOICES[key])))
    return v


def rate_distribution_spec(L, model, obs, where):
    """The parsed RateDistribution: options and per region (weight, [(neuron indices, targets in Hz)])."""
    spec = {'penalty': _choice(L, 'penalty', 'squared', where), 'targets': _choice(L, 'targets', 'quantiles', where),
            'unit': _choice(L, 'unit', 'Hz', where), 'normalize': _choice(L, 'normalize', 'per_group', where),
            'delta': float(L.get('delta', 1.0)), 'seed': int(L.get('seed', 42)),
            'pre_ms': float(L.get('pre_ms', 0.0)), 'post_ms': float(L.get('post_ms', 0.0))}
    if not spec['delta'] > 0:
        raise TrainError('%s: delta must be > 0' % where)
    group_by = L.get('group_by', 'node_type_id')
    try:
        col = cell_types(model.net.rec_pops) if group_by == 'cell_type' else model.node_type_column(group_by)
        core = None if L.get('core_radius') is None else core_mask(model.net.rec_pops, float(L['core_radius']))
    except (CellTypeError, ValueError) as e:
        raise TrainError('%s: %s' % (where, e))
    aw = float(L.get('annulus_weight', 0.0))
    if aw != 0 and core is None:
        raise TrainError('%s: annulus_weight needs core_radius' % where)
    inside = np.ones(len(col), bool) if core is None else core
    regions = [(1.0, inside)] + ([(aw, ~core)] if aw != 0 else [])
    append_zero = bool(L.get('append_zero', False))
    spec['regions'] = []
    for weight, mask in regions:
        groups = []
        for g in sorted(set(col[mask].tolist())):
            idx = np.nonzero((col == g) & mask)[0]
            R = np.asarray(obs.get(g, np.zeros(0)), np.float64)
            if len(R) == 0:
                raise TrainError('%s: no observed rate for group %r (%s)' % (where, g, L.get('target_file')))
            if append_zero:
                R = np.append(R, 0.0)
            if len(R) == 0:
                raise TrainError('%s: no observed rate for group %r (%s)' % (where, g, L.get('target_file')))
            q = sampled_targets(R, len(idx), spec['seed']) if spec['targets'] == 'sampled' \
                else quantile_targets(np.sort(R), len(idx))
            groups.append((idx, q))
        spec['regions'].append((weight, groups))
    return spec


def rate_distribution_loss(L, z, dt):
    a, b = window_bounds(L, z.shape[1], dt)
    zw, Tw = z[:, a:b], b - a
    if L['unit'] == 'Hz':
        rate, scale = 1000.0 * zw.sum((0, 1)) / (z.shape[0] * Tw * dt), 1.0
    else:
        rate, scale = zw.sum((0, 1)) / (z.shape[0] * Tw), dt / 1000.0
    val = torch.zeros((), dtype=DTYPE)
    for weight, groups in L['regions']:
        part = torch.zeros((), dtype=DTYPE)
        n = 0
        for idx, q in groups:
            u = torch.sort(rate[torch.as_tensor(idx)], stable=True).values - torch.as_tensor(q * scale)
            pen = penalty(u, L['penalty'], L['delta'])
            part = part + (pen.mean() if L['normalize'] == 'per_group' else pen.sum())
            n += len(idx)
        if L['normalize'] == 'neurons' and n:
            part = part / n
        val = val + weight * part
    return L['cost'] * val


def emd_spec(L, model, where):
    """Groups of the recurrent surface's edges by (type of source, type of target), in sorted key order."""
    group_by = L.get('group_by', 'cell_type')
    try:
        types = cell_types(model.net.rec_pops, merge_l5=False) if group_by == 'cell_type' \
            else model.node_type_column(group_by)
    except (CellTypeError, ValueError) as e:
        raise TrainError('%s: %s' % (where, e))
    idx = model.surface_edges['recurrent']
    src, tgt = model.net.e_src[idx], model.net.e_tgt[idx]
    groups = {}
    for k in range(len(idx)):
        groups.setdefault((types[src[k]], types[tgt[k]]), []).append(k)
    return {'groups': [np.array(groups[g], np.int64) for g in sorted(groups)], 'group_keys': sorted(groups)}


def emd_loss(L, w, w0):
    """cost x (1/G) x sum_g (1/n_g) sum_i |sort(w_g)_i - sort(w0_g)_i| (w, w0: the recurrent surface)."""
    G = len(L['groups'])
    if G == 0:
        return torch.zeros((), dtype=DTYPE)
    s = torch.zeros((), dtype=DTYPE)
    for idx in L['groups']:
        ii = torch.as_tensor(idx)
        d = torch.sort(w[ii], stable=True).values - torch.sort(w0[ii], stable=True).values
        s = s + torch.abs(d).mean()
    return L['cost'] * (s / G)
