"""Training-oracle self-checks of train.initial_state "from_input" (oracle/train.py): each sample slot's start
state against separate no-gradient runs of the override inputs, its regeneration at epoch boundaries, the same
state for every condition, the window as the continuation of the from-input run, and the config's refusals."""
import copy

import numpy as np
import torch
from oracle.config import load_config
from oracle.train import Trainer, TrainError, compute_losses
from grad_selfcheck_common import TRAIN, check, tiny_config

OVERRIDES = {"noise": {"input_type": "rates", "rate": 300.0, "node_set": "vin"},
             "bkg": {"input_type": "poisson", "rate": 900.0, "node_set": "bkg"}}
STATE_KEYS = ('v', 'r', 'asc', 'psc_rise', 'psc', 'z_prev')
S = 2  # steps_per_epoch


def config(name, conditions=False, approach='accumulate', accumulate=2, epochs=3):
    train = dict(TRAIN, epochs=epochs, steps_per_epoch=S, accumulate=accumulate, approach=approach,
                 optimizer={"type": "adam", "lr": 0.05},
                 initial_state={"type": "from_input", "inputs": OVERRIDES})
    if conditions:
        train['conditions'] = [{"noise": {"input_type": "rates", "rate": 50.0, "node_set": "vin"}},
                               {"name": "strong", "inputs": {"noise": {"input_type": "rates", "rate": 400.0,
                                                                       "node_set": "vin"}}}]
    return load_config(tiny_config(name, scale=3.0, T=30.0, B=2, train=train))


def rest_runner(conf):
    """A Trainer of the same network whose base inputs are the overrides, without initial state or conditions:
    its input_counts and model give the separate from-rest runs."""
    c = copy.deepcopy(conf)
    c['inputs'].update(copy.deepcopy(OVERRIDES))
    c['train'] = {k: v for k, v in c['train'].items() if k not in ('initial_state', 'conditions', 'approach')}
    return Trainer(c)


def separate_final(ref, w, sample):
    """The final state of a no-gradient run from rest of global sample `sample` alone at weights w."""
    x = ref.input_counts([sample])
    with torch.no_grad():
        return ref.model.forward({s: torch.as_tensor(a.copy()) for s, a in w.items()}, x, ref.spike_fn)['final']


def state_err(a, rows, b):
    """Largest |difference| between rows of state a and the (one-sample) state b, over every part."""
    e = max(float((a[k][rows] - b[k][0]).abs().max()) for k in STATE_KEYS)
    return max([e] + [float((x[rows] - y[0]).abs().max()) for x, y in zip(a['acts'], b['acts'])])


def record(tr, n_updates):
    """Runs n_updates; returns the weights before each update, the start states handed to the window's forward
    calls of each update, and the updates at which a from-input run took place."""
    fwd, log = tr.model.forward, {'init': {}, 'regen': []}

    def spy(*a, **kw):
        if kw.get('init') is not None:
            log['init'].setdefault(tr.update, []).append(kw['init'])
        elif not torch.is_grad_enabled():
            log['regen'].append(tr.update)
        return fwd(*a, **kw)

    tr.model.forward = spy
    weights = []
    for _ in range(n_updates):
        weights.append({s: a.copy() for s, a in tr.w.items()})
        tr.step()
    return weights, log


