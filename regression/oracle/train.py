"""Training oracle: BPTT with surrogate gradients (MODEL.md sections 4-8 and 10), PyTorch float64.

Written from the specification only. The forward pass (torch_model.py) is the step of MODEL.md
section 4 in torch tensors so that autograd produces the gradient; the non-standard parts of the
gradient are in autograd_ops.py; losses and Adam in optim.py, exponentiated Adam in exp_adam.py; the "train"
section in train_config.py. Stimulus conditions (train.conditions) are input overrides or condition objects
{"name", "inputs", "losses"}; train.approach combines them: "accumulate" (one step on the mean over the
conditions), "series" (one step per condition, in order), "series_accumulate" (one step on the sum).
The windows start at rest, or from a carried state: train.carry_state (the previous update's final state of each
sample slot) or train.initial_state "from_input" (per epoch, the final state of a no-gradient run of override inputs).
This module holds the Trainer and re-exports those names. Trainable variables are the normalized
weights (weight_pA / vs of the target), one tensor per surface ("recurrent" and one per virtual population).
"""
import copy

import numpy as np
import torch

from .config import RunParams, ConfigError                                           # noqa: F401
from .inputs import build_inputs
from .model import load_model
from .autograd_ops import DTYPE, TrainError, SpikeFunction, surrogate_spike, ScaleGrad, scale_grad, EdgeDrive
from .torch_model import TorchModel
from .train_config import LOSS_TYPES, TrainConfig
from .optim import compute_losses, osi_normaliser, Adam, clip_by_global_norm, sign_constraint
from .v1_sync_osi import PER_CONDITION_TYPES
from .exp_adam import ExpAdam, make_optimizer

__all__ = ['DTYPE', 'TrainError', 'SpikeFunction', 'surrogate_spike', 'ScaleGrad', 'scale_grad', 'EdgeDrive',
           'TorchModel', 'LOSS_TYPES', 'TrainConfig', 'compute_losses', 'Adam', 'clip_by_global_norm',
           'sign_constraint', 'ExpAdam', 'Trainer']


def is_condition_object(c):
    """A condition object {"name", "inputs", "losses"} rather than input overrides."""
    return isinstance(c, dict) and any(k in c for k in ('name', 'inputs', 'losses'))


def slice_state(state, lo, hi):
    """Samples lo..hi-1 of a carried state (the 'final' of a forward pass)."""
    out = {k: v[lo:hi] for k, v in state.items() if k != 'acts'}
    out['acts'] = [a[lo:hi] for a in state['acts']]
    return out


def join_states(states):
    out = {k: torch.cat([s[k] for s in states], 0) for k in states[0] if k != 'acts'}
    out['acts'] = [torch.cat([s['acts'][j] for s in states], 0) for j in range(len(states[0]['acts']))]
    return out


