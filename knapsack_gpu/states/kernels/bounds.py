"""Bounds and relaxations, compiled: the count of items that fit (the cardinality limits), the surrogate
relaxation's multiplier search and set-up (:mod:`..relax`), its LP (:func:`..exact.lp_at_np` is the numpy twin),
the items the reduced costs leave open, the gcd test's pass, and the counting bound of :mod:`..offsets` (whose
numpy twins live there)."""

from __future__ import annotations

import numpy as np

from .order import _radix_order, _radix_sorted
from .registers import LIM, SAMPLE, SORT_SMALL, SPREAD, counted, lp_at


def count_within_c(x, cap):
    """The most entries of x (whole numbers >= 0, summing below 2**62) whose sum is at most cap: the smallest
    ones, as many as fit, in expected O(n) where a sort costs O(n log n) (two of them a surrogate relaxation at
    n = 10,000). Past 4 * SAMPLE entries a sample guesses a band of values around the last that fits, one
    branch-free pass counts and sums what lies below it and collects the band (or, where the guess missed, a
    second pass the side the answer is on), and :func:`_count_select` finishes there (over every entry below that
    size): on random entries most of a quickselect's branches are coin tosses."""
    if cap < 0:
        return 0
    n = x.shape[0]
    if n <= 4 * SAMPLE:
        return _count_select(x.copy(), cap, 0, 0)
    step = n // SAMPLE
    sk = np.empty(SAMPLE, dtype=np.int64)
    for t in range(SAMPLE):
        sk[t] = x[t * step]
    sk.sort()
    r, acc = SAMPLE - 1, 0
    for t in range(SAMPLE):
        acc += sk[t] * step  # (an estimate: where it wraps, the guess is only worse; the sums below are exact)
        if acc > cap:
            r = t
            break
    lo_v, hi_v = sk[max(r - SPREAD, 0)], sk[min(r + SPREAD, SAMPLE - 1)]
    band = np.empty(n, dtype=np.int64)
    cb, sb, nb, sm = 0, 0, 0, 0
    for i in range(n):  # branch-free: the comparisons become masks
        v = x[i]
        below = v < lo_v
        inband = (v <= hi_v) & (not below)
        cb += below
        sb += v * below
        band[nb] = v
        nb += inband
        sm += v * inband
    if sb <= cap < sb + sm:  # the guess holds
        return _count_select(band[:nb], cap, cb, sb)
    above = cap >= sb + sm
    nb = 0
    for i in range(n):  # the side it lies on: above the band (everything up to it fits) or below it
        v = x[i]
        band[nb] = v
        nb += (v > hi_v) if above else (v < lo_v)
    if above:
        return _count_select(band[:nb], cap, n - nb, sb + sm)
    return _count_select(band[:nb], cap, 0, 0)


def _count_select(a, cap, count, acc):
    """:func:`count_within_c` over the entries a (permuted in place) given ``count`` smaller entries summing to
    ``acc`` <= cap: a quickselect that keeps the sum of what lies below its range, with two-pointer (Hoare)
    partitions (copies of the pivot split evenly: the weights of a class repeat ~n / R times)."""
    lo, hi = 0, a.shape[0]
    while hi - lo > SORT_SMALL:
        m, z = (lo + hi) // 2, hi - 1  # median of three at m: a[lo] <= a[m] <= a[z] (sentinels)
        if a[m] < a[lo]:
            a[lo], a[m] = a[m], a[lo]
        if a[z] < a[m]:
            a[m], a[z] = a[z], a[m]
            if a[m] < a[lo]:
                a[lo], a[m] = a[m], a[lo]
        piv = a[m]
        i, j = lo, z
        while True:
            while a[i] < piv:
                i += 1
            while a[j] > piv:
                j -= 1
            if i >= j:
                break
            a[i], a[j] = a[j], a[i]
            i += 1
            j -= 1
        j += 1  # [lo, j) <= piv <= [j, hi), both non-empty
        sl = 0
        for t in range(lo, j):  # (vectorises)
            sl += a[t]
        if acc + sl > cap:
            hi = j
        else:
            count += j - lo
            acc += sl
            lo = j
    rest = np.sort(a[lo:hi])
    for t in range(rest.shape[0]):
        if acc + rest[t] > cap:
            break
        acc += rest[t]
        count += 1
    return count