def slots_and_epochs(approach):
    conf = config('from_input_' + approach, conditions=True, approach=approach)
    tr, ref = Trainer(conf), rest_runner(conf)
    G, C = tr.tc.accumulate * tr.B, 2
    weights, log = record(tr, 5)
    tag = 'from_input (%s, 2 conditions, G = %d)' % (approach, G)
    check('%s: from-input runs at updates 0, 2, 4 only (steps_per_epoch 2)' % tag, log['regen'] == [0, 2, 4],
          str(log['regen']))
    calls = 1 if approach == 'accumulate' else C
    check('%s: every window forward call starts from a given state (%d per update)' % (tag, calls),
          all(len(log['init'].get(u, [])) == calls for u in range(5)))
    worst, reuse_gap, stale_gap = 0.0, [], []
    for u in range(5):
        e, first = u // S, (u // S) * S
        for p in range(G):
            g = (1 << 31) + e * G + p
            want = separate_final(ref, weights[first], g)
            for c in range(C):
                init = log['init'][u][0 if approach == 'accumulate' else c]
                row = c * G + p if approach == 'accumulate' else p
                worst = max(worst, state_err(init, [row], want))
            if u != first:  # a reused state differs from a run at this update's own weights
                reuse_gap.append(state_err(log['init'][u][0], [p], separate_final(ref, weights[u], g)))
            if first > 0:  # a regenerated state differs from a run at the weights before update 0
                stale_gap.append(state_err(log['init'][u][0], [p], separate_final(ref, weights[0], g)))
    check('%s: slot p of every condition == final state of a separate no-grad run from rest of sample '
          '2^31 + epoch G + p at the weights before the epoch\'s first update (5 updates, abs 1e-12)' % tag,
          worst < 1e-12, 'max |diff| %.2e' % worst)
    check('%s: updates 1, 3 reuse the epoch\'s state (differs from a run at their own weights)' % tag,
          min(reuse_gap) > 1e-8, 'min gap %.2e' % min(reuse_gap))
    check('%s: updates 2, 4 regenerate at the current weights (differs from a run at the initial weights)' % tag,
          min(stale_gap) > 1e-8, 'min gap %.2e' % min(stale_gap))
    slots = log['init'][3][0]
    if approach == 'accumulate':
        check('%s: condition 1\'s slots == condition 0\'s slots (bitwise)' % tag,
              all(torch.equal(slots[k][:G], slots[k][G:]) for k in STATE_KEYS)
              and all(torch.equal(x[:G], x[G:]) for x in slots['acts']))
    else:
        a, b = log['init'][3]
        check('%s: both conditions\' calls get the same state (bitwise)' % tag,
              all(torch.equal(a[k], b[k]) for k in STATE_KEYS) and all(torch.equal(x, y) for x, y in
                                                                       zip(a['acts'], b['acts'])))


def from_input_accumulate():
    slots_and_epochs('accumulate')


def from_input_series():
    slots_and_epochs('series')


def window_continues_run():
    # update 0 without conditions: the window == steps T..2T-1 of one 2T-step run from rest whose first T steps take
    # the override inputs of sample 2^31 + p and the last T the base inputs of sample p (warm-up T: detached there)
    conf = config('from_input_window', accumulate=1)
    tr, ref = Trainer(conf), rest_runner(conf)
    res = tr.step()
    m, T, samples = ref.model, tr.T, np.arange(tr.B)
    x = torch.cat([ref.input_counts((1 << 31) + samples), tr.input_counts(samples)], dim=1)
    wt = {s: torch.tensor(tr.w0[s], requires_grad=tr.tc.trainable[s]) for s in m.surface_names}
    out = m.forward(wt, x, tr.spike_fn, tr.vdamp, tr.rdamp, warmup=T)
    w0t = {s: torch.as_tensor(tr.w0[s]) for s in m.surface_names}
    total, _, _ = compute_losses(tr.tc.losses, out['z'], out['v'], tr.dt, wt, w0t, tr.tc.trainable,
                                 m.surface_names)
    total.backward()
    gerr = max(float(np.max(np.abs(wt[s].grad.numpy() - res['grads'][s])) / max(np.max(np.abs(res['grads'][s])),
                                                                                 1e-300)) for s in res['grads'])
    check('from_input: update 0\'s loss == a 2T-step run (override inputs of 2^31 + p, then base inputs of p) with '
          'warm-up T (rel 1e-12)', abs(float(total) - res['total']) <= 1e-12 * abs(res['total']),
          '%.15g vs %.15g, %d spikes' % (float(total), res['total'], res['n_spikes']))
    check('from_input: update 0\'s gradient == that run\'s (rel 1e-11)', gerr < 1e-11, 'rel %.2e' % gerr)
    rest = Trainer(load_config(tiny_config('from_input_rest', scale=3.0, T=30.0, B=2, train=TRAIN)))
    check('from_input: the loss differs from a window that starts at rest',
          abs(rest.step()['total'] - res['total']) > 1e-9 * abs(res['total']))


def config_refusals():
    base = dict(TRAIN, initial_state={"type": "from_input", "inputs": OVERRIDES})
    for name, extra in (('carry_state', {'carry_state': True}), ('warmup_ms', {'warmup_ms': 5.0}),
                        ('another type', {'initial_state': {"type": "zero"}}),
                        ('steps with epochs', {'steps': 3, 'epochs': 2})):
        try:
            Trainer(load_config(tiny_config('from_input_refused', train=dict(base, **extra))))
            ok = False
        except TrainError:
            ok = True
        check('from_input: refused with %s' % name, ok)
    tr = Trainer(load_config(tiny_config('from_input_steps', train=dict(base, steps=3))))
    check('from_input: without epochs, steps form one epoch (steps_per_epoch = steps = 3)',
          tr.tc.steps_per_epoch == 3 and tr.tc.epochs == 1)


TESTS = [from_input_accumulate, from_input_series, window_continues_run, config_refusals]
