"""Stimulus samples -> FilterNet rates, dpointnet's output files, the tolerance and the tables.

Tolerance: for every unit u of every sample, max_t |d_u(t) - f_u(t)| <= TOL * max(FLOOR_HZ, max_t |f_u(t)|), d
dpointnet's rate, f FilterNet's (Hz). dpointnet builds FilterNet's spatial and temporal kernels exactly (the same
formulas) and evaluates them in float64, so the difference is floating-point only: dpointnet keeps each step's
spike probability p = 1 - exp(-r dt) in float32 (rounding p by 6e-8 of itself) and lgn_rates.h5 holds the rate
read back from it in float32 (another 6e-8), about 1.2e-7 in all (measured: 1.1e-7 at worst, every class and set);
FilterNet's and dpointnet's float64 sums differ by about 1e-12. TOL = 1e-6 leaves a factor 8 above that. Real model
differences are far larger: one frame of time shift at 8 Hz moves a rate by about 5 % of its modulation, one pixel
of position at 0.08 cycles/degree by about half of it, and the mutations of the sensitivity check deviate by 1e-2
to 1 of the peak (printed). The floor of 1 Hz keeps a unit that stays (near) silent from being judged on
rounding noise. Closed forms (spec numbers with 6 decimals) get TOL plus the spec's rounding (5e-7 Hz).
"""
import csv
import math
import os

import h5py
import numpy as np

from . import cases, closed_forms, filternet

TOL = 1e-6
FLOOR_HZ = 1.0


# ------------------------------------------------------------------------------------------------ parameters

def theta(direction, convention, flipped=False):
    """FilterNet's theta of a dpointnet direction: unchanged, or negated for "direction_convention": "dpointnet"."""
    t = -direction if convention == 'dpointnet' else direction
    return -t if flipped else t


def read_samples_csv(path):
    """{sample: {column: str}} of stimulus_samples.csv."""
    with open(path) as f:
        return {int(r['sample']): r for r in csv.DictReader(f)}


def _num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return math.nan


def resolve_params(stimulus, batch, csv_rows):
    """Per sample: the config's parameters, "random" ones taken from stimulus_samples.csv (None: not given). Returns
    (params list, problems list) where problems are disagreements between the CSV and the config."""
    params, problems = [], []
    for k in range(batch):
        p = cases.sample_params(stimulus, k)
        row = (csv_rows or {}).get(k)
        if csv_rows is not None and row is None:
            problems.append('sample %d: no row in stimulus_samples.csv' % k)
        if row is not None and row.get('type') != p['type']:
            problems.append('sample %d: type %r, config %r' % (k, row.get('type'), p['type']))
        for key in cases.KEYS:
            if p['type'] not in cases.GRATINGS and key != 'contrast':
                continue
            if p['type'] == 'movie':
                continue
            got = _num(row.get(key)) if row is not None else math.nan
            if p[key] == 'random':
                if not (0.0 <= got < 360.0):
                    problems.append('sample %d: random %s = %r, expected a number in [0, 360)' % (k, key, got))
                p[key] = got
            elif row is not None and not abs(got - p[key]) <= 1e-9 * max(1.0, abs(p[key])):
                problems.append('sample %d: %s = %r in stimulus_samples.csv, config gives %r' % (k, key, got, p[key]))
        params.append(p)
    return params, problems


# -------------------------------------------------------------------------------------------- FilterNet side

def stimulus_movie(spec, T, p, movie_data=None, flipped=False, filternet_concat=False):
    s = spec['stimulus']
    if p['type'] in cases.GRATINGS:
        return filternet.grating_movie(s, T, p, theta(p['direction'], spec.get('direction_convention'), flipped),
                                       s.get('pre_ms', 0), s.get('post_ms', 0), filternet_concat)
    if p['type'] == 'grey_screen':
        return filternet.uniform_movie(s, T, p['contrast'])
    if p['type'] == 'movie':
        return filternet.file_movie(movie_data[:T], s['degrees_per_pixel'], s['frame_rate'])
    raise ValueError('unknown stimulus type %r' % p['type'])


