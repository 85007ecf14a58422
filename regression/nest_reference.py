"""Float64 reference of run.dynamics = "nest" (docs/model-nest.md): what NEST 3.8 computes for glif_psc (GLIF1/3)
and iaf_psc_alpha on a grid, written from NEST's sources (models/glif_psc.cpp, models/iaf_psc_alpha.cpp,
libnestutil/iaf_propagator.cpp, nestkernel/nest_time.{h,cpp}) in NEST's own units (mV relative to E_L, pA),
independent of dpointnet's normalized units and fixed-point drive. A network comes from bmtk_network.Network.

  simulate(net, dt, tstop) -> (spikes {(node_id, step)}, V [steps, cells] mV, node_ids)
A spike in step n has the stamp n + 1 (time (n+1) dt); V[n] is V_m after step n (NEST's multimeter at (n+1) dt).
"""
import math
import sys

import numpy as np

IAF_DEFAULTS = {'E_L': -70.0, 'V_th': -55.0, 'V_reset': -70.0, 'C_m': 250.0, 'tau_m': 10.0, 't_ref': 2.0,
                'tau_syn_ex': 2.0, 'tau_syn_in': 2.0, 'I_e': 0.0, 'V_min': -math.inf, 'V_m': -70.0}
GLIF_V_M_DEFAULT = -78.85


def nest_expm1(x):  # libnestutil/numerics.h without HAVE_EXPM1 (NEST 3.8's build never finds it)
    if x == 0:
        return 0.0
    if abs(x) > math.log(2.0):
        return math.exp(x) - 1
    s, term, n = x, x * x / 2, 2
    while abs(term) > abs(s) * sys.float_info.epsilon:
        s += term
        n += 1
        term *= x / n
    return s


def alpha_propagator(tau_s, tau_m, c_m, h):  # IAFPropagatorAlpha(tau_s, tau_m, c_m).evaluate(h)
    h_min = 1e-7 * tau_m * tau_m / abs(tau_m - tau_s) if tau_m != tau_s else math.inf
    beta = tau_s * tau_m / (tau_m - tau_s) if tau_m != tau_s else math.inf
    gamma = beta / c_m
    inv_beta = (tau_m - tau_s) / (tau_s * tau_m)
    e_s = math.exp(-h * (1 / tau_s))
    em1 = nest_expm1(h * inv_beta)
    p32 = gamma * e_s * em1 if math.isfinite(beta) else math.nan
    if not (math.isfinite(p32) and p32 != 0 and abs(p32) >= sys.float_info.min and p32 > 0):
        p32 = h * (1 / c_m) * math.exp(-h * (1 / tau_m))
    p31 = gamma * e_s * (beta * em1 - h) if h > h_min else 0.5 * h * h * (1 / c_m) * math.exp(-h * (1 / tau_m))
    return p31, p32


def tics_per_step(dt):
    return int(math.floor(1000.0 * dt + 0.5))


def refractory_steps(t_ref, dt):  # Time(Time::ms(t_ref)).get_steps()
    tps = tics_per_step(dt)
    return int((int(t_ref * 1000.0 + 0.5) + tps - 1) * (1.0 / tps))


def delay_steps(d, dt):  # Time::delay_ms_to_steps: floor(d * STEPS_PER_MS + 0.5)
    return int(math.floor(d * (1 / (tics_per_step(dt) / 1000.0)) + 0.5))


def stamp_step(t, dt):  # Time::fromstamp, in steps
    tps = tics_per_step(dt)
    n = int(t * 1000.0)
    n -= n % tps
    if n * (1.0 / tps) * (tps / 1000.0) < t:
        n += tps
    return n // tps


