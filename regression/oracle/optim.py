"""Losses and optimizer of the training oracle: loss terms, Adam, global-norm clip, sign constraint."""
import math

import numpy as np
import torch

from .autograd_ops import DTYPE
from .v1_losses import loss_window, rate_distribution_loss, emd_loss
from .v1_sync_osi import OSI_EMA_INIT, osi_ema_step, osi_loss, osi_rates, sync_loss


def osi_normaliser(L, z, dt, e=None):
    """The OrientationSelectivity normaliser after this batch's EMA step from e (default: the initial 0.003)."""
    e = np.full(z.shape[2], OSI_EMA_INIT) if e is None else e
    return osi_ema_step(e, osi_rates(L, z.detach(), dt).numpy(), L['ema_decay'])


def compute_losses(specs, z, v, dt, wsurf, w0surf, trainable, surface_names, ctx=None):
    """Return (total tensor, {name: tensor}, rate_mean_hz float). z, v: [B, T, N]. ctx (optional): 'update' (the
    update's 0-based index, Synchronization's shuffles; default 0), 'samples' (global sample index of each row of
    z; default 0..B-1) and 'ema' ({OrientationSelectivity name: its normaliser after this update's EMA step};
    default one EMA step from the initial value on this batch)."""
    ctx = ctx or {}
    terms = {}
    for L in specs:
        ty, cost = L['type'], L['cost']
        if ty == 'TargetFiringRate':
            zw = loss_window(z, L, dt)      # pre_ms/post_ms: T = the steps read
            T = zw.shape[1]
            if L['unit'] == 'Hz':
                rate = 1000.0 * zw.sum(1) / (T * dt)
            else:
                rate = zw.sum(1) / T
            target = torch.as_tensor(L['target_vec'])
            val = cost * ((rate - target) ** 2).mean()
        elif ty == 'RateDistribution':
            # pooled over the whole batch and the window; sorted per group by torch's stable sort (v1_losses.py)
            val = rate_distribution_loss(L, z, dt)
        elif ty == 'Synchronization':
            val = sync_loss(L, z, dt, int(ctx.get('update', 0)))
        elif ty == 'OrientationSelectivity':
            ema = (ctx.get('ema') or {}).get(L['name'])
            samples = ctx.get('samples', np.arange(z.shape[0]))
            val = osi_loss(L, z, dt, samples, osi_normaliser(L, z, dt) if ema is None else ema)
        elif ty == 'EMDWeightRegularization':   # the recurrent surface against its initial weights
            val = emd_loss(L, wsurf['recurrent'], w0surf['recurrent'])
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
