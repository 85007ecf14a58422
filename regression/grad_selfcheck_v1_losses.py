"""Training-oracle self-checks of the V1 papers' losses (oracle/v1_losses.py, oracle/cell_types.py): cell types,
the rate table reader, sampled targets, Huber-quantile, windows and normalisers against hand-computed values."""
import os

import numpy as np
import torch
from oracle.config import load_config
from oracle.cell_types import pop_name_to_cell_type, cell_types, core_mask, CELL_TYPES_17
from oracle.tinynet import make_network, GLIF
from oracle.train import Trainer, TrainConfig, TrainError, compute_losses
from oracle.v1_losses import read_rate_table, sampled_targets, huber_quantile
from grad_selfcheck_common import HERE, TMP, check
from v1_loss_fixture import write_fixture

# pop_name -> (merged type, unmerged type), written out from V1-PAPER.md section 3
V1_POP_NAMES = {
    'e23Cux2': ('L2/3 Exc', 'L2/3 Exc'), 'i23Pvalb': ('L2/3 PV', 'L2/3 PV'), 'i23Sst': ('L2/3 SST', 'L2/3 SST'),
    'i23Vip': ('L2/3 VIP', 'L2/3 VIP'), 'e4Scnn1a': ('L4 Exc', 'L4 Exc'), 'e4Rorb': ('L4 Exc', 'L4 Exc'),
    'e4other': ('L4 Exc', 'L4 Exc'), 'e4Nr5a1': ('L4 Exc', 'L4 Exc'), 'i4Pvalb': ('L4 PV', 'L4 PV'),
    'i4Sst': ('L4 SST', 'L4 SST'), 'i4Vip': ('L4 VIP', 'L4 VIP'), 'e5ET': ('L5 Exc', 'L5 ET'),
    'e5IT': ('L5 Exc', 'L5 IT'), 'e5NP': ('L5 Exc', 'L5 NP'), 'e5Rbp4': ('L5 Exc', 'L5 Rbp4'),
    'i5Pvalb': ('L5 PV', 'L5 PV'), 'i5Sst': ('L5 SST', 'L5 SST'), 'i5Vip': ('L5 VIP', 'L5 VIP'),
    'e6Ntsr1': ('L6 Exc', 'L6 Exc'), 'i6Pvalb': ('L6 PV', 'L6 PV'), 'i6Sst': ('L6 SST', 'L6 SST'),
    'i6Vip': ('L6 VIP', 'L6 VIP'), 'i1Htr3a': ('L1 Htr3a', 'L1 Htr3a')}
# the fixture network (v1_loss_fixture.py): merged type of each neuron and core membership (radius 100 um)
FX_TYPES = ['L2/3 Exc', 'L2/3 Exc', 'L2/3 Exc', 'L2/3 PV', 'L2/3 PV', 'L4 Exc', 'L4 Exc', 'L5 Exc', 'L5 Exc',
            'L5 SST', 'L1 Htr3a', 'L2/3 Exc']
FX_CORE = [1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0]       # neuron 11 sits at radius exactly 100: not core
SPEC_FIXTURE = [0.00046806, 0.00112362, 0.00179598, 0.00258795, 0.00455643]


def fixture_model(name='v1fx'):
    return Trainer(load_config(write_fixture(os.path.join(TMP, name), T=12.0, B=1))).model


