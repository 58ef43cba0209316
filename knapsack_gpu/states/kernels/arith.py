"""Exact arithmetic, compiled: 128-bit products from 64-bit halves (the clamped and signed linear forms, exact
ratio comparisons, floor(a * b / c)) and the gcds of combo's divisibility tests. :mod:`..exact` holds the python
binding's twins in Python integers."""

from __future__ import annotations

import numpy as np

from .registers import EXACT_DOUBLE, LIM, S32, U32

# --- exact arithmetic (compiled: 128-bit products from 64-bit halves) ------------------------------------------------


def _umul(a, b):
    """The 128-bit product of two uint64 as (hi, lo)."""
    a0, a1, b0, b1 = a & U32, a >> S32, b & U32, b >> S32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> S32) + (p01 & U32) + (p10 & U32)
    return p11 + (p01 >> S32) + (p10 >> S32) + (mid >> S32), (p00 & U32) | (mid << S32)


def _smul(a, b):
    """a * b for int64 |a|, |b| < 2**63 as (sign -1/0/1, hi, lo) of its magnitude."""
    if a == 0 or b == 0:
        return 0, np.uint64(0), np.uint64(0)
    s = 1 if (a > 0) == (b > 0) else -1
    hi, lo = _umul(np.uint64(abs(a)), np.uint64(abs(b)))
    return s, hi, lo


def _mag_cmp(h1, l1, h2, l2) -> int:
    if h1 != h2:
        return 1 if h1 > h2 else -1
    if l1 != l2:
        return 1 if l1 > l2 else -1
    return 0


def _scmp(s1, h1, l1, s2, h2, l2) -> int:
    """Compare two signed 128-bit numbers given as sign and magnitude: -1, 0 or 1."""
    if s1 != s2:
        return 1 if s1 > s2 else -1
    if s1 == 0:
        return 0
    m = _mag_cmp(h1, l1, h2, l2)
    return m if s1 > 0 else -m


def lin_ge0_c(a, x, b, y) -> bool:
    """a * x + b * y >= 0, exactly, for int64 operands of magnitude below 2**63 (compiled binding)."""
    s1, h1, l1 = _smul(a, x)
    s2, h2, l2 = _smul(-b, y)
    return _scmp(s1, h1, l1, s2, h2, l2) >= 0


def lin_sat_c(a, x, b, y):
    """a * x + b * y clamped to [-LIM, LIM], exactly (compiled binding; operands of magnitude below 2**62)."""
    s1, h1, l1 = _smul(a, x)
    s2, h2, l2 = _smul(b, y)
    # each product below 2**124: compare against the clamp through the magnitudes
    if s1 == 0 and s2 == 0:
        return np.int64(0)
    if (s1 >= 0 and s2 >= 0) or (s1 <= 0 and s2 <= 0):  # same sign: the magnitudes add
        s = s1 if s1 != 0 else s2
        lo = l1 + l2
        hi = h1 + h2 + (np.uint64(1) if lo < l1 else np.uint64(0))
        if hi != 0 or lo >= np.uint64(LIM):
            return np.int64(LIM) if s > 0 else np.int64(-LIM)
        return np.int64(lo) if s > 0 else -np.int64(lo)
    # opposite signs: the larger magnitude minus the smaller, with its sign
    m = _mag_cmp(h1, l1, h2, l2)
    if m == 0:
        return np.int64(0)
    if m > 0:
        s, hi, lo, h, l2_ = s1, h1, l1, h2, l2
    else:
        s, hi, lo, h, l2_ = s2, h2, l2, h1, l1
    borrow = np.uint64(1) if lo < l2_ else np.uint64(0)
    lo = lo - l2_
    hi = hi - h - borrow
    if hi != 0 or lo >= np.uint64(LIM):
        return np.int64(LIM) if s > 0 else np.int64(-LIM)
    return np.int64(lo) if s > 0 else -np.int64(lo)


def ratio_cmp_c(pa, wa, pb, wb) -> int:
    """Compare pa / wa with pb / wb exactly (non-negative whole numbers, w > 0): -1, 0 or 1."""
    h1, l1 = _umul(np.uint64(pa), np.uint64(wb))
    h2, l2 = _umul(np.uint64(pb), np.uint64(wa))
    return _mag_cmp(h1, l1, h2, l2)


def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def gcd_and_sum(a, items, fixed):
    """(the gcd of a[items], the sum of a[fixed]) for int64 entries whose sums fit (the compiled binding's: combo's
    gcd tests of :mod:`.extras` in one pass, numpy's gcd reduction and sum in Python otherwise)."""
    g, t = 0, 0
    for i in range(items.shape[0]):
        g = _gcd(a[items[i]], g)
        if g == 1:
            break
    for i in range(fixed.shape[0]):
        t += a[fixed[i]]
    return g, t


def _values_gcd(p, pmax):
    """The gcd of the values: that of a sample first (mostly 1 at once), then every value tested against it, by a
    float quotient where the values are exact doubles (an integer division per value costs ~10 ns; where a common
    factor exists, as in the profit-ceiling class, every value is tested)."""
    n = p.shape[0]
    g = 0
    for t in range(0, n, max(1, n // 64)):
        g = _gcd(g, p[t])
        if g == 1:
            return g
    inv = 1.0 / g
    for i in range(n):
        x = p[i]
        if pmax < EXACT_DOUBLE:
            q = np.int64(x * inv)
            r = x - q * g
            if r < 0 or r >= g:  # the float quotient was one off: ask the integers
                r = x % g
        else:
            r = x % g
        if r != 0:
            g = _gcd(g, x)
            if g == 1:
                return g
            inv = 1.0 / g
    return g


def muldiv_c(a, b, c):
    """floor(a * b / c) for 0 <= a, b < 2**63 and 0 < c < 2**62, when the quotient is below 2**63 (compiled
    binding: long division of the 128-bit product)."""
    hi, lo = _umul(np.uint64(a), np.uint64(b))
    d = np.uint64(c)
    r = hi % d
    q = np.uint64(0)
    one = np.uint64(1)
    for _ in range(64):
        r = (r << one) | (lo >> np.uint64(63))
        lo = lo << one
        q = q << one
        if r >= d:
            r -= d
            q |= one
    return np.int64(q)
