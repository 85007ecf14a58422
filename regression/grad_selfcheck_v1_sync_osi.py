"""Training-oracle self-checks of Synchronization and OrientationSelectivity (oracle/v1_sync_osi.py): the sampling
plan, bin sizes, shuffle keys, Fano factors of Bernoulli spikes, the loss against a loop-by-loop numpy version,
the OSI/DSI targets, cosine-tuned crowds, the EMA normaliser, refusals."""
import math
import os

import numpy as np
import torch
from oracle.train import TrainError
from oracle.v1_sync_osi import (SYNC_PURPOSE, sync_plan, sync_bin_sizes_ms, uniform01, sync_shuffled_copy,
                                sync_spec, sync_fano, sync_loss, sync_members, read_osi_targets, osi_spec,
                                osi_loss, osi_ema_step, crowd_osi_dsi)
from grad_selfcheck_common import HERE, TMP, check
import v1_loss_fixture as fx

SPEC_COUNTS = [79, 38, 92, 98, 15, 30, 73, 60, 69, 44]
BINS_300 = [1, 1, 2, 3, 4, 6, 9, 13, 18, 26, 38, 55, 78, 113]
EVOKED = [1.01881, 1.03436, 1.05102, 1.08038, 1.11356, 1.15149, 1.20246, 1.23919, 1.20588, 1.19266, 1.15404,
          1.14281, 1.09735, 0.86053]
SPONT = [0.99255, 0.98534, 0.99029, 0.98106, 0.97466, 0.97277, 0.95597, 0.97380, 0.90051, 0.92299, 0.88363,
         0.81033, 0.67958, 0.47098]
# V1-PAPER.md section 3.5: type -> (n, OSI*, DSI*)
OSI_TABLE = {'L1 Htr3a': (7, 0.1992, 0.1300), 'L2/3 Exc': (163, 0.3609, 0.2448), 'L2/3 PV': (74, 0.1576, 0.0992),
             'L2/3 SST': (3, 0.1112, 0.0626), 'L2/3 VIP': (5, 0.1491, 0.1232), 'L4 Exc': (297, 0.2671, 0.1911),
             'L4 PV': (98, 0.1453, 0.0951), 'L4 SST': (2, 0.1042, 0.0443), 'L4 VIP': (1, 0.0704, 0.1004),
             'L5 Exc': (466, 0.2924, 0.1234), 'L5 PV': (99, 0.1527, 0.0732), 'L5 SST': (2, 0.1736, 0.0565),
             'L5 VIP': (2, 0.1316, 0.0437), 'L6 Exc': (182, 0.4853, 0.1136), 'L6 PV': (56, 0.1857, 0.0664),
             'L6 SST': (1, 0.0358, 0.0573), 'L6 VIP': (1, 0.1653, 0.0550)}


def philox_scalar(ctr, key):
    """Philox4x32-10 on Python integers (Salmon et al. 2011)."""
    M = 0xFFFFFFFF
    c, (k0, k1) = list(ctr), key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M, (k1 + 0xBB67AE85) & M
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M, (p0 >> 32) ^ c[3] ^ k1, p0 & M]
    return c


def spec(neurons, **kw):
    """Parsed Synchronization over `neurons` (a count of excitatory neurons or a pop_name list)."""
    L = dict({'type': 'Synchronization', 'name': 'S', 'cost': 1.5}, **kw)
    L.update(sync_spec(L, ['e4x'] * neurons if isinstance(neurons, int) else neurons, None, 'S'))
    return L


