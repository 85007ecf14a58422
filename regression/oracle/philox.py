"""Philox4x32-10 counter-based RNG (Salmon et al. 2011, Random123), vectorised with numpy.

All arithmetic is done in numpy uint64 holding 32-bit values, so that the 32x32->64
products are exact.
"""
import numpy as np

M0 = np.uint64(0xD2511F53)
M1 = np.uint64(0xCD9E8D57)
W0 = np.uint64(0x9E3779B9)
W1 = np.uint64(0xBB67AE85)
MASK = np.uint64(0xFFFFFFFF)
SH = np.uint64(32)

# Known-answer vectors from Random123 tests/kat_vectors ("philox4x32 10" lines):
# (counter[4], key[2], expected[4])
KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff),
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def _u64(x):
    return np.asarray(x, dtype=np.uint64) & MASK


def philox4x32_10(c0, c1, c2, c3, k0, k1, rounds=10):
    """Return the four output words (uint64 arrays holding uint32 values).

    Inputs are broadcast against each other. Random123 order: round 1 with the
    original key, then for rounds 2..R bump the key (Weyl) and do a round."""
    c0, c1, c2, c3, k0, k1 = np.broadcast_arrays(_u64(c0), _u64(c1), _u64(c2), _u64(c3), _u64(k0), _u64(k1))
    c0, c1, c2, c3 = c0.copy(), c1.copy(), c2.copy(), c3.copy()
    k0, k1 = k0.copy(), k1.copy()
    for r in range(rounds):
        if r > 0:
            k0 = (k0 + W0) & MASK
            k1 = (k1 + W1) & MASK
        p0 = M0 * c0            # < 2**64, exact in uint64
        p1 = M1 * c2
        hi0, lo0 = p0 >> SH, p0 & MASK
        hi1, lo1 = p1 >> SH, p1 & MASK
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def uniform_from_word(x0):
    """u = (x0 + 0.5) * 2**-32 as a double, in (0, 1)."""
    return (np.asarray(x0, dtype=np.uint64).astype(np.float64) + 0.5) * (2.0 ** -32)


def fnv1a32(name):
    """32-bit FNV-1a of the UTF-8 bytes of name."""
    h = 0x811C9DC5
    for byte in name.encode('utf-8'):
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def self_check():
    """Return list of (description, ok) for the known-answer vectors."""
    out = []
    for ctr, key, exp in KAT:
        got = philox4x32_10(*ctr, *key)
        got = tuple(int(w) for w in got)
        out.append(("philox4x32-10 ctr=%s key=%s" % ([hex(c) for c in ctr], [hex(k) for k in key]),
                    got == exp, got, exp))
    return out


if __name__ == '__main__':
    for desc, ok, got, exp in self_check():
        print('OK ' if ok else 'BAD', desc, [hex(g) for g in got])
