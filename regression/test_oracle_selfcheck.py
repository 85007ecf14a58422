#!/usr/bin/python3
"""Self-test of the Python oracle. Plain script: prints each check, then 'N passed, M failed';
exit status 0 only if all pass. Usage: /usr/bin/python3 regression/test_oracle_selfcheck.py"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import h5py                                          # noqa: E402
import numpy as np                                   # noqa: E402
from oracle import philox                            # noqa: E402
from oracle.config import load_config, RunParams, ConfigError   # noqa: E402
from oracle.inputs import (stamp_step, poisson_cdf_table, poisson_count_scalar, uniforms,   # noqa: E402
                           InputError)
from oracle.model import load_model, simulate, spikes_by_population, delay_steps_of, t_ref_steps_of, \
    ModelError                                       # noqa: E402
from oracle.sonata import write_spike_file, read_spike_file   # noqa: E402

warnings.simplefilter('ignore')
# BMTK's point_450glifs, vendored in tests/data/bmtk (found from this script's location).
EXAMPLE = os.path.join(os.path.dirname(HERE), 'tests', 'data', 'bmtk', 'point_450glifs')
RESULTS = []


def check(name, cond, detail=''):
    RESULTS.append((name, bool(cond)))
    print('%s %s%s' % ('PASS' if cond else 'FAIL', name, ('  [' + detail + ']') if detail else ''))


def test(fn):
    try:
        fn()
    except Exception:
        traceback.print_exc()
        check(fn.__name__ + ' (raised)', False)
    return fn


# ------------------------------------------------------------------ tiny SONATA network writer
GLIF = {"V_m": -70.0, "V_th": -50.0, "g": 5.0, "E_L": -70.0, "C_m": 50.0, "t_ref": 2.0,
        "V_reset": -70.0, "asc_init": [0.0, 0.0], "asc_decay": [0.1, 0.3], "asc_amps": [-10.0, -20.0],
        "tau_syn": [5.0, 2.0, 8.0], "spike_dependent_threshold": False, "after_spike_currents": True,
        "adapting_threshold": False}
IAF = {"I_e": 0.0, "tau_m": 20.0, "C_m": 100.0, "t_ref": 3.0, "E_L": -70.0, "V_th": -50.0, "V_reset": -60.0}


def write_h5_nodes(path, pop, n, type_ids):
    with h5py.File(path, 'w') as h:
        h.attrs.create('magic', 2682, dtype=np.uint32)
        g = h.create_group('nodes/' + pop)
        g.create_dataset('node_id', data=np.arange(n, dtype=np.uint32))       # odd width on purpose
        g.create_dataset('node_type_id', data=np.asarray(type_ids, np.uint16))
        g.create_dataset('node_group_id', data=np.zeros(n, np.uint32))
        g.create_dataset('node_group_index', data=np.arange(n, dtype=np.uint64))
        g.create_group('0')


def make_network(d, cells, n_virtual, edges, spikes, run, extra_inputs=None):
    """cells: list of (template, params); edges: (src_kind 'v'|'r', src, tgt, syn_weight, delay,
    receptor, nsyns). Returns path of the simulation config (which names a circuit config in
    a subdirectory, using manifest variables and relative paths)."""
    os.makedirs(os.path.join(d, 'circ/net'), exist_ok=True)
    os.makedirs(os.path.join(d, 'circ/comp/cells'), exist_ok=True)
    os.makedirs(os.path.join(d, 'circ/comp/syn'), exist_ok=True)
    os.makedirs(os.path.join(d, 'in'), exist_ok=True)
    lines = ['node_type_id model_type model_template dynamics_params']
    for i, (tmpl, params) in enumerate(cells):
        json.dump(params, open(os.path.join(d, 'circ/comp/cells/cell%d.json' % i), 'w'))
        lines.append('%d point_neuron %s cell%d.json' % (100 + i, tmpl, i))
    open(os.path.join(d, 'circ/net/rec_types.csv'), 'w').write('\n'.join(lines) + '\n')
    open(os.path.join(d, 'circ/net/vin_types.csv'), 'w').write('node_type_id model_type\n1 virtual\n')
    write_h5_nodes(os.path.join(d, 'circ/net/rec_nodes.h5'), 'rec', len(cells), [100 + i for i in range(len(cells))])
    write_h5_nodes(os.path.join(d, 'circ/net/vin_nodes.h5'), 'vin', n_virtual, [1] * n_virtual)
    recs = sorted(set(e[5] for e in edges)) or [0]
    etl = ['edge_type_id model_template syn_weight delay dynamics_params']
    for r in recs:
        json.dump({'receptor_type': r} if r else {}, open(os.path.join(d, 'circ/comp/syn/r%d.json' % r), 'w'))
        etl.append('%d static_synapse 999.0 99.0 r%d.json' % (100 + r, r))
    open(os.path.join(d, 'circ/net/edge_types.csv'), 'w').write('\n'.join(etl) + '\n')
    with h5py.File(os.path.join(d, 'circ/net/edges.h5'), 'w') as h:
        for kind, pname, spop in (('v', 'vin_to_rec', 'vin'), ('r', 'rec_to_rec', 'rec')):
            es = [e for e in edges if e[0] == kind]
            g = h.create_group('edges/' + pname)
            s = g.create_dataset('source_node_id', data=np.array([e[1] for e in es], np.uint64))
            s.attrs['node_population'] = spop
            t = g.create_dataset('target_node_id', data=np.array([e[2] for e in es], np.uint64))
            t.attrs['node_population'] = 'rec'
            g.create_dataset('edge_type_id', data=np.array([100 + e[5] for e in es], np.uint32))
            g.create_dataset('edge_group_id', data=np.zeros(len(es), np.uint16))
            g.create_dataset('edge_group_index', data=np.arange(len(es), dtype=np.uint32))
            g0 = g.create_group('0')
            g0.create_dataset('syn_weight', data=np.array([e[3] for e in es], np.float64))
            g0.create_dataset('delay', data=np.array([e[4] for e in es], np.float64))
            g0.create_dataset('nsyns', data=np.array([e[6] for e in es], np.uint32))
    circ = {"manifest": {"$CIRC": "${configdir}", "$NET": "$CIRC/net", "$COMP": "./comp"},
            "components": {"point_neuron_models_dir": "$COMP/cells", "synaptic_models_dir": "${COMP}/syn"},
            "networks": {"nodes": [{"nodes_file": "$NET/rec_nodes.h5", "node_types_file": "$NET/rec_types.csv"},
                                   {"nodes_file": "./net/vin_nodes.h5", "node_types_file": "net/vin_types.csv"}],
                         "edges": [{"edges_file": "$NET/edges.h5", "edge_types_file": "$NET/edge_types.csv"}]},
            "target_simulator": "child"}
    json.dump(circ, open(os.path.join(d, 'circ/circuit.json'), 'w'))
    ids = sorted((j, t) for j, ts in spikes.items() for t in ts)
    write_spike_file(os.path.join(d, 'in/spk.h5'),
                     [('vin', [i for i, _ in ids], [t for _, t in ids])])
    inputs = {"stim": {"input_type": "spikes", "module": "h5", "input_file": "$IN/spk.h5", "node_set": "vin"}}
    if extra_inputs is not None:
        inputs = extra_inputs
    sim = {"manifest": {"$IN": "./in"}, "target_simulator": "parent", "run": run, "inputs": inputs, "network": "circ/circuit.json"}
    p = os.path.join(d, 'sim.json')
    json.dump(sim, open(p, 'w'))
    return p


def run_cfg(path, batch=1, first_sample=0, record=None):
    conf = load_config(path)
    net, inputs, run = load_model(conf)
    res = simulate(net, inputs, run.n_steps, batch, first_sample=first_sample, record_v=True, record=record)
    return net, run, res


TMP = tempfile.mkdtemp(prefix='oracle_selfcheck_')


# ------------------------------------------------------------------ tests
@test
def philox_kat():
    for desc, ok, got, exp in philox.self_check():
        check('Philox KAT ' + desc, ok, ' '.join('%08x' % g for g in got))
    # vectorised evaluation agrees with scalar evaluation
    ctr = np.arange(5, dtype=np.uint64)
    v = philox.philox4x32_10(ctr, 7, 9, 0, 1, 2)[0]
    s = [int(philox.philox4x32_10(int(c), 7, 9, 0, 1, 2)[0]) for c in ctr]
    check('Philox vectorised == scalar', v.tolist() == s)
    u = philox.uniform_from_word(np.array([0, 0xFFFFFFFF], np.uint64))
    check('uniform (x0+0.5)*2^-32 in (0,1)', u[0] == 0.5 * 2.0 ** -32 and u[1] == (4294967295.5) * 2.0 ** -32 and u[1] < 1.0)


@test
def fnv():
    check('FNV-1a("") = 811c9dc5', philox.fnv1a32('') == 0x811C9DC5)
    check('FNV-1a("a") = e40c292c', philox.fnv1a32('a') == 0xE40C292C)
    check('FNV-1a("foobar") = bf9cf968', philox.fnv1a32('foobar') == 0xBF9CF968)


@test
def stamping():
    cases = [(1.0, 1.0, 0), (1.0000000001, 1.0, 0), (1.01, 1.0, 1), (0.5, 1.0, 0), (2.0, 0.1, 19),
             (0.3, 0.1, 2), (0.30000001, 0.1, 3), (1.176, 0.001, 1175), (2998.693, 0.001, 2998692),
             (1.7, 0.25, 6), (0.001, 1.0, 0)]
    got = [int(stamp_step(t, dt)) for t, dt, _ in cases]
    check('stamp k = ceil(t/dt - 1e-9) - 1', got == [k for _, _, k in cases],
          'got %s' % got)
    check('delay rounding half-to-even (2.5->2, 3.5->4, 1.7/0.25->7)',
          delay_steps_of(2.5, 1.0) == 2 and delay_steps_of(3.5, 1.0) == 4 and delay_steps_of(1.7, 0.25) == 7)
    check('t_ref steps (2.6000000000000005 @0.1 -> 26, 2.6 @1 -> 3, 0.2 @1 -> 1)',
          t_ref_steps_of(2.6000000000000005, 0.1) == 26 and t_ref_steps_of(2.6, 1.0) == 3
          and t_ref_steps_of(0.2, 1.0) == 1)


@test
def single_glif_psc_peak_and_latency():
    for dt in (1.0, 0.5, 0.25):
        d = os.path.join(TMP, 'single_%g' % dt)
        w_pA, delay, t_in = 4.0, 2.0, 3.0
        cfg = make_network(d, [('nest:glif_psc', GLIF)], 1,
                           [('v', 0, 0, w_pA / 2, delay, 1, 2)],        # syn_weight*nsyns = 4 pA
                           {0: [t_in]}, {"dt": dt, "duration": 40.0, "tstop": 1.0})
        net, run, res = run_cfg(cfg, record=('psc', 'psc_rise'))
        check('dt=%g: duration wins over tstop, T=%d' % (dt, run.n_steps), run.n_steps == round(40.0 / dt))
        k_in = int(math.ceil(t_in / dt - 1e-9)) - 1
        ds = int(round(delay / dt))
        tau = GLIF['tau_syn'][0]
        w_n = w_pA / (GLIF['V_th'] - GLIF['E_L'])
        psc = res['psc'][0, :, 0, 0]
        rise = res['psc_rise'][0, :, 0, 0]
        kick = k_in + ds                  # psc_rise kicked at the end of this step
        check('dt=%g: psc_rise kick e/tau*w at step k+d' % dt,
              np.all(rise[:kick] == 0) and abs(rise[kick] - math.e / tau * w_n) < 1e-15)
        n = int(round(tau / dt))
        peak = kick + n
        check('dt=%g: psc == weight (normalized) exactly tau_syn after the kick' % dt,
              abs(psc[peak] - w_n) <= 1e-12 * w_n, 'psc=%r w=%r' % (psc[peak], w_n))
        check('dt=%g: that is the maximum of psc' % dt, int(np.argmax(psc)) == peak)
        v = res['v'][0, :, 0]
        first = int(np.nonzero(v)[0][0])
        check('dt=%g: v first moves at step k + d + 2 (%d)' % (dt, k_in + ds + 2), first == k_in + ds + 2,
              'first=%d' % first)
        check('dt=%g: other channels untouched' % dt, np.all(res['psc'][0, :, 0, 1:] == 0))


@test
def recurrent_latency_reset_refractory():
    dt = 1.0
    d = os.path.join(TMP, 'rec')
    # neuron 0: GLIF driven hard; neuron 1: GLIF listening to 0 with 3 ms delay (receptor 2);
    # neuron 2: iaf_psc_alpha receiving +/- weights (channels 0/1).
    cfg = make_network(d, [('nest:glif_psc', GLIF), ('nest:glif_psc', GLIF), ('nest:iaf_psc_alpha', IAF)], 2,
                       [('v', 0, 0, 2000.0, 1.0, 1, 1), ('r', 0, 1, 1.0, 3.0, 2, 1),
                        ('r', 0, 2, 5.0, 2.0, 0, 1), ('v', 1, 2, -7.0, 1.0, 0, 1)],
                       {0: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 1: [1.0]}, {"dt": dt, "tstop": 30.0})
    net, run, res = run_cfg(cfg, record=('psc', 'asc', 'psc_rise', 'r'))
    z = res['z'][0]
    s = int(np.nonzero(z[:, 0])[0][0])
    v1 = res['v'][0, :, 1]
    check('recurrent: target v first moves at spike step + d + 2', int(np.nonzero(v1)[0][0]) == s + 3 + 2,
          'spike %d first %d' % (s, int(np.nonzero(v1)[0][0])))
    spk = np.nonzero(z[:, 0])[0]
    check('refractory: inter-spike interval >= t_ref_steps (%d)' % net.t_ref_steps[0],
          len(spk) > 1 and np.all(np.diff(spk) >= net.t_ref_steps[0]), str(spk.tolist()))
    # step after a spike: v' = decay*v + cf*c(old psc, old asc) - (1 - v_reset_n); asc jumps
    t = s + 1
    psc, asc, v = res['psc'][0], res['asc'][0], res['v'][0]
    c = psc[t - 1, 0].sum() + asc[t - 1, 0].sum()
    exp_v = net.decay[0] * v[t - 1, 0] + net.current_factor[0] * c - (1 - net.v_reset_n[0])
    check('soft reset term at step after spike', abs(v[t, 0] - exp_v) < 1e-12)
    check('ASC jump by asc_amps/vs at step after spike',
          np.allclose(asc[t, 0], net.asc_decay_f[0] * asc[t - 1, 0] + np.array(GLIF['asc_amps']) / 20.0, atol=1e-15))
    check('refractory counter t_ref_steps-1 after spike', res['r'][0, t, 0] == net.t_ref_steps[0] - 1)
    check('no spike while r > 0', not np.any(z[:, 0] & (res['r'][0, :, 0] > 0)))
    rise2 = res['psc_rise'][0, :, 2]
    vs2 = IAF['V_th'] - IAF['E_L']
    check('iaf_psc_alpha: negative weight -> channel 1 (tau_syn_in)',
          abs(rise2[0 + 1, 1] - math.e / 2.0 * (-7.0 / vs2)) < 1e-15 and rise2[1, 0] == 0)
    check('iaf_psc_alpha: positive weight -> channel 0', rise2[s + 2, 0] > 0 and np.all(rise2[:, 2:] == 0))
    check('iaf_psc_alpha: v_reset_n = (V_reset-E_L)/vs, g = C_m/tau_m',
          net.v_reset_n[2] == 0.5 and abs(net.decay[2] - math.exp(-1 / 20.0)) < 1e-15)


@test
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


@test
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


@test
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


@test
def config_loading():
    d = os.path.join(TMP, 'single_1')
    conf = load_config(os.path.join(d, 'sim.json'))
    check('child config: relative paths anchored at its own directory',
          conf['networks']['nodes'][1]['nodes_file'] == os.path.join(d, 'circ/net/vin_nodes.h5')
          and conf['components']['point_neuron_models_dir'] == os.path.join(d, 'circ/comp/cells'))
    check('manifest ${configdir} / $VAR / ${VAR} chains resolved',
          conf['networks']['edges'][0]['edges_file'] == os.path.join(d, 'circ/net/edges.h5')
          and conf['components']['synaptic_models_dir'] == os.path.join(d, 'circ/comp/syn'))
    check('parent manifest path anchored at parent directory',
          conf['inputs']['stim']['input_file'] == os.path.join(d, 'in/spk.h5'))
    check('shallow merge: child keys win', conf['target_simulator'] == 'child' and conf['run']['dt'] == 1.0)
    p = os.path.join(TMP, 'cyc.json')
    json.dump({"manifest": {"$A": "$B/x", "$B": "$A/y"}, "run": {"dt": 1, "tstop": 1}}, open(p, 'w'))
    try:
        load_config(p)
        check('manifest cycle refused', False)
    except ConfigError:
        check('manifest cycle refused', True)
    p = os.path.join(TMP, 'typed.json')
    json.dump({"manifest": {"$N": 5, "$S": "a"}, "x": "$N", "y": "${S}$N", "z": "$UNKNOWN/q",
               "run": {"dt": 0.1, "tstop": 1.0}}, open(p, 'w'))
    c = load_config(p)
    check('typed variable value / concatenation / unknown left as is',
          c['x'] == 5 and c['y'] == 'a5' and c['z'] == '$UNKNOWN/q')
    check('T = round(tstop/dt) (1.0/0.1 -> 10)', RunParams(c).n_steps == 10)


@test
def load_example():
    if not os.path.isdir(EXAMPLE):
        check('point_450glifs present', False)
        return
    p = os.path.join(TMP, 'ex.json')
    json.dump({"run": {"dt": 1.0, "tstop": 10.0},
               "inputs": {"LGN": {"input_type": "spikes", "module": "sonata",
                                  "input_file": EXAMPLE + "/inputs/lgn_spikes.h5", "node_set": "lgn"}},
               "network": EXAMPLE + "/config.circuit.json"}, open(p, 'w'))
    net, inputs, run = load_model(load_config(p))
    check('point_450glifs: 450 recurrent + 100 virtual nodes', net.N == 450 and net.J == 100)
    check('point_450glifs: 28555 + 36035 edges',
          net.edge_counts == {'v1_to_v1': 28555, 'lgn_to_v1': 36035} and len(net.e_w) == 64590)
    check('point_450glifs: 300 glif_psc + 150 iaf_psc_alpha',
          net.kind.count('glif_psc') == 300 and net.kind.count('iaf_psc_alpha') == 150)
    check('point_450glifs: LGN spikes 3044 in file', inputs[0].n_ignored + len(inputs[0].k) == 3044)
    check('point_450glifs: all delays 2 steps at dt=1', np.all(net.e_d == 2))


@test
def writer_and_compare():
    d = os.path.join(TMP, 'cmp')
    os.makedirs(d, exist_ok=True)
    a, b = os.path.join(d, 'a.h5'), os.path.join(d, 'b.h5')
    write_spike_file(a, [('p', [3, 1, 2], [2.0, 2.0, 1.0])])
    with h5py.File(a, 'r') as h:
        ok = (h.attrs['magic'] == 2682 and list(h.attrs['version']) == [0, 1]
              and h['spikes/p'].attrs['sorting'] == 'by_time' and h['spikes/p/timestamps'].attrs['units'] == 'ms'
              and h['spikes/p/node_ids'].dtype == np.int64 and h['spikes/p/timestamps'].dtype == np.float64
              and h['spikes/p/node_ids'][()].tolist() == [2, 1, 3]
              and h['spikes/p/timestamps'][()].tolist() == [1.0, 2.0, 2.0])
    check('spike file layout and (time, node_id) order', ok)
    write_spike_file(b, [('p', [3, 1, 2], [2.0 + 1e-9, 2.0, 1.0])])
    tool = os.path.join(HERE, 'compare_spikes.py')
    r = subprocess.run([sys.executable, tool, a, b], capture_output=True)
    check('compare_spikes: equal after 1e-6 rounding -> exit 0', r.returncode == 0)
    write_spike_file(b, [('p', [3, 1, 2], [3.0, 2.0, 1.0])])
    r = subprocess.run([sys.executable, tool, a, b], capture_output=True, text=True)
    check('compare_spikes: differing -> exit 1, 2 in common', r.returncode == 1 and 'in common: 2' in r.stdout)


shutil.rmtree(TMP, ignore_errors=True)
npass = sum(1 for _, ok in RESULTS if ok)
nfail = len(RESULTS) - npass
print('%d passed, %d failed' % (npass, nfail))
sys.exit(0 if nfail == 0 and npass > 0 else 1)
