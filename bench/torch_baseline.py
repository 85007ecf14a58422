#!/usr/bin/python3
"""PyTorch baseline of one dpointnet training update, for the benchmark comparison of the performance issue.

"A PyTorch implementation of the same model and size, written the way a careful PyTorch user would (sparse
products through embedding_bag, event-driven forward, 2 threads)": float32 on the CPU, torch.set_num_threads(2).

usage: /usr/bin/python3 bench/torch_baseline.py --config DIR/net_N/bench_train.json [--updates 2] [--threads 2]
       /usr/bin/python3 bench/torch_baseline.py --config ... --check [--steps T] [--batch B]   (float64 check)

The config is the one `build/dpointnet-bench-train --neurons N --steps T --batch B --workdir DIR` writes
(DIR/net_N/bench_train.json). It is read with the independent oracle's loaders (regression/oracle: config,
SONATA, normalization of MODEL.md section 2, inputs, the "train" section), none of which share code with the C++.

One update = what dpointnet's `train_step` does (and bench/bench_train.cpp times):
  forward   input draws, T steps of MODEL.md section 4 for a batch of B samples from the zero state, losses
            (section 7: TargetFiringRate target 5 Hz cost 1 + VoltageRegularization cost 0.1 in the bench config);
  backward  loss.backward() through autograd (BPTT over all T steps, no time checkpointing: autograd keeps the
            graph of every step, which fits easily at the bench sizes);
  update    torch.optim.Adam (lr 1e-3, betas 0.9/0.999, eps 1e-11 from the config, same formula as section 8)
            on the three surfaces recurrent, lgn, bkg (one nn.Parameter-like leaf each), optional global-norm
            clipping, then the sign constraint (Dale's law) of section 8.
One warm-up update, then --updates timed ones; the line printed gives the mean per timed update.

Model. The neuron step is the oracle's (regression/oracle/torch_model.py), in a [neuron, channel, sample]
layout, with the oracle's own autograd functions: SpikeFunction (triangle/gauss surrogate, dampening_factor,
zero where refractory), ScaleGrad as the voltage damper (1 - voltage_gradient_dampening on decay*v) and as the
recurrent-read damper (recurrent_dampening_factor on z where recurrent edges read it); stop-gradients on the
reset, ASC jump and refractory counter (z_prev.detach()); the oracle's compute_losses.

Sparse products. Edges are sorted by (source, delay), so each (source, delay) pair owns a contiguous range
(a CSR "row") and the three surfaces are contiguous slices. The synaptic drive of step t is one custom
autograd.Function (EdgeDrive below, the float32 event-driven version of the oracle's EdgeDrive):
  forward   event-driven: the active (source, sample) pairs of steps t-1..t-D (spikes, input counts) are
            expanded into their edges of the matching delay (repeat_interleave over the CSR rows) and their
            weights scatter-added into u[post, sample] (index_add_); cost ~ number of active edges;
  backward  dL/dw, event-driven over the same active edges (gather of dL/du, index_add_ into dL/dw);
            dL/dz of steps t-1..t-D: the transposed product over ALL recurrent edges (dense: the surrogate needs
            the gradient of neurons that did not spike), dL/dz[j, d, :] = sum_{e in row (j, d)} w_e dL/du[post_e, :].
The transposed product is the dominant cost; three implementations are selectable with --transpose:
  bag        F.embedding_bag(post, dL/du as the table, CSR offsets, per_sample_weights=w, mode="sum")
  index_add  gather dL/du[post] * w into an [E, B] temporary, index_add_ over the (source, delay) rows
  csr        torch.sparse_csr_tensor (rows (source, delay), columns post) @ dL/du
and --drive dense-bag replaces the event-driven forward by a dense pull over all edges through embedding_bag
(the activity of steps t-D..t-1 as the table), to show what event-driven buys. Defaults: the fastest
(measured on 2 cores of this machine, N=1000 T=50 B=16, 404k edges, per update: transpose bag 2.5 s,
index_add 3.2 s, csr 3.6 s; drive events vs dense-bag: see the reply of the session that wrote this file).

Inputs. The bench config's Bernoulli "rates" (LGN) and "poisson" (background) inputs are drawn with torch's RNG at
the configured per-node rates (p = 1 - exp(-rate dt), Poisson with mean rate dt): the same activity level as
dpointnet's counter-based Philox draws, not the same draws. Spike-file inputs are read as they are.
--inputs oracle takes the exact Philox draws of MODEL.md section 6.3 from the oracle instead (slow, numpy).

Correctness check (--check): float64, --inputs oracle, the first update's samples 0..B-1 at the initial weights;
then the oracle's Trainer (float64 autograd, dense EdgeDrive) on the same config and samples; prints both losses,
spike counts and the largest gradient difference per surface. On the dpointnet-bench-train network with
N=1000, T=50, B=16 (404256 edges) both give the same spikes and a loss equal to ~1e-15 relative; gradients agree to
~1e-13 relative (max |diff| / max |grad| per surface): float64 sums in another order, nothing else differs.
In float32 with torch draws the mean rate of the N=1000, T=50 network (~14-15 Hz) is that of the C++ run's
printed "rate".
"""
import argparse
import math
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'regression'))

