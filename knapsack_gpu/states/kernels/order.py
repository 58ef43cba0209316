"""Orders of items without a full sort: the break item (a sampled band, else a weighted quickselect), a stable
merge sort for the orders a chunk needs, exact ratio order among equal float keys, and radix sorts.
:func:`..exact.break_order` is the python binding's twin of :func:`break_order_c`."""

from __future__ import annotations

import numpy as np

from .registers import SAMPLE, SORT_SMALL, SPREAD, order_ties, ratio_cmp


def order_ties_c(order, k, p, w, descending, integral):
    """Runs of equal float keys in ``order`` (sorted by key) put in exact ratio order, then by index."""
    n = order.shape[0]
    if not integral:
        return order
    i = 0
    while i < n:
        j = i + 1
        while j < n and k[j] == k[i]:
            j += 1
        differ = False
        for t in range(i, j - 1):
            if ratio_cmp(p[order[t]], w[order[t]], p[order[t + 1]], w[order[t + 1]]) != 0:
                differ = True
                break
        if differ:  # rare: an insertion sort of the run by (ratio, index)
            for t in range(i + 1, j):
                x = order[t]
                s = t - 1
                while s >= i:
                    r = ratio_cmp(p[x], w[x], p[order[s]], w[order[s]])
                    if descending:
                        r = -r
                    if r < 0 or (r == 0 and x < order[s]):
                        order[s + 1] = order[s]
                        s -= 1
                    else:
                        break
                order[s + 1] = x
        i = j
    return order


# The orders _sorted sorts items into (our own small merge sort: numba's library sorts and np.partition cost tens of
# seconds more to compile, for each dtype).
BY_INDEX = 0  # item index ascending
BY_KEY = 1  # key descending, then index
NEAR_RIGHT = 2  # key descending, then weight ascending, then as given (a right chunk)
NEAR_LEFT = 3  # key ascending, then weight ascending, then as given (a left chunk)


def _first(a, b, keys, w, order) -> bool:
    """Whether item a sorts strictly before item b in ``order``."""
    if order == BY_INDEX:
        return a < b
    if keys[a] != keys[b]:
        return keys[a] < keys[b] if order == NEAR_LEFT else keys[a] > keys[b]
    if order == BY_KEY:
        return a < b
    return w[a] < w[b]


def _sorted(idx, keys, w, order):
    """A stably sorted copy of the item indices ``idx``: insertion sorts of runs of 16, then bottom-up merges."""
    n = idx.shape[0]
    a = idx.copy()
    t = 1
    while t < n and not _first(a[t], a[t - 1], keys, w, order):
        t += 1
    if t >= n:  # in order already (a band of one key, in index order: a subset sum's)
        return a
    for lo in range(0, n, 16):
        hi = min(lo + 16, n)
        for t in range(lo + 1, hi):
            x = a[t]
            u = t - 1
            while u >= lo and _first(x, a[u], keys, w, order):
                a[u + 1] = a[u]
                u -= 1
            a[u + 1] = x
    b = np.empty_like(a)
    width = 16
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _first(a[j], a[i], keys, w, order):  # only a strictly earlier right item goes first: stable
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
                k += 1
            b[k : k + mid - i] = a[i:mid]
            k += mid - i
            b[k : k + hi - j] = a[j:hi]
        a, b = b, a
        width *= 2
    return a