def simulate(net, dt, tstop):
    tps = tics_per_step(dt)
    h = (1 / 1000.0) * tps
    T = int(round(tstop / dt))
    N = len(net.cells)
    index = {nid: i for i, (nid, _, _) in enumerate(net.cells)}
    def n_kernels(m, p):
        return {'glif_psc': lambda: len(np.atleast_1d(p['tau_syn'])), 'iaf_psc_alpha': lambda: 2,
                'glif_psc_double_alpha': lambda: 2 * len(np.atleast_1d(p['tau_syn_fast']))}[m]()
    R = max(n_kernels(m, p) for _, m, p in net.cells)
    src = np.tile(np.arange(R), (N, 1))  # the port whose input drives kernel c
    iaf = np.zeros(N, bool)
    P33, P30, th, Vr, U, Ie, Vmin = (np.zeros(N) for _ in range(7))
    RC = np.zeros(N, np.int64)
    P11, P21, P31, P32, PSCI = (np.zeros((N, R)) for _ in range(5))
    A_amp, A_e, A_sc, A_rr = (np.zeros((N, 2)) for _ in range(4))
    for i, (nid, m, p0) in enumerate(net.cells):
        if m == 'iaf_psc_alpha':
            p = dict(IAF_DEFAULTS, **p0)
            iaf[i] = True
            Tau, C = p['tau_m'], p['C_m']
            P33[i] = nest_expm1(-h / Tau)  # iaf: expm1_tau_m (V' = ... + expm1*V + V)
            P30[i] = -Tau / C * nest_expm1(-h / Tau)
            taus, amps = [p['tau_syn_ex'], p['tau_syn_in']], None
            Ie[i], Vmin[i] = p['I_e'], p['V_min'] - p['E_L']
        elif m in ('glif_psc', 'glif_psc_double_alpha'):
            p = dict(p0)
            if p.get('spike_dependent_threshold') or p.get('adapting_threshold'):
                raise ValueError('GLIF2/4/5 are not part of the reference')
            Tau, C = p['C_m'] / p['g'], p['C_m']
            P33[i] = math.exp(-h / Tau)
            P30[i] = 1 / C * (1 - P33[i]) * Tau
            if m == 'glif_psc':
                taus, amps = [float(x) for x in np.atleast_1d(p['tau_syn'])], None
            else:  # glif_psc_double_alpha: fast kernels, then slow ones (amp_slow) fed by the same port
                fast = [float(x) for x in np.atleast_1d(p['tau_syn_fast'])]
                taus = fast + [float(x) for x in np.atleast_1d(p['tau_syn_slow'])]
                amps = [1.0] * len(fast) + [float(x) for x in np.atleast_1d(p['amp_slow'])]
                src[i, len(fast):len(taus)] = np.arange(len(fast))
            if p.get('after_spike_currents', True):
                r = p.get('asc_r', [1.0, 1.0])
                for a, (amp, k) in enumerate(zip(p['asc_amps'], p['asc_decay'])):
                    A_amp[i, a] = amp
                    A_e[i, a] = math.exp(-k * h)
                    A_sc[i, a] = ((1.0 / k) / h) * (1.0 - A_e[i, a])
                    A_rr[i, a] = r[a] * math.exp(-k * p['t_ref'])
            p.setdefault('V_m', GLIF_V_M_DEFAULT)
            Vmin[i] = -math.inf
        else:
            raise ValueError('model %s is not part of the reference' % m)
        th[i] = p['V_th'] - p['E_L']
        Vr[i] = p['V_reset'] - p['E_L']
        U[i] = p['V_m'] - p['E_L']
        RC[i] = refractory_steps(p['t_ref'], dt)
        for c, tau in enumerate(taus):
            P11[i, c] = math.exp(-h / tau)
            P21[i, c] = h * P11[i, c]
            P31[i, c], P32[i, c] = alpha_propagator(tau, Tau, C, h)
            PSCI[i, c] = 1.0 * math.e / tau * (1.0 if amps is None or c < len(amps) // 2 else amps[c])
    # outgoing edges per (population, source) with target index, channel, weight, delay steps
    out = {}
    dmax = 1
    for e in net.edges:
        for s, t, w, d in zip(e['src'], e['trg'], e['weight'], e['delay']):
            i = index[int(t)]
            ch = (0 if w > 0 else 1) if iaf[i] else int(e['syn']['receptor_type']) - 1
            ds = delay_steps(d, dt)
            if ds < 1:
                raise ValueError('delay %g ms is below the resolution (NEST BadDelay)' % d)
            dmax = max(dmax, ds)
            out.setdefault((e['src_pop'], int(s)), []).append((i, ch, w, ds))
    out = {k: tuple(np.array(c) for c in zip(*v)) for k, v in out.items()}
    L = dmax + 1
    W = np.zeros((L, N, R))

    def emit(key, n):
        if key in out:
            i, ch, w, ds = out[key]
            np.add.at(W, ((n + ds.astype(np.int64)) % L, i, ch.astype(np.int64)), w)

    gen_at = {}
    for nid, ts in net.times.items():
        for t in ts:
            gen_at.setdefault(stamp_step(t, dt) - 1, []).append(nid)
    y1, y2, A = np.zeros((N, R)), np.zeros((N, R)), np.zeros((N, 2))
    r = np.zeros(N, np.int64)
    V = np.zeros((T, N))
    spikes = set()
    glif = ~iaf
    for n in range(T):
        op = r == 0
        g = op & glif
        S = (A_sc[:, 0] * A[:, 0]) + (A_sc[:, 1] * A[:, 1])
        A[g] = A[g] * A_e[g]
        Ug = U * P33 + S * P30
        for c in range(R):
            Ug = Ug + (P31[:, c] * y1[:, c] + P32[:, c] * y2[:, c])
        Ui = P30 * (0.0 + Ie)
        for c in range(R):
            Ui = Ui + P31[:, c] * y1[:, c]
            Ui = Ui + P32[:, c] * y2[:, c]
        Ui = Ui + P33 * U
        Ui = Ui + U
        Ui = np.maximum(Ui, Vmin)
        Unew = np.where(g, Ug, np.where(op & iaf, Ui, U))
        z = op & np.where(iaf, Unew >= th, Unew > th)
        r = np.where(op, r, r - 1)
        r[z] = RC[z]
        A[z] = A_amp[z] + A[z] * A_rr[z]
        Unew[z] = Vr[z]
        U = Unew
        y2 = P21 * y1 + P11 * y2
        y1 = y1 * P11
        y1 = y1 + PSCI * np.take_along_axis(W[n % L], src, axis=1)
        W[n % L] = 0
        V[n] = U
        for i in np.nonzero(z)[0]:
            spikes.add((net.cells[i][0], n + 1))
            emit(('v1', net.cells[i][0]), n)
        for nid in gen_at.get(n, []):  # a generator time t acts like a spike emitted in step fromstamp(t) - 1
            emit(('lgn', nid), n)
    E_L = np.array([dict(IAF_DEFAULTS, **p)['E_L'] if m == 'iaf_psc_alpha' else p['E_L'] for _, m, p in net.cells])
    return spikes, V + E_L, [c[0] for c in net.cells]
