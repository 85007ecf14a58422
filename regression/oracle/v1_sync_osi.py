"""Synchronization and OrientationSelectivity of the V1 papers (V1-PAPER.md sections 3.3, 3.5), float64 torch.

Synchronization (Fano factors of pooled spike counts), with T_w the window's steps and W_ms = T_w dt:
* bin sizes max(1, round(1000 b)) ms for b in logspace(-3, 0, 20) with b < W_ms/2000, each a whole number of steps;
  targets "evoked" / "spontaneous" (the spec's tables, W_ms = 300 only) or one number per bin size;
* pool P: recurrent neurons (ascending index) whose pop_name starts with 'e' (`pool` "excitatory") or all ("all"),
  intersected with the core (sqrt(x^2 + z^2) < core_radius) if given; |P| >= 15;
* plan for a condition's batch of G samples: per_trial = ceil(n_samples/G), n_eff = G per_trial, counts
  c_k = clip(int64(default_rng(seed).normal(70, 30, n_eff)), 15, |P|), offsets packed sequentially into copies of
  P (a new copy when the next sample would overflow it); pool k reads sample (batch row) k // per_trial;
* copy e at update u is P ordered by a stable argsort of uniform01(seed, fnv1a32("synchronization"), i, e, u),
  i < |P| (Philox4x32-10, key (seed, purpose), counter (i, e, u, 0), (word0 + 0.5) 2^-32);
* y_k(t) = sum of z over pool k's members; per bin size d: counts over floor(T_w/d) bins, F_k = population
  variance / max(mean, 1e-7), F = mean over the pools; loss = cost mean_d (F*_d - F_d)^2.
OrientationSelectivity (crowd OSI/DSI): r = spikes in the window / (T_w dt) (per ms), r~ = r / max(e, 0.0005)
with e the per-neuron EMA normaliser (init 0.003; e <- decay e + (1 - decay) mean_b r before the loss, constant);
per type c and sample b: D = max(mean r~, 0.0005), O = mean r~ cos 2Delta, Q = mean r~ cos Delta, Delta =
(theta_b - phi_n) pi/180; OSI_c = mean_b O/D, DSI_c = mean_b Q/D; loss = cost sum_c m_c ((OSI_c - OSI*_c)^2 +
(DSI_c - DSI*_c)^2) / sum_c m_c, plus annulus_weight x the same over the non-core neurons.
"""
import csv
import math

import numpy as np
import torch

from .autograd_ops import DTYPE, TrainError
from .cell_types import CellTypeError, cell_types, core_mask, node_attribute, _text
from .philox import philox4x32_10, uniform_from_word, fnv1a32
from .v1_losses import window_bounds

SYNC_PURPOSE = fnv1a32('synchronization')
SYNC_TARGETS_300MS = {
    'evoked': [1.01881, 1.03436, 1.05102, 1.08038, 1.11356, 1.15149, 1.20246, 1.23919, 1.20588, 1.19266,
               1.15404, 1.14281, 1.09735, 0.86053],
    'spontaneous': [0.99255, 0.98534, 0.99029, 0.98106, 0.97466, 0.97277, 0.95597, 0.97380, 0.90051, 0.92299,
                    0.88363, 0.81033, 0.67958, 0.47098]}
SYNC_MIN_POOL, SYNC_EPS = 15, 1e-7
OSI_EMA_INIT, OSI_RATE_FLOOR = 0.003, 0.0005
PER_CONDITION_TYPES = ('Synchronization', 'OrientationSelectivity')


def sync_bin_sizes_ms(w_ms):
    """Bin sizes (ms) of a window of w_ms: max(1, round(1000 b)) for b in logspace(-3, 0, 20), b < w_ms/2000."""
    return [max(1, int(np.round(1000.0 * b))) for b in np.logspace(-3, 0, 20) if b < w_ms / 2000.0]


