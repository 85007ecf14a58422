"""Closed forms of the LGN model from the specification (V1-PAPER §2.4-2.5), written from the
formulas there, not from dpointnet's or FilterNet's code:

* grey screen: every single-subunit cell at its class' spontaneous rate r0, every composite cell at 2 x spont/2;
* uniform screen of value v from step 0 (grey_screen with contrast v): the spatial filter is normalized to sum 1 on
  the screen, so L(t) = v H(t), H(t) = sum of the temporal kernel over lags 0..t, and a single-subunit cell fires
  relu(A v H(t) + r0) (A = +1 for ON, -1 for OFF classes); after the kernel's length, relu(A v sum(h) + r0).
"""
import numpy as np

# V1-PAPER §2.5 (Hz, 6 decimals there); composite: spont 4.0 (sONsOFF) and 5.5 (sONtOFF), half per subunit.
SPONT = {'sON_TF1': 5.2, 'sON_TF2': 3.533333, 'sON_TF4': 8.25, 'sON_TF8': 1.766667,
         'sOFF_TF1': 3.95, 'sOFF_TF2': 4.531778, 'sOFF_TF4': 3.679074, 'sOFF_TF8': 3.62, 'sOFF_TF15': 5.075,
         'tOFF_TF4': 3.944550, 'tOFF_TF8': 2.437778, 'tOFF_TF15': 1.050667,
         'sONsOFF_001': 4.0, 'sONtOFF_001': 5.5}
SPONT_ROUNDING = 5e-7  # the table's last digit

# V1-PAPER §2.4: nominal kernels, sum of h, and h(0..4) of tOFF_TF8 and sON_TF8 (6 decimals).
REFERENCE_SUMS = {'sON_TF4': 8.979947, 'sOFF_TF4': 4.155956, 'tOFF_TF8': 1.059949, 'sON_TF8': 5.919821}
REFERENCE_HEADS = {'tOFF_TF8': [0, 0.009425, 0.305980, 0.694048, 1.004906],
                   'sON_TF8': [0, 0, 0.000355, 0.096129, 0.272122]}


def temporal_kernel(weights, kpeaks, delays):
    """h(lag), lag 0 first, V1-PAPER §2.4: raised cosines on a log time axis (b = 0.3, 600 lags, lag l at time l+1),
    each normalized, delayed by trunc(delay), normalized again, weighted and summed; length 600 + d0."""
    b, nkt = 0.3, 600
    db = np.log(200.0 + b) - np.log(100.0 + b)
    lags = np.arange(nkt)
    d = [int(x) for x in delays]
    h = np.zeros(nkt + d[0])
    for j in range(2):
        phi = 0.5 * (1.0 + np.cos(np.clip((np.log(lags + 1 + b + 1e-20) - np.log(kpeaks[j] + 1e-20)) * np.pi
                                          / (2.0 * db), -np.pi, np.pi)))
        phi /= np.linalg.norm(phi)
        B = np.zeros(nkt + d[0])
        n = nkt + d[0] - d[j]
        B[d[j]:] = phi[:n]
        h += weights[j] * B / np.linalg.norm(B)
    return h


def amplitude(cls):
    return 1.0 if 'ON' in cls else -1.0


def uniform_rates(row, value, T):
    """relu(A v H(t) + r0) for t = 0 .. T-1 of a single-subunit node (a row of cases.node_rows())."""
    h = temporal_kernel([row['weight_dom_0'], row['weight_dom_1']], [row['kpeaks_dom_0'], row['kpeaks_dom_1']],
                        [row['delay_dom_0'], row['delay_dom_1']])
    H = np.cumsum(h)
    H = np.concatenate([H, np.full(max(0, T - len(H)), H[-1])])[:T]
    return np.maximum(0.0, amplitude(row['pop_name']) * value * H + SPONT[row['pop_name']])


def kernel_selfcheck():
    """The spec's reference numbers (§2.4) from temporal_kernel: [(what, value, reference, ok)]."""
    from .cases import TEMPLATES
    out = []
    for cls, ref in REFERENCE_SUMS.items():
        s = temporal_kernel(*TEMPLATES[cls]).sum()
        out.append(('sum h %s' % cls, s, ref, abs(s - ref) <= 6e-7))
    for cls, ref in REFERENCE_HEADS.items():
        h = temporal_kernel(*TEMPLATES[cls])[:5]
        err = float(np.max(np.abs(h - np.array(ref))))
        out.append(('h(0..4) %s' % cls, err, 0.0, err <= 6e-7))
    return out