import numpy as np                                                   # noqa: E402
import torch                                                         # noqa: E402
import torch.nn.functional as F                                      # noqa: E402

from oracle.config import load_config, RunParams                     # noqa: E402
from oracle.model import load_model                                  # noqa: E402
from oracle.torch_model import TorchModel                            # noqa: E402
from oracle.train_config import TrainConfig                          # noqa: E402
from oracle.autograd_ops import surrogate_spike, scale_grad          # noqa: E402
from oracle.optim import compute_losses                              # noqa: E402
from oracle.inputs import BernoulliSource, PoissonSource, SpikeFileSource  # noqa: E402


# ----------------------------------------------------------------------------------------------- sparse products
class Edges:
    """Edges sorted by key = source * D + (delay - 1); CSR over the (N + J) * D keys."""

    def __init__(self, net, tm, B, dtype, transpose):
        N, J, R, D = net.N, net.J, net.R, net.D
        self.N, self.J, self.R, self.D, self.B, self.NR = N, J, R, D, B, N * R
        self.dtype, self.transpose = dtype, transpose
        key = net.e_src * D + (net.e_d - 1)
        self.order = np.argsort(key, kind='stable')
        skey = key[self.order]
        self.E = len(skey)
        ptr = np.searchsorted(skey, np.arange((N + J) * D + 1))
        self.ptr = torch.as_tensor(ptr, dtype=torch.long)
        post = (net.e_tgt * R + net.e_ch)[self.order]
        self.post = torch.as_tensor(post, dtype=torch.long)
        self.postB = self.post * B                        # flat index into u[post, b] ([NR, B] row-major)
        # the recurrent edges are the first ones (sources 0..N-1): rows 0 .. N*D-1 of the CSR
        self.E_rec = int(ptr[N * D])
        self.ptr_rec = self.ptr[:N * D + 1].contiguous()
        self.post_rec = self.post[:self.E_rec].contiguous()
        self.key_rec = torch.as_tensor(skey[:self.E_rec], dtype=torch.long)
        # surfaces: contiguous slices of the sorted order (recurrent, then the virtual populations in order)
        self.surfaces = {}
        for s in tm.surface_names:
            pos = np.nonzero(np.isin(self.order, tm.surface_edges[s]))[0]
            if len(pos):
                assert pos[-1] - pos[0] + 1 == len(pos), s
                self.surfaces[s] = (int(pos[0]), int(pos[-1]) + 1)
            else:
                self.surfaces[s] = (0, 0)
        self.w_init = net.e_w[self.order]
        self._csr_w = None

    # --- event-driven expansion of active (key, sample) pairs into edges: (edge, flat u index, repeats)
    def expand(self, keys, bs):
        starts = self.ptr.take(keys)
        lens = self.ptr.take(keys + 1) - starts
        tot = int(lens.sum())
        rep = torch.repeat_interleave(lens, output_size=tot)          # event of each expanded edge
        first = torch.cumsum(lens, 0) - lens                          # exclusive prefix sum
        e = torch.arange(tot).add_((starts - first).take(rep))
        flat = self.postB.take(e).add_(bs.take(rep))
        return e, flat, rep

    # ev = (recurrent keys, samples, input keys, samples, input counts); recurrent spikes count 1
    def drive(self, w, ev):
        u = w.new_zeros(self.NR * self.B)
        e, flat, _ = self.expand(ev[0], ev[1])
        u.index_add_(0, flat, w.take(e))
        e, flat, rep = self.expand(ev[2], ev[3])
        u.index_add_(0, flat, w.take(e).mul_(ev[4].take(rep)))
        return u

    def weight_grad(self, w, gu, ev):
        gu = gu.reshape(-1)
        gw = torch.zeros_like(w)
        e, flat, _ = self.expand(ev[0], ev[1])
        gw.index_add_(0, e, gu.take(flat))
        e, flat, rep = self.expand(ev[2], ev[3])
        gw.index_add_(0, e, gu.take(flat).mul_(ev[4].take(rep)))
        return gw

    # --- transposed product over all recurrent edges: out[j*D + d-1, b] = sum_e w_e gu[post_e, b]
    def transposed(self, w, gu):
        wr = w[:self.E_rec]
        if self.transpose == 'bag':
            return F.embedding_bag(self.post_rec, gu, self.ptr_rec, mode='sum', per_sample_weights=wr,
                                   include_last_offset=True)
        if self.transpose == 'index_add':
            g = gu.index_select(0, self.post_rec).mul_(wr[:, None])
            return gu.new_zeros((self.N * self.D, self.B)).index_add_(0, self.key_rec, g)
        # csr: the matrix wraps the current weights (rebuilt when they change, i.e. once per update)
        if self._csr_w is None or self._csr_w[0] is not w:
            m = torch.sparse_csr_tensor(self.ptr_rec, self.post_rec, wr.detach(), size=(self.N * self.D, self.NR))
            self._csr_w = (w, m)
        return torch.sparse.mm(self._csr_w[1], gu) if hasattr(torch.sparse, 'mm') else self._csr_w[1] @ gu


