"""The per-neuron constants of run.dynamics = "nest" (docs/model-nest.md sections 1-2) for the oracle's normalized
Network, from NEST's formulas as regression/nest_reference.py writes them (NEST's own units: the propagators are
unit-free, V and currents are divided by vs = V_th - E_L as in the rest of the oracle)."""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import nest_reference as ref  # noqa: E402


def nest_constants(net, raw, dt):
    N, R, A = net.N, net.R, net.A
    tps = ref.tics_per_step(dt)
    h = (1 / 1000.0) * tps
    net.nest_h = h
    net.iaf = np.array([r['kind'] == 'iaf_psc_alpha' for r in raw])
    net.p31, net.p32 = np.zeros((N, R)), np.zeros((N, R))
    net.asc_sc, net.asc_rr = np.zeros((N, A)), np.zeros((N, A))
    net.v_init, net.i_e, net.v_min = np.zeros(N), np.zeros(N), np.full(N, -math.inf)
    for i, r in enumerate(raw):
        vs = r['V_th'] - r['E_L']
        if net.iaf[i]:
            Tau = r['tau_m']
            net.decay[i] = ref.nest_expm1(-h / Tau)
            net.current_factor[i] = -Tau / r['C_m'] * ref.nest_expm1(-h / Tau)
            net.i_e[i] = r['I_e'] / vs
            if r.get('V_min') is not None:
                net.v_min[i] = (r['V_min'] - r['E_L']) / vs
            V_m = r['V_m'] if r.get('V_m') is not None else ref.IAF_DEFAULTS['V_m']
        else:
            Tau = r['C_m'] / r['g']
            net.decay[i] = math.exp(-h / Tau)
            net.current_factor[i] = 1 / r['C_m'] * (1 - net.decay[i]) * Tau
            V_m = r['V_m'] if r.get('V_m') is not None else ref.GLIF_V_M_DEFAULT
            for a, k in enumerate(r['asc_decay']):
                net.asc_decay_f[i, a] = math.exp(-k * h)
                net.asc_sc[i, a] = ((1.0 / k) / h) * (1.0 - net.asc_decay_f[i, a])
                net.asc_rr[i, a] = r['asc_r'][a] * math.exp(-k * r['t_ref'])
        net.v_init[i] = (V_m - r['E_L']) / vs
        net.t_ref_steps[i] = ref.refractory_steps(r['t_ref'], dt)
        # the ports' kernels, then (glif_psc_double_alpha) their slow kernels, driven by the same port
        kernels = [(tau, None) for tau in r['tau_syn']] + list(r['slow'])
        for c, (tau, amp) in enumerate(kernels):
            net.syn_decay[i, c] = math.exp(-h / tau)
            net.p31[i, c], net.p32[i, c] = ref.alpha_propagator(tau, Tau, r['C_m'], h)
            net.psc_initial[i, c] = 1.0 * math.e / tau * (1.0 if amp is None else amp)
    net.dt_syn_decay = h * net.syn_decay
    net.delay_steps = ref.delay_steps