def cell_type_mapping():
    bad = [(p, pop_name_to_cell_type(p), pop_name_to_cell_type(p, merge_l5=False), e)
           for p, e in V1_POP_NAMES.items()
           if (pop_name_to_cell_type(p), pop_name_to_cell_type(p, merge_l5=False)) != e]
    check('pop_name -> cell type, merged and unmerged, all %d V1 pop_names' % len(V1_POP_NAMES), not bad, str(bad))
    merged = set(pop_name_to_cell_type(p) for p in V1_POP_NAMES)
    unmerged = set(pop_name_to_cell_type(p, False) for p in V1_POP_NAMES if p != 'e5Rbp4')
    check('17 merged types, 19 unmerged (without e5Rbp4)', merged == set(CELL_TYPES_17) and len(unmerged) == 19,
          '%d %d' % (len(merged), len(unmerged)))
    m = fixture_model()
    ct = cell_types(m.net.rec_pops).tolist()
    check('cell types from the node types column pop_name', ct == FX_TYPES, str(ct))
    check('core mask from nodes x, z (strictly inside the radius)',
          core_mask(m.net.rec_pops, 100.0).astype(int).tolist() == FX_CORE)
    # a pop_name dataset in the nodes group wins over the node types column
    d = os.path.join(TMP, 'popds')
    cells = [('nest:glif_psc', GLIF, 100)] * 3
    cfg = make_network(d, cells, [('vin', 1)], [('vin', 0, 0, 1.0, 1.0, 1, 1)], {"dt": 1.0, "tstop": 5.0},
                       {}, None, {}, type_columns={'pop_name': {100: 'e4Rorb'}, 'x': {100: '3.0'}, 'z': {100: '4.0'}},
                       node_attrs={'pop_name': ['i23Sst', 'e5NP', 'i1Htr3a'], 'z': [0.0, 1.0, 6.0]})
    pops = Trainer(load_config(cfg)).model.net.rec_pops
    check('pop_name/x/z: nodes group dataset, else node types column',
          cell_types(pops, merge_l5=False).tolist() == ['L2/3 SST', 'L5 NP', 'L1 Htr3a']
          and core_mask(pops, 5.0).tolist() == [True, True, False])


def rate_table_reader():
    t = read_rate_table(os.path.join(os.path.dirname(HERE), 'input', 'neuropixels', 'OSI_DSI_neuropixels_v4.csv'),
                        'cell_type', 'Ave_Rate(Hz)')
    n = {k: len(v) for k, v in t.items()}
    check('Neuropixels v4 table: 17 quoted cell types, 3156 units (L1 Htr3a 17, L2/3 Exc 503, L5 Exc 975)',
          sorted(t) == sorted(CELL_TYPES_17) and sum(n.values()) == 3156 and n['L1 Htr3a'] == 17
          and n['L2/3 Exc'] == 503 and n['L5 Exc'] == 975, str(n))
    p = os.path.join(TMP, 'tab.csv')
    open(p, 'w').write('id r cell_type other\n1 2.5 "L2/3 Exc" x\n2 NaN "L2/3 Exc" y\n3 1.5 "L2/3 Exc" z\n'
                       '4 7 "L4 PV" w\n5 nan "L1 Htr3a" v\n')
    t = read_rate_table(p, 'cell_type', 'r')
    check('NaN rates skipped, a group of NaN only absent, rates sorted',
          sorted(t) == ['L2/3 Exc', 'L4 PV'] and t['L2/3 Exc'].tolist() == [1.5, 2.5] and t['L4 PV'].tolist() == [7.0])