class EdgeDrive(torch.autograd.Function):
    """u[post, b] of step t = sum over delays d of the edges of row (j, d) whose source j was active in step t-d.

    events: list over d = 1..D of (base_key j*D, sample b, count) of step t-d (None when t-d < 0);
    zs: the damped recurrent spikes of those steps (autograd inputs, for dL/dz only)."""

    @staticmethod
    def forward(ctx, w, edges, events, *zs):
        ev = EdgeDrive.gather(events)
        u = edges.drive(w, ev)
        ctx.edges, ctx.ev = edges, ev
        ctx.present = [e is not None for e in events]
        ctx.save_for_backward(w)
        return u.view(edges.N, edges.R, edges.B)

    @staticmethod
    def gather(events):
        """Concatenate the events of steps t-1..t-D with the delay added to their keys."""
        parts = [[], [], [], [], []]
        for d, ev in enumerate(events):
            if ev is not None:
                parts[0].append(ev[0] + d)
                parts[1].append(ev[1])
                parts[2].append(ev[2] + d)
                parts[3].append(ev[3])
                parts[4].append(ev[4])
        return tuple(torch.cat(p) for p in parts)

    @staticmethod
    def backward(ctx, gu):
        (w,) = ctx.saved_tensors
        edges = ctx.edges
        gu = gu.reshape(edges.NR, edges.B)
        gw = edges.weight_grad(w, gu, ctx.ev) if ctx.needs_input_grad[0] else None
        if any(ctx.needs_input_grad[3:]):
            out = edges.transposed(w, gu).view(edges.N, edges.D, edges.B)
            gz = [out[:, d, :] for d, p in enumerate(ctx.present) if p]
        else:
            gz = [None] * sum(ctx.present)
        return (gw, None, None, *gz)


