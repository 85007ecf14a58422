"""Training oracle: BPTT with surrogate gradients (MODEL.md sections 4-8 and 10), PyTorch float64.

Written from the specification only. The forward pass is the step of MODEL.md section 4 written
with torch tensors so that autograd produces the gradient; the non-standard parts of the
gradient are three small torch.autograd.Function classes:

* SpikeFunction  forward z = 1 iff v' > 1 and r' == 0; backward = surrogate (triangle / gauss),
                 zero where r' > 0;
* ScaleGrad      forward identity, backward multiplied by a constant: the voltage damper
                 (1 - voltage_gradient_dampening) on v in `decay * v`, and the recurrent-read damper
                 (recurrent_dampening_factor) on z where recurrent edges read it;
* EdgeDrive      u[b, post_e] += w_e * act[b, t - d_e, pre_e] over all edges (forward in edge order, as
                 the forward oracle sums); backward: dL/dw_e = sum_b dL/du[b, post_e] act[b, pre_e],
                 dL/dact[b, j] = sum_{e: pre_e = j} w_e dL/du[b, post_e] (only saves references to
                 the activity tensors, so memory stays O(T * B * (N + J))).

Stop-gradients: the reset term, the ASC jump and the refractory counter use z_prev.detach();
inputs carry no gradient. Trainable variables are the normalized weights (weight_pA / vs of the
target), one tensor per surface ("recurrent" and one per virtual population).
"""
import math

import numpy as np
import torch

from .config import RunParams, ConfigError
from .model import load_model

DTYPE = torch.float64


class TrainError(Exception):
    pass


# ============================================================================ autograd pieces
class SpikeFunction(torch.autograd.Function):
    """z = H(v' - 1) where free (r' == 0); surrogate derivative, zero where not free."""

    @staticmethod
    def forward(ctx, v, free, kind, gamma, sigma):
        ctx.save_for_backward(v, free)
        ctx.kind, ctx.gamma, ctx.sigma = kind, gamma, sigma
        return ((v > 1.0) & free).to(v.dtype)

    @staticmethod
    def backward(ctx, g):
        v, free = ctx.saved_tensors
        x = v - 1.0
        if ctx.kind == 'triangle':
            s = ctx.gamma * torch.clamp(1.0 - torch.abs(x), min=0.0)
        else:   # gauss
            s = ctx.gamma * torch.exp(-(x / ctx.sigma) ** 2)
        return g * s * free.to(v.dtype), None, None, None, None


def surrogate_spike(kind='triangle', gamma=0.1, sigma=0.28):
    if kind not in ('triangle', 'gauss'):
        raise TrainError('train.surrogate.type %r: must be "triangle" or "gauss"' % kind)

    def fn(v, free):
        return SpikeFunction.apply(v, free, kind, float(gamma), float(sigma))
    return fn


