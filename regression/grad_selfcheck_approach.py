"""Training-oracle self-checks of exponentiated Adam (oracle/exp_adam.py) and train.approach with stimulus
conditions (oracle/train.py): closed forms and torch, not the oracle's own code paths."""
import numpy as np
import torch
from oracle.config import load_config
from oracle.train import Trainer, ExpAdam, sign_constraint
from grad_selfcheck_common import TRAIN, check, tiny_config, rel_err


def exp_adam_first_step():
    # t = 1: m = (1 - b1) g = 0.1 g, v = (1 - b2) g^2 = 0.001 g^2, alpha = lr sqrt(0.001) / 0.1, so
    # alpha m / (sqrt(v) + eps) = lr g / (|g| + eps / sqrt(0.001)): w1 = w exp(-lr g / (|g| + eps') sign w)
    lr, eps = 0.05, 1e-11
    w0 = np.array([0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.0])
    g = np.array([2.0, 2.0, -3e-4, -3e-4, 1e-12, -7.0, 4.0])
    opt = ExpAdam(lr, 0.9, 0.999, eps)
    w = {'s': w0.copy()}
    opt.step(w, {'s': g.copy()})
    sign = np.where(w0 < 0, -1.0, 1.0)
    want = w0 * np.exp(-lr * g / (np.abs(g) + eps / np.sqrt(0.001)) * sign)
    check('exp_adam t = 1 from w = +-0.5: w exp(-lr g / (|g| + eps / sqrt(0.001)) sign w) (rel 1e-15)',
          rel_err(w['s'], want) < 1e-15, '%s vs %s' % (w['s'].tolist(), want.tolist()))
    big = np.abs(g) > 1e-6
    check('exp_adam t = 1, |g| >> eps: w exp(-lr sign(g) sign(w)), |w| grows when g w < 0',
          rel_err(w['s'][big & (w0 != 0)], (w0 * np.exp(-lr * np.sign(g) * sign))[big & (w0 != 0)]) < 1e-6
          and abs(w['s'][1]) > 0.5 and abs(w['s'][0]) < 0.5)
    check('exp_adam keeps every sign, 0 stays 0', np.all(np.sign(w['s']) == np.sign(w0)) and w['s'][6] == 0.0)
    check('exp_adam t = 1: alpha = lr sqrt(0.001) / 0.1 and the moments 0.1 g, 0.001 g^2',
          rel_err(opt.m['s'], 0.1 * g) < 1e-15 and rel_err(opt.v['s'], 0.001 * g * g) < 1e-15 and opt.k == 1)


def exp_adam_moments_torch():
    # the same gradient sequence into torch.optim.Adam: its exp_avg / exp_avg_sq are exp_adam's m / v
    rng = np.random.default_rng(4)
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-11
    w = {'s': rng.choice([-1.0, 1.0], 6) * rng.uniform(0.1, 1.0, 6)}
    opt = ExpAdam(lr, b1, b2, eps)
    p = torch.nn.Parameter(torch.zeros(6, dtype=torch.float64))
    topt = torch.optim.Adam([p], lr=lr, betas=(b1, b2), eps=eps)
    wr, mr, vr = w['s'].copy(), np.zeros(6), np.zeros(6)
    for k in range(1, 31):
        gk = np.sin(k * np.arange(1, 7)) * w['s']  # depends on the weights
        opt.step(w, {'s': gk})
        p.grad = torch.as_tensor(gk.copy())
        topt.step()
        mr = b1 * mr + (1 - b1) * gk
        vr = b2 * vr + (1 - b2) * gk * gk
        a = lr * np.sqrt(1 - b2 ** k) / (1 - b1 ** k)
        wr = wr * np.exp(-a * mr / (np.sqrt(vr) + eps) * np.where(wr < 0, -1.0, 1.0))
    st = topt.state[p]
    check('exp_adam moments == torch.optim.Adam exp_avg / exp_avg_sq (30 steps, rel 1e-13)',
          rel_err(opt.m['s'], st['exp_avg'].numpy()) < 1e-13 and rel_err(opt.v['s'], st['exp_avg_sq'].numpy()) < 1e-13)
    check('exp_adam weights == hand-written multiplicative update (30 steps, rel 1e-14)', rel_err(w['s'], wr) < 1e-14)