class Trainer:
    def __init__(self, conf, run=None, spike_fn=None):
        self.conf = conf
        self.run = run or RunParams(conf)
        # inputs cover the warm-up (train.warmup_ms) and the window of run.tstop, times counted from the warm-up
        window = self.run.n_steps
        warmup = int(round(float((conf.get('train') or {}).get('warmup_ms', 0.0)) / self.run.dt))
        self.run.n_steps = warmup + window
        self.net, self.inputs, self.run = load_model(conf, self.run)
        # stimulus conditions (train.conditions): the inputs with each condition's overrides applied
        self.condition_inputs, self.condition_names, condition_losses = [], [], []
        for i, c in enumerate((conf.get('train') or {}).get('conditions') or []):
            obj = is_condition_object(c)
            cc = copy.deepcopy(conf)
            cc['inputs'].update(copy.deepcopy(c.get('inputs', {}) if obj else c))
            self.condition_inputs.append(build_inputs(cc, self.net, self.run))
            self.condition_names.append(c.get('name', 'condition_%d' % i) if obj else 'condition_%d' % i)
            condition_losses.append(c.get('losses') if obj else None)
        self.run.n_steps = window
        self.model = TorchModel(self.net)
        self.tc = TrainConfig(conf.get('train'), self.model)
        # train.initial_state "from_input": the base inputs with its overrides, for the T steps of the from-input run
        self.initial_inputs = None
        if self.tc.initial_state:
            cc = copy.deepcopy(conf)
            cc['inputs'].update(copy.deepcopy(self.tc.initial_state['inputs']))
            self.initial_inputs = build_inputs(cc, self.net, self.run)
        # each condition's loss specs: its own (parsed as train.losses is) or train.losses
        self.single_loss_set = all(L is None for L in condition_losses)
        self.condition_losses = [self.tc.losses if L is None else TrainConfig({'losses': L}, self.model).losses
                                 for L in condition_losses]
        self.T, self.B, self.dt = self.run.n_steps, self.run.batch_size, self.run.dt
        self.W = int(round(self.tc.warmup_ms / self.dt))  # warm-up steps before the window of T steps
        self.spike_fn = spike_fn or surrogate_spike(self.tc.surrogate, self.tc.gamma, self.tc.sigma)
        self.vdamp = scale_grad(1.0 - self.tc.voltage_gradient_dampening)
        self.rdamp = scale_grad(self.tc.recurrent_dampening_factor)
        self.w0 = self.model.initial_weights()
        self.w = {s: a.copy() for s, a in self.w0.items()}
        self.adam = make_optimizer(self.tc)  # Adam or ExpAdam (train.optimizer.type)
        self.update = 0
        # the start state of every sample slot of the next update: train.carry_state (the previous update's final
        # state) or train.initial_state (the epoch's from-input state, one copy per condition)
        self.carry = None
        self.epoch_state = None  # train.initial_state: the from-input state of the current epoch's G slots
        # OrientationSelectivity normalisers: {(condition index or None, loss name): [N]}, carried across updates
        self.loss_state = {}

    def input_counts(self, samples, inputs=None):
        """x[b, k, j] exactly as the forward oracle builds it (sum over sources of a population)."""
        x = np.zeros((len(samples), self.W + self.T, self.net.J))
        for src in (self.inputs if inputs is None else inputs):
            c = src.counts(samples, 0, self.W + self.T)
            x[:, :, src.virt_offset:src.virt_offset + c.shape[2]] += c
        return torch.as_tensor(x)

    def loss_ctx(self, specs, z, samples, c, record):
        """compute_losses' ctx for one condition's batch (c: its index, None without conditions): the update index,
        the rows' global samples and every OrientationSelectivity normaliser after its EMA step on this batch (the
        one step of this update, taken here); record gets {'<condition>/<name>' or '<name>': normaliser}."""
        ema = {}
        for L in specs:
            if L['type'] == 'OrientationSelectivity':
                key = (c, L['name'])
                self.loss_state[key] = ema[L['name']] = osi_normaliser(L, z, self.dt, self.loss_state.get(key))
                record[L['name'] if c is None else self.condition_names[c] + '/' + L['name']] = ema[L['name']].copy()
        return {'update': self.update, 'samples': np.asarray(samples), 'ema': ema}

    def loss_and_grad(self, samples, condition=None, combine='mean'):
        """Forward + backward for the given global sample indices at the current weights. Without conditions: the
        losses of train.losses over the batch. With conditions: micro-batch m of B samples runs condition m // A
        (or `condition` for every micro-batch); each condition's losses over its own samples, their totals combined
        by `combine` ('mean' or 'sum') for the gradient; pooled losses pool the whole batch when every condition
        uses train.losses and combine is 'mean' (approach "accumulate"). 'total' is the mean over the conditions."""
        m, tc = self.model, self.tc
        wt = {s: torch.tensor(self.w[s], dtype=DTYPE, requires_grad=tc.trainable[s]) for s in m.surface_names}
        w0t = {s: torch.as_tensor(self.w0[s]) for s in m.surface_names}
        samples = np.asarray(samples, dtype=np.int64)
        A, B = self.tc.accumulate, self.B
        conds = []
        if self.condition_inputs:
            conds = [condition if condition is not None else mb // A for mb in range(len(samples) // B)]
            x = torch.cat([self.input_counts(samples[mb * B:(mb + 1) * B], self.condition_inputs[c])
                           for mb, c in enumerate(conds)], dim=0)
        else:
            x = self.input_counts(samples)
        init = self.carry if (tc.carry_state or tc.initial_state) else None
        out = m.forward(wt, x, self.spike_fn, self.vdamp, self.rdamp, warmup=self.W, init=init)
        self.final = out['final']
        args = (self.dt, wt, w0t, tc.trainable, m.surface_names)
        per_condition, state = {}, {}
        if not conds:
            ctx = self.loss_ctx(tc.losses, out['z'], samples, None, state)
            total, terms, rate = compute_losses(tc.losses, out['z'], out['v'], *args, ctx=ctx)
            grad_of = total
        else:
            for c in sorted(set(conds)):
                rows = np.concatenate([np.arange(mb * B, (mb + 1) * B) for mb, cm in enumerate(conds) if cm == c])
                idx = torch.as_tensor(rows)
                ctx = self.loss_ctx(self.condition_losses[c], out['z'][idx], samples[rows], c, state)
                per_condition[c] = compute_losses(self.condition_losses[c], out['z'][idx], out['v'][idx], *args,
                                                  ctx=ctx)
            totals = [t for t, _, _ in per_condition.values()]
            if self.single_loss_set and combine == 'mean':
                # one pool over every sample: the losses of train.losses over the whole batch, except Synchronization
                # and OrientationSelectivity (per condition's batch): the mean over the conditions of their values
                own = [L['name'] for L in tc.losses if L['type'] in PER_CONDITION_TYPES]
                total, terms, rate = compute_losses([L for L in tc.losses if L['name'] not in own], out['z'],
                                                    out['v'], *args)
                for n in own:
                    terms[n] = sum(ct[n] for _, ct, _ in per_condition.values()) / len(totals)
                    total = total + terms[n]
                terms = {L['name']: terms[L['name']] for L in tc.losses}
                pooled = [L['name'] for L in tc.losses if L['type'] == 'RateDistribution']
                for c, (_, cterms, _) in per_condition.items():
                    for n in pooled:
                        cterms[n] = terms[n]
                grad_of = total
            else:
                grad_of = sum(totals[1:], totals[0])
                if combine == 'mean':
                    grad_of = grad_of / len(totals)
                total = sum(totals[1:], totals[0]) / len(totals)
                rate = float(out['z'].detach().mean()) * 1000.0 / self.dt
                terms = {}
                if self.single_loss_set:   # train.losses' terms: the mean over the conditions
                    for L in tc.losses:
                        terms[L['name']] = sum(ct[L['name']] for _, ct, _ in per_condition.values()) / len(totals)
        if grad_of.requires_grad:
            grad_of.backward()
        grads = {}
        for s in m.surface_names:
            if tc.trainable[s]:
                g = wt[s].grad
                grads[s] = g.numpy().copy() if g is not None else np.zeros_like(self.w[s])
        cond_out = {self.condition_names[c]: {'total': float(sum(ct.values()) if ct else 0.0),
                                              'terms': {k: float(v) for k, v in ct.items()}}
                    for c, (_, ct, _) in per_condition.items()}
        return {'total': float(total), 'terms': {k: float(v) for k, v in terms.items()},
                'conditions': cond_out, 'rate_mean_hz': rate, 'grads': grads, 'loss_state': state,
                'n_spikes': int(out['z'].detach().sum())}

    def apply(self, grads):
        """One optimizer step (clipping, then the sign constraint); returns the gradient norm before clipping."""
        grads, norm = clip_by_global_norm(grads, self.tc.clip_global_norm)
        self.adam.step(self.w, grads)
        for s in grads:
            self.w[s] = sign_constraint(self.w[s], self.w0[s])
        return norm

    def samples_per_condition(self):
        """G: the samples of one condition in an update (accumulate x B; without conditions the update's batch)."""
        return self.tc.accumulate * self.B

    def from_input_state(self, epoch):
        """train.initial_state "from_input": the final state of a run from rest, without gradient, at the current
        weights, of T steps of the override inputs, for the global samples 2^31 + epoch G + p, p = 0 .. G-1."""
        G = self.samples_per_condition()
        samples = (1 << 31) + epoch * G + np.arange(G, dtype=np.int64)
        x = self.input_counts(samples, self.initial_inputs)
        wt = {s: torch.as_tensor(self.w[s].copy()) for s in self.model.surface_names}
        with torch.no_grad():
            return self.model.forward(wt, x, self.spike_fn)['final']

    def step(self):
        """One update on samples update*G .. update*G+G-1, G = conditions x accumulate x B; condition c takes the
        block c*A*B .. (c+1)*A*B - 1 (accumulation is the mean over a condition's samples, i.e. one batch of A x B).
        "series" makes one optimizer step per condition, in order; the others one. With train.initial_state the first
        update of an epoch builds the epoch's G slot states, and every condition's block starts from them. Returns
        the loss/grad record
        (grads before clipping: those of the first optimizer step; grad_norm the mean over the steps)."""
        k = self.update
        C = max(1, len(self.condition_inputs))
        G = self.tc.accumulate * C * self.B
        samples = np.arange(k * G, (k + 1) * G, dtype=np.int64)
        if self.tc.initial_state:
            if k % self.tc.steps_per_epoch == 0:  # the first update of an epoch regenerates the state
                self.epoch_state = self.from_input_state(k // self.tc.steps_per_epoch)
            # condition c's sample at position p of its block starts from slot p's state
            self.carry = join_states([self.epoch_state] * C)
        if self.tc.approach == 'series' and C > 1:
            AB = self.tc.accumulate * self.B
            start, finals, parts = self.carry, [], []
            for c in range(C):
                if start is not None:
                    self.carry = slice_state(start, c * AB, (c + 1) * AB)
                r = self.loss_and_grad(samples[c * AB:(c + 1) * AB], condition=c)
                r['grad_norm'] = self.apply(r['grads'])
                finals.append(self.final)
                parts.append(r)
            self.final = join_states(finals)
            res = dict(parts[0])
            res['conditions'] = {n: v for r in parts for n, v in r['conditions'].items()}
            for key in ('total', 'rate_mean_hz', 'grad_norm'):
                res[key] = sum(r[key] for r in parts) / C
            res['terms'] = {n: sum(r['terms'][n] for r in parts) / C for n in parts[0]['terms']}
            res['n_spikes'] = sum(r['n_spikes'] for r in parts)
            res['loss_state'] = {n: v for r in parts for n, v in r['loss_state'].items()}
        else:
            combine = 'sum' if self.tc.approach == 'series_accumulate' else 'mean'
            res = self.loss_and_grad(samples, combine=combine)
            res['grad_norm'] = self.apply(res['grads'])
        self.update += 1
        if self.tc.carry_state:
            self.carry = self.final
        return res
