"""Forward-oracle self-checks: Bernoulli / Poisson / spike-file inputs, and the refusals of bad models."""
import math
import os

import h5py
import numpy as np
from oracle import philox
from oracle.config import load_config
from oracle.inputs import poisson_count_scalar, uniforms, InputError
from oracle.model import load_model, ModelError
from oracle.sonata import write_spike_file
from oracle_selfcheck_common import TMP, GLIF, IAF, check, make_network, run_cfg


def rng_inputs():
    d = os.path.join(TMP, 'rng')
    ins = {"bern": {"input_type": "rates", "rate": 200.0, "node_set": "vin"},
           "bkg": {"input_type": "poisson", "rate": 1500.0, "node_set": "vin"}}
    cfg = make_network(d, [('nest:glif_psc', GLIF)], 50, [('v', 0, 0, 1.0, 1.0, 1, 1)], {0: [1.0]},
                       {"dt": 1.0, "tstop": 400.0, "seed": 7}, extra_inputs=ins)
    conf = load_config(cfg)
    net, inputs, run = load_model(conf)
    bern, bkg = inputs
    xb = bern.counts(np.array([0, 1, 2]), 0, 400)
    p = -math.expm1(-200.0 / 1000.0)
    check('Bernoulli mean ~ p', abs(xb.mean() - p) < 0.02, 'mean %.4f p %.4f' % (xb.mean(), p))
    check('Bernoulli samples differ', not np.array_equal(xb[0], xb[1]))
    one = bern.counts(np.array([2]), 100, 200)
    check('sample/step addressing independent of batch and chunk', np.array_equal(one[0], xb[2, 100:200]))
    xp = bkg.counts(np.array([0, 1]), 0, 400)
    check('Poisson mean ~ lam', abs(xp.mean() - 1.5) < 0.05, 'mean %.4f' % xp.mean())
    u = uniforms(7, philox.fnv1a32('bkg'), [0], 0, 3, np.arange(50))[0]
    lit = np.array([[poisson_count_scalar(x, 1.5) for x in row] for row in u])
    check('Poisson vectorised == literal loop', np.array_equal(lit, xp[0, :3]))
    uu = uniforms(7, philox.fnv1a32('bern'), [1], 5, 6, [3])[0, 0, 0]
    x0 = int(philox.philox4x32_10(3, 5, 1, 0, 7, philox.fnv1a32('bern'))[0])
    check('u(name, b, k, j) = Philox key (seed, fnv(name)), ctr (j, k, b, 0)', uu == (x0 + 0.5) / 2 ** 32)
    check('Bernoulli draw is u < p', bern.counts(np.array([1]), 5, 6)[0, 0, 3] == float(uu < p))
    # whole-run sample independence of batch composition
    _, _, r2 = run_cfg(cfg, batch=2)
    _, _, r1 = run_cfg(cfg, batch=1, first_sample=1)
    check('sample 1 identical in batch of 2 and alone', np.array_equal(r2['v'][1], r1['v'][0]))


def spike_inputs_counts_and_errors():
    d = os.path.join(TMP, 'cnt')
    cfg = make_network(d, [('nest:glif_psc', GLIF)], 1, [('v', 0, 0, 1.0, 1.0, 1, 1)],
                       {0: [0.2, 0.7, 1.0, 55.0]}, {"dt": 1.0, "tstop": 10.0})
    net, inputs, run = load_model(load_config(cfg))
    x = inputs[0].counts(np.array([0]), 0, 10)
    check('two spikes in one step count 2 (0.2, 0.7, 1.0 -> step 0 count 3), late spike ignored',
          x[0, 0, 0] == 3 and x.sum() == 3 and inputs[0].n_ignored == 1)
    write_spike_file(os.path.join(d, 'in/spk.h5'), [('vin', [0], [0.0])])
    try:
        load_model(load_config(cfg))
        check('spike time <= 0 refused', False)
    except InputError:
        check('spike time <= 0 refused', True)
    # legacy layout, units in seconds
    with h5py.File(os.path.join(d, 'in/spk.h5'), 'w') as h:
        h.create_dataset('spikes/gids', data=np.array([0, 0], np.uint16))
        ts = h.create_dataset('spikes/timestamps', data=np.array([0.0025, 0.0041]))
        ts.attrs['units'] = 's'
    net, inputs, run = load_model(load_config(cfg))
    x = inputs[0].counts(np.array([0]), 0, 10)
    check('legacy /spikes/{gids,timestamps} with units s', x[0, 2, 0] == 1 and x[0, 4, 0] == 1 and x.sum() == 2)


def refusals():
    d = os.path.join(TMP, 'bad')
    cases = [
        ('receptor_type 4 outside', [('nest:glif_psc', GLIF)], [('v', 0, 0, 1.0, 1.0, 4, 1)], 1.0),
        ('rounds to 0 steps', [('nest:glif_psc', GLIF)], [('v', 0, 0, 1.0, 0.5, 1, 1)], 1.0),
        ('V_th (-70) <= E_L', [('nest:glif_psc', dict(GLIF, V_th=-70.0))], [('v', 0, 0, 1.0, 1.0, 1, 1)], 1.0),
        ('unsupported model_template', [('nest:iaf_psc_delta', {})], [('v', 0, 0, 1.0, 1.0, 0, 1)], 1.0),
        ('GLIF2/4/5', [('nest:glif_psc', dict(GLIF, adapting_threshold=True))], [('v', 0, 0, 1.0, 1.0, 1, 1)], 1.0),
        ('(must be 0)', [('nest:iaf_psc_alpha', IAF)], [('v', 0, 0, 1.0, 1.0, 1, 1)], 1.0),
        ('non-zero I_e', [('nest:iaf_psc_alpha', dict(IAF, I_e=5.0))], [('v', 0, 0, 1.0, 1.0, 0, 1)], 1.0),
        ('parameter g missing', [('nest:glif_psc', {k: v for k, v in GLIF.items() if k != 'g'})],
         [('v', 0, 0, 1.0, 1.0, 1, 1)], 1.0),
    ]
    for i, (name, cells, edges, dt) in enumerate(cases):
        dd = os.path.join(d, str(i))
        cfg = make_network(dd, cells, 1, edges, {0: [1.0]}, {"dt": dt, "tstop": 5.0})
        try:
            load_model(load_config(cfg))
            check('refused: ' + name, False)
        except (ModelError, InputError) as e:
            check('refused with message containing %r' % name, name in str(e), str(e)[-100:])
    # delay 1.5 at dt 1 -> 2 steps (half to even), 0.5 at dt 0.25 -> 2 steps
    dd = os.path.join(d, 'ok')
    cfg = make_network(dd, [('nest:glif_psc', GLIF)], 1, [('v', 0, 0, 1.0, 1.5, 1, 1)], {0: [1.0]},
                       {"dt": 1.0, "tstop": 5.0})
    net, _, _ = load_model(load_config(cfg))
    check('edge delay 1.5 ms @ dt 1 -> 2 steps; weight = syn_weight*nsyns / vs',
          net.e_d.tolist() == [2] and net.e_w[0] == 1.0 / 20.0)


TESTS = [rng_inputs, spike_inputs_counts_and_errors, refusals]
