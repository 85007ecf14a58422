"""Differentiable model of the training oracle: the step of MODEL.md section 4 in torch tensors.

Stop-gradients: the reset term, the ASC jump and the refractory counter use z_prev.detach();
inputs carry no gradient. The weight surfaces are "recurrent" and one per virtual population.
"""
import numpy as np
import torch

from .autograd_ops import DTYPE, EdgeDrive


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
        self.rows = torch.arange(net.N, dtype=torch.long)[:, None]
        self.drive_src = torch.as_tensor(net.drive_src, dtype=torch.long)   # slow kernels: their port's input
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
        self.nest = getattr(net, 'nest', False)
        if self.nest:  # run.dynamics = "nest" (docs/model-nest.md)
            self.p31, self.p32, self.asc_sc, self.asc_rr = t(net.p31), t(net.p32), t(net.asc_sc), t(net.asc_rr)
            self.v_init, self.i_e, self.v_min = t(net.v_init), t(net.i_e), t(net.v_min)
            self.iaf = torch.as_tensor(net.iaf)
            self.v_reset_n = t(net.v_reset_n)
        node_types = [p.node_type_id for p in net.rec_pops]
        self.node_type_id = np.concatenate(node_types) if node_types else np.zeros(0, np.int64)

    def node_type_column(self, col):
        """Per recurrent neuron, the value (str) of a node-types column; node_type_id as its decimal string."""
        vals = []
        for p in self.net.rec_pops:
            for t in p.node_type_id:
                v = str(int(t)) if col == 'node_type_id' else p.types.get(int(t), col)
                if v is None:
                    raise ValueError('node type %d has no %s' % (int(t), col))
                vals.append(v)
        return np.array(vals, dtype=object)

    def initial_weights(self):
        return {s: self.net.e_w[self.surface_edges[s]].copy() for s in self.surface_names}

    def full_weights(self, wsurf):
        """Concatenate the surface tensors back into edge order (differentiable)."""
        return torch.cat([wsurf[s] for s in self.surface_names])[self.inv_order]

    def discrete_step(self, v, r, asc, psc_rise, psc, u, zsg, spike_fn, vdamp):
        """Steps 2-7 of MODEL.md section 4; zsg is sg(z_prev) (or the tests' frozen sequence)."""
        R, A = self.R, self.A
        # 2. alpha PSC
        new_psc_rise = self.syn_decay * psc_rise + self.psc_initial * u
        new_psc = self.syn_decay * psc + self.dt_syn_decay * psc_rise
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
        return new_v, new_r, new_asc, new_psc_rise, new_psc, z

    def nest_step(self, v, r, asc, psc_rise, psc, u, spike_fn, vdamp):
        """One step of docs/model-nest.md section 1 (glif_psc / iaf_psc_alpha), section 6's gradient conventions:
        the V of a held step is vdamp(V); the reset, the ASC and the refractory counter carry no gradient; the V_min
        clamp passes the gradient straight through. Returns the state, z and V before the reset (the losses' v)."""
        open_ = (r == 0).to(DTYPE)
        vd = vdamp(v)
        syn = None
        for c in range(self.R):
            term = self.p31[:, c] * psc_rise[:, :, c] + self.p32[:, c] * psc[:, :, c]
            syn = term if syn is None else syn + term
        S = (self.asc_sc[None] * asc).sum(-1)
        u_glif = self.decay * vd + S * self.current_factor + syn
        u_iaf = self.current_factor * self.i_e + syn + self.decay * vd + vd
        u_iaf = u_iaf + (torch.maximum(u_iaf, self.v_min) - u_iaf).detach()
        integ = torch.where(self.iaf, u_iaf, u_glif)
        v_pre = open_ * integ + (1 - open_) * vd
        z = spike_fn(v_pre, open_ > 0)
        zd = z.detach()
        new_v = v_pre - (zd * (v_pre - self.v_reset_n)).detach()
        a_open = asc * self.asc_decay_f
        a_open = torch.where(zd[:, :, None] > 0, self.asc_amps_n + a_open * self.asc_rr, a_open)
        new_asc = (open_[:, :, None] * a_open + (1 - open_[:, :, None]) * asc).detach()
        new_r = torch.where(zd > 0, self.t_ref_steps.expand_as(r), torch.where(open_ > 0, r, r - 1.0)).detach()
        new_psc = self.dt_syn_decay * psc_rise + self.syn_decay * psc
        new_psc_rise = self.syn_decay * psc_rise + self.psc_initial * u
        return new_v, new_r, new_asc, new_psc_rise, new_psc, z, v_pre

    def forward(self, wsurf, x, spike_fn, vdamp=lambda v: v, rdamp=lambda z: z, sg_z=None, record=(), warmup=0,
                init=None):
        """Run MODEL.md section 4 for all T steps.

        warmup: the first `warmup` steps run without gradient (train.warmup_ms): at the start of step `warmup`
        every state and the activity history are detached, and only the steps from `warmup` on are returned.
        init: a carried state (train.carry_state), the 'final' of an earlier call: the run starts at step
        `warmup` (no warm-up) from its state, and its D activity entries are the steps warmup - D .. warmup - 1.
        The result's 'final' is the state after the last step with the activity of the last D steps (zeros for
        steps before 0), all detached.

        wsurf: {surface: tensor [E_s]}; x: input counts tensor [B, T, J] (no gradient);
        spike_fn(v', free) -> z; vdamp / rdamp: voltage and recurrent-read dampers;
        sg_z: optional list of T tensors [B, N] used instead of sg(z_prev) in the reset, the ASC jump and
        r (tests only: a frozen sequence gives exactly the stop-gradient semantics under finite
        differences). Returns dict z [B, T, N], v [B, T, N] (+ recorded states)."""
        B, T = x.shape[0], x.shape[1]
        N, R, A = self.N, self.R, self.A
        w = self.full_weights(wsurf)
        v = torch.zeros((B, N), dtype=DTYPE)
        if self.nest:
            v = v + self.v_init
        r = torch.zeros((B, N), dtype=DTYPE)
        asc = torch.zeros((B, N, A), dtype=DTYPE)
        psc_rise = torch.zeros((B, N, R), dtype=DTYPE)
        psc = torch.zeros((B, N, R), dtype=DTYPE)
        z_prev = torch.zeros((B, N), dtype=DTYPE)
        acts, zs, vs = [], [], []
        acts_base, t_first = 0, 0  # acts[k] is the activity of step acts_base + k
        if init is not None:
            v, r, asc, psc_rise, psc, z_prev = (init[k] for k in ('v', 'r', 'asc', 'psc_rise', 'psc', 'z_prev'))
            acts = list(init['acts'])
            acts_base, t_first = warmup - len(acts), warmup
        rec = {k: [] for k in record}
        for t in range(t_first, T):
            if warmup and t == warmup and init is None:
                v, r, asc, psc_rise, psc, z_prev = (a.detach() for a in (v, r, asc, psc_rise, psc, z_prev))
                acts = [a.detach() for a in acts]
            # 1. synaptic drive from the activity of steps t - d (zero before step 0)
            groups, gacts = [], []
            for d, eidx, src in self.delay_groups:
                if t - d >= acts_base:
                    groups.append((eidx, src))
                    gacts.append(acts[t - d - acts_base])
            if groups:
                u = EdgeDrive.apply(w, groups, self.post, N * R, *gacts).view(B, N, R)
            else:
                u = torch.zeros((B, N, R), dtype=DTYPE)
            u = u[:, self.rows, self.drive_src]
            if self.nest:
                new_v, new_r, new_asc, new_psc_rise, new_psc, z, v_seen = self.nest_step(v, r, asc, psc_rise, psc, u,
                                                                                        spike_fn, vdamp)
            else:
                zsg = z_prev.detach() if sg_z is None else (sg_z[t - 1] if t > 0 else torch.zeros_like(z_prev))
                new_v, new_r, new_asc, new_psc_rise, new_psc, z = self.discrete_step(v, r, asc, psc_rise, psc, u, zsg,
                                                                                     spike_fn, vdamp)
                v_seen = new_v  # what the losses see (nest: V before the reset)
            psc_rise, psc, asc, v, r, z_prev = new_psc_rise, new_psc, new_asc, new_v, new_r, z
            # 8. history: recurrent reads see the damped z, inputs carry no gradient
            acts.append(torch.cat([rdamp(z), x[:, t, :]], dim=1))
            if t < warmup:
                continue
            zs.append(z)
            vs.append(v_seen)
            for k in rec:
                rec[k].append({'u': u, 'psc': psc, 'psc_rise': psc_rise, 'asc': asc, 'r': r}[k])
        out = {'z': torch.stack(zs, 1), 'v': torch.stack(vs, 1)}
        D = self.D
        hist = [a.detach() for a in acts[-D:]]
        if len(hist) < D:
            hist = [torch.zeros((B, N + self.J), dtype=DTYPE)] * (D - len(hist)) + hist
        out['final'] = {'v': v.detach(), 'r': r.detach(), 'asc': asc.detach(), 'psc_rise': psc_rise.detach(),
                        'psc': psc.detach(), 'z_prev': z_prev.detach(), 'acts': hist}
        for k, lst in rec.items():
            out[k] = torch.stack(lst, 1)
        return out