def sync_plan_and_bins():
    plans = [sync_plan(1000, 500, G, 42) for G in (1, 2, 4, 5, 10)]
    check('sync plan: spec fixture (seed 42, n_samples 500): c_0..9, sum 34681, max 157, for G = 1, 2, 4, 5, 10',
          all(p['counts'][:10].tolist() == SPEC_COUNTS and int(p['counts'].sum()) == 34681
              and int(p['counts'].max()) == 157 and p['n_eff'] == 500 for p in plans), str(plans[0]['counts'][:10]))
    p = sync_plan(100, 10, 2, 42)
    check('sync plan: |P| 100, n_samples 10, G 2: per_trial 5, offsets packed into 9 copies',
          p['per_trial'] == 5 and p['offsets'].tolist() == [0, 100, 200, 300, 400, 415, 500, 600, 700, 800]
          and p['n_copies'] == 9, str(p['offsets']))
    p = sync_plan(20, 7, 3, 42)
    check('sync plan: n_eff = G ceil(n/G) (7, 3 -> 9), counts clipped to [15, |P|]',
          p['n_eff'] == 9 and p['counts'].min() >= 15 and p['counts'].max() == 20, str(p['counts']))
    check('bin sizes: 300 ms window', sync_bin_sizes_ms(300.0) == BINS_300, str(sync_bin_sizes_ms(300.0)))
    check('bin sizes: 40 ms window (b < 0.02 s)', sync_bin_sizes_ms(40.0) == [1, 1, 2, 3, 4, 6, 9, 13, 18])
    L = spec(20, targets=[1.0] * 9, pre_ms=1.0, post_ms=1.0)
    F, bins, _ = sync_fano(L, torch.zeros(2, 84, 20), 0.5, 0)
    check('bin sizes in steps (dt 0.5 ms, 41 ms window): 2 x ms', bins == [2, 2, 4, 6, 8, 12, 18, 26, 36], str(bins))
    for z, dt, kw, msg in ((torch.zeros(1, 20, 20), 2.0, {}, 'whole number'),
                           (torch.zeros(1, 40, 20), 1.0, {'targets': 'evoked'}, '300 ms window'),
                           (torch.zeros(1, 40, 20), 1.0, {'targets': [1.0] * 8}, '9 bin sizes')):
        try:
            sync_fano(spec(20, **dict({'targets': [1.0] * 9}, **kw)), z, dt, 0)
            check('refused: ' + msg, False)
        except TrainError as e:
            check('refused: ' + msg, msg in str(e), str(e))
    for pool, kw, msg in ((['e4x'] * 14 + ['i4Pvalb'] * 5, {}, 'needs >= 15'), (20, {'pool': 'inh'}, 'pool'),
                          (20, {'targets': 'evokd'}, 'targets')):
        try:
            spec(pool, **dict({'targets': [1.0]}, **kw))
            check('refused: ' + msg, False)
        except TrainError as e:
            check('refused: ' + msg, msg in str(e), str(e))
    pn = ['e4x', 'i4Pvalb'] * 30
    core = np.arange(60) % 3 != 0
    L = sync_spec({'targets': [1.0], 'pool': 'excitatory'}, pn, core, 'S')
    La = sync_spec({'targets': [1.0], 'pool': 'all'}, pn, core, 'S')
    check('pool: excitatory (pop_name starts with e) and all, intersected with the core, ascending',
          L['pool'].tolist() == [n for n in range(60) if n % 2 == 0 and n % 3] and
          La['pool'].tolist() == [n for n in range(60) if n % 3])