def sampled_and_huber_quantile():
    q = sampled_targets(np.array([0.001, 0.002, 0.005, 0.0]), 5, 42)
    check('sampled targets: V1-PAPER.md 3.1 fixture (R = {0.001, 0.002, 0.005, 0}, n 5, seed 42)',
          np.max(np.abs(q - SPEC_FIXTURE)) < 5e-9, str(q))
    u = torch.tensor([-1.0, -0.2, 0.0, 0.3, 2.0])
    tau = torch.tensor([0.2, 0.4, 0.6, 0.8, 1.0])
    got = huber_quantile(u, tau, 0.5).tolist()
    # 0.8 (1 - 0.25); 0.6 0.04/1; 0.4 * 0; 0.8 0.09/1; 1 (2 - 0.25)
    exp = [0.6, 0.024, 0.0, 0.072, 1.75]
    check('Huber-quantile on hand-made u, tau (delta 0.5)', np.max(np.abs(np.array(got) - exp)) < 1e-15, str(got))
    # the spec fixture through the parser: a 5-neuron group of one type, observed {1, 2, 5} Hz plus the zero
    d = os.path.join(TMP, 'five')
    p = os.path.join(d, 'obs.csv')
    cfg = make_network(d, [('nest:glif_psc', GLIF, 100)] * 5, [('vin', 1)], [('vin', 0, 0, 1.0, 1.0, 1, 1)],
                       {"dt": 1.0, "tstop": 5.0}, {}, None, {}, type_columns={'pop_name': {100: 'e4other'}})
    open(p, 'w').write('cell_type Ave_Rate(Hz)\n"L4 Exc" 1\n"L4 Exc" 5\n"L4 Exc" 2\n"L6 PV" 9\n')
    m = Trainer(load_config(cfg)).model
    L = {"type": "RateDistribution", "cost": 1.0, "target_file": p, "group_by": "cell_type", "rate_column":
         "Ave_Rate(Hz)", "append_zero": True, "targets": "sampled", "unit": "spikes_per_step"}
    tc = TrainConfig({"losses": [L, dict(L, seed=43), dict(L, append_zero=False, targets="quantiles")]}, m)
    (w, groups), = tc.losses[0]['regions']
    z = torch.zeros(1, 5, 5)
    tot, terms, _ = compute_losses(tc.losses[:1], z, None, 1.0, {}, {}, {}, [])
    check('parsed sampled targets (Hz) x dt/1000 == the fixture; zero rates give mean of q^2',
          len(groups) == 1 and np.max(np.abs(groups[0][1] / 1000.0 - SPEC_FIXTURE)) < 5e-9
          and abs(float(tot) / np.mean(np.square(SPEC_FIXTURE)) - 1) < 1e-4, '%r %r' % (groups, float(tot)))
    q43 = tc.losses[1]['regions'][0][1][0][1]
    qq = tc.losses[2]['regions'][0][1][0][1]
    # quantiles of {1, 2, 5} at 0.1 .. 0.9: positions 0.2, 0.6, 1.0, 1.4, 1.8
    check('seed changes the draw; quantile targets of {1, 2, 5} at (k + 0.5)/5',
          not np.allclose(q43, groups[0][1]) and np.max(np.abs(qq - [1.2, 1.6, 2.0, 3.2, 4.4])) < 1e-14, str(qq))


def _spikes(counts, T, outside=True):
    """z [1, T, N]: neuron n spikes counts[n] times inside steps 1..T-2 (and at steps 0 and T-1 if outside)."""
    z = torch.zeros(1, T, len(counts))
    for n, c in enumerate(counts):
        z[0, 1:1 + c, n] = 1.0
        if outside:
            z[0, 0, n] = z[0, T - 1, n] = 1.0
    return z


