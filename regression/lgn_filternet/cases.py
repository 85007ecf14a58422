"""The LGN cells and the stimuli of the comparison.

Cells: every class of the V1 model's LGN (14), at positions on a 120 x 80 degree screen (centre, inside off the
pixel grid, on the left and bottom edges, in a corner: receptive fields partly off-screen there) and at the two ends
of the class' size range; composite classes at their one size with two tuning angles (one points the non-dominant
subunit off-screen at the edges). Temporal parameters are the class' fitted values times U(0.975, 1.025) per node
(seeded), as the V1 model's builder draws them, so truncated delays fall on both sides of an integer.

Stimuli: one dpointnet run per entry of STIMULUS_SETS (a batch of samples of one stimulus type).
"""
import numpy as np

# Fitted temporal filters (opt_wts, opt_kpeaks, opt_delays) of the V1 model's filter templates
# (biorealistic-v1-model base_props/filter_components/model_templates/*_ic.json @3302766; V1-PAPER §2.1).
TEMPLATES = {
    'sON_TF1': ([1.0000309341936413, -0.4461605742545549], [56.52557576288437, 137.4409331206289], [0, 15]),
    'sON_TF2': ([4.28233151216993, -1.427545109507161], [31.208438436597525, 137.0623970626708], [0, 5]),
    'sON_TF4': ([3.59404059587911, -1.8145831206023941], [30.758868538755, 58.35845979325414], [0, 25]),
    'sON_TF8': ([3.7052596759285548, -1.7538397094416842], [12.941033214060901, 28.27807659299407], [0, 25]),
    'sOFF_TF1': ([2.114240294638181, -1.2215255706921226], [54.48070427796576, 127.92115511653763], [0, 5]),
    'sOFF_TF2': ([3.1825793747512723, -1.1407120251016956], [19.84561654687027, 92.02360682394006], [0, 25]),
    'sOFF_TF4': ([3.229814878308509, -1.6587975171052909], [22.246197660260687, 56.10036268151849], [0, 15]),
    'sOFF_TF8': ([3.250647903236935, -1.683809890149441], [18.03400571601442, 51.21537412884131], [0, 15]),
    'sOFF_TF15': ([10.0, -3.260571234217411], [4.73623985160301, 21.59707569315522], [0, 5]),
    'tOFF_TF4': ([3.3459807668160377, -2.1819897785340467], [29.15797185312565, 59.36268031326181], [0, 15]),
    'tOFF_TF8': ([4.21848979193672, -2.404989833331929], [8.524645232832142, 23.246816713624384], [0, 0]),
    'tOFF_TF15': ([3.4416603571978417, -2.1155994819051305], [8.269733598229024, 19.99148791096526], [0, 0]),
}
# Composite classes: (dominant OFF template, non-dominant ON template, size, nominal sf_sep) (V1-PAPER §2.1).
COMPOSITE = {'sONsOFF_001': ('sOFF_TF4', 'sON_TF4', 6.0, 6.0), 'sONtOFF_001': ('tOFF_TF8', 'sON_TF4', 9.0, 4.0)}
SIZE_RANGE = (2.0, 9.0)  # single-subunit classes (lgn_models.csv min_size, max_size)
CLASSES = list(TEMPLATES) + list(COMPOSITE)

SCREEN = {'screen_width': 120, 'screen_height': 80, 'degrees_per_pixel': 1.0}
# (x, y) degrees: centre; inside, off the pixel grid; left edge; bottom edge (y = 79.5 of 80); corner.
POSITIONS = [(60.0, 40.0), (37.3, 22.6), (0.4, 41.7), (83.2, 79.5), (119.6, 0.3)]
TUNING_ANGLES = (30.0, 200.0)  # composite cells; 200 deg puts the left-edge cell's non-dominant centre off-screen

COLUMNS = ['node_id', 'pop_name', 'x', 'y', 'spatial_size',
           'kpeaks_dom_0', 'kpeaks_dom_1', 'weight_dom_0', 'weight_dom_1', 'delay_dom_0', 'delay_dom_1',
           'kpeaks_non_dom_0', 'kpeaks_non_dom_1', 'weight_non_dom_0', 'weight_non_dom_1',
           'delay_non_dom_0', 'delay_non_dom_1', 'tuning_angle', 'sf_sep']


def _jittered(rng, template):
    w, k, d = TEMPLATES[template]
    u = lambda v: [x * rng.uniform(0.975, 1.025) for x in v]  # noqa: E731
    return u(k), u(w), u(d)