def sync_shuffle_keys():
    key = (42, SYNC_PURPOSE)
    kat = philox_scalar((0, 0, 0, 0), (0, 0))[0] == 0x6627e8d5
    want = (philox_scalar((3, 1, 2, 0), key)[0] + 0.5) * 2.0 ** -32
    got = float(uniform01(42, SYNC_PURPOSE, 3, 1, 2))
    check('shuffle key uniform01(42, fnv1a32("synchronization") = %#x, i 3, copy 1, update 2) = hand-computed '
          'Philox (%.17g)' % (SYNC_PURPOSE, want), kat and got == want, '%r %r' % (got, want))
    pool = np.arange(5, 45)
    keys = [(philox_scalar((i, 2, 1, 0), key)[0] + 0.5) * 2.0 ** -32 for i in range(40)]
    c = sync_shuffled_copy(pool, 42, 2, 1)
    check('shuffled copy 2 at update 1 = P[stable argsort(keys)]; other copies and updates differ',
          c.tolist() == pool[np.argsort(keys, kind='stable')].tolist()
          and c.tolist() != sync_shuffled_copy(pool, 42, 2, 0).tolist()
          and c.tolist() != sync_shuffled_copy(pool, 42, 1, 1).tolist())
    L = spec(40, targets=[1.0], n_samples=10, seed=42)
    plan, members = sync_members(L, 2, 3)
    cat = np.concatenate([sync_shuffled_copy(L['pool'], 42, e, 3) for e in range(plan['n_copies'])])
    check('pool k = positions offsets_k .. + c_k - 1 of the concatenated copies, distinct neurons',
          all(m.tolist() == cat[o:o + n].tolist() and len(set(m.tolist())) == n
              for m, o, n in zip(members, plan['offsets'], plan['counts'])))


