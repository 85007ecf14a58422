"""The model of the PyTorch baseline (bench/torch_baseline.py): class Baseline, one training update.

Model. The neuron step is the oracle's (regression/oracle/torch_model.py), in a [neuron, channel, sample]
layout, with the oracle's own autograd functions: SpikeFunction (triangle/gauss surrogate, dampening_factor,
zero where refractory), ScaleGrad as the voltage damper (1 - voltage_gradient_dampening on decay*v) and as the
recurrent-read damper (recurrent_dampening_factor on z where recurrent edges read it); stop-gradients on the
reset, ASC jump and refractory counter (z_prev.detach()); the oracle's compute_losses.
The synaptic drive uses the sparse products of bench/torch_baseline_ops.py.
"""
import os
import sys
import time

_REGRESSION = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'regression')
if _REGRESSION not in sys.path:
    sys.path.insert(0, _REGRESSION)

import numpy as np                                                   # noqa: E402
import torch                                                         # noqa: E402

from oracle.config import RunParams                                  # noqa: E402
from oracle.model import load_model                                  # noqa: E402
from oracle.torch_model import TorchModel                            # noqa: E402
from oracle.train_config import TrainConfig                          # noqa: E402
from oracle.autograd_ops import surrogate_spike, scale_grad          # noqa: E402
from oracle.optim import compute_losses                              # noqa: E402
from oracle.inputs import BernoulliSource, PoissonSource, SpikeFileSource  # noqa: E402
from torch_baseline_ops import Edges, EventDrive, BagDrive, setup_dense_pull  # noqa: E402


