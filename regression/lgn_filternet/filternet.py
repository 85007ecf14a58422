"""BMTK FilterNet (the vendored, unmodified lgnmodel of bmtk @7e040d05) as the oracle: cells built from node
attributes by FilterNet's own default_cell_loader through the tarball's tools/lgn_rates.py (its node reader and
FilterNode stand-in), movies from FilterNet's movie classes, evaluation with the separable cursor of the V1 model's
FilterNet config. Also the mutated FilterNets of the sensitivity check."""
import contextlib
import importlib
import os
import sys

import numpy as np

_FN = {}


def load(root):
    """Imports FilterNet from the unpacked tarball at root (it holds bmtk/ and tools/)."""
    if _FN:
        return _FN
    os.environ.setdefault('MPLBACKEND', 'Agg')
    for p in (root, os.path.join(root, 'tools')):
        if p not in sys.path:
            sys.path.insert(0, p)
    _FN['lgn_rates'] = importlib.import_module('lgn_rates')
    _FN['cell'] = importlib.import_module('bmtk.simulator.filternet.cell')
    _FN['loaders'] = importlib.import_module('bmtk.simulator.filternet.default_setters.cell_loaders')
    _FN['movie'] = importlib.import_module('bmtk.simulator.filternet.lgnmodel.movie')
    _FN['spatial'] = importlib.import_module('bmtk.simulator.filternet.lgnmodel.spatialfilter')
    _FN['kernel'] = importlib.import_module('bmtk.simulator.filternet.lgnmodel.kernel')
    _FN['temporal'] = importlib.import_module('bmtk.simulator.filternet.lgnmodel.temporalfilter')
    return _FN


def read_nodes(path, node_types=None):
    """[(node_id, attrs)] as tools/lgn_rates.py reads a CSV table or a SONATA nodes file."""
    return _FN['lgn_rates'].read_nodes(path, node_types)


def build_cells(nodes):
    """FilterNet cell objects (OnUnit, OffUnit, TwoSubfieldLinearCell), as lgn_rates.py / FilterNetwork build them."""
    lr, Cell = _FN['lgn_rates'], _FN['cell'].Cell
    cells = []
    for nid, attrs in nodes:
        cell = Cell(lr.FilterNodeLike(nid, attrs), population='lgn')
        cell.default_jitter = (1.0, 1.0)  # filternetwork.py:16; unused (no jitter_* attributes)
        cell.build()
        cells.append(cell.lgn_cell_obj)
    return cells


def evaluate(cells, movie):
    """rates [cell, frame] (Hz, float64) of cell.evaluate(movie, downsample=1, separable=True), as FilterSimulator
    (filtersimulator.py:189)."""
    out = None
    for i, c in enumerate(cells):
        _, r = c.evaluate(movie, downsample=1, separable=True)
        r = np.asarray(r, dtype=np.float64)
        if out is None:
            out = np.empty((len(cells), len(r)))
        out[i] = r
    return out


# ----------------------------------------------------------------------------------------------------- movies

def _grating_grid(screen):
    gm = _FN['movie'].GratingMovie(row_size=screen['screen_height'], col_size=screen['screen_width'],
                                   frame_rate=1000.0)
    return gm


def grating_frames(screen, n, p, theta):
    """n frames (times 0 .. n-1 ms) of FilterNet's GratingMovie (gray_screen_dur 0) and its pixel grid."""
    gm = _grating_grid(screen)
    m = gm.create_movie(t_min=0.0, t_max=n / 1000.0, gray_screen_dur=0.0, cpd=p['spatial_frequency'],
                        temporal_f=p['temporal_frequency'], theta=theta, phase=p['phase'], contrast=p['contrast'],
                        degrees_per_pixel=screen['degrees_per_pixel'])
    return m.data[:n], m.row_range, m.col_range


