#!/usr/bin/python3
"""Compare two SONATA spike files exactly.

usage: /usr/bin/python3 regression/compare_spikes.py A.h5 B.h5
Spikes are (population, node_id, time) with times rounded to 1e-6 ms. Prints the counts,
the number in common (multiset intersection) and the first differing spike in
(time, population, node_id) order. Exit status 0 only if identical."""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np                          # noqa: E402
from oracle.sonata import read_spike_file   # noqa: E402


def load(path):
    out = []
    for pop, (ids, ts) in read_spike_file(path).items():
        pname = '' if pop is None else pop
        for i, t in zip(ids.tolist(), np.round(ts, 6).tolist()):
            out.append((t, pname, int(i)))
    out.sort()
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    a, b = load(argv[0]), load(argv[1])
    ca, cb = collections.Counter(a), collections.Counter(b)
    common = sum((ca & cb).values())
    print('%s: %d spikes' % (argv[0], len(a)))
    print('%s: %d spikes' % (argv[1], len(b)))
    print('in common: %d' % common)
    if a == b:
        print('IDENTICAL')
        return 0
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            fmt = lambda s: 'none' if s is None else 't=%.6f ms pop=%s node_id=%d' % s
            print('first difference at sorted position %d: A %s | B %s' % (i, fmt(x), fmt(y)))
            break
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
