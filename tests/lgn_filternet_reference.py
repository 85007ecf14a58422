#!/usr/bin/python3
"""Prints the FilterNet values that tests/test_lgn_filters.cpp and tests/test_lgn_cells.cpp embed.

Runs BMTK FilterNet itself (the vendored subset, /work/shared/vendor/bmtk-filternet-7e040d05.tar.gz, unpacked;
docs: its NOTES.md) on the nominal filter templates of the V1 model (shared/data/lgn/filter_components) and on
two composite nodes of the vendored tools/example_nodes.csv:

  MPLBACKEND=Agg /usr/bin/python3 tests/lgn_filternet_reference.py --filternet /tmp/fn/bmtk-filternet-7e040d05 \
      --templates /work/shared/data/lgn/filter_components/model_templates
"""
import argparse
import glob
import json
import os
import sys

os.environ.setdefault('MPLBACKEND', 'Agg')
import numpy as np  # noqa: E402

LAGS = [0, 1, 2, 3, 4, 10, 50, 100, 200, 400, 599]


def r(v):
    return repr(float(v))


def kernel_stats(name, kd):
    big = np.nonzero(np.abs(kd) > 1e-6)[0]
    vals = ', '.join(r(kd[i]) for i in LAGS)
    print('  {{"{}", {}, {}, {}, {}, {}, {{{}}}}},'.format(name, len(kd), r(np.sum(kd)), int(np.argmax(kd)),
                                                        int(np.argmin(kd)), int(big[-1]), vals))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--filternet', required=True)
    p.add_argument('--templates', required=True)
    a = p.parse_args()
    sys.path.insert(0, a.filternet)
    import bmtk.simulator.filternet.default_setters  # noqa: F401
    from bmtk.simulator.filternet.cell import Cell
    from bmtk.simulator.filternet.default_setters.cell_loaders import createOneUnitOfTwoSubunitFilter
    from bmtk.simulator.filternet.lgnmodel.spatialfilter import GaussianSpatialFilter
    from bmtk.simulator.filternet.lgnmodel.temporalfilter import TemporalFilterCosineBump
    from bmtk.simulator.filternet.lgnmodel.util_fns import get_tcross_from_temporal_kernel
    sys.path.insert(0, os.path.join(a.filternet, 'tools'))
    import lgn_rates

    templates = {}
    for f in sorted(glob.glob(os.path.join(a.templates, '*_ic.json'))):
        base = os.path.basename(f)
        d = json.load(open(f))
        templates[base.split('_')[0] + '_' + base.split('_')[1]] = (d['opt_wts'], d['opt_kpeaks'], d['opt_delays'])

    print('// nominal templates: name, w0, w1, k0, k1, d0, d1')
    for k, (w, kp, d) in templates.items():
        print('  {{"{}", {{{}, {}}}, {{{}, {}}}, {{{}, {}}}}},'.format(k, r(w[0]), r(w[1]), r(kp[0]), r(kp[1]),
                                                                   r(d[0]), r(d[1])))
    print('// TemporalFilterCosineBump(opt_wts, opt_kpeaks, opt_delays).kernel_data: name, length, sum, argmax, '
          'argmin, last |h| > 1e-6, h at lags', LAGS)
    for k, (w, kp, d) in templates.items():
        kernel_stats(k, TemporalFilterCosineBump(w, kp, d).kernel_data)
    # non-integer and non-zero delays (truncated by FilterNet)
    w, kp, _ = templates['sON_TF1']
    kernel_stats('sON_TF1 delays (3.7, 14.867648948779896)',
                 TemporalFilterCosineBump(w, kp, [3.7, 14.867648948779896]).kernel_data)

    print('// createOneUnitOfTwoSubunitFilter on the nominal templates: t_cross, S, offset, new length')
    for name, ttp in [('sOFF_TF4', 115.0), ('sON_TF4', 121.0), ('tOFF_TF8', 64.8), ('sON_TF4', 93.5)]:
        w, kp, d = templates[name]
        filt = TemporalFilterCosineBump(w, kp, d)
        tc = get_tcross_from_temporal_kernel(filt.get_kernel(threshold=-1.0).kernel)
        new, s = createOneUnitOfTwoSubunitFilter(w, kp, d, ttp)
        print('  {} ttp {}: t_cross {} S {} offset {} length {} sum {}'.format(name, ttp, tc, r(s), r(ttp - tc),
                                                                           len(new.kernel_data),
                                                                           r(np.sum(new.kernel_data))))
    # the offset is added to the delays before FilterNet truncates them: 14.3 + 45.8 = 60.1 -> 60 (not 14 + 45)
    w, kp, _ = templates['tOFF_TF8']
    new, s = createOneUnitOfTwoSubunitFilter(w, kp, [0.0, 14.3], 64.8)
    kernel_stats('tOFF_TF8 delays (0, 14.3), ttp 64.8, S ' + r(s), new.kernel_data)
    s_on = createOneUnitOfTwoSubunitFilter(*templates['sON_TF4'], 121.0)[1]
    s_off = createOneUnitOfTwoSubunitFilter(*templates['sOFF_TF4'], 115.0)[1]
    print('  A_d sONsOFF', r(-(35.0 / 21.0) * (s_on / s_off) * 1.0 - (4.0 * (35.0 - 21.0)) / (21.0 * s_off)))
    s_on = createOneUnitOfTwoSubunitFilter(*templates['sON_TF4'], 93.5)[1]
    s_t = createOneUnitOfTwoSubunitFilter(*templates['tOFF_TF8'], 64.8)[1]
    print('  A_d sONtOFF', r(-0.7 * (46.0 / 31.0) * (s_on / s_t) * 1.0 - (5.5 * (46.0 - 31.0)) / (31.0 * s_t)))

    print('// default_cell_loader on nodes of tools/example_nodes.csv')
    nodes = lgn_rates.read_nodes(os.path.join(a.filternet, 'tools', 'example_nodes.csv'))
    for nid, attrs in nodes:
        if nid not in (15476, 496) and not (attrs['pop_name'] == 'sONtOFF_001' and nid == min(
                n for n, x in nodes if x['pop_name'] == 'sONtOFF_001')):
            continue
        print('  node', nid, {k: r(v) if isinstance(v, float) else v for k, v in attrs.items()})
        cell = Cell(lgn_rates.FilterNodeLike(nid, attrs), population='lgn')
        cell.default_jitter = (1.0, 1.0)
        cell.build()
        obj = cell.lgn_cell_obj
        if hasattr(obj, 'dominant_filter'):
            for tag, f in (('dominant', obj.dominant_filter), ('non-dominant', obj.nondominant_filter)):
                print('   ', tag, 'amplitude', r(f.amplitude), 'translate', [r(v) for v in f.spatial_filter.translate],
                      'sigma', r(f.spatial_filter.sigma[0]))
                kernel_stats(tag, f.temporal_filter.kernel_data)
        else:
            f = obj.linear_filter
            print('    amplitude', r(f.amplitude), 'transfer', obj.transfer_function.transfer_function_string)
            kernel_stats('single', f.temporal_filter.kernel_data)
        print('    transfer', obj.transfer_function.transfer_function_string)

    print('// GaussianSpatialFilter(translate=(x, y), sigma=(s, s), origin=(0, 0)).get_kernel(linspace(0, H, rows), '
          'linspace(0, W, cols)): row and column sums (the kernel is their outer product)')
    for (hh, ww, dpp, x, y, sig) in [(80, 120, 1.0, 57.97, 7.42, 5.18 / 3), (80, 120, 1.0, 1.3, 78.6, 3.0),
                                     (80, 120, 2.5, 33.3, 41.7, 2.0), (10, 12, 1.0, 3.3, 4.4, 3.0)]:
        rr = np.linspace(0, hh, int(hh / dpp))
        cr = np.linspace(0, ww, int(ww / dpp))
        kern = GaussianSpatialFilter(translate=(x, y), sigma=(sig, sig), origin=(0.0, 0.0)).get_kernel(rr, cr)
        full = kern.full()
        rows, cols = full.sum(axis=1), full.sum(axis=0)
        outer_err = np.abs(full - np.outer(rows, cols)).max()
        for tag, v in (('rows', rows), ('cols', cols)):
            nz = np.nonzero(v)[0]
            print('  {} {} dpp {} x {} y {} sigma {}: {} first {} n {} outer max diff {:.1e} values {{{}}}'.format(
                hh, ww, dpp, r(x), r(y), r(sig), tag, nz[0], nz[-1] - nz[0] + 1, outer_err,
                ', '.join(r(t) for t in v[nz[0]:nz[-1] + 1])))


if __name__ == '__main__':
    main()
