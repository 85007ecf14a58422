"""Forward simulation of MODEL.md sections 2-4 (float64, batch of B samples).

Written plainly from the specification: build the normalized network, then run the
eight steps of MODEL.md section 4 for every time step.
"""
import math
import warnings

import numpy as np

from . import sonata
from .config import ConfigError, RunParams
from .inputs import build_inputs


class ModelError(Exception):
    pass


IAF_DEFAULTS = {'E_L': -70.0, 'V_th': -55.0, 'V_reset': -70.0, 'C_m': 250.0, 'tau_m': 10.0,
                't_ref': 2.0, 'tau_syn_ex': 2.0, 'tau_syn_in': 2.0, 'I_e': 0.0}
GLIF_REQUIRED = ('V_th', 'E_L', 'V_reset', 'g', 'C_m', 't_ref', 'tau_syn')


def t_ref_steps_of(t_ref, dt):
    return max(1, int(math.ceil(t_ref / dt - 1e-9)))


def delay_steps_of(delay, dt):
    return int(round(delay / dt))          # Python round(): half to even


def neuron_params(template, params, where, dt, nest=False):
    """Return dict of raw physical parameters for one neuron:
    E_L, V_th, V_reset, g, C_m, t_ref, tau_syn (list), asc_amps (list), asc_decay (list), kind."""
    if template is None:
        raise ModelError('%s: node has no model_template' % where)
    model = template.split(':', 1)[1] if ':' in template else template
    p = dict(params or {})
    if model in ('glif_psc', 'glif_psc_double_alpha'):
        if p.get('type') == 'GLIF':
            raise ModelError('%s: raw Allen "type": "GLIF" configs are not supported by the oracle' % where)
        required = GLIF_REQUIRED if model == 'glif_psc' else (
            tuple(k for k in GLIF_REQUIRED if k != 'tau_syn') + ('tau_syn_fast', 'tau_syn_slow', 'amp_slow'))
        for k in required:
            if k not in p:
                raise ModelError('%s: %s parameter %s missing' % (where, model, k))
        if p.get('spike_dependent_threshold', False) or p.get('adapting_threshold', False):
            raise ModelError('%s: glif_psc with spike_dependent_threshold/adapting_threshold '
                             '(GLIF2/4/5) is not supported' % where)
        use_asc = p.get('after_spike_currents', True)
        if model == 'glif_psc':
            tau_syn = [float(x) for x in np.atleast_1d(p['tau_syn'])]
            slow = []   # (tau, amplitude) of each port's slow alpha kernel
        else:
            # NEST glif_psc_double_alpha: port k has a fast alpha kernel (tau_syn_fast[k], amplitude 1) and a
            # slow one (tau_syn_slow[k], amplitude amp_slow[k]), both fed by the port's input
            tau_syn = [float(x) for x in np.atleast_1d(p['tau_syn_fast'])]
            ts, am = np.atleast_1d(p['tau_syn_slow']), np.atleast_1d(p['amp_slow'])
            if len(ts) != len(tau_syn) or len(am) != len(tau_syn):
                raise ModelError('%s: tau_syn_fast, tau_syn_slow and amp_slow differ in length' % where)
            slow = [(float(a), float(b)) for a, b in zip(ts, am)]
        if use_asc:
            amps = [float(x) for x in np.atleast_1d(p.get('asc_amps', []))]
            decay = [float(x) for x in np.atleast_1d(p.get('asc_decay', []))]
            if len(amps) != len(decay):
                raise ModelError('%s: asc_amps and asc_decay differ in length' % where)
        else:
            amps, decay = [], []
        out = dict(kind='glif_psc', E_L=float(p['E_L']), V_th=float(p['V_th']), V_reset=float(p['V_reset']),
                   g=float(p['g']), C_m=float(p['C_m']), t_ref=float(p['t_ref']), tau_syn=tau_syn,
                   asc_amps=amps, asc_decay=decay, slow=slow, V_m=p.get('V_m'),
                   asc_r=[float(x) for x in np.atleast_1d(p.get('asc_r', [1.0] * len(amps)))])
    elif model == 'iaf_psc_alpha':
        q = dict(IAF_DEFAULTS)
        q.update(p)
        if float(q['I_e']) != 0.0 and not nest:
            raise ModelError('%s: iaf_psc_alpha with non-zero I_e is not supported' % where)
        C_m, tau_m = float(q['C_m']), float(q['tau_m'])
        out = dict(kind='iaf_psc_alpha', E_L=float(q['E_L']), V_th=float(q['V_th']),
                   V_reset=float(q['V_reset']), g=C_m / tau_m, C_m=C_m, t_ref=float(q['t_ref']),
                   tau_syn=[float(q['tau_syn_ex']), float(q['tau_syn_in'])], asc_amps=[], asc_decay=[], slow=[],
                   tau_m=tau_m, I_e=float(q['I_e']), V_m=q.get('V_m'), V_min=q.get('V_min'))
    else:
        raise ModelError('%s: unsupported model_template %r' % (where, template))
    if not (out['V_th'] > out['E_L']):
        raise ModelError('%s: V_th (%g) <= E_L (%g)' % (where, out['V_th'], out['E_L']))
    return out