def surrogate_bisect(p, w, c, lo, hi, card, start):
    """combo's ``surbin`` for the surrogate relaxation (:mod:`.relax`): binary search over integer multipliers s in
    [lo, hi] for the least LP bound of items (p, w + s) at capacity c + s * card; the sign of the bound's slope in s,
    estimated with the break item kept, picks the half to go on with. Returns the best s and the break item of its LP
    (0, -1 when none beats ``start``; -1: everything fits). Only the choice of s and of the slope the bound is taken
    at come from here, so float64 arithmetic (``p``, ``w`` as float64, no overflow whatever the multiplier) serves:
    the caller bounds in exact integers. The items are copied once and stay in the order each LP's selection leaves
    them in (combo's ``sursort``), so that the next multiplier's selection partitions a nearly ordered array."""
    n = p.shape[0]
    kk = np.empty(n, dtype=np.float64)  # scratch for lp_at
    pp, ww, ids = p.copy(), w.copy(), np.arange(n)
    psum, wsum = p.sum(), w.sum()
    best_s, best_b, best_u = 0, -1, start
    while lo <= hi:
        s = (lo + hi) // 2
        cap = max(0.0, c + float(s) * card)
        fits, before_p, before_w, pb, wb, j, b = lp_at(pp, ww, ids, psum, wsum, float(s), cap, kk)
        if fits:
            ua = before_p
            grad = -1.0  # everything fits: a larger s only adds capacity where it is not needed
        else:
            room = cap - before_w
            ua = before_p + room * pb / wb
            grad = before_p + (room + card - j) * pb / (wb + 1) - ua
        if ua < best_u:
            best_s, best_b, best_u = s, b, ua
        if grad > 0:
            hi = s - 1
        else:
            lo = s + 1
    return best_s, best_b


def open_items(d, left, brk, gap):
    """:meth:`.engine.Engine.open_items` where the reduced costs ``d`` fit (the compiled binding's): the items a
    solution better than z may flip (the break item ``brk``, the break solution's items ``left`` with d <= gap, the
    others with d >= -gap) and the items of ``left`` fixed in, both ascending."""
    n = d.shape[0]
    inside = np.zeros(n, dtype=np.bool_)
    for t in range(left.shape[0]):
        inside[left[t]] = True
    items, fixed = np.empty(n, dtype=np.int64), np.empty(left.shape[0] + 1, dtype=np.int64)  # (+1: see below)
    ni, nf = 0, 0
    for i in range(n):  # branch-free, each i written to both and kept where it belongs (the tests are coin tosses)
        inn = inside[i]
        flip = (i == brk) | (inn & (d[i] <= gap)) | ((not inn) & (d[i] >= -gap))
        items[ni] = i
        ni += flip
        fixed[nf] = i
        nf += inn & (not flip)
    return items[:ni], fixed[:nf]


def surrogate_case(P, Wt, c, items, fixed_in, sign, card, ub, z):
    """What :func:`.relax._case` does before the surrogate's own solve, in one pass for int64 values (the compiled
    binding's; :mod:`.relax` holds the exact twin in Python integers): the open ``items`` with the fixed ones'
    (``fixed_in``) value p1 and weight taken off capacity c, the multiplier s by :func:`surrogate_bisect` over
    [0, max w] (sign 1: at most ``card`` items) or [-max w, 0] (sign -1: at least), the exact Lagrangian bound u of
    the surrogate at its break item's slope, and the surrogate problem: the items its weights w + s make free
    (``forced``), the others in :func:`.relax.tie_order`, their values and weights, the room and value left.

    Returns (status, u, s, the value of p1 and the forced items, the room, the count k the open items may hold,
    forced, rest, p[rest], (w + s)[rest]), positions into ``items``. Status 0: u is the case's bound (z where no
    solution of the case exists, ``ub`` where no multiplier beat it, or u <= z: no sub-solve); 1: solve the
    surrogate problem; 2: a product or sum could pass int64, the caller bounds in Python integers."""
    m = items.shape[0]
    p, w = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    for t in range(m):
        p[t], w[t] = P[items[t]], Wt[items[t]]
    p1, wf = np.int64(0), np.int64(0)
    for t in range(fixed_in.shape[0]):
        p1 += P[fixed_in[t]]
        wf += Wt[fixed_in[t]]
    cc = c - wf
    k = card - fixed_in.shape[0]
    none = np.empty(0, dtype=np.int64)
    if cc < 0 or k < 0 or (sign < 0 and k > m):
        return 0, z, 0, p1, cc, k, none, none, none, none
    top = w.max()
    if float(top) * max(k, 1) >= LIM:  # (c + s k must stay exact)
        return 2, z, 0, p1, cc, k, none, none, none, none
    lo, hi = (0, top) if sign > 0 else (-top, 0)
    s, b = surrogate_bisect(p.astype(np.float64), w.astype(np.float64), float(cc), lo, hi, k, float(ub - p1))
    if s == 0:
        return 0, ub, s, p1, cc, k, none, none, none, none
    cs = max(0, cc + s * k)
    ws = w + s
    if b < 0:  # every item fits
        u = p1 + p.sum()
    else:
        pb, wb = p[b], ws[b]  # the sum below is at most sum(p) wb + sum(|w + s|) pb
        if float(p.sum()) * wb + float(np.abs(ws).sum()) * pb + float(pb) * cs >= LIM:
            return 2, z, s, p1, cc, k, none, none, none, none
        acc = np.int64(0)
        for t in range(m):
            d = p[t] * wb - ws[t] * pb
            if d > 0:
                acc += d
        u = p1 + (pb * cs + acc) // wb
    if u <= z:
        return 0, u, s, p1, cc, k, none, none, none, none
    forced, rest = np.flatnonzero(ws <= 0), np.flatnonzero(ws > 0)
    if rest.shape[0] > 0:  # tie_order's stable sort by value (descending where s < 0: by max - p)
        pr = p[rest]
        rest = rest[_radix_order(pr if s > 0 else pr.max() - pr)]
    ps, room = p1, cs
    for t in range(forced.shape[0]):
        ps += p[forced[t]]
        room -= ws[forced[t]]
    return 1, u, s, ps, room, k, forced, rest, p[rest], ws[rest]