class Baseline:
    def __init__(self, conf, dtype, drive='bag', transpose='bag', inputs='torch'):
        self.conf, self.dtype, self.drive, self.input_mode = conf, dtype, drive, inputs
        self.net, self.inputs, self.run = load_model(conf, RunParams(conf))
        net = self.net
        self.tm = TorchModel(net)                 # only for the surface layout and node types
        self.tc = TrainConfig(conf.get('train'), self.tm)
        self.T, self.B, self.dt = self.run.n_steps, self.run.batch_size, self.run.dt
        self.edges = Edges(net, self.tm, self.B, dtype, transpose)
        if drive == 'bag':
            setup_dense_pull(self.edges, net)
        t = lambda a, *shape: torch.as_tensor(np.asarray(a, np.float64), dtype=dtype).reshape(*shape)
        N, R, A = net.N, net.R, net.A
        self.decay, self.current_factor = t(net.decay, N, 1), t(net.current_factor, N, 1)
        self.reset_amount = t(1.0 - net.v_reset_n, N, 1)
        self.t_ref_steps = t(net.t_ref_steps, N, 1)
        self.syn_decay = t(net.syn_decay, N, R, 1)
        self.psc_initial = t(net.psc_initial, N, R, 1)
        self.dt_syn_decay = t(net.dt_syn_decay, N, R, 1)
        self.asc_amps_n, self.asc_decay_f = t(net.asc_amps_n, N, A, 1), t(net.asc_decay_f, N, A, 1)
        tc = self.tc
        self.spike_fn = surrogate_spike(tc.surrogate, tc.gamma, tc.sigma)
        self.vdamp = scale_grad(1.0 - tc.voltage_gradient_dampening)
        self.rdamp = scale_grad(tc.recurrent_dampening_factor)
        self.losses = []
        for L in tc.losses:
            L = dict(L)
            if 'target_vec' in L:
                L['target_vec'] = np.asarray(L['target_vec'], dtype=np.float32 if dtype == torch.float32
                                             else np.float64)
            self.losses.append(L)
        # weights: one leaf per surface, in the sorted edge order
        self.w = {}
        self.w0 = {}
        for s in self.tm.surface_names:
            lo, hi = self.edges.surfaces[s]
            w0 = torch.as_tensor(self.edges.w_init[lo:hi], dtype=dtype)
            self.w0[s] = w0
            self.w[s] = w0.clone().requires_grad_(tc.trainable[s])
        self.pos_mask = {s: self.w0[s] >= 0 for s in self.w}
        params = [self.w[s] for s in self.tm.surface_names if tc.trainable[s]]
        self.opt = torch.optim.Adam(params, lr=tc.lr, betas=(tc.beta1, tc.beta2), eps=tc.epsilon) if params else None
        # input draws
        self.draws = []
        for src in self.inputs:
            if isinstance(src, BernoulliSource):
                self.draws.append(('bernoulli', src, torch.as_tensor(src.p, dtype=dtype)[:, None]))
            elif isinstance(src, PoissonSource):
                self.draws.append(('poisson', src, torch.as_tensor(src.rates * self.dt / 1000.0, dtype=dtype)[:, None]))
            elif isinstance(src, SpikeFileSource):
                c = src.counts(np.zeros(1, np.int64), 0, self.T)[0]               # [T, J_pop]
                self.draws.append(('file', src, torch.as_tensor(c, dtype=dtype)[:, :, None]))
            else:
                raise SystemExit('input %s: unsupported source %s' % (src.name, type(src).__name__))
        self.update = 0

    def input_counts(self, samples):
        """x[t, j, b]: input counts of step t."""
        T, B, net = self.T, self.B, self.net
        x = torch.zeros((T, net.J, B), dtype=self.dtype)
        for kind, src, par in self.draws:
            sl = slice(src.virt_offset, src.virt_offset + src.J)
            if self.input_mode == 'oracle':
                c = src.counts(samples, 0, T)                                     # [B, T, J_pop]
                x[:, sl, :] += torch.as_tensor(np.ascontiguousarray(np.transpose(c, (1, 2, 0))), dtype=self.dtype)
            elif kind == 'bernoulli':
                x[:, sl, :] += (torch.rand((T, src.J, B), dtype=self.dtype) < par).to(self.dtype)
            elif kind == 'poisson':
                x[:, sl, :] += torch.poisson(par.expand(src.J, B).expand(T, src.J, B).contiguous())
            else:
                x[:, sl, :] += par
        return x

    def forward(self, samples):
        """Returns (total loss, terms, mean rate Hz, spike count)."""
        N, D, B, T = self.net.N, self.net.D, self.B, self.T
        J = self.net.J
        dtype, e = self.dtype, self.edges
        x = self.input_counts(samples)
        # input events of every step at once: (t, j, b) -> key base (N + j) * D
        xi = torch.nonzero(x)
        xcnt = x[xi[:, 0], xi[:, 1], xi[:, 2]]
        xsplit = torch.bincount(xi[:, 0], minlength=T).tolist()
        xev = list(zip(torch.split((N + xi[:, 1]) * D, xsplit), torch.split(xi[:, 2].contiguous(), xsplit),
                       torch.split(xcnt, xsplit)))
        w = torch.cat([self.w[s] for s in self.tm.surface_names])
        v = torch.zeros((N, B), dtype=dtype)
        r = torch.zeros((N, B), dtype=dtype)
        asc = torch.zeros((N, self.net.A, B), dtype=dtype)
        psc_rise = torch.zeros((N, self.net.R, B), dtype=dtype)
        psc = torch.zeros((N, self.net.R, B), dtype=dtype)
        z_prev = torch.zeros((N, B), dtype=dtype)
        events, zdamp, zs, vs = [], [], [], []
        R, A = self.net.R, self.net.A
        for t in range(T):
            # 1. drive from the activity of steps t-1 .. t-D
            evs = [events[t - d] if t - d >= 0 else None for d in range(1, D + 1)]
            zin = [zdamp[t - d] for d in range(1, D + 1) if t - d >= 0]
            if t == 0:
                u = torch.zeros((N, R, B), dtype=dtype)
            elif self.drive == 'bag':
                rows = [torch.cat([zdamp[t - d].detach(), x[t - d]]) if t - d >= 0
                        else x.new_zeros((N + J, B)) for d in range(1, D + 1)]
                u = BagDrive.apply(w, e, evs, torch.cat(rows), *zin)
            else:
                u = EventDrive.apply(w, e, evs, *zin)
            # 2. alpha PSC
            new_psc_rise = self.syn_decay * psc_rise + self.psc_initial * u
            new_psc = self.syn_decay * psc + self.dt_syn_decay * psc_rise
            zsg = z_prev.detach()
            # 3. after-spike currents (stop-gradient on z_prev)
            new_asc = self.asc_decay_f * asc + zsg[:, None, :] * self.asc_amps_n
            # 4. current from the old psc and asc (channel order as in the oracle)
            c_psc = psc[:, 0]
            for k in range(1, R):
                c_psc = c_psc + psc[:, k]
            c_asc = asc[:, 0]
            for k in range(1, A):
                c_asc = c_asc + asc[:, k]
            cur = c_psc + c_asc
            # 5. membrane: damped self-loop, soft reset with stop-gradient
            new_v = self.decay * self.vdamp(v) + self.current_factor * cur - zsg * self.reset_amount
            # 6. refractory counter
            new_r = torch.clamp(r + zsg * self.t_ref_steps - 1.0, min=0.0)
            # 7. spike
            z = self.spike_fn(new_v, new_r == 0)
            psc_rise, psc, asc, v, r, z_prev = new_psc_rise, new_psc, new_asc, new_v, new_r, z
            # 8. history: events of step t (recurrent spikes, then the inputs), damped z for the recurrent reads
            zi = torch.nonzero(z.detach())
            xk, xb, xc = xev[t]
            events.append((zi[:, 0] * D, zi[:, 1], xk, xb, xc))
            zdamp.append(self.rdamp(z))
            zs.append(z)
            vs.append(v)
        zt = torch.stack(zs, 0).permute(2, 0, 1)          # [B, T, N] views, as compute_losses expects
        vt = torch.stack(vs, 0).permute(2, 0, 1)
        total, terms, rate = compute_losses(self.losses, zt, vt, self.dt, self.w, self.w0, self.tc.trainable,
                                            self.tm.surface_names)
        return total, terms, rate, int(zt.detach().sum())

    def step(self, keep_grads=False):
        """One training update. Returns a dict of times and loss values (and the gradients before clipping)."""
        k = self.update
        samples = np.arange(k * self.B, (k + 1) * self.B, dtype=np.int64)
        t0 = time.perf_counter()
        total, terms, rate, nsp = self.forward(samples)
        t1 = time.perf_counter()
        if self.opt is not None:
            self.opt.zero_grad(set_to_none=True)
        if total.requires_grad:
            total.backward()
        t2 = time.perf_counter()
        grads = {s: (self.w[s].grad.clone() if self.w[s].grad is not None else torch.zeros_like(self.w[s]))
                 for s in self.w if self.tc.trainable[s]} if keep_grads else None
        if self.opt is not None:
            params = [self.w[s] for s in self.w if self.tc.trainable[s]]
            if self.tc.clip_global_norm is not None:
                torch.nn.utils.clip_grad_norm_(params, self.tc.clip_global_norm)
            self.opt.step()
            with torch.no_grad():
                for s in self.w:
                    if self.tc.trainable[s]:
                        ws = self.w[s]
                        ws.copy_(torch.where(self.pos_mask[s], ws.clamp(min=0.0), ws.clamp(max=0.0)))
        t3 = time.perf_counter()
        self.update += 1
        return {'forward': t1 - t0, 'backward': t2 - t1, 'update': t3 - t2, 'total': float(total),
                'terms': {n: float(v) for n, v in terms.items()}, 'rate': rate, 'spikes': nsp, 'grads': grads}