def grating_movie(screen, T, p, theta, pre, post, filternet_concat=False):
    """T frames: grey for t < pre and t >= T - post, else the grating at time t - pre ms (dpointnet's definition;
    FilterNet's gray_screen_dur would show grey at frame pre and drop the grating's frame 0, movie.py:117-126,
    :297-302, so the movie is concatenated here). filternet_concat=True: FilterNet's own concatenation instead
    (a mutation of the sensitivity check)."""
    Movie = _FN['movie'].Movie
    D = T - pre - post
    if filternet_concat and pre > 0:
        gm = _grating_grid(screen)
        m = gm.create_movie(t_min=0.0, t_max=(T - post) / 1000.0, gray_screen_dur=pre / 1000.0,
                            cpd=p['spatial_frequency'], temporal_f=p['temporal_frequency'], theta=theta,
                            phase=p['phase'], contrast=p['contrast'], degrees_per_pixel=screen['degrees_per_pixel'])
        g, rows, cols = m.data[:T - post], m.row_range, m.col_range
        data = np.concatenate([g, np.zeros((post,) + g.shape[1:])])
    else:
        g, rows, cols = grating_frames(screen, D, p, theta)
        z = lambda k: np.zeros((k,) + g.shape[1:])  # noqa: E731
        data = np.concatenate([z(pre), g, z(post)])
    return Movie(data, row_range=rows, col_range=cols, frame_rate=1000.0)


def uniform_movie(screen, T, value):
    """T frames of a uniform screen on the grating's pixel grid (GratingMovie refuses contrast 0; tools/lgn_rates.py
    builds its grey screen the same way, from FullFieldFlashMovie's all-zero movie)."""
    dpp = screen['degrees_per_pixel']
    rows = np.linspace(0, screen['screen_height'], int(screen['screen_height'] / dpp), endpoint=True)
    cols = np.linspace(0, screen['screen_width'], int(screen['screen_width'] / dpp), endpoint=True)
    data = np.full((T, len(rows), len(cols)), float(value))
    return _FN['movie'].Movie(data, row_range=rows, col_range=cols, frame_rate=1000.0)


def file_movie(data, dpp, frame_rate):
    """A movie from frames [frame][row][col]: pixel (r, c) at (r dpp, c dpp) degrees."""
    rows, cols = data.shape[1:]
    return _FN['movie'].Movie(np.asarray(data, dtype=np.float64), row_range=np.arange(rows) * dpp,
                              col_range=np.arange(cols) * dpp, frame_rate=frame_rate)


# -------------------------------------------------------------------------------------------------- mutations

@contextlib.contextmanager
def no_latency_alignment():
    """Composite cells keep their delays: createOneUnitOfTwoSubunitFilter returns the unshifted filter (the sum up to
    the zero crossing, which sets the amplitudes, is kept)."""
    loaders, TF = _FN['loaders'], _FN['temporal'].TemporalFilterCosineBump
    orig = loaders.createOneUnitOfTwoSubunitFilter

    def unaligned(weights, kpeaks, delays, ttp_exp):
        _, filt_sum = orig(weights, kpeaks, delays, ttp_exp)
        return TF(weights, kpeaks, np.array(delays)), filt_sum

    loaders.createOneUnitOfTwoSubunitFilter = unaligned
    try:
        yield
    finally:
        loaders.createOneUnitOfTwoSubunitFilter = orig


@contextlib.contextmanager
def no_edge_renormalization():
    """GaussianSpatialFilter.get_kernel divides the kernel cut to the screen by the sum of the uncut (centred, not yet
    moved) kernel instead of by its own sum (spatialfilter.py:105-107)."""
    sf, K2 = _FN['spatial'], _FN['kernel'].Kernel2D
    orig_warp, orig_norm = sf.util.apply_transformation_matrix, K2.normalize
    uncut = {}

    def warp(image, matrix):
        uncut['sum'] = float(np.sum(image))
        return orig_warp(image, matrix)

    def normalize(self):
        self.kernel /= abs(uncut['sum'])

    sf.util.apply_transformation_matrix, K2.normalize = warp, normalize
    try:
        yield
    finally:
        sf.util.apply_transformation_matrix, K2.normalize = orig_warp, orig_norm


def concat_differing_frames(screen, T, p, theta, pre, post):
    """Frames where FilterNet's own grey + grating concatenation differs from grating_movie's (expected: [pre])."""
    a = grating_movie(screen, T, p, theta, pre, post).data
    b = grating_movie(screen, T, p, theta, pre, post, filternet_concat=True).data
    return [int(i) for i in np.nonzero(np.abs(a - b).reshape(T, -1).max(axis=1) > 0)[0]]
