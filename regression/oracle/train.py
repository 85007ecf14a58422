"""Training oracle: BPTT with surrogate gradients (MODEL.md sections 4-8 and 10), PyTorch float64.

Written from the specification only. The forward pass (torch_model.py) is the step of MODEL.md
section 4 in torch tensors so that autograd produces the gradient; the non-standard parts of the
gradient are in autograd_ops.py; losses and Adam in optim.py; the "train" section in train_config.py.
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
from .optim import compute_losses, Adam, clip_by_global_norm, sign_constraint

__all__ = ['DTYPE', 'TrainError', 'SpikeFunction', 'surrogate_spike', 'ScaleGrad', 'scale_grad', 'EdgeDrive',
           'TorchModel', 'LOSS_TYPES', 'TrainConfig', 'compute_losses', 'Adam', 'clip_by_global_norm',
           'sign_constraint', 'Trainer']


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
        self.condition_inputs = []
        for c in (conf.get('train') or {}).get('conditions') or []:
            cc = copy.deepcopy(conf)
            cc['inputs'].update(copy.deepcopy(c))
            self.condition_inputs.append(build_inputs(cc, self.net, self.run))
        self.run.n_steps = window
        self.model = TorchModel(self.net)
        self.tc = TrainConfig(conf.get('train'), self.model)
        self.T, self.B, self.dt = self.run.n_steps, self.run.batch_size, self.run.dt
        self.W = int(round(self.tc.warmup_ms / self.dt))  # warm-up steps before the window of T steps
        self.spike_fn = spike_fn or surrogate_spike(self.tc.surrogate, self.tc.gamma, self.tc.sigma)
        self.vdamp = scale_grad(1.0 - self.tc.voltage_gradient_dampening)
        self.rdamp = scale_grad(self.tc.recurrent_dampening_factor)
        self.w0 = self.model.initial_weights()
        self.w = {s: a.copy() for s, a in self.w0.items()}
        self.adam = Adam(self.tc.lr, self.tc.beta1, self.tc.beta2, self.tc.epsilon)
        self.update = 0
        self.carry = None  # train.carry_state: the start state of every sample slot of the next update

    def input_counts(self, samples, inputs=None):
        """x[b, k, j] exactly as the forward oracle builds it (sum over sources of a population)."""
        x = np.zeros((len(samples), self.W + self.T, self.net.J))
        for src in (self.inputs if inputs is None else inputs):
            c = src.counts(samples, 0, self.W + self.T)
            x[:, :, src.virt_offset:src.virt_offset + c.shape[2]] += c
        return torch.as_tensor(x)

    def loss_and_grad(self, samples):
        """Forward + backward for the given global sample indices at the current weights."""
        m, tc = self.model, self.tc
        wt = {s: torch.tensor(self.w[s], dtype=DTYPE, requires_grad=tc.trainable[s]) for s in m.surface_names}
        w0t = {s: torch.as_tensor(self.w0[s]) for s in m.surface_names}
        samples = np.asarray(samples, dtype=np.int64)
        if self.condition_inputs:
            # micro-batch m of B samples runs condition m // accumulate: build each block with its inputs
            A = self.tc.accumulate
            x = torch.cat([self.input_counts(samples[m * self.B:(m + 1) * self.B], self.condition_inputs[m // A])
                           for m in range(len(samples) // self.B)], dim=0)
        else:
            x = self.input_counts(samples)
        out = m.forward(wt, x, self.spike_fn, self.vdamp, self.rdamp, warmup=self.W,
                        init=self.carry if tc.carry_state else None)
        self.final = out['final']
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
        """One update on samples update*G .. update*G+G-1, G = accumulate x B (gradient accumulation is the mean over
        all G samples, i.e. one batch of G). Returns the loss/grad record (grads before clipping)."""
        k = self.update
        G = self.tc.accumulate * max(1, len(self.condition_inputs)) * self.B
        samples = np.arange(k * G, (k + 1) * G, dtype=np.int64)
        res = self.loss_and_grad(samples)
        grads, norm = clip_by_global_norm(res['grads'], self.tc.clip_global_norm)
        res['grad_norm'] = norm
        self.adam.step(self.w, grads)
        for s in grads:
            self.w[s] = sign_constraint(self.w[s], self.w0[s])
        self.update += 1
        if self.tc.carry_state:
            self.carry = self.final
        return res