def sync_reference(z, L, dt, update):
    """Loop-by-loop numpy version of section 3.3 with dpointnet's shuffles (scalar Philox)."""
    G, T, N = z.shape
    a, b = int(round(L.get('pre_ms', 0) / dt)), T - int(round(L.get('post_ms', 0) / dt))
    P = L['pool']
    p = sync_plan(len(P), L['n_samples'], G, L['seed'])
    cat = []
    for e in range(p['n_copies']):
        keys = [(philox_scalar((i, e, update, 0), (L['seed'], SYNC_PURPOSE))[0] + 0.5) * 2.0 ** -32
                for i in range(len(P))]
        cat += [P[j] for j in sorted(range(len(P)), key=lambda j: (keys[j], j))]
    bins = [int(round(ms / dt)) for ms in sync_bin_sizes_ms((b - a) * dt)]
    F = np.zeros(len(bins))
    for k in range(p['n_eff']):
        y = np.zeros(b - a)
        for n in cat[p['offsets'][k]:p['offsets'][k] + p['counts'][k]]:
            y += z[k // p['per_trial'], a:b, n]
        for j, d in enumerate(bins):
            X = np.array([y[m * d:(m + 1) * d].sum() for m in range((b - a) // d)])
            F[j] += X.var() / max(X.mean(), 1e-7) / p['n_eff']
    t = EVOKED if L['targets'] == 'evoked' else L['targets']
    return L['cost'] * np.mean((np.asarray(t) - F) ** 2), F


def sync_values():
    p, G, T, N = 0.05, 8, 300, 300
    z = torch.bernoulli(torch.full((G, T, N), p), generator=torch.Generator().manual_seed(3))
    L = spec(N, targets='evoked', n_samples=800)
    F, bins, t = sync_fano(L, z, 1.0, 0)
    exp = np.array([(1 - p) * (1 - 1 / (T // d)) for d in bins])   # E[population variance] / mean
    err = np.abs(F.numpy() - exp)[np.array(bins) <= 9]
    check('Bernoulli(0.05) spikes, 800 pools: F(d) = (1 - p)(1 - 1/n_bins) within 0.03 for d <= 9 ms '
          '(F(1 ms) %.4f)' % float(F[0]), err.max() < 0.03, str(np.round(F.numpy() - exp, 3)))
    val = float(sync_loss(L, z, 1.0, 0))
    check('loss = cost mean_d (F*_d - F_d)^2 against the evoked table', t.tolist() == EVOKED
          and abs(val - 1.5 * np.mean((np.array(EVOKED) - F.numpy()) ** 2)) < 1e-15, '%r' % val)
    Ls = spec(N, targets='spontaneous')
    check('no spike: F = 0 (mean floor 1e-7), loss = cost mean(F*^2) of the spontaneous table',
          abs(float(sync_loss(Ls, torch.zeros(2, 300, N), 1.0, 0)) - 1.5 * np.mean(np.square(SPONT))) < 1e-15)
    z2 = torch.bernoulli(torch.full((3, 48, 40), 0.15), generator=torch.Generator().manual_seed(4))
    L2 = spec(['e5IT'] * 40, targets=[0.5 + 0.1 * k for k in range(9)], n_samples=30, seed=9, pre_ms=3.0,
              post_ms=5.0)
    ref, Fr = sync_reference(z2.numpy(), L2, 1.0, 4)
    got = float(sync_loss(L2, z2, 1.0, 4))
    check('Synchronization == loop-by-loop numpy (window 3..43, G 3, 30 pools, update 4)',
          abs(got - ref) < 1e-13 * ref and abs(float(sync_loss(L2, z2, 1.0, 5)) - ref) > 1e-6 * ref,
          '%r %r' % (got, ref))
    zc = torch.rand(2, 30, 20, dtype=torch.float64, generator=torch.Generator().manual_seed(5), requires_grad=True)
    L3 = spec(20, targets=[1.1 + 0.1 * k for k in range(8)], n_samples=4)
    sync_loss(L3, zc, 1.0, 0).backward()
    worst = 0.0
    for idx in [(0, 0, 0), (1, 7, 3), (0, 29, 19), (1, 15, 11), (0, 12, 5)]:
        zp, zm = zc.detach().clone(), zc.detach().clone()
        zp[idx] += 1e-6
        zm[idx] -= 1e-6
        fd = (float(sync_loss(L3, zp, 1.0, 0)) - float(sync_loss(L3, zm, 1.0, 0))) / 2e-6
        worst = max(worst, abs(fd - float(zc.grad[idx])) / max(abs(fd), 1e-12))
    check('Synchronization gradient in z == central differences', worst < 1e-6, '%.2e' % worst)


def osi_targets():
    t = read_osi_targets(os.path.join(os.path.dirname(HERE), 'input', 'neuropixels', 'OSI_DSI_neuropixels_v4.csv'))
    bad = [(c, t.get(c), v) for c, v in OSI_TABLE.items()
           if c not in t or t[c][0] != v[0] or abs(t[c][1] - v[1]) > 5e-5 or abs(t[c][2] - v[2]) > 5e-5]
    check('OSI/DSI targets of the v4 table == V1-PAPER.md 3.5 (17 types, n, OSI*, DSI*)', not bad and len(t) == 17,
          str(bad))
    p = os.path.join(TMP, 'osi.csv')
    fx.write_osi_table(p)
    t = read_osi_targets(p)
    check('filters: max_mean_rate < 0.5, Ave_Rate 0, NaN DSI rows dropped (5 of 8 rows kept per type)',
          all(n == 5 for n, _, _ in t.values()) and len(t) == len(fx.OBSERVED) + 1, str(t))


def osi_values():
    phi = np.arange(16) * 22.5 + 7.0
    theta = np.array([0.0, 45.0, 200.0])
    d = (theta[:, None] - phi[None, :]) * math.pi / 180.0
    o1 = [float(v) for v in crowd_osi_dsi(torch.as_tensor(1 + np.cos(2 * d)), theta, phi)]
    o2 = [float(v) for v in crowd_osi_dsi(torch.as_tensor(3 * (1 + np.cos(d))), theta, phi)]
    check('cosine-tuned crowd: r ~ 1 + cos 2Delta gives OSI 1/2, DSI 0; r ~ 1 + cos Delta gives OSI 0, DSI 1/2',
          np.allclose(o1, [0.5, 0.0], atol=1e-14) and np.allclose(o2, [0.0, 0.5], atol=1e-14), '%s %s' % (o1, o2))
    # 8 neurons of one type at 45 degree steps, directions 0 and 90: 2 (1 + cos 2Delta) spikes in the window
    phi8 = np.arange(8) * 45.0
    z = torch.zeros(2, 6, 8)
    for b, th in enumerate((0.0, 90.0)):
        c = np.rint(2 * (1 + np.cos(2 * (th - phi8) * math.pi / 180))).astype(int)
        for n in range(8):
            z[b, 1:1 + c[n], n] = 1.0
    types = np.array(['L4 Exc'] * 8, dtype=object)
    L = dict({'cost': 3.0, 'directions': [0.0, 90.0]},
             **osi_spec({'directions': [0.0, 90.0]}, types, phi8, None, {'L4 Exc': (1, 0.3, 0.1)}, 'O'))
    val = float(osi_loss(L, z, 1.0, [0, 1], np.full(8, 0.01)))
    check('OrientationSelectivity from spikes (OSI 1/2, DSI 0): cost ((1/2 - 0.3)^2 + 0.1^2)',
          abs(val - 3.0 * 0.05) < 1e-14, '%r' % val)
    # numpy reference with core + annulus, two types, a normaliser partly below 0.0005, directions cycled
    rng = np.random.default_rng(6)
    N, S, T = 10, 3, 9
    z = torch.as_tensor((rng.uniform(size=(S, T, N)) < 0.3).astype(np.float64))
    types = np.array(['L2/3 Exc'] * 6 + ['L5 PV'] * 4, dtype=object)
    core = np.array([1, 1, 0, 1, 0, 1, 1, 1, 0, 1], bool)
    phi = rng.uniform(0, 360, N)
    tab = {'L2/3 Exc': (1, 0.3, 0.2), 'L5 PV': (1, 0.15, 0.05)}
    Lk = {'directions': [10.0, 100.0], 'annulus_weight': 0.25, 'pre_ms': 1.0, 'post_ms': 2.0}
    L = dict(Lk, cost=2.0, **osi_spec(Lk, types, phi, core, tab, 'O'))
    e = np.where(np.arange(N) % 3 == 0, 1e-4, 0.004)
    got = float(osi_loss(L, z, 0.5, [5, 6, 7], e))
    r = z.numpy()[:, 2:T - 4].sum(1) / (3 * 0.5) / np.maximum(e, 5e-4)
    th = np.array([100.0, 10.0, 100.0])
    ref = 0.0
    for w, mask in ((1.0, core), (0.25, ~core)):
        part = m = 0
        for c in tab:
            idx = np.nonzero((types == c) & mask)[0]
            dd = (th[:, None] - phi[idx][None, :]) * math.pi / 180
            D = np.maximum(r[:, idx].mean(1), 5e-4)
            osi = np.mean((r[:, idx] * np.cos(2 * dd)).mean(1) / D)
            dsi = np.mean((r[:, idx] * np.cos(dd)).mean(1) / D)
            part += len(idx) * ((osi - tab[c][1]) ** 2 + (dsi - tab[c][2]) ** 2)
            m += len(idx)
        ref += w * part / m
    check('OrientationSelectivity == numpy (core + 0.25 annulus, normaliser floor, directions by g mod 2)',
          abs(got - 2.0 * ref) < 1e-13 * ref, '%r %r' % (got, 2 * ref))
    e0, rr = np.full(3, 0.003), np.array([[0.01, 0.0, 0.02], [0.03, 0.0, 0.0]])
    check('EMA: e <- decay e + (1 - decay) mean_b r', np.allclose(osi_ema_step(e0, rr, 0.95),
                                                                  [0.00385, 0.00285, 0.00335], rtol=1e-14, atol=0))
    for kw, tb, msg in (({'directions': [0.0]}, {}, 'no OSI/DSI target'), ({}, tab, 'directions'),
                        ({'directions': [0.0], 'annulus_weight': 0.1}, tab, 'needs core_radius')):
        try:
            osi_spec(kw, types, phi, None, tb, 'O')
            check('refused: ' + msg, False)
        except TrainError as ex:
            check('refused: ' + msg, msg in str(ex), str(ex))


TESTS = [sync_plan_and_bins, sync_shuffle_keys, sync_values, osi_targets, osi_values]