def sync_plan(n_pool, n_samples, G, seed):
    """{'per_trial', 'n_eff', 'counts', 'offsets', 'n_copies'} of V1-PAPER.md section 3.3 for a batch of G."""
    per_trial = -(-n_samples // G)
    n_eff = G * per_trial
    counts = np.clip(np.random.default_rng(seed).normal(70, 30, n_eff).astype(np.int64), SYNC_MIN_POOL, n_pool)
    offsets = np.empty(n_eff, np.int64)
    copy, pos = 0, 0
    for k, c in enumerate(counts):
        if pos + c > n_pool:
            copy, pos = copy + 1, 0
        offsets[k] = copy * n_pool + pos
        pos += c
    return {'per_trial': per_trial, 'n_eff': n_eff, 'counts': counts, 'offsets': offsets, 'n_copies': copy + 1}


def uniform01(seed, purpose, source, step, sample):
    """The counter-based uniform: Philox4x32-10, key (seed, purpose), counter (source, step, sample, 0), word 0."""
    return uniform_from_word(philox4x32_10(source, step, sample, 0, seed, purpose)[0])


def sync_shuffled_copy(pool, seed, copy, update):
    """P ordered by a stable ascending argsort of its keys uniform01(seed, purpose, i, copy, update)."""
    keys = uniform01(seed, SYNC_PURPOSE, np.arange(len(pool), dtype=np.uint64), copy, update)
    return pool[np.argsort(keys, kind='stable')]


def sync_members(L, G, update):
    """[n_eff] arrays of neuron indices: the members of each pool at this update (plans cached per G)."""
    plan = L['plans'].get(G)
    if plan is None:
        plan = L['plans'][G] = sync_plan(len(L['pool']), L['n_samples'], G, L['seed'])
    cat = np.concatenate([sync_shuffled_copy(L['pool'], L['seed'], e, update) for e in range(plan['n_copies'])])
    return plan, [cat[o:o + c] for o, c in zip(plan['offsets'], plan['counts'])]


def sync_spec(L, pop_names, core, where):
    """Parsed Synchronization: pool (ascending recurrent indices), n_samples, seed, targets (name or list)."""
    pool_kind = L.get('pool', 'excitatory')
    if pool_kind not in ('excitatory', 'all'):
        raise TrainError('%s: pool %r must be "excitatory" or "all"' % (where, pool_kind))
    sel = np.ones(len(pop_names), bool) if pool_kind == 'all' else np.array([p.startswith('e') for p in pop_names])
    if core is not None:
        sel &= core
    pool = np.nonzero(sel)[0].astype(np.int64)
    if len(pool) < SYNC_MIN_POOL:
        raise TrainError('%s: the pool has %d neurons, Synchronization needs >= %d' % (where, len(pool), SYNC_MIN_POOL))
    targets = L.get('targets')
    if isinstance(targets, str):
        if targets not in SYNC_TARGETS_300MS:
            raise TrainError('%s: targets %r must be "evoked", "spontaneous" or a list' % (where, targets))
    elif isinstance(targets, (list, tuple)):
        targets = [float(v) for v in targets]
    else:
        raise TrainError('%s: targets ("evoked", "spontaneous" or a list of numbers) required' % where)
    seed, n_samples = int(L.get('seed', 42)), int(L.get('n_samples', 50))
    if not 0 <= seed < 2 ** 32 or n_samples < 1:
        raise TrainError('%s: seed must be in [0, 2^32) and n_samples >= 1' % where)
    return {'pool': pool, 'targets': targets, 'seed': seed, 'n_samples': n_samples, 'plans': {}, 'where': where}


def sync_fano(L, z, dt, update):
    """(F per bin size [n_d] tensor, bin sizes in steps, targets) of the window of z [G, T, N]."""
    a, b = window_bounds(L, z.shape[1], dt)
    Tw, where = b - a, L.get('where', L.get('name'))
    w_ms = Tw * dt
    bins = []
    for ms in sync_bin_sizes_ms(w_ms):
        d = int(round(ms / dt))
        if abs(d * dt - ms) > 1e-9 * ms:
            raise TrainError('%s: bin size %d ms is not a whole number of dt = %g ms steps' % (where, ms, dt))
        bins.append(d)
    t = L['targets']
    if isinstance(t, str):
        if abs(w_ms - 300.0) > 1e-9:
            raise TrainError('%s: targets %r need a 300 ms window (this one: %g ms)' % (where, t, w_ms))
        t = SYNC_TARGETS_300MS[t]
    if len(t) != len(bins):
        raise TrainError('%s: %d targets for the %d bin sizes %s of the %g ms window'
                         % (where, len(t), len(bins), sync_bin_sizes_ms(w_ms), w_ms))
    G, N = z.shape[0], z.shape[2]
    plan, members = sync_members(L, G, update)
    M = torch.zeros(plan['n_eff'], N, dtype=DTYPE)
    for k, m in enumerate(members):
        M[k, torch.as_tensor(m)] = 1.0
    y = torch.einsum('btn,bpn->bpt', z[:, a:b], M.view(G, plan['per_trial'], N)).reshape(plan['n_eff'], Tw)
    F = []
    for d in bins:
        nb = Tw // d
        X = y[:, :nb * d].reshape(plan['n_eff'], nb, d).sum(2)
        mean = X.mean(1)
        var = ((X - mean[:, None]) ** 2).mean(1)
        F.append((var / torch.clamp(mean, min=SYNC_EPS)).mean())
    return torch.stack(F), bins, np.asarray(t, np.float64)


def sync_loss(L, z, dt, update):
    F, _, t = sync_fano(L, z, dt, update)
    return L['cost'] * ((torch.as_tensor(t) - F) ** 2).mean()


def read_osi_targets(path):
    """{cell type: (rows kept, mean OSI, mean DSI)}: rows with max_mean_rate(Hz) < 0.5 get OSI = DSI = NaN, rows
    with Ave_Rate(Hz) == 0 are removed, rows with NaN OSI or DSI dropped (space-separated, "quoted values")."""
    with open(path, newline='') as fh:
        rows = [r for r in csv.reader(fh, delimiter=' ', quotechar='"', skipinitialspace=True) if r]
    cols = ('cell_type', 'OSI', 'DSI', 'max_mean_rate(Hz)', 'Ave_Rate(Hz)')
    if not rows or any(c not in rows[0] for c in cols):
        raise TrainError('%s: needs the columns %s' % (path, ', '.join(cols)))
    ic, io, idd, im, ia = (rows[0].index(c) for c in cols)
    acc = {}
    for n, r in enumerate(rows[1:], start=2):
        try:
            osi, dsi, mx, ave = float(r[io]), float(r[idd]), float(r[im]), float(r[ia])
            ct = r[ic]
        except (ValueError, IndexError):
            raise TrainError('%s line %d: unreadable row %s' % (path, n, r))
        if mx < 0.5:
            osi = dsi = math.nan
        if ave == 0 or math.isnan(osi) or math.isnan(dsi):
            continue
        acc.setdefault(ct, []).append((osi, dsi))
    return {k: (len(v), float(np.mean([o for o, _ in v])), float(np.mean([d for _, d in v])))
            for k, v in sorted(acc.items())}


def osi_spec(L, types, phi, core, table, where):
    """Parsed OrientationSelectivity: per region (weight, [(type, neuron indices, OSI*, DSI*)]), phi, directions."""
    aw = float(L.get('annulus_weight', 0.0))
    if aw != 0 and core is None:
        raise TrainError('%s: annulus_weight needs core_radius' % where)
    dirs = L.get('directions')
    if not dirs:
        raise TrainError('%s: directions (a list of degrees) required in the oracle' % where)
    missing = sorted(set(types.tolist()) - set(table))
    if missing:
        raise TrainError('%s: cell types %s have no OSI/DSI target in %s' % (where, missing, L.get('target_file')))
    inside = np.ones(len(types), bool) if core is None else core
    regions = []
    for weight, mask in [(1.0, inside)] + ([(aw, ~core)] if aw != 0 else []):
        groups = [(c, np.nonzero((types == c) & mask)[0], table[c][1], table[c][2])
                  for c in sorted(set(types[mask].tolist()))]
        regions.append((weight, groups))
    decay = float(L.get('ema_decay', 0.95))
    return {'regions': regions, 'phi': np.asarray(phi, np.float64), 'ema_decay': decay,
            'directions': [float(v) for v in dirs]}


def osi_rates(L, z, dt):
    a, b = window_bounds(L, z.shape[1], dt)
    return z[:, a:b].sum(1) / ((b - a) * dt)


def osi_ema_step(e, r, decay):
    """e <- decay e + (1 - decay) mean over the batch of r (numpy, float64)."""
    return decay * np.asarray(e, np.float64) + (1.0 - decay) * np.asarray(r, np.float64).mean(0)


def crowd_osi_dsi(rn, theta, phi):
    """(OSI, DSI) tensors of neurons with normalised rates rn [S, n], directions theta [S], tuning angles phi [n]."""
    delta = torch.as_tensor((np.asarray(theta, np.float64)[:, None] - np.asarray(phi)[None, :]) * math.pi / 180.0)
    D = torch.clamp(rn.mean(1), min=OSI_RATE_FLOOR)
    O = (rn * torch.cos(2.0 * delta)).mean(1)
    Q = (rn * torch.cos(delta)).mean(1)
    return (O / D).mean(), (Q / D).mean()


def osi_loss(L, z, dt, samples, ema):
    """z [S, T, N] of a condition's batch, samples: their global indices, ema: the normaliser after this update."""
    rn = osi_rates(L, z, dt) / torch.as_tensor(np.maximum(ema, OSI_RATE_FLOOR))
    dirs = L['directions']
    theta = np.array([dirs[int(g) % len(dirs)] for g in samples], np.float64)
    val = torch.zeros((), dtype=DTYPE)
    for weight, groups in L['regions']:
        part, m = torch.zeros((), dtype=DTYPE), 0
        for _, idx, osi_t, dsi_t in groups:
            ii = torch.as_tensor(idx)
            osi, dsi = crowd_osi_dsi(rn[:, ii], theta, L['phi'][idx])
            part = part + len(idx) * ((osi - osi_t) ** 2 + (dsi - dsi_t) ** 2)
            m += len(idx)
        if m:
            val = val + weight * part / m
    return L['cost'] * val


def parse(L, model, where):
    """The Synchronization / OrientationSelectivity spec of loss L on the model's recurrent neurons."""
    pops = model.net.rec_pops
    try:
        core = None if L.get('core_radius') is None else core_mask(pops, float(L['core_radius']))
        if L['type'] == 'Synchronization':
            return sync_spec(L, [_text(v) for v in node_attribute(pops, 'pop_name')], core, where)
        if 'target_file' not in L:
            raise TrainError('%s: target_file (the OSI/DSI table) required' % where)
        phi = [float(v) for v in node_attribute(pops, 'tuning_angle')]
        return osi_spec(L, cell_types(pops), phi, core, read_osi_targets(L['target_file']), where)
    except (CellTypeError, ValueError) as e:
        raise TrainError('%s: %s' % (where, e))