class Network:
    """Normalized network.

    Recurrent neurons: global index 0..N-1 (populations in config order, file order inside).
    Virtual nodes: global index N..N+J-1 in the activity space.
    Edges (recurrent and input, in config/file order): src (activity index), tgt (0..N-1),
    ch (channel), w (normalized weight), d (delay steps)."""

    def __init__(self, conf, dt, dynamics='discrete'):
        self.dt = dt
        self.nest = dynamics == 'nest'  # run.dynamics (docs/model-nest.md): constants from nest_constants.py
        comps = conf.get('components') or {}
        nets = conf.get('networks') or {}
        rec_pops, virt_pops = [], []
        for entry in nets.get('nodes') or []:
            for pop in sonata.load_nodes(entry['nodes_file'], entry['node_types_file'], comps):
                (virt_pops if pop.is_virtual else rec_pops).append(pop)
        names = [p.name for p in rec_pops + virt_pops]
        if len(set(names)) != len(names):
            raise ModelError('duplicate node population names %s' % names)
        self.rec_pops, self.virt_pops = rec_pops, virt_pops
        self.rec_offset, self.virt_offset = {}, {}
        n = 0
        for p in rec_pops:
            self.rec_offset[p.name] = n
            n += len(p.node_ids)
        self.N = n
        j = 0
        for p in virt_pops:
            self.virt_offset[p.name] = j
            j += len(p.node_ids)
        self.J = j
        self.pop_by_name = {p.name: p for p in rec_pops + virt_pops}

        # ---- neuron parameters (MODEL.md section 2)
        raw = []
        for p in rec_pops:
            for k in range(len(p.node_ids)):
                where = '%s (population %s node %d, node type %d)' % (
                    p.params_file[k], p.name, p.node_ids[k], p.node_type_id[k])
                raw.append(neuron_params(p.model_template[k], p.params[k], where, dt, self.nest))
        self.raw = raw
        N = self.N
        # channels of neuron i: its receptor ports' kernels in port order, then the slow kernels of a
        # double-alpha neuron in port order; drive_src[i, c] is the port channel whose input drives channel c
        self.R = max([len(r['tau_syn']) + len(r['slow']) for r in raw] + [1])
        self.A = max([len(r['asc_amps']) for r in raw] + [1])
        R, A = self.R, self.A
        self.kind = [r['kind'] for r in raw]
        self.n_chan = np.array([len(r['tau_syn']) for r in raw], np.int64)   # receptor ports
        self.drive_src = np.tile(np.arange(R, dtype=np.int64), (N, 1))
        for i, r in enumerate(raw):
            for k in range(len(r['slow'])):
                self.drive_src[i, len(r['tau_syn']) + k] = k
        self.vs = np.array([r['V_th'] - r['E_L'] for r in raw])
        g = np.array([r['g'] for r in raw])
        C_m = np.array([r['C_m'] for r in raw])
        tau_m = C_m / g
        self.decay = np.exp(-dt / tau_m)
        self.current_factor = (1.0 - self.decay) / g
        self.v_reset_n = np.array([(r['V_reset'] - r['E_L']) / (r['V_th'] - r['E_L']) for r in raw])
        self.t_ref_steps = np.array([t_ref_steps_of(r['t_ref'], dt) for r in raw], np.int64)
        self.syn_decay = np.zeros((N, R))
        self.psc_initial = np.zeros((N, R))
        for i, r in enumerate(raw):
            for c, tau in enumerate(r['tau_syn']):
                self.syn_decay[i, c] = math.exp(-dt / tau)
                self.psc_initial[i, c] = math.e / tau
            for k, (tau, amp) in enumerate(r['slow']):
                c = len(r['tau_syn']) + k
                self.syn_decay[i, c] = math.exp(-dt / tau)
                self.psc_initial[i, c] = amp * math.e / tau
        self.dt_syn_decay = dt * self.syn_decay
        self.asc_amps_n = np.zeros((N, A))
        self.asc_decay_f = np.zeros((N, A))
        for i, r in enumerate(raw):
            for a, (amp, k) in enumerate(zip(r['asc_amps'], r['asc_decay'])):
                self.asc_amps_n[i, a] = amp / self.vs[i]
                self.asc_decay_f[i, a] = math.exp(-dt * k)
        if self.nest:
            from .nest_constants import nest_constants
            nest_constants(self, raw, dt)

        # ---- edges
        srcs, tgts, chs, ws, ds = [], [], [], [], []
        self.edge_counts = {}
        for entry in nets.get('edges') or []:
            if entry.get('enabled', True) is False:
                continue
            for ep in sonata.load_edges(entry['edges_file'], entry['edge_types_file'], comps):
                self.edge_counts[ep.name] = len(ep.source)
                where = '%s population %s' % (entry['edges_file'], ep.name)
                if ep.target_population in self.virt_offset:
                    raise ModelError('%s: edges into virtual population %s' % (where, ep.target_population))
                if ep.target_population not in self.rec_offset:
                    raise ModelError('%s: unknown target population %s' % (where, ep.target_population))
                if ep.source_population in self.rec_offset:
                    sp = self.pop_by_name[ep.source_population]
                    src = self.rec_offset[sp.name] + sp.index_of(ep.source)
                elif ep.source_population in self.virt_offset:
                    sp = self.pop_by_name[ep.source_population]
                    src = self.N + self.virt_offset[sp.name] + sp.index_of(ep.source)
                else:
                    raise ModelError('%s: unknown source population %s' % (where, ep.source_population))
                tp = self.pop_by_name[ep.target_population]
                tgt = self.rec_offset[tp.name] + tp.index_of(ep.target)
                E = len(tgt)
                ch = np.empty(E, np.int64)
                d = np.empty(E, np.int64)
                for e in range(E):
                    i = tgt[e]
                    rcp = int(ep.receptor[e])
                    if self.kind[i] == 'glif_psc':
                        if not (1 <= rcp <= self.n_chan[i]):
                            raise ModelError('%s: edge %d receptor_type %d outside 1..%d of its glif_psc target'
                                             % (where, e, rcp, self.n_chan[i]))
                        ch[e] = rcp - 1
                    else:
                        if rcp != 0:
                            raise ModelError('%s: edge %d receptor_type %d into iaf_psc_alpha (must be 0)'
                                             % (where, e, rcp))
                        ch[e] = (0 if ep.weight[e] > 0 else 1) if self.nest else (0 if ep.weight[e] >= 0 else 1)
                    d[e] = self.delay_steps(ep.delay[e], dt) if self.nest else delay_steps_of(ep.delay[e], dt)
                    if d[e] < 1:
                        raise ModelError('%s: edge %d delay %g ms rounds to %d steps at dt=%g'
                                         % (where, e, ep.delay[e], d[e], dt))
                srcs.append(src)
                tgts.append(tgt)
                chs.append(ch)
                ws.append(ep.weight / self.vs[tgt])
                ds.append(d)
        cat = lambda xs, dt_: np.concatenate(xs) if xs else np.zeros(0, dt_)
        self.e_src = cat(srcs, np.int64)
        self.e_tgt = cat(tgts, np.int64)
        self.e_ch = cat(chs, np.int64)
        self.e_w = cat(ws, np.float64)
        self.e_d = cat(ds, np.int64)
        self.D = int(self.e_d.max()) if len(self.e_d) else 1

    def neuron_population(self, i):
        for p in self.rec_pops:
            o = self.rec_offset[p.name]
            if o <= i < o + len(p.node_ids):
                return p, p.node_ids[i - o]
        raise IndexError(i)