def node_rows(seed=20261206):
    """One dict per LGN node (COLUMNS; NaN where a class has no such attribute), in file order."""
    rng = np.random.default_rng(seed)
    rows = []
    for cls in CLASSES:
        if cls in COMPOSITE:
            dom, nd, size, sep = COMPOSITE[cls]
            variants = [(p, size, a) for p in POSITIONS for a in TUNING_ANGLES]
        else:
            variants = [(p, s, None) for p in POSITIONS for s in SIZE_RANGE]
        for (x, y), size, angle in variants:
            r = dict.fromkeys(COLUMNS, np.nan)
            r.update(node_id=len(rows), pop_name=cls, x=x, y=y, spatial_size=size)
            k, w, d = _jittered(rng, dom if cls in COMPOSITE else cls)
            r.update(kpeaks_dom_0=k[0], kpeaks_dom_1=k[1], weight_dom_0=w[0], weight_dom_1=w[1],
                     delay_dom_0=d[0], delay_dom_1=d[1])
            if cls in COMPOSITE:
                k, w, d = _jittered(rng, nd)
                r.update(kpeaks_non_dom_0=k[0], kpeaks_non_dom_1=k[1], weight_non_dom_0=w[0],
                         weight_non_dom_1=w[1], delay_non_dom_0=d[0], delay_non_dom_1=d[1],
                         tuning_angle=angle, sf_sep=sep * rng.uniform(0.975, 1.025))
            rows.append(r)
    return rows


def movie_frames(rows=40, cols=60, frames=80, seed=7):
    """A bright bar 3 pixels wide drifting right by one pixel per frame over seeded noise (sd 0.2), in [-1, 1]."""
    rng = np.random.default_rng(seed)
    data = np.clip(rng.normal(0.0, 0.2, (frames, rows, cols)), -1.0, 1.0)
    for f in range(frames):
        c = (5 + f) % cols
        data[f, :, c:c + 3] = 0.9
    return data


MOVIE = {'rows': 40, 'cols': 60, 'frames': 80, 'degrees_per_pixel': 2.0, 'frame_rate': 1000.0}

_GRATING = dict(type='drifting_grating', pre_ms=0, post_ms=0, **SCREEN)
# name: (tstop ms, batch size, input spec without node_set). Lists cycle over samples (sample k: list[k % len]).
STIMULUS_SETS = {
    'drifting': (500, 6, {'stimulus': dict(_GRATING, direction=[0, 45, 90, 200.5], temporal_frequency=[2, 8, 1],
                                           spatial_frequency=[0.04, 0.08, 0.02, 0.02, 0.04, 0.08],
                                           contrast=[0.8, 0.8, 0.3], phase=[0, 90])}),
    'static': (300, 2, {'stimulus': dict(_GRATING, type='static_grating', direction=[30, 120],
                                         spatial_frequency=0.04, contrast=[0.8, 0.3], phase=[0, 45])}),
    'pre_post': (400, 2, {'stimulus': dict(_GRATING, direction=[45, 300], temporal_frequency=4.0,
                                                spatial_frequency=0.04, contrast=0.8, phase=0.0,
                                                pre_ms=50, post_ms=30)}),
    'dir_conv': (300, 2, {'direction_convention': 'dpointnet',
                                      'stimulus': dict(_GRATING, direction=[45, 120], temporal_frequency=2.0,
                                                       spatial_frequency=0.04, contrast=0.8, phase=0.0)}),
    'random': (300, 2, {'stimulus': dict(_GRATING, direction='random', temporal_frequency=2.0,
                                         spatial_frequency=0.04, contrast=0.8, phase='random')}),
    'grey': (100, 1, {'stimulus': {'type': 'grey_screen', **SCREEN}}),
    'uniform': (700, 2, {'stimulus': {'type': 'grey_screen', 'contrast': [0.5, -0.4], **SCREEN}}),
    'movie': (MOVIE['frames'], 1, {'stimulus': {'type': 'movie', 'movie_file': None, 'movie_dataset': 'movie',
                                                'degrees_per_pixel': MOVIE['degrees_per_pixel'],
                                                'frame_rate': MOVIE['frame_rate']}}),
}
GRATINGS = ('drifting_grating', 'static_grating')
KEYS = ('direction', 'temporal_frequency', 'spatial_frequency', 'contrast', 'phase')


def sample_params(stimulus, k):
    """The parameters of sample k from the config: {key: number or 'random'} plus 'type'."""
    p = {'type': stimulus['type']}
    defaults = {'temporal_frequency': 0.0} if stimulus['type'] == 'static_grating' else {}
    if stimulus['type'] == 'grey_screen':
        defaults = {'contrast': 0.0}
    for key in KEYS:
        v = stimulus.get(key, defaults.get(key))
        if isinstance(v, list):
            v = v[k % len(v)]
        p[key] = v
    return p


def samples_table(stimulus, batch, rng):
    """stimulus_samples.csv rows {sample: {column: str}} as a dpointnet run would write them, "random" values drawn
    U[0, 360) from rng (for the fake dpointnet and --filternet-only)."""
    out = {}
    for k in range(batch):
        p = sample_params(stimulus, k)
        row = {'sample': str(k), 'type': p['type']}
        for key in KEYS:
            v = rng.uniform(0.0, 360.0) if p[key] == 'random' else p[key]
            row[key] = '' if v is None else repr(float(v))
        out[k] = row
    return out


SAMPLES_COLUMNS = ['sample', 'type'] + list(KEYS)
