"""Exponentiated Adam (V1-PAPER section 4.4), numpy float64, one state per surface: Adam's moments, then the
multiplicative step w <- w * exp(-alpha * m / (sqrt(v) + eps) * s(w)), s(w) = sign(w) with s(0) = +1,
alpha = lr * sqrt(1 - beta2^t) / (1 - beta1^t), t counting every step."""
import numpy as np


class ExpAdam:
    def __init__(self, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-11):
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps
        self.m, self.v, self.k = {}, {}, 0

    def step(self, weights, grads):
        """weights, grads: {surface: ndarray}; updates weights in place (surfaces in grads only)."""
        self.k += 1
        alpha = self.lr * np.sqrt(1.0 - self.b2 ** self.k) / (1.0 - self.b1 ** self.k)
        for s, g in grads.items():
            m = self.m.get(s, np.zeros_like(g))
            v = self.v.get(s, np.zeros_like(g))
            m = self.b1 * m + (1.0 - self.b1) * g
            v = self.b2 * v + (1.0 - self.b2) * (g * g)
            self.m[s], self.v[s] = m, v
            sign = np.where(weights[s] < 0, -1.0, 1.0)
            weights[s] *= np.exp(-alpha * m / (np.sqrt(v) + self.eps) * sign)


def make_optimizer(tc):
    """The optimizer of train.optimizer.type ("adam" or "exp_adam")."""
    from .optim import Adam
    cls = ExpAdam if tc.optimizer_type == 'exp_adam' else Adam
    return cls(tc.lr, tc.beta1, tc.beta2, tc.epsilon)