class DenseBagDrive(torch.autograd.Function):
    """Alternative forward (--drive dense-bag): pull over ALL edges, u[p, b] = sum_{e into p} w_e a[slot_e, src_e, b]
    with F.embedding_bag (bags = targets, the activity of steps t-1..t-D as the table). Same backward."""

    @staticmethod
    def forward(ctx, w, edges, events, table, *zs):
        if getattr(edges, 'pull_w', (None,))[0] is not w:       # permuted weights, once per update
            edges.pull_w = (w, w.take(edges.pull_perm))
        u = F.embedding_bag(edges.pull_idx, table, edges.pull_ptr, mode='sum',
                            per_sample_weights=edges.pull_w[1], include_last_offset=True)
        ctx.edges, ctx.ev = edges, EdgeDrive.gather(events)
        ctx.present = [e is not None for e in events]
        ctx.save_for_backward(w)
        return u.view(edges.N, edges.R, edges.B)

    @staticmethod
    def backward(ctx, gu):
        gw, _, _, *gz = EdgeDrive.backward(ctx, gu)
        return (gw, None, None, None, *gz)


def setup_dense_pull(edges, net):
    """Index arrays of the dense pull: edges by target, table rows (d - 1) * (N + J) + source."""
    src = net.e_src[edges.order]
    d = net.e_d[edges.order]
    post = edges.post.numpy()
    perm = np.argsort(post, kind='stable')
    edges.pull_perm = torch.as_tensor(perm, dtype=torch.long)
    edges.pull_idx = torch.as_tensor(((d - 1) * (net.N + net.J) + src)[perm], dtype=torch.long)
    edges.pull_ptr = torch.as_tensor(np.searchsorted(post[perm], np.arange(edges.NR + 1)), dtype=torch.long)


# ----------------------------------------------------------------------------------------------- the model
class Baseline:
    def __init__(self, conf, dtype, drive='events', transpose='bag', inputs='torch'):
        self.conf, self.dtype, self.drive, self.input_mode = conf, dtype, drive, inputs
        self.net, self.inputs, self.run = load_model(conf, RunParams(conf))
        net = self.net
        self.tm = TorchModel(net)                 # only for the surface layout and node types
        self.tc = TrainConfig(conf.get('train'), self.tm)
        self.T, self.B, self.dt = self.run.n_steps, self.run.batch_size, self.run.dt
        self.edges = Edges(net, self.tm, self.B, dtype, transpose)
        if drive == 'dense-bag':
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
            elif self.drive == 'dense-bag':
                rows = [torch.cat([zdamp[t - d].detach(), x[t - d]]) if t - d >= 0
                        else x.new_zeros((N + J, B)) for d in range(1, D + 1)]
                u = DenseBagDrive.apply(w, e, evs, torch.cat(rows), *zin)
            else:
                u = EdgeDrive.apply(w, e, evs, *zin)
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

    def step(self, timed=True):
        """One training update. Returns a dict of times and loss values."""
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
                 for s in self.w if self.tc.trainable[s]}
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


def peak_rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024.0 * 1024.0)