def two_conditions(name, approach, optimizer='adam'):
    train = dict(TRAIN, approach=approach, optimizer={"type": optimizer, "lr": 0.02},
                 conditions=[{"name": "evoked", "inputs": {"noise": {"input_type": "rates", "rate": 300.0,
                                                                     "node_set": "vin"}}},
                             {"name": "spont", "losses": [{"type": "TargetFiringRate", "cost": 2e-3, "target": 5.0},
                                                          {"type": "WeightRegularization", "cost": 0.2}]}])
    return load_config(tiny_config(name, scale=3.0, T=30.0, B=2, train=train))


def series_two_steps():
    conf = two_conditions('series', 'series', 'exp_adam')
    tr = Trainer(conf)
    tr.step()
    check('series: two optimizer steps in one outer step (t = 2)', tr.adam.k == 2 and tr.update == 1)
    # by hand: condition 0 on samples 0, 1, a step, then condition 1 on samples 2, 3 at the new weights, a step
    ref = Trainer(conf)
    w_start = {s: a.copy() for s, a in ref.w.items()}
    r0 = ref.loss_and_grad([0, 1], condition=0)
    ref.apply(r0['grads'])
    w_mid = {s: a.copy() for s, a in ref.w.items()}
    r1 = ref.loss_and_grad([2, 3], condition=1)
    ref.apply(r1['grads'])
    check('series: weights == condition 0 step then condition 1 step at the updated weights (bitwise)',
          all(np.array_equal(tr.w[s], ref.w[s]) for s in tr.w)
          and not all(np.array_equal(w_mid[s], w_start[s]) for s in w_mid))
    tr.step()
    check('series: t = 4 after two outer steps', tr.adam.k == 4 and tr.update == 2)


def series_accumulate_sum():
    conf = two_conditions('sacc', 'series_accumulate')
    tr = Trainer(conf)
    res = tr.step()
    ref = Trainer(conf)
    g0, g1 = ref.loss_and_grad([0, 1], condition=0), ref.loss_and_grad([2, 3], condition=1)
    check('series_accumulate: one optimizer step (t = 1)', tr.adam.k == 1)
    check('series_accumulate: gradient = sum of the per-condition gradients (rel 1e-12)',
          all(rel_err(res['grads'][s], g0['grads'][s] + g1['grads'][s]) < 1e-12 for s in res['grads']))
    acc = Trainer(two_conditions('acc', 'accumulate')).step()
    check('accumulate: gradient = mean of the per-condition gradients (rel 1e-12)',
          all(rel_err(acc['grads'][s], 0.5 * (g0['grads'][s] + g1['grads'][s])) < 1e-12 for s in acc['grads']))
    w = {s: a.copy() for s, a in ref.w.items()}
    ref.adam.step(w, {s: g0['grads'][s] + g1['grads'][s] for s in g0['grads']})
    w = {s: sign_constraint(w[s], ref.w0[s]) if s in g0['grads'] else w[s] for s in w}
    check('series_accumulate: weights == one Adam step on the sum (rel 1e-12)',
          all(rel_err(tr.w[s], w[s]) < 1e-12 for s in w))
    tot = 0.5 * (g0['conditions']['evoked']['total'] + g1['conditions']['spont']['total'])
    check('loss = mean over the conditions of their totals; each condition its own losses',
          abs(res['total'] - tot) < 1e-12 * abs(tot)
          and sorted(res['conditions']['spont']['terms']) == ['TargetFiringRate', 'WeightRegularization']
          and len(res['conditions']['evoked']['terms']) == 3)


TESTS = [exp_adam_first_step, exp_adam_moments_torch, series_two_steps, series_accumulate_sum]