def lp_at_c(p, w, ids, psum, wsum, fs, cap, kk):
    """The greedy LP of float items (p, w + fs) at capacity cap, items of weight <= 0 taken first, equal keys by item
    id ``ids`` ascending: (everything fits, value and weight of the items before the break item, its value and weight,
    how many items precede it, the break item's id). ``psum``, ``wsum``: the sums of p and w (everything fits where
    wsum + n * fs does, up to rounding); ``kk``: scratch of n entries.

    combo's ``sursort``: a weighted quickselect whose two-pointer (Hoare) partitions permute p, w and ids in place,
    left so for the caller's next multiplier (:func:`surrogate_bisect`): the keys barely change between multipliers,
    so later calls partition a nearly ordered array (few swaps, predictable branches). :func:`.exact.lp_at_np` is the
    numpy twin."""
    n = p.shape[0]
    if lp_fits(n, wsum, fs, cap):
        return True, psum, 0.0, 0.0, 1.0, n, -1
    for i in range(n):  # (vectorises)
        x = w[i] + fs
        kk[i] = p[i] / x if x > 0 else np.inf
    lo, hi = 0, n
    pa, wa = 0.0, 0.0  # the items before lo
    while hi - lo > SORT_SMALL:
        a, m, z = lo, (lo + hi) // 2, hi - 1  # median of three at m: a ahead of it, z behind (sentinels)
        if _ahead(kk, ids, m, a):
            _swap4(kk, p, w, ids, a, m)
        if _ahead(kk, ids, z, m):
            _swap4(kk, p, w, ids, m, z)
            if _ahead(kk, ids, m, a):
                _swap4(kk, p, w, ids, a, m)
        pk, pid = kk[m], ids[m]
        i, j = lo, z
        while True:
            while kk[i] > pk or (kk[i] == pk and ids[i] < pid):
                i += 1
            while pk > kk[j] or (pk == kk[j] and pid < ids[j]):
                j -= 1
            if i >= j:
                break
            _swap4(kk, p, w, ids, i, j)
            i += 1
            j -= 1
        j += 1  # [lo, j) ahead of [j, hi), both non-empty: the order is strict and the pivot a median of three
        wl = _span_sum(w, lo, j) + fs * (j - lo)
        if wa + wl > cap:
            hi = j
        else:
            pa += _span_sum(p, lo, j)
            wa += wl
            lo = j
    for t in range(lo + 1, hi):  # insertion sort of the last few
        u = t
        while u > lo and _ahead(kk, ids, u, u - 1):
            _swap4(kk, p, w, ids, u, u - 1)
            u -= 1
    t = lo
    while t < hi - 1 and wa + (w[t] + fs) <= cap:  # (only rounding could take it past the last)
        wa += w[t] + fs
        pa += p[t]
        t += 1
    return False, pa, wa, p[t], w[t] + fs, t, ids[t]


def _ahead(kk, ids, a, b) -> bool:
    """Whether position a precedes position b in :func:`lp_at_c`'s order: key descending, then id ascending."""
    return kk[a] > kk[b] or (kk[a] == kk[b] and ids[a] < ids[b])