def windows_and_normalisers():
    """The fixture network, T = 12, pre 1 ms, post 1 ms (T_w = 10), every type observed {0, 200, 400} Hz:
    targets 200 Hz for one neuron, (100, 300) for two. Rates at the targets give 0; hand-computed offsets."""
    m = fixture_model('v1fx_w')
    p = os.path.join(TMP, 'obs3.csv')
    open(p, 'w').write('cell_type rate\n' + ''.join('"%s" %d\n' % (c, r) for c in CELL_TYPES_17 for r in (400, 0, 200)))
    base = {"type": "RateDistribution", "cost": 2.0, "target_file": p, "group_by": "cell_type", "rate_column": "rate",
            "pre_ms": 1.0, "post_ms": 1.0, "core_radius": 100.0, "annulus_weight": 0.5}
    # core: L2/3 Exc (0, 1), L2/3 PV 3, L4 Exc 5, L5 Exc 7, L5 SST 9, L1 10; annulus: L2/3 Exc (2, 11), 4, 6, 8
    at_target = [3, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3]
    off = [0, 3, 2, 2, 2, 2, 2, 2, 2, 2, 4, 5]        # core u: L1 +200 Hz, L2/3 Exc (-100, 0); annulus (+100, +200)
    cases = [  # (keys, value at `off` divided by cost)
        ({"penalty": "squared"}, 45000.0 + 0.5 * 25000.0),
        ({"penalty": "squared", "normalize": "neurons"}, 50000.0 / 7 + 0.5 * 50000.0 / 5),
        ({"penalty": "squared", "unit": "spikes_per_step"}, 0.045 + 0.5 * 0.025),
        ({"penalty": "huber", "delta": 150.0}, (150 * 125 + 5000.0 / 2) + 0.5 * (5000.0 + 150 * 125) / 2),
        ({"penalty": "huber_quantile", "delta": 0.1, "unit": "spikes_per_step"}, 0.1625 + 0.5 * 0.0875),
        ({"penalty": "huber_quantile", "delta": 0.1, "unit": "spikes_per_step", "normalize": "neurons"},
         0.025 + 0.5 * 0.035)]
    worst_zero, bad = 0.0, []
    for keys, exp in cases:
        tc = TrainConfig({"losses": [dict(base, **keys)]}, m)
        zero = float(compute_losses(tc.losses, _spikes(at_target, 12), None, 1.0, {}, {}, {}, [])[0])
        got = float(compute_losses(tc.losses, _spikes(off, 12), None, 1.0, {}, {}, {}, [])[0])
        got_in = float(compute_losses(tc.losses, _spikes(off, 12, outside=False), None, 1.0, {}, {}, {}, [])[0])
        worst_zero = max(worst_zero, abs(zero))
        if abs(got - 2.0 * exp) > 1e-12 * abs(exp) or got != got_in:
            bad.append((keys, got, 2.0 * exp, got_in))
    check('RateDistribution: 0 when the sorted rates equal the targets (all penalties, units, normalisers)',
          worst_zero < 1e-25, '%g' % worst_zero)
    check('RateDistribution: hand-computed values (core + 0.5 annulus, per_group/neurons, Hz/spikes_per_step); '
          'spikes outside the window change nothing', not bad, str(bad))
    tfr = TrainConfig({"losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 100.0, "pre_ms": 1.0,
                                   "post_ms": 1.0}]}, m)
    got = float(compute_losses(tfr.losses, _spikes(off, 12), None, 1.0, {}, {}, {}, [])[0])
    exp = np.mean((np.array(off) * 100.0 - 100.0) ** 2)
    check('TargetFiringRate window: rate = spikes in the window / (T_w dt)', abs(got - exp) < 1e-12 * exp)
    for bad_keys, msg in (({"penalty": "l1"}, 'penalty'), ({"annulus_weight": 1.0, "core_radius": None}, 'core_radius'),
                          ({"normalize": "all"}, 'normalize'), ({"rate_column": "nope"}, 'no column')):
        try:
            TrainConfig({"losses": [dict(base, **bad_keys)]}, m)
            check('refused: ' + msg, False)
        except TrainError as e:
            check('refused: ' + msg, msg in str(e), str(e))
    open(p + '2', 'w').write('cell_type rate\n"L2/3 Exc" 3\n')
    for L, msg in ((dict(base, target_file=p + '2'), 'no observed rate'), (dict(base, pre_ms=0.5), 'whole number'),
                   (dict(base, pre_ms=6.0, post_ms=6.0), 'no step')):
        try:
            tc = TrainConfig({"losses": [L]}, m)
            compute_losses(tc.losses, _spikes(off, 12), None, 1.0, {}, {}, {}, [])
            check('refused: ' + msg, False)
        except TrainError as e:
            check('refused: ' + msg, msg in str(e), str(e))


TESTS = [cell_type_mapping, rate_table_reader, sampled_and_huber_quantile, windows_and_normalisers]