def check(conf, args):
    """float64, the oracle's exact input draws: compare loss, spikes and gradients with the oracle Trainer."""
    from oracle.train import Trainer
    bl = Baseline(conf, torch.float64, args.drive, args.transpose, inputs='oracle')
    t0 = time.perf_counter()
    res = bl.step()
    t1 = time.perf_counter()
    tr = Trainer(conf)
    samples = np.arange(0, tr.B, dtype=np.int64)
    ref = tr.loss_and_grad(samples)
    t2 = time.perf_counter()
    print('check (float64, oracle input draws, samples 0..%d, T=%d): baseline loss %.15g spikes %d rate %.4f Hz '
          '(%.1f s); oracle loss %.15g spikes %d rate %.4f Hz (%.1f s); |loss diff| %.3g (rel %.3g)'
          % (tr.B - 1, tr.T, res['total'], res['spikes'], res['rate'], t1 - t0, ref['total'], ref['n_spikes'],
             ref['rate_mean_hz'], t2 - t1, abs(res['total'] - ref['total']),
             abs(res['total'] - ref['total']) / max(abs(ref['total']), 1e-300)))
    ok = res['spikes'] == ref['n_spikes'] and abs(res['total'] - ref['total']) <= 1e-9 * abs(ref['total'])
    for s, g in res['grads'].items():
        lo, hi = bl.edges.surfaces[s]
        orig = bl.edges.order[lo:hi]                       # edge indices, in this script's order
        inv = np.empty(bl.net.e_w.shape[0], np.int64)
        inv[bl.tm.surface_edges[s]] = np.arange(len(bl.tm.surface_edges[s]))
        gref = ref['grads'][s][inv[orig]]
        gm = g.numpy()
        scale = max(np.abs(gref).max(), 1e-300)
        diff = np.abs(gm - gref).max()
        print('  grad %-9s %8d edges: max |grad| %.6g, max |diff| %.3g (rel %.3g)' % (s, len(gm), scale, diff,
                                                                                       diff / scale))
        ok = ok and diff <= 1e-8 * scale
    print('check', 'OK' if ok else 'FAILED')
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--config', required=True, help='DIR/net_N/bench_train.json of dpointnet-bench-train')
    ap.add_argument('--updates', type=int, default=2, help='timed updates after one warm-up update')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--precision', choices=('float32', 'float64'), default='float32')
    ap.add_argument('--transpose', choices=('bag', 'index_add', 'csr'), default='bag',
                    help='implementation of the transposed sparse product (dL/dz)')
    ap.add_argument('--drive', choices=('events', 'dense-bag'), default='events',
                    help='forward drive: event-driven index_add_ or dense embedding_bag pull')
    ap.add_argument('--inputs', choices=('torch', 'oracle'), default='torch',
                    help='input draws: torch RNG at the configured rates, or the oracle\'s exact Philox draws')
    ap.add_argument('--no-flush-denormal', action='store_true',
                    help='keep subnormal floats (default: torch.set_flush_denormal(True))')
    ap.add_argument('--steps', type=int, help='override T (run.tstop / dt)')
    ap.add_argument('--batch', type=int, help='override B')
    ap.add_argument('--check', action='store_true', help='float64 comparison with the oracle Trainer')
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    flush = not args.no_flush_denormal and torch.set_flush_denormal(True)
    conf = load_config(args.config)
    if args.steps is not None:
        conf['run']['tstop'] = args.steps * float(conf['run']['dt'])
        conf['run'].pop('duration', None)
    if args.batch is not None:
        conf['run']['batch_size'] = args.batch
    if args.check:
        return check(conf, args)
    dtype = torch.float32 if args.precision == 'float32' else torch.float64
    bl = Baseline(conf, dtype, args.drive, args.transpose, args.inputs)
    bl.step()                                           # warm-up
    acc = {'forward': 0.0, 'backward': 0.0, 'update': 0.0}
    last = None
    for _ in range(args.updates):
        last = bl.step()
        for k in acc:
            acc[k] += last[k]
    n = max(args.updates, 1)
    step = sum(acc.values()) / n
    print('torch %7d neurons %10d edges T=%d B=%d %s: step %8.3f s (forward %.3f + backward %.3f + update %.4f); '
          '%8.2f samples/s; peak RSS %.2f GiB; rate %.2f Hz; loss %.6g [drive %s, transpose %s, %d threads%s]'
          % (bl.net.N, bl.edges.E, bl.T, bl.B, args.precision, step, acc['forward'] / n, acc['backward'] / n,
             acc['update'] / n, bl.B / step if step > 0 else float('nan'), peak_rss_gib(),
             last['rate'] if last else float('nan'), last['total'] if last else float('nan'), args.drive,
             args.transpose, torch.get_num_threads(), ', flush denormals' if flush else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
