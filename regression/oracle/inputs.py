"""Input sources: spike files, Bernoulli rates, Poisson background (MODEL.md section 6 and the
dpointnet input conventions). Each source gives counts x[b, k, j] for one virtual population."""
import math
import warnings

import numpy as np

from . import sonata
from .philox import philox4x32_10, uniform_from_word, fnv1a32


class InputError(Exception):
    pass


def stamp_step(t, dt):
    """Step of a spike at time t (ms): k = ceil(t/dt - 1e-9) - 1 (vectorised)."""
    t = np.asarray(t, dtype=np.float64)
    return (np.ceil(t / dt - 1e-9) - 1).astype(np.int64)


def uniforms(seed, purpose, samples, k0, k1, node_ids):
    """u[b, k, j] for global samples, steps k0..k1-1, node ids: Philox4x32-10 with
    key = (seed, purpose), counter = (node_id, step, sample, 0), word 0."""
    b = np.asarray(samples, np.uint64)[:, None, None]
    k = np.arange(k0, k1, dtype=np.uint64)[None, :, None]
    j = np.asarray(node_ids, np.uint64)[None, None, :]
    x0, _, _, _ = philox4x32_10(j, k, b, 0, seed, purpose)
    return uniform_from_word(x0)


class SpikeFileSource:
    def __init__(self, name, pop, virt_offset, path, dt, n_steps, node_set, nest=False):
        self.name, self.virt_offset = name, virt_offset
        self.J = len(pop.node_ids)
        data = sonata.read_spike_file(path)
        if node_set in data:
            key = node_set
        elif len(data) == 1:
            key = next(iter(data))
        else:
            raise InputError('input %s: %s has populations %s, none named %s'
                             % (name, path, sorted(str(k) for k in data), node_set))
        ids, ts = data[key]
        if len(ts) and np.any(ts <= 0):
            raise InputError('input %s: %s has spike times <= 0 (first %g)' % (name, path, ts[ts <= 0][0]))
        if nest:  # NEST's spike_generator: fromstamp(t) - 1 (docs/model-nest.md section 4)
            from .nest_constants import ref
            k = np.array([ref.stamp_step(t, dt) - 1 for t in ts], np.int64)
        else:
            k = stamp_step(ts, dt)
        late = k >= n_steps
        self.n_ignored = int(late.sum())
        if self.n_ignored:
            warnings.warn('input %s: %d spikes after the end of the run ignored' % (name, self.n_ignored))
        self.k = k[~late]
        self.j = pop.index_of(ids[~late])

    def counts(self, samples, k0, k1):
        m = (self.k >= k0) & (self.k < k1)
        x = np.zeros((k1 - k0, self.J))
        np.add.at(x, (self.k[m] - k0, self.j[m]), 1.0)
        return np.broadcast_to(x[None], (len(samples), k1 - k0, self.J))


def _rate_list(spec, name, n, default=None):
    if 'rates' in spec:
        rates = [float(x) for x in spec['rates']]
        if len(rates) != n:
            raise InputError('input %s: %d rates for %d nodes' % (name, len(rates), n))
        return rates
    if 'rate' in spec or default is not None:
        return [float(spec.get('rate', default))] * n
    raise InputError('input %s: neither rate nor rates given' % name)


class BernoulliSource:
    def __init__(self, name, pop, virt_offset, spec, dt, seed):
        self.name, self.virt_offset = name, virt_offset
        self.node_ids = pop.node_ids
        self.J = len(pop.node_ids)
        # rates[n] belongs to the n-th node of the population in ascending node_id order
        order = np.argsort(pop.node_ids, kind='stable')
        rates = np.array(_rate_list(spec, name, self.J))
        self.p = np.empty(self.J)
        self.p[order] = [-math.expm1(-r * dt / 1000.0) for r in rates]
        self.seed, self.purpose = seed, fnv1a32(name)

    def counts(self, samples, k0, k1):
        u = uniforms(self.seed, self.purpose, samples, k0, k1, self.node_ids)
        return (u < self.p[None, None, :]).astype(np.float64)


def poisson_cdf_table(lam, kmax=1000):
    """F_0..F_{kmax-1} as the sequential loop computes them."""
    p0 = math.exp(-lam)
    P, F = p0, p0
    table = [F]
    for k in range(1, kmax):
        P *= lam / k
        F += P
        table.append(F)
    return np.array(table)


class PoissonSource:
    """count = number of loop iterations of: k=0; P=F=exp(-lam); while u > F and k < 1000:
    k += 1; P *= lam/k; F += P. Since F is non-decreasing, count = #{k < 1000 : F_k < u}."""

    def __init__(self, name, pop, virt_offset, spec, dt, seed):
        self.name, self.virt_offset = name, virt_offset
        self.node_ids = pop.node_ids
        self.J = len(pop.node_ids)
        order = np.argsort(pop.node_ids, kind='stable')
        rates = np.empty(self.J)
        rates[order] = _rate_list(spec, name, self.J, default=250.0)
        self.rates = rates
        self.tables = {r: poisson_cdf_table(r * dt / 1000.0) for r in set(rates.tolist())}
        self.seed, self.purpose = seed, fnv1a32(name)

    def counts(self, samples, k0, k1):
        u = uniforms(self.seed, self.purpose, samples, k0, k1, self.node_ids)
        out = np.zeros(u.shape)
        for rate, F in self.tables.items():
            cols = self.rates == rate
            out[:, :, cols] = np.searchsorted(F, u[:, :, cols], side='left')
        return out


def poisson_count_scalar(u, lam):
    """Literal loop, used by the self-test to check the vectorised form."""
    p0 = math.exp(-lam)
    k, P, F = 0, p0, p0
    while u > F and k < 1000:
        k += 1
        P *= lam / k
        F += P
    return k


def build_inputs(conf, net, run):
    srcs = []
    fed = set()
    for name, spec in (conf.get('inputs') or {}).items():
        if not isinstance(spec, dict) or spec.get('enabled', True) is False:
            continue
        ns = spec.get('node_set')
        if ns not in net.virt_offset:
            raise InputError('input %s: node_set %r is not a virtual population (%s)'
                             % (name, ns, sorted(net.virt_offset)))
        pop = net.pop_by_name[ns]
        off = net.virt_offset[ns]
        itype = spec.get('input_type')
        if itype == 'spikes':
            mod = spec.get('module', 'sonata')
            if mod not in ('sonata', 'h5', 'hdf5'):
                raise InputError('input %s: spikes module %r not supported' % (name, mod))
            srcs.append(SpikeFileSource(name, pop, off, spec['input_file'], run.dt, run.n_steps, ns, net.nest))
        elif itype == 'rates':
            srcs.append(BernoulliSource(name, pop, off, spec, run.dt, run.seed))
        elif itype == 'poisson':
            srcs.append(PoissonSource(name, pop, off, spec, run.dt, run.seed))
        else:
            raise InputError('input %s: input_type %r not supported' % (name, itype))
        fed.add(ns)
    for p in net.virt_pops:
        if p.name not in fed:
            warnings.warn('virtual population %s has no input: it stays silent' % p.name)
    return srcs