class ScaleGrad(torch.autograd.Function):
    """Forward identity, backward multiplied by `factor`."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor, None


def scale_grad(factor):
    factor = float(factor)
    if factor == 1.0:
        return lambda x: x
    return lambda x: ScaleGrad.apply(x, factor)


class EdgeDrive(torch.autograd.Function):
    """u[b, post_e] = sum_e w_e * act_g[b, src_e] for the edges e of each delay group g.

    groups: list of (edge index LongTensor, source activity index LongTensor), one per act tensor.
    The forward adds contributions in global edge order (index_add_ over one [B, E] matrix)."""

    @staticmethod
    def forward(ctx, w, groups, post, n_out, *acts):
        B = acts[0].shape[0]
        A = w.new_zeros((B, w.shape[0]))
        for (eidx, src), act in zip(groups, acts):
            A[:, eidx] = act[:, src]
        u = w.new_zeros((B, n_out)).index_add_(1, post, A * w)
        ctx.groups, ctx.post = groups, post
        ctx.save_for_backward(w, *acts)
        return u

    @staticmethod
    def backward(ctx, gu):
        w, *acts = ctx.saved_tensors
        ge = gu[:, ctx.post]                                   # [B, E]: dL/du seen by each edge
        gw = None
        if ctx.needs_input_grad[0]:
            gw = torch.zeros_like(w)
            for (eidx, src), act in zip(ctx.groups, acts):
                gw[eidx] = (ge[:, eidx] * act[:, src]).sum(0)
        gacts = []
        for i, ((eidx, src), act) in enumerate(zip(ctx.groups, acts)):
            if ctx.needs_input_grad[4 + i]:
                gacts.append(torch.zeros_like(act).index_add_(1, src, ge[:, eidx] * w[eidx]))
            else:
                gacts.append(None)
        return (gw, None, None, None, *gacts)


# ============================================================================ differentiable model
class TorchModel:
    """Tensors of a normalized oracle Network (model.Network) and the weight surfaces."""

    def __init__(self, net):
        self.net = net
        t = lambda a: torch.as_tensor(np.asarray(a, dtype=np.float64))
        self.N, self.J, self.R, self.A, self.D = net.N, net.J, net.R, net.A, net.D
        self.decay, self.current_factor = t(net.decay), t(net.current_factor)
        self.reset_amount = t(1.0 - net.v_reset_n)
        self.t_ref_steps = t(net.t_ref_steps)
        self.syn_decay, self.psc_initial, self.dt_syn_decay = t(net.syn_decay), t(net.psc_initial), t(net.dt_syn_decay)
        self.asc_amps_n, self.asc_decay_f = t(net.asc_amps_n), t(net.asc_decay_f)
        self.post = torch.as_tensor(net.e_tgt * net.R + net.e_ch, dtype=torch.long)
        self.E = len(net.e_w)
        self.delay_groups = []
        for d in sorted(set(net.e_d.tolist())):
            eidx = np.nonzero(net.e_d == d)[0]
            self.delay_groups.append((d, torch.as_tensor(eidx, dtype=torch.long),
                                      torch.as_tensor(net.e_src[eidx], dtype=torch.long)))
        # surfaces: "recurrent" then each virtual population (config/h5 order); edges in edge order
        self.surface_names = ['recurrent'] + [p.name for p in net.virt_pops]
        self.surface_edges = {'recurrent': np.nonzero(net.e_src < net.N)[0]}
        for p in net.virt_pops:
            lo = net.N + net.virt_offset[p.name]
            hi = lo + len(p.node_ids)
            self.surface_edges[p.name] = np.nonzero((net.e_src >= lo) & (net.e_src < hi))[0]
        order = np.concatenate([self.surface_edges[s] for s in self.surface_names])
        assert len(order) == self.E and np.array_equal(np.sort(order), np.arange(self.E))
        self.inv_order = torch.as_tensor(np.argsort(order), dtype=torch.long)
        node_types = [p.node_type_id for p in net.rec_pops]
        self.node_type_id = np.concatenate(node_types) if node_types else np.zeros(0, np.int64)

    def initial_weights(self):
        return {s: self.net.e_w[self.surface_edges[s]].copy() for s in self.surface_names}

    def full_weights(self, wsurf):
        """Concatenate the surface tensors back into edge order (differentiable)."""
        return torch.cat([wsurf[s] for s in self.surface_names])[self.inv_order]

    def forward(self, wsurf, x, spike_fn, vdamp=lambda v: v, rdamp=lambda z: z, sg_z=None, record=()):
        """Run MODEL.md section 4 for all T steps.

        wsurf: {surface: tensor [E_s]}; x: input counts tensor [B, T, J] (no gradient);
        spike_fn(v', free) -> z; vdamp / rdamp: voltage and recurrent-read dampers;
        sg_z: optional list of T tensors [B, N] used instead of sg(z_prev) in the reset, the ASC jump and
        r (tests only: a frozen sequence gives exactly the stop-gradient semantics under finite
        differences). Returns dict z [B, T, N], v [B, T, N] (+ recorded states)."""
        B, T = x.shape[0], x.shape[1]
        N, R, A = self.N, self.R, self.A
        w = self.full_weights(wsurf)
        v = torch.zeros((B, N), dtype=DTYPE)
        r = torch.zeros((B, N), dtype=DTYPE)
        asc = torch.zeros((B, N, A), dtype=DTYPE)
        psc_rise = torch.zeros((B, N, R), dtype=DTYPE)
        psc = torch.zeros((B, N, R), dtype=DTYPE)
        z_prev = torch.zeros((B, N), dtype=DTYPE)
        acts, zs, vs = [], [], []
        rec = {k: [] for k in record}
        for t in range(T):
            # 1. synaptic drive from the activity of steps t - d (zero before step 0)
            groups, gacts = [], []
            for d, eidx, src in self.delay_groups:
                if t - d >= 0:
                    groups.append((eidx, src))
                    gacts.append(acts[t - d])
            if groups:
                u = EdgeDrive.apply(w, groups, self.post, N * R, *gacts).view(B, N, R)
            else:
                u = torch.zeros((B, N, R), dtype=DTYPE)
            # 2. alpha PSC
            new_psc_rise = self.syn_decay * psc_rise + self.psc_initial * u
            new_psc = self.syn_decay * psc + self.dt_syn_decay * psc_rise
            zsg = z_prev.detach() if sg_z is None else (sg_z[t - 1] if t > 0 else torch.zeros_like(z_prev))
            # 3. ASC jump (stop-gradient on z_prev)
            new_asc = self.asc_decay_f * asc + zsg[:, :, None] * self.asc_amps_n
            # 4. current from the old psc and asc
            c_psc = psc[:, :, 0]
            for k in range(1, R):
                c_psc = c_psc + psc[:, :, k]
            c_asc = asc[:, :, 0]
            for k in range(1, A):
                c_asc = c_asc + asc[:, :, k]
            cur = c_psc + c_asc
            # 5. membrane: damped self-loop, soft reset with stop-gradient
            new_v = self.decay * vdamp(v) + self.current_factor * cur - zsg * self.reset_amount
            # 6. refractory counter (no gradient)
            new_r = torch.clamp(r + zsg * self.t_ref_steps - 1.0, min=0.0)
            # 7. spike
            z = spike_fn(new_v, new_r == 0)
            psc_rise, psc, asc, v, r, z_prev = new_psc_rise, new_psc, new_asc, new_v, new_r, z
            # 8. history: recurrent reads see the damped z, inputs carry no gradient
            acts.append(torch.cat([rdamp(z), x[:, t, :]], dim=1))
            zs.append(z)
            vs.append(v)
            for k in rec:
                rec[k].append({'u': u, 'psc': psc, 'psc_rise': psc_rise, 'asc': asc, 'r': r}[k])
        out = {'z': torch.stack(zs, 1), 'v': torch.stack(vs, 1)}
        for k, lst in rec.items():
            out[k] = torch.stack(lst, 1)
        return out


# ============================================================================ configuration
LOSS_TYPES = ('TargetFiringRate', 'VoltageRegularization', 'WeightRegularization')


class TrainConfig:
    def __init__(self, train, model):
        if not isinstance(train, dict):
            raise TrainError('config has no "train" section')
        self.steps = int(train.get('steps', 1))
        sur = train.get('surrogate') or {}
        self.surrogate = sur.get('type', 'triangle')
        if self.surrogate not in ('triangle', 'gauss'):
            raise TrainError('train.surrogate.type %r: must be "triangle" or "gauss"' % self.surrogate)
        self.gamma = float(sur.get('dampening_factor', 0.1))
        self.sigma = float(sur.get('sigma', 0.28))
        self.voltage_gradient_dampening = float(train.get('voltage_gradient_dampening', 0.5))
        self.recurrent_dampening_factor = float(train.get('recurrent_dampening_factor', 0.1))
        tr = train.get('trainable') or {}
        for k in tr:
            if k not in model.surface_names:
                raise TrainError('train.trainable: %r is neither "recurrent" nor a virtual population (%s)'
                                 % (k, model.surface_names[1:]))
        self.trainable = {s: bool(tr.get(s, s == 'recurrent')) for s in model.surface_names}
        self.losses = []
        counts = {}
        for i, L in enumerate(train.get('losses') or []):
            ty = L.get('type')
            if ty not in LOSS_TYPES:
                raise TrainError('train.losses[%d]: unknown type %r (%s)' % (i, ty, ', '.join(LOSS_TYPES)))
            counts[ty] = counts.get(ty, 0) + 1
        seen = {}
        for i, L in enumerate(train.get('losses') or []):
            ty = L['type']
            seen[ty] = seen.get(ty, 0) + 1
            name = ty if counts[ty] == 1 else '%s_%d' % (ty, seen[ty])
            spec = dict(L)
            spec['name'] = name
            spec['cost'] = float(L.get('cost', 1.0))
            if ty == 'TargetFiringRate':
                unit = L.get('unit', 'Hz')
                if unit not in ('Hz', 'spikes_per_step'):
                    raise TrainError('train.losses[%d]: unit %r must be "Hz" or "spikes_per_step"' % (i, unit))
                spec['unit'] = unit
                if 'target_by_node_type' in L:
                    m = {int(k): float(v) for k, v in L['target_by_node_type'].items()}
                    missing = sorted(set(model.node_type_id.tolist()) - set(m))
                    if missing:
                        raise TrainError('train.losses[%d]: target_by_node_type lacks node types %s'
                                         % (i, missing))
                    spec['target_vec'] = np.array([m[int(t)] for t in model.node_type_id])
                elif 'target' in L:
                    spec['target_vec'] = np.full(model.N, float(L['target']))
                else:
                    raise TrainError('train.losses[%d]: TargetFiringRate needs target or target_by_node_type' % i)
            elif ty == 'VoltageRegularization':
                mode = L.get('mode', 'range')
                if mode not in ('range', 'threshold'):
                    raise TrainError('train.losses[%d]: mode %r must be "range" or "threshold"' % (i, mode))
                spec['mode'] = mode
            self.losses.append(spec)
        opt = train.get('optimizer') or {}
        if opt.get('type', 'adam').lower() != 'adam':
            raise TrainError('train.optimizer.type %r: only "adam"' % opt.get('type'))
        self.lr = float(opt.get('lr', 0.001))
        self.beta1 = float(opt.get('beta1', 0.9))
        self.beta2 = float(opt.get('beta2', 0.999))
        self.epsilon = float(opt.get('epsilon', 1e-11))
        c = opt.get('clip_global_norm')
        self.clip_global_norm = None if c is None else float(c)


# ============================================================================ losses, optimizer
def compute_losses(specs, z, v, dt, wsurf, w0surf, trainable, surface_names):
    """Return (total tensor, {name: tensor}, rate_mean_hz float). z, v: [B, T, N]."""
    T = z.shape[1]
    terms = {}
    for L in specs:
        ty, cost = L['type'], L['cost']
        if ty == 'TargetFiringRate':
            if L['unit'] == 'Hz':
                rate = 1000.0 * z.sum(1) / (T * dt)
            else:
                rate = z.sum(1) / T
            target = torch.as_tensor(L['target_vec'])
            val = cost * ((rate - target) ** 2).mean()
        elif ty == 'VoltageRegularization':
            if L['mode'] == 'range':
                val = cost * (torch.relu(torch.abs(v - 0.5) - 0.5) ** 2).mean()
            else:
                val = cost * ((v - 1.0) ** 2).mean()
        else:   # WeightRegularization: one mean over all trainable edges of all surfaces
            ws = [wsurf[s] - w0surf[s] for s in surface_names if trainable[s]]
            dw = torch.cat(ws) if ws else torch.zeros(0, dtype=DTYPE)
            val = cost * (dw ** 2).mean() if dw.numel() else torch.zeros((), dtype=DTYPE)
        terms[L['name']] = val
    total = torch.zeros((), dtype=DTYPE)
    for val in terms.values():
        total = total + val
    rate_mean = float(z.detach().mean()) * 1000.0 / dt if z.numel() else 0.0
    return total, terms, rate_mean


class Adam:
    """Kingma & Ba with bias correction, numpy float64, one state per surface."""

    def __init__(self, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-11):
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps
        self.m, self.v, self.k = {}, {}, 0

    def step(self, weights, grads):
        """weights, grads: {surface: ndarray}; updates weights in place (surfaces in grads only)."""
        self.k += 1
        for s, g in grads.items():
            m = self.m.get(s, np.zeros_like(g))
            v = self.v.get(s, np.zeros_like(g))
            m = self.b1 * m + (1.0 - self.b1) * g
            v = self.b2 * v + (1.0 - self.b2) * (g * g)
            self.m[s], self.v[s] = m, v
            m_hat = m / (1.0 - self.b1 ** self.k)
            v_hat = v / (1.0 - self.b2 ** self.k)
            weights[s] -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def clip_by_global_norm(grads, c):
    """Scale all gradients by c / norm when their joint L2 norm exceeds c. Returns (grads, norm)."""
    norm = math.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
    if c is not None and norm > c:
        f = c / norm
        grads = {s: g * f for s, g in grads.items()}
    return grads, norm


def sign_constraint(w, w0):
    """Keep each weight on the side of its initial sign (0 counts as non-negative)."""
    return np.where(w0 >= 0, np.maximum(w, 0.0), np.minimum(w, 0.0))


# ============================================================================ trainer
class Trainer:
    def __init__(self, conf, run=None, spike_fn=None):
        self.conf = conf
        self.run = run or RunParams(conf)
        self.net, self.inputs, self.run = load_model(conf, self.run)
        self.model = TorchModel(self.net)
        self.tc = TrainConfig(conf.get('train'), self.model)
        self.T, self.B, self.dt = self.run.n_steps, self.run.batch_size, self.run.dt
        self.spike_fn = spike_fn or surrogate_spike(self.tc.surrogate, self.tc.gamma, self.tc.sigma)
        self.vdamp = scale_grad(1.0 - self.tc.voltage_gradient_dampening)
        self.rdamp = scale_grad(self.tc.recurrent_dampening_factor)
        self.w0 = self.model.initial_weights()
        self.w = {s: a.copy() for s, a in self.w0.items()}
        self.adam = Adam(self.tc.lr, self.tc.beta1, self.tc.beta2, self.tc.epsilon)
        self.update = 0

    def input_counts(self, samples):
        """x[b, k, j] exactly as the forward oracle builds it (sum over sources of a population)."""
        x = np.zeros((len(samples), self.T, self.net.J))
        for src in self.inputs:
            c = src.counts(samples, 0, self.T)
            x[:, :, src.virt_offset:src.virt_offset + c.shape[2]] += c
        return torch.as_tensor(x)

    def loss_and_grad(self, samples):
        """Forward + backward for the given global sample indices at the current weights."""
        m, tc = self.model, self.tc
        wt = {s: torch.tensor(self.w[s], dtype=DTYPE, requires_grad=tc.trainable[s]) for s in m.surface_names}
        w0t = {s: torch.as_tensor(self.w0[s]) for s in m.surface_names}
        x = self.input_counts(np.asarray(samples, dtype=np.int64))
        out = m.forward(wt, x, self.spike_fn, self.vdamp, self.rdamp)
        total, terms, rate = compute_losses(tc.losses, out['z'], out['v'], self.dt, wt, w0t,
                                            tc.trainable, m.surface_names)
        if total.requires_grad:
            total.backward()
        grads = {}
        for s in m.surface_names:
            if tc.trainable[s]:
                g = wt[s].grad
                grads[s] = g.numpy().copy() if g is not None else np.zeros_like(self.w[s])
        return {'total': float(total), 'terms': {k: float(v) for k, v in terms.items()},
                'rate_mean_hz': rate, 'grads': grads, 'n_spikes': int(out['z'].detach().sum())}

    def step(self):
        """One update on samples update*B .. update*B+B-1. Returns the loss/grad record (grads before clipping)."""
        k = self.update
        samples = np.arange(k * self.B, (k + 1) * self.B, dtype=np.int64)
        res = self.loss_and_grad(samples)
        grads, norm = clip_by_global_norm(res['grads'], self.tc.clip_global_norm)
        res['grad_norm'] = norm
        self.adam.step(self.w, grads)
        for s in grads:
            self.w[s] = sign_constraint(self.w[s], self.w0[s])
        self.update += 1
        return res