def filternet_set(cells, spec, T, params, movie_data=None, **mutation):
    """FilterNet's rates [sample][step][unit] (Hz, float64) of one stimulus set."""
    return np.stack([filternet.evaluate(cells, stimulus_movie(spec, T, p, movie_data, **mutation)).T[:T]
                     for p in params])


def read_movie(spec):
    s = spec['stimulus']
    if s['type'] != 'movie':
        return None
    with h5py.File(s['movie_file'], 'r') as h:
        return h[s.get('movie_dataset', 'movie')][()].astype(np.float64)


# -------------------------------------------------------------------------------------------- dpointnet side

def read_dpointnet(out_dir, batch, T, n_units):
    """(rates [sample][step][unit] float64, samples CSV rows, problems) of one run's output directory."""
    problems = []
    path = os.path.join(out_dir, 'lgn_rates.h5')
    with h5py.File(path, 'r') as h:
        d = h['rates']
        if d.dtype != np.float32:
            problems.append('%s: /rates is %s, the interface says float32' % (path, d.dtype))
        rates = d[()].astype(np.float64)
    if rates.shape != (batch, T, n_units):
        problems.append('%s: /rates has shape %s, expected [sample][step][unit] = %s' % (path, rates.shape,
                                                                                          (batch, T, n_units)))
        rates = None
    rows = read_samples_csv(os.path.join(out_dir, 'stimulus_samples.csv'))
    return rates, rows, problems


# ------------------------------------------------------------------------------------------------- judgement

def deviation(d, f):
    """[sample][unit]: max_t |d - f| / max(FLOOR_HZ, max_t |f|)."""
    scale = np.maximum(FLOOR_HZ, np.abs(f).max(axis=1))
    return np.abs(d - f).max(axis=1) / scale


def worst(d, f):
    """(worst relative deviation, its (sample, step, unit), the absolute difference there in Hz)."""
    dev = deviation(d, f)
    s, u = np.unravel_index(np.argmax(dev), dev.shape)
    t = int(np.argmax(np.abs(d[s, :, u] - f[s, :, u])))
    return float(dev[s, u]), (int(s), t, int(u)), float(abs(d[s, t, u] - f[s, t, u]))


def class_worst(d, f, classes):
    """{class: worst relative deviation over its units and the samples}."""
    dev = deviation(d, f).max(axis=0)
    return {c: float(dev[[i for i, x in enumerate(classes) if x == c]].max()) for c in dict.fromkeys(classes)}


def closed_form_checks(name, rates, rows, params, T):
    """[(what, worst |r - closed form| in Hz, tolerance check passed)] for the grey and uniform sets."""
    out = []
    if name == 'grey':
        ref = np.array([closed_forms.SPONT[r['pop_name']] for r in rows])
        err = np.abs(rates - ref[None, None, :])
        lim = closed_forms.SPONT_ROUNDING + TOL * np.maximum(FLOOR_HZ, ref)
        out.append(('grey screen = spontaneous rate (spec §2.5), all units', float(err.max()),
                    bool((err <= lim[None, None, :]).all())))
    if name == 'uniform':
        single = [i for i, r in enumerate(rows) if r['pop_name'] not in cases.COMPOSITE]
        for s, p in enumerate(params):
            ref = np.stack([closed_forms.uniform_rates(rows[i], p['contrast'], T) for i in single], axis=1)
            err = np.abs(rates[s][:, single] - ref)
            lim = closed_forms.SPONT_ROUNDING + TOL * np.maximum(FLOOR_HZ, np.abs(ref).max(axis=0))
            out.append(('uniform %+g: relu(A v H(t) + r0), single-subunit units' % p['contrast'], float(err.max()),
                        bool((err <= lim[None, :]).all())))
    return out