def simulate(net, inputs, n_steps, batch, first_sample=0, record_v=False, record=None):
    """Run MODEL.md section 4.

    inputs: list of input sources (see inputs.py) with .counts(samples, k0, k1) -> [B, K, J_pop]
    and .virt_offset. Returns dict with 'z' (bool [B, T, N]) and optionally 'v' ([B, T, N]);
    record: optional iterable of state names ('psc', 'psc_rise', 'asc', 'u', 'r') to trace."""
    N, R, A, B, T = net.N, net.R, net.A, batch, n_steps
    NJ = net.N + net.J
    L = net.D + 1
    samples = np.arange(first_sample, first_sample + B, dtype=np.int64)

    # activity ring: row slot*NJ + node, column sample
    H = np.zeros((L * NJ, B))
    # state
    v = np.zeros((B, N))
    r = np.zeros((B, N), np.int64)
    asc = np.zeros((B, N, A))
    psc_rise = np.zeros((B, N, R))
    psc = np.zeros((B, N, R))
    z_prev = np.zeros((B, N))

    zs = np.zeros((B, T, N), dtype=bool)
    vs = np.zeros((B, T, N)) if record_v else None
    traces = {k: [] for k in (record or ())}

    flat_tgt = net.e_tgt * R + net.e_ch          # index inside one sample's [N*R]
    CH = 512
    xbuf, xk0 = None, -1
    for t in range(T):
        if t >= xk0 + CH or xbuf is None:   # next chunk of input counts [B, K, J]
            xk0 = t
            k1 = min(T, t + CH)
            xbuf = np.zeros((B, k1 - t, net.J))
            for src in inputs:
                c = src.counts(samples, t, k1)
                xbuf[:, :, src.virt_offset:src.virt_offset + c.shape[2]] += c

        # 1. synaptic drive per channel, from activity of steps t - d (zero for t - d < 0)
        rows = ((t - net.e_d) % L) * NJ + net.e_src
        act = H[rows]                                   # [E, B]
        e_idx, b_idx = np.nonzero(act)
        contrib = net.e_w[e_idx] * act[e_idx, b_idx]
        u = np.bincount(b_idx * (N * R) + flat_tgt[e_idx], weights=contrib,
                        minlength=B * N * R).reshape(B, N, R)
        u = u[:, np.arange(N)[:, None], net.drive_src]   # slow kernels take their port's input
        # 2. alpha PSC
        new_psc_rise = net.syn_decay * psc_rise + net.psc_initial * u
        new_psc = net.syn_decay * psc + net.dt_syn_decay * psc_rise
        # 3. after-spike currents
        new_asc = net.asc_decay_f * asc + z_prev[:, :, None] * net.asc_amps_n
        # 4. total current from the OLD psc and asc
        c_psc = psc[:, :, 0]
        for k in range(1, R):
            c_psc = c_psc + psc[:, :, k]
        c_asc = asc[:, :, 0]
        for k in range(1, A):
            c_asc = c_asc + asc[:, :, k]
        cur = c_psc + c_asc
        # 5. membrane (soft reset)
        new_v = net.decay * v + net.current_factor * cur - z_prev * (1.0 - net.v_reset_n)
        # 6. refractory counter
        new_r = np.maximum(r + z_prev.astype(np.int64) * net.t_ref_steps - 1, 0)
        # 7. spike (strict) unless refractory
        z = (new_v > 1.0) & (new_r == 0)

        psc_rise, psc, asc, v, r = new_psc_rise, new_psc, new_asc, new_v, new_r
        z_prev = z.astype(np.float64)
        # 8. shift into history: write z and the inputs of step t into ring slot t % L
        base = (t % L) * NJ
        H[base:base + N] = z_prev.T
        H[base + N:base + NJ] = xbuf[:, t - xk0, :].T
        zs[:, t] = z
        if record_v:
            vs[:, t] = v
        for k in traces:
            traces[k].append({'psc': psc, 'psc_rise': psc_rise, 'asc': asc, 'u': u, 'r': r,
                              'v': v}[k].copy())
    out = {'z': zs}
    if record_v:
        out['v'] = vs
    for k, lst in traces.items():
        out[k] = np.stack(lst, axis=1)   # [B, T, ...]
    return out


def load_model(conf, run=None):
    run = run or RunParams(conf)
    net = Network(conf, run.dt, run.dynamics)
    inputs = build_inputs(conf, net, run)
    return net, inputs, run


def spikes_by_population(net, z, dt):
    """z: bool [T, N] of one sample -> list of (pop name, node_ids int64, times ms)."""
    out = []
    ks, idx = np.nonzero(z)
    for p in net.rec_pops:
        o = net.rec_offset[p.name]
        m = (idx >= o) & (idx < o + len(p.node_ids))
        out.append((p.name, p.node_ids[idx[m] - o], (ks[m] + 1) * dt))
    return out
