"""Forward-oracle self-checks: Philox and FNV-1a, spike stamping and rounding, the neuron step."""
import math
import os

import numpy as np
from oracle import philox
from oracle.inputs import stamp_step
from oracle.model import delay_steps_of, t_ref_steps_of
from oracle_selfcheck_common import TMP, GLIF, IAF, check, make_network, run_cfg


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


def fnv():
    check('FNV-1a("") = 811c9dc5', philox.fnv1a32('') == 0x811C9DC5)
    check('FNV-1a("a") = e40c292c', philox.fnv1a32('a') == 0xE40C292C)
    check('FNV-1a("foobar") = bf9cf968', philox.fnv1a32('foobar') == 0xBF9CF968)


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


TESTS = [philox_kat, fnv, stamping, single_glif_psc_peak_and_latency, recurrent_latency_reset_refractory]
