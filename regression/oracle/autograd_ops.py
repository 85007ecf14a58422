"""Autograd pieces of the training oracle (PyTorch float64): the spike, the dampers, the synaptic drive.

* SpikeFunction  forward z = 1 iff v' > 1 and r' == 0; backward = surrogate (triangle / gauss),
                 zero where r' > 0;
* ScaleGrad      forward identity, backward multiplied by a constant: the voltage damper
                 (1 - voltage_gradient_dampening) on v in `decay * v`, and the recurrent-read damper
                 (recurrent_dampening_factor) on z where recurrent edges read it;
* EdgeDrive      u[b, post_e] += w_e * act[b, t - d_e, pre_e] over all edges (forward in edge order, as
                 the forward oracle sums); backward: dL/dw_e = sum_b dL/du[b, post_e] act[b, pre_e],
                 dL/dact[b, j] = sum_{e: pre_e = j} w_e dL/du[b, post_e] (only saves references to
                 the activity tensors, so memory stays O(T * B * (N + J))).
"""
import torch

DTYPE = torch.float64


class TrainError(Exception):
    pass


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