def _swap4(kk, p, w, ids, a, b):
    kk[a], kk[b] = kk[b], kk[a]
    p[a], p[b] = p[b], p[a]
    w[a], w[b] = w[b], w[a]
    ids[a], ids[b] = ids[b], ids[a]


def _span_sum(a, lo, hi):
    """sum(a[lo:hi]) in four lanes (one lane's add latency, not the adds, bounds a plain loop). The surrogate's items
    are integers, so that any order sums them exactly below 2^53 (past it, rounding only moves its choice of s)."""
    s0, s1, s2, s3 = 0.0, 0.0, 0.0, 0.0
    t = lo
    while t + 4 <= hi:
        s0 += a[t]
        s1 += a[t + 1]
        s2 += a[t + 2]
        s3 += a[t + 3]
        t += 4
    while t < hi:
        s0 += a[t]
        t += 1
    return (s0 + s1) + (s2 + s3)


def lp_fits(n, wsum, fs, cap) -> bool:
    """Whether every item of the surrogate's LP fits: sum(w) + n * fs <= cap, less a margin (1e-9 of a bound on
    sum |w + fs|) past the rounding of any order of summing, so that where this says no, the greedy finds a break."""
    return wsum + n * fs - 1e-9 * (abs(wsum) + n * abs(fs)) <= cap


def counted_c(c, g1, g2, k1, k2):
    """The counting bound of :mod:`.offsets` over sorted groups g1, g2 (compiled twin of
    :func:`.offsets.counted_np`, the same candidate counts): as n1 grows, the most items of group 2 that fit and
    the count where its heaviest reach the cap only fall, so two pointers walk down group 2's prefix sums once."""
    m2 = g2.shape[0]
    L2 = np.zeros(m2 + 1, dtype=np.int64)
    H2 = np.zeros(m2 + 1, dtype=np.int64)
    for t in range(m2):
        L2[t + 1] = L2[t] + g2[t]
        H2[t + 1] = H2[t] + g2[m2 - 1 - t]
    rising = m2  # the counts whose next heaviest item still adds weight + k2 > 0
    if k2 < 0:
        rising = 0
        while rising < m2 and g2[m2 - 1 - rising] + k2 > 0:
            rising += 1
    best = -LIM
    l1, h1 = 0, 0
    top = np.searchsorted(L2, c, side="right") - 1  # the last count with L2 <= c - l1
    cap = np.searchsorted(H2, c, side="left")  # the first count with H2 >= c - h1 (m2 + 1: none)
    for n1 in range(g1.shape[0] + 1):
        if n1 > 0:
            l1 += g1[n1 - 1]
            h1 += g1[g1.shape[0] - n1]
        if l1 > c:
            break
        while L2[top] > c - l1:
            top -= 1
        while cap > 0 and H2[cap - 1] >= c - h1:
            cap -= 1
        for cand in (0, top, min(rising, cap - 1), min(rising, cap), cap - 1, cap):
            n2 = min(max(cand, 0), top)
            best = max(best, min(c, h1 + H2[n2]) + k2 * n2 + k1 * n1)
    return best


def offset_bound_c(p, w, c):
    """:func:`.offsets.offset_bound` in one compiled call (the numpy version is its twin): the counting bound where
    p - w takes one or two values, not only 0, and the sums stay below 2**61; -1 where it does not apply (the
    bound itself is >= 0). The groups sort by radix."""
    n = p.shape[0]
    if n == 0:
        return -1
    lo, hi = p[0] - w[0], p[0] - w[0]
    for i in range(n):
        o = p[i] - w[i]
        lo = min(lo, o)
        hi = max(hi, o)
    if max(abs(lo), abs(hi)) >= (2**61 + n - 1) // n:  # |offset| * n >= 2**61, without the product
        return -1
    if lo == 0 and hi == 0:
        return -1
    n1 = 0
    for i in range(n):
        o = p[i] - w[i]
        if o == lo:
            n1 += 1
        elif o != hi:
            return -1  # a third offset
    if lo == hi:
        return counted(c, w[:0], _radix_sorted(w), 0, lo)
    g1 = np.empty(n1, dtype=np.int64)
    g2 = np.empty(n - n1, dtype=np.int64)
    a, b = 0, 0
    for i in range(n):
        if p[i] - w[i] == lo:
            g1[a] = w[i]
            a += 1
        else:
            g2[b] = w[i]
            b += 1
    return counted(c, _radix_sorted(g1), _radix_sorted(g2), lo, hi)