def _select(x, k):
    """The k-th smallest of x (0-based), by quickselect on a copy."""
    a = x.copy()
    lo, hi = 0, a.shape[0] - 1
    while lo < hi:
        piv = a[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while a[i] < piv:
                i += 1
            while a[j] > piv:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return a[k]
    return a[k]


def _sort_run(idx, keys, p, w, integral):
    """idx sorted into the efficiency order (a copy)."""
    idx = _sorted(idx, keys, w, BY_KEY)
    return order_ties(idx, keys[idx], p, w, np.bool_(True), integral)


def _one_ratio(idx, lo, hi, p, w, integral) -> bool:
    """Whether the items idx[lo:hi] (equal keys) have one exact ratio (then the order among them is by index)."""
    if integral:
        a = idx[lo]
        pa, wa = p[a], w[a]
        small = pa < 2**31 and wa < 2**31
        for t in range(lo + 1, hi):
            i = idx[t]
            if small and p[i] < 2**31 and w[i] < 2**31:  # the cross products fit int64: no 128-bit products
                if p[i] * wa != w[i] * pa:
                    return False
            elif ratio_cmp(pa, wa, p[i], w[i]) != 0:
                return False
    return True


def break_order_c(keys, p, w, cap, integral):
    """(order, j): the items with the break item at order[j], those before it in the efficiency order (key
    descending, exact ratio, then index: the break solution) in order[:j] and those after it in order[j + 1:], each
    part in no particular order. A sample of the keys guesses a band around the break; one pass splits the items
    into above, band and below, and only the band is sorted (expected O(n), a few percent of the items sorted); where
    the guess misses, a weighted quickselect finds it."""
    n = keys.shape[0]
    if n > 4 * SAMPLE:
        step = n // SAMPLE
        sk = np.empty(SAMPLE, dtype=np.float64)
        sw = np.empty(SAMPLE, dtype=np.float64)
        for t in range(SAMPLE):
            sk[t] = keys[t * step]
            sw[t] = w[t * step]
        o = _sorted(np.arange(SAMPLE), sk, sw, BY_KEY)
        acc_est = 0.0
        r = SAMPLE - 1
        scale = n / SAMPLE  # the sample stands for every item (n need not be a multiple of the step)
        for t in range(SAMPLE):
            acc_est += sw[o[t]] * scale
            if acc_est > cap:
                r = t
                break
        hi = sk[o[max(r - SPREAD, 0)]]
        lo = sk[o[min(r + SPREAD, SAMPLE - 1)]]
        idx = np.empty(n, dtype=np.int64)
        na, nb = 0, n  # above from the front, below from the back, the band collected apart in index order
        band = np.empty(n, dtype=np.int64)
        nm = 0
        wa, wm = 0, 0
        for i in range(n):  # branch-free (keys in random order mispredict): each slot is written, one kept
            k, wi = keys[i], w[i]
            above, below = np.int64(k > hi), np.int64(k < lo)
            inside = 1 - above - below
            idx[na] = i
            idx[nb - 1] = i  # na < nb: both are free slots (the same one only when one is left, and i fills it)
            band[nm] = i
            na += above
            nb -= below
            nm += inside
            wa += wi * above
            wm += wi * inside
        idx[na:nb] = band[:nm]
        if wa <= cap < wa + wm:  # the break is in the band, as hoped: select within it
            if hi == lo and _one_ratio(idx, na, nb, p, w, integral):
                # one key, one exact ratio (a subset sum's): the band is in index order already, and the break
                # solution takes its longest prefix that fits (what the quickselect finds, four passes sooner)
                j = na
                while wa + w[idx[j]] <= cap:
                    wa += w[idx[j]]
                    j += 1
                return idx, j
            return _quickselect(keys, p, w, cap, integral, idx, na, nb, wa)
        if cap < wa:  # the break is above the band: select among those items only
            return _quickselect(keys, p, w, cap, integral, idx, 0, na, 0)
        return _quickselect(keys, p, w, cap, integral, idx, nb, n, wa + wm)  # below it
    return _quickselect(keys, p, w, cap, integral, np.arange(n), 0, n, 0)


def _quickselect(keys, p, w, cap, integral, idx, lo, hi, acc):
    """:func:`break_order_c` by a weighted quickselect with three-way partitions on the key, expected O(n), within
    idx[lo:hi]: every item before lo precedes them all (``acc``: their weight), every item from hi on follows."""
    kk = np.empty_like(keys)  # permuted with idx so that every pass reads memory in order (only [lo, hi) used)
    for t in range(lo, hi):
        kk[t] = keys[idx[t]]
    while hi - lo > SORT_SMALL:
        a, b, c = kk[lo], kk[(lo + hi) // 2], kk[hi - 1]
        pk = max(min(a, b), min(max(a, b), c))  # median of three
        # [lo, gt): key > pk, [gt, eq): key == pk, [eq, hi): key < pk
        gt, t, eq = lo, lo, hi
        wg, we = 0, 0
        while t < eq:
            x = kk[t]
            if x > pk:
                kk[t], kk[gt] = kk[gt], x
                idx[t], idx[gt] = idx[gt], idx[t]
                wg += w[idx[gt]]
                gt += 1
                t += 1
            elif x < pk:
                eq -= 1
                kk[t], kk[eq] = kk[eq], x
                idx[t], idx[eq] = idx[eq], idx[t]
            else:
                we += w[idx[t]]
                t += 1
        if acc + wg > cap:
            hi = gt
        elif acc + wg + we > cap:
            acc += wg
            lo, hi = gt, eq
            if _one_ratio(idx, lo, hi, p, w, integral):  # e.g. a subset sum: the break in index order
                band = _sorted(idx[lo:hi], kk, w, BY_INDEX)
                j = lo
                while acc + w[band[j - lo]] <= cap:
                    acc += w[band[j - lo]]
                    j += 1
                idx[lo:hi] = band
                return idx, j
            break
        else:
            acc += wg + we
            lo = eq
    idx[lo:hi] = _sort_run(idx[lo:hi], keys, p, w, integral)
    j = lo
    while j < hi and acc + w[idx[j]] <= cap:
        acc += w[idx[j]]
        j += 1
    return idx, j


RADIX_BITS = 11  # a radix sort's longest digit: 2048 counters (16 KiB) stay in L1


def _radix(a, carry):
    """``a`` (int64 >= 0) sorted by a stable LSD radix sort, as many passes as its largest entry has digits, and with
    ``carry`` the order that sorts it (positions into ``a``; else an empty array). numba's np.sort is a scalar
    quicksort (~15x numpy's SIMD sort at 10,000 int64; this is within 1-2x of the latter) and its stable argsort a
    merge sort (~9x this at 10,000, ~4x at 900)."""
    n = a.shape[0]
    top = 0
    for i in range(n):
        top = max(top, a[i])
    src, dst = a.copy(), np.empty_like(a)
    m = n if carry else 0
    at, to = np.arange(m), np.empty(m, dtype=np.int64)
    length = 0
    while (top >> length) > 0:
        length += 1
    passes = (length + RADIX_BITS - 1) // RADIX_BITS
    bits = (length + passes - 1) // passes if passes else 1  # digits of equal length: fewer counters to clear and sum
    count = np.empty((1 << bits) + 1, dtype=np.int64)
    mask = (1 << bits) - 1
    shift = 0
    while (top >> shift) > 0:
        count[:] = 0
        for i in range(n):
            count[((src[i] >> shift) & mask) + 1] += 1
        for k in range(1 << bits):
            count[k + 1] += count[k]
        for i in range(n):
            digit = (src[i] >> shift) & mask
            dst[count[digit]] = src[i]
            if carry:
                to[count[digit]] = at[i]
            count[digit] += 1
        src, dst = dst, src
        at, to = to, at
        shift += bits
    return src, at


def _radix_sorted(a):
    """A sorted copy of ``a`` (int64 >= 0), by :func:`_radix`."""
    return _radix(a, False)[0]


def _radix_order(a):
    """The stable order that sorts ``a`` (int64 >= 0): np.argsort(a, kind="stable"), by :func:`_radix`."""
    return _radix(a, True)[1]
