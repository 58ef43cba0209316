"""The expanding core's search, written once: the loop, the break item, the two sides and the list step.

This module is plain Python in the subset numba compiles (arrays, scalars, tuples; no Python objects). It is run in
one of three bindings (:mod:`.modes`), which differ only in what the few list operations (``merge``, ``prune``,
``room_for``, ``state_at``) and the exact-arithmetic helpers (``lin_sat``, ``ratio_cmp``, ``break_order``) are:

- compiled: every function here compiled by numba, the list ops as the scalar loops below (one linear merge, one
  fathoming pass: a few ns a state);
- python: the same functions interpreted, the list ops vectorised in numpy (:mod:`.lists`), exact for Python
  integers too (instances whose sums pass int64), and the reference the compiled ops are tested against;
- device: interpreted, the list ops in torch on a CUDA device (lists of millions of states).

The search state lives in arrays so that every binding reads and writes the same state and a search can move from
one binding to another between two calls of :func:`run` (the engine does when numba has loaded, or when the list is
long enough for the device):

- ``IR`` (int64) and ``VR`` (the values' dtype) hold the scalars, at the slots named below;
- ``SR`` (2 x ...) each side's counters; ``POOL``, ``BUF``, ``BUFD`` (2 x ...) each side's unsorted items, its
  sorted chunk of units and their reduced costs;
- units (``UP``, ``UW``, ``UD``, ``UMS``, ``UML``, ``MEMBERS``): the n items, then bundles of identical items;
- ``EU``, ``ES``: the units that entered the core, in order, and their sign (+1 added, -1 removed);
- ``L``: the state list (weights W, values P, decision bits V), sorted by weight with strictly increasing value.
"""

from __future__ import annotations

import numpy as np

# --- what run() returns ----------------------------------------------------------------------------------------------
DONE = 0  # no state left, both sides exhausted, or z met the upper bound: z is optimal
BUDGET = 1  # the next step would pass IR[BUDGET] state updates
EXTRAS = 2  # the list passed IR[EVENT_SIZE] states: the engine fires combo's extras
DEVICE = 3  # the list reached IR[DEVICE_SIZE] states: the engine moves it to the device
MEMORY = 4  # the next step does not fit IR[MEM_BYTES]
PROGRESS = 5  # IR[UPDATES] reached IR[PROGRESS_AT]

# --- IR: int64 registers ---------------------------------------------------------------------------------------------
C = 0  # capacity
SIZE = 1  # states in the list
ENTRIES = 2  # units that entered the core
TURN_LEFT = 3  # 1: the left side is next
EXHAUSTED = 4  # 4 + side: 1 when that side has nothing left
UPDATES = 6  # candidate states built so far (two per state and unit)
BUDGET_AT = 7  # stop before UPDATES passes this (-1: no budget)
EVENT_SIZE = 8  # return EXTRAS once the list holds more states than this
DEVICE_SIZE = 9  # return DEVICE once the list holds this many states (-1: never)
MEM_BYTES = 10  # bytes the list may use
WINDOW = 11  # decision bits a state keeps (the last WINDOW core entries)
INC_NEW = 12  # 1 once run() improved z from a state (read and cleared by the engine)
INC_W = 13  # that state's weight, bits and entries
INC_V = 14
INC_E = 15
PEAK = 16  # the most states the list held
NITEMS = 17  # n: units below n are items, bundles from n on
NUNITS = 18  # units made so far
NMEMBERS = 19  # MEMBERS used by bundles
STARTED = 20  # 1 once the break item has entered
PROGRESS_AT = 21  # return PROGRESS once UPDATES reaches this
BRK = 22  # the break item
WB = 23  # its weight
WSUM = 24  # the break solution's weight
INTEGRAL = 25  # 1: whole-number values (exact), 0: float values
LIST_BYTES = 26  # the most bytes the list's arrays held (the compiled binding's buffers, the numpy temporaries)
D_FITS = 27  # 1: the reduced costs (and k-fold bundles of them) fit int64, compared with the clamped gap
INC_PAIR = 28  # 1 + the unit the pairing flipped on top of the incumbent's state (0: none), and the flip's sign
INC_PAIR_SIGN = 29
NEXT_PAIRING = 30  # the list size past which the pairing fires next (where a first run fired it; 0: it did not)
N_IR = 31

# --- VR: registers in the values' dtype ----------------------------------------------------------------------------
Z = 0  # the incumbent's value
Z1 = 1  # what a state must reach to count: z + 1 (whole numbers) or z plus a relative margin (floats)
GAP = 2  # the Dembo-Hammer gap at z (clamped to +-LIM for whole numbers)
UB = 3  # an upper bound on the optimum: the search stops when z meets it
PB = 4  # the break item's value
PSUM = 5  # the break solution's value
INC_P = 6  # the state run() improved z from: its value
N_VR = 7

# --- SR: each side's counters (row 0 left, row 1 right) --------------------------------------------------------------
LEFT = 0
RIGHT = 1
PLEN = 0  # unsorted items left in POOL[side]
BLEN = 1  # units in the sorted chunk BUF[side]
BPOS = 2  # the next unit of the chunk
CHUNK = 3  # items the next chunk takes (grows fourfold)
FIXED = 4  # items the Dembo-Hammer test fixed on this side
N_SR = 5

FIRST_CHUNK = 32  # the first chunk a side sorts; later ones grow fourfold
BUNDLE_RUN = 4  # identical items enter as bundles from runs of this many
LIM = 2**62  # |products| below this add up without wrapping int64; gaps are clamped to it
EXACT_DOUBLE = 2**53  # whole numbers below this are exact doubles
FLOAT_TOL = 1e-12  # float values: a state must beat z by this relative margin, against rounding in its sums
SORT_SMALL = 16  # the break item's quickselect sorts what is left below this many items
# The break item's band guess: SAMPLE keys, SPREAD sample ranks on either side of the estimated break (~6% of the
# items); instances below 4 * SAMPLE items take the quickselect.
SAMPLE = 256
SPREAD = 8
BYTES_PER_CANDIDATE = 24  # weight, value and bits of one state in a list buffer (compiled binding)
TOP_BIT = np.int64(-(2**63))  # bit 63 of an int64
U32 = np.uint64(0xFFFFFFFF)
S32 = np.uint64(32)


def _unbound(*args):
    raise RuntimeError("the kernels run through a binding: see knapsack_gpu.states.modes")


# What each binding supplies (:mod:`.modes`): the list ops, the exact-arithmetic helpers, the break item, the setup
# and the sides' refill. Here they are placeholders.
merge = prune = merge_prune = room_for = state_at = _unbound
lin_sat = lin_ge0 = ratio_cmp = muldiv = order_ties = break_order = setup = refill = items = combine = _unbound
lp_at = counted = _unbound
# The search's own arrays inside run() (the compiled binding's views without reference counts: .borrow)
borrowed = _unbound
# Whether the binding's merge_prune runs a step's merge and fathoming as one pass (the compiled binding's scalar loop;
# the vectorised bindings run them apart, the reference the fused pass is tested against).
FUSED = False

# Compiled inline into their callers (numba IR inlining): a call costs an atomic reference count per array argument
# each way, and so does binding them to an inlined callee's arguments; the step runs inside run() with helpers that
# take few arrays (see run). Small helpers are inlined by LLVM anyway; the rest stay calls (compile time).
INLINE = frozenset(
    {"_admit", "_pop", "state_at_c", "room_for_c", "_comes_first", "_first", "_bit"}
    | {"merge_c", "prune_c", "_keep_part", "merge_prune_c", "_fusable", "_candidate", "_put", "_runs"}
)


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


def setup_c(keys, p, w, c, integral):
    """What a search starts from, in one O(n) pass (compiled binding; :func:`.exact.setup_np` is the numpy twin):
    (order, j) as :func:`break_order_c`, the break solution's weight and value (VS[0]), the reduced costs d (p_i wb -
    w_i pb exactly, clamped; p_i - (pb / wb) w_i for floats) and whether every bundle of them fits int64, the LP
    bound at c (VS[1]), the gcd of the values (0 for floats), whether p - w takes at most two values (the counting
    bound's classes), and the most valuable item after the break that fits beside the break solution (-1: none)."""
    n = p.shape[0]
    order, j = break_order(keys, p, w, c, integral)
    b = order[j]
    VS = np.zeros(2, dtype=p.dtype)
    wsum, psum = 0, p[0] - p[0]
    for t in range(j):
        wsum += w[order[t]]
        psum += p[order[t]]
    VS[0] = psum
    pb, wb = p[b], w[b]
    d = np.empty(n, dtype=p.dtype)
    fits = True
    g = 0
    two = integral
    if integral:
        lim = LIM // max(n, 1)
        pmax, wmax = p[0], w[0]
        for i in range(n):
            pmax = max(pmax, p[i])
            wmax = max(wmax, w[i])
        small = pmax < LIM // wb and wmax < LIM // max(pb, 1)  # every product fits: plain int64
        g = _values_gcd(p, pmax)
        if small:  # separate tight loops: this one and the largest |d| vectorise
            for i in range(n):
                d[i] = p[i] * wb - w[i] * pb
        else:
            for i in range(n):
                d[i] = lin_sat(p[i], wb, -w[i], pb)
        dmax = 0
        for i in range(n):
            dmax = max(dmax, abs(d[i]))
        fits = dmax < lim
        o1, o2 = p[0] - w[0], p[0] - w[0]
        for i in range(n):
            o = p[i] - w[i]
            if o != o1:
                if o2 == o1:
                    o2 = o
                elif o != o2:
                    two = False
                    break
        VS[1] = psum + muldiv(c - wsum, pb, wb)
    else:
        slope = pb / wb
        for i in range(n):
            d[i] = p[i] - slope * w[i]
        VS[1] = psum + (c - wsum) * slope * (1 + 1e-15) + 1e-300
    room = c - wsum
    fit = -1
    for t in range(j + 1, n):
        i = order[t]
        if w[i] <= room and (fit < 0 or p[i] > p[fit]):
            fit = i
    return order, j, wsum, VS, d, fits, g, two, fit


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


# --- the items a search takes ---------------------------------------------------------------------------------------


def items_c(p, w, c, integral):
    """One pass over an instance (compiled binding; :func:`.exact.items_np` is the numpy twin): the items a search
    takes (value > 0, 0 < weight <= c), those it takes for free (value > 0, weight <= 0), the value totals TS and
    weight totals TW of each (index 0: items, 1: free ones), whether any item is worth nothing, any is heavier than
    c, and whether a whole-number total may reach 2**62 (then the caller sums again in Python integers)."""
    n = p.shape[0]
    items = np.empty(n, dtype=np.int64)
    free = np.empty(n, dtype=np.int64)
    # totals in local variables (array elements updated in the loop would go through memory every item)
    sp, sw, fp, fw = p[0] - p[0], 0, p[0] - p[0], 0
    ni, nf = 0, 0
    zero_value, heavy, big = False, False, False
    for i in range(n):
        pi, wi = p[i], w[i]
        if pi <= 0 or wi > c:
            zero_value |= pi <= 0
            heavy |= wi > c
            continue
        if wi <= 0:
            free[nf] = i
            nf += 1
            if -wi >= LIM + fw or (integral and pi >= LIM - fp):
                big = True
            else:
                fp += pi
                fw += wi
        else:
            items[ni] = i
            ni += 1
            if wi >= LIM - sw or (integral and pi >= LIM - sp):
                big = True
            else:
                sp += pi
                sw += wi
    TS = np.empty(2, dtype=p.dtype)
    TW = np.empty(2, dtype=np.int64)
    TS[0], TS[1], TW[0], TW[1] = sp, fp, sw, fw
    return items[:ni], free[:nf], TS, TW, zero_value, heavy, big


def start(p, w, c, integral, counting):
    """A search's set-up in one call (the compiled binding's: no Python between the steps): the items
    (:func:`items_c`), and where no total reaches 2**62, they do not all fit and every value and weight is an exact
    double (whole numbers below 2**53, or float values: the keys are plain quotients), their values, weights and
    keys, the set-up (:func:`setup_c`), the initial state (:func:`init_state`) at capacity c less the free items'
    weight and, where ``counting`` and the set-up found at most two offsets p - w, the counting bound
    (:func:`offset_bound_c`). Returns (the items' tuple, whether the rest was done, (p, w, keys) of the items, the
    set-up's tuple, the state's allocations (:func:`init_state`), the counting bound or -1), the totals (TS, TW,
    VS) as pairs of scalars; where it was not done, the rest are empty placeholders (the caller sets up step by
    step)."""
    its = items(p, w, c, integral)
    sel, TS, TW, big = its[0], its[2], its[3], its[6]
    cap = c - TW[1]
    go = sel.shape[0] > 0 and not big and TW[0] > cap and (not integral or max(TS[0], TW[0]) < EXACT_DOUBLE)
    m = sel.shape[0] if go else 0
    ps = np.empty(m, dtype=p.dtype)
    ws = np.empty(m, dtype=w.dtype)
    kk = np.empty(m, dtype=np.float64)
    for t in range(m):
        i = sel[t]
        ps[t], ws[t] = p[i], w[i]
        kk[t] = p[i] / w[i]
    if go:
        su = setup(kk, ps, ws, cap, integral)
    else:  # placeholders of the same types
        su = (sel[:0], 0, 0, np.zeros(2, dtype=p.dtype), ps, True, 0, False, -1)
    bound = offset_bound_c(ps, ws, cap) if go and counting and su[7] else -1
    # the 2-entry totals as scalars: every array returned to Python costs about a microsecond there
    VS = su[3]
    its = (its[0], its[1], (TS[0], TS[1]), (TW[0], TW[1]), its[4], its[5], big)
    su = (su[0], su[1], su[2], (VS[0], VS[1]), su[4], su[5], su[6], su[7], su[8])
    return its, go, (ps, ws, kk), su, init_state(su[0], su[1], ps, ws, su[4]), bound


def state_views(IA, DA, UP, UW, n):
    """The arrays a search over n items keeps (SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, EU, ES: see the
    module docstring) as views of the four allocations :func:`init_state` returns: IA (int64), DA (the reduced costs'
    dtype), UP and UW (the values' and weights' dtypes). Four arrays cross from compiled code to Python instead of
    twelve (each costs about a microsecond there); Python calls this (uncompiled) for the same views."""
    units = n + n // 2 + 1  # a bundle holds two items or more: at most n / 2 of them
    size = max(n, 1)
    SR = IA[: 2 * N_SR].reshape(2, N_SR)
    o = 2 * N_SR
    POOL = IA[o : o + 2 * size].reshape(2, size)
    BUF = IA[o + 2 * size : o + 4 * size].reshape(2, size)
    MEMBERS = IA[o + 4 * size : o + 5 * size]
    o += 5 * size
    UMS = IA[o : o + units]
    UML = IA[o + units : o + 2 * units]
    EU = IA[o + 2 * units : o + 3 * units]
    ES = IA[o + 3 * units : o + 4 * units]
    UD = DA[:units]
    BUFD = DA[units : units + 2 * size].reshape(2, size)
    return SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, EU, ES


def init_state(order, j, p, w, d):
    """The sides and units a search starts with: the break solution's items (order[:j]) in the left pool, the items
    after the break item in the right pool, the n items as units 0..n-1 (bundles follow). Returns the allocations
    (IA, DA, UP, UW) that :func:`state_views` cuts into the state's arrays."""
    n = p.shape[0]
    units = n + n // 2 + 1
    size = max(n, 1)
    # np.empty where every entry read is written first (no memset of arrays that scale with n)
    IA = np.empty(2 * N_SR + 5 * size + 4 * units, dtype=np.int64)
    DA = np.empty(units + 2 * size, dtype=d.dtype)
    UP = np.empty(units, dtype=p.dtype)
    UW = np.empty(units, dtype=w.dtype)
    SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, EU, ES = state_views(IA, DA, UP, UW, n)
    SR[:, :] = 0
    POOL[LEFT, :j] = order[:j]
    POOL[RIGHT, : n - j - 1] = order[j + 1 :]
    SR[LEFT, PLEN] = j
    SR[RIGHT, PLEN] = n - j - 1
    SR[LEFT, CHUNK] = FIRST_CHUNK
    SR[RIGHT, CHUNK] = FIRST_CHUNK
    UP[:n] = p
    UW[:n] = w
    UD[:n] = d
    UML[:n] = 1  # bundles' only: an item's members are itself (UMS)
    return IA, DA, UP, UW


# --- units ----------------------------------------------------------------------------------------------------------


def _new_bundle(order, pos, k, IR, UP, UW, UD, UMS, UML, MEMBERS, p, w, d):
    u = IR[NUNITS]
    IR[NUNITS] = u + 1
    i = order[pos]
    UP[u] = k * p[i]
    UW[u] = k * w[i]
    UD[u] = k * d[i] if IR[D_FITS] == 1 else d[i]  # unused where they do not fit (see _admit)
    m = IR[NMEMBERS]
    MEMBERS[m : m + k] = order[pos : pos + k]
    UMS[u] = m
    UML[u] = k
    IR[NMEMBERS] = m + k
    return u


def bundle(s, order, IR, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, p, w, d) -> int:
    """The sorted chunk ``order`` as units in BUF[s]: runs of BUNDLE_RUN or more identical adjacent items become
    binary bundles of 1, 2, 4, ... copies and the remainder (every count stays reachable, log2(k) units enter the core
    instead of k; a run of 2 or 3 would give as many units for the work). Returns the number of units."""
    n = order.shape[0]
    out = 0
    i = 0
    while i < n:
        j = i + 1
        while j < n and p[order[j]] == p[order[i]] and w[order[j]] == w[order[i]]:
            j += 1
        if j - i < BUNDLE_RUN:
            for t in range(i, j):
                BUF[s, out] = order[t]
                BUFD[s, out] = d[order[t]]
                out += 1
        else:
            size, pos = 1, i
            while pos < j:
                k = min(size, j - pos)
                if k == 1:
                    BUF[s, out] = order[pos]
                    BUFD[s, out] = d[order[pos]]
                else:
                    u = _new_bundle(order, pos, k, IR, UP, UW, UD, UMS, UML, MEMBERS, p, w, d)
                    BUF[s, out] = u
                    BUFD[s, out] = UD[u]
                out += 1
                pos += k
                size *= 2
        i = j
    return out


# --- the sides ------------------------------------------------------------------------------------------------------


def _admit(right, du, u, IR, VR, UP, UW) -> bool:
    """The Dembo-Hammer test: flipping unit u (reduced cost du) can still beat z: the LP bound at the break item's
    slope with u added (right) or removed (left) reaches z1. Where the reduced costs fit int64 that is du >= -gap
    (right) or du <= gap (left); elsewhere the bound itself, (psum - z1 +- p_u) wb + (c - wsum -+ w_u) pb >= 0, in
    exact 128-bit products."""
    if IR[D_FITS] == 1:
        return du >= -VR[GAP] if right else du <= VR[GAP]
    sg = 1 if right else -1
    return lin_ge0(VR[PSUM] - VR[Z1] + sg * UP[u], IR[WB], IR[C] - IR[WSUM] - sg * UW[u], VR[PB])


def _chunk_size(s, SR, plen, m):
    """After the filter kept m of side s's plen pooled items: the fixed ones counted, and the size of the chunk to
    sort now (0: the side is empty), each chunk 4 times the last."""
    SR[s, FIXED] += plen - m
    if m == 0:
        SR[s, PLEN] = 0
        return 0
    k = SR[s, CHUNK]
    SR[s, CHUNK] = 4 * k
    return k


def refill_np(s, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d) -> None:
    """The next chunk of side s, nearest the break first: the pool is filtered by the Dembo-Hammer test at today's
    gap, then the CHUNK items nearest the break (ties of key included, or of (key, weight) where a key's ties would
    more than double the chunk: see :func:`_tie_cut`; no item left outside can be nearer) are sorted
    by key, weight and exact ratio, and bundled. Vectorised (the python binding; :func:`refill_c` is the compiled
    binding's, in place)."""
    right = s == RIGHT
    gap = VR[GAP]
    plen = SR[s, PLEN]
    SR[s, BPOS] = 0
    SR[s, BLEN] = 0
    if plen == 0:
        return
    pool = POOL[s, :plen]
    if IR[D_FITS] == 1:
        dd = d[pool]
        kept = pool[(dd >= -gap) if right else (dd <= gap)]
    else:
        admitted = np.empty(plen, dtype=np.bool_)
        for t in range(plen):
            admitted[t] = _admit(right, d[pool[t]], pool[t], IR, VR, UP, UW)
        kept = pool[admitted]
    m = kept.shape[0]
    k = _chunk_size(s, SR, plen, m)
    if k == 0:
        return
    kk = keys[kept]
    if k < m:
        thr = np.partition(kk, m - k)[m - k] if right else np.partition(kk, k - 1)[k - 1]
        sel = (kk >= thr) if right else (kk <= thr)
        chunk = kept[sel]
        rest = kept[~sel]
        if chunk.size > 2 * k:  # as refill_c with _tie_cut: the heavier ties go back, after the rest
            tie = keys[chunk] == thr
            nn, nt = int(chunk.size - tie.sum()), int(tie.sum())
            if _one_ratio(chunk[tie], 0, nt, p, w, IR[INTEGRAL] == 1):
                wc = w[chunk]
                back = tie & (wc > np.partition(wc[tie], k - nn - 1)[k - nn - 1])
                rest = np.concatenate([rest, chunk[back]])
                chunk = chunk[~back]
    else:
        chunk = kept
        rest = kept[:0]
    POOL[s, : rest.shape[0]] = rest
    SR[s, PLEN] = rest.shape[0]
    # by key (nearest the break first), then by weight so that identical items sit together, exact ties after
    o = np.argsort(w[chunk], kind="mergesort")
    chunk = chunk[o]
    ck = keys[chunk]
    o = np.argsort(-ck if right else ck, kind="mergesort")
    order = order_ties(chunk[o], ck[o], p, w, right, IR[INTEGRAL] == 1)
    SR[s, BLEN] = bundle(s, order, IR, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, p, w, d)


def _comes_first(a, b, keys, w, right) -> bool:
    """Whether item a sorts before item b in a chunk: key nearest the break first, then lighter first."""
    if keys[a] != keys[b]:
        return keys[a] > keys[b] if right else keys[a] < keys[b]
    return w[a] < w[b]


def _tie_cut(chunk, nc, keys, thr, k, p, w, integral):
    """Where the items whose key ties a chunk's threshold ``thr`` more than doubled it (the caller checks): the
    heaviest weight it keeps of them, so that it holds the k nearest in (key, weight) order; LIM (all of them) where
    they differ in exact ratio. A subset sum's single key would otherwise have a side sorted and bundled whole at
    once. (:func:`refill_np` does the same in numpy.)"""
    tied = 0
    for t in range(nc):
        tied += keys[chunk[t]] == thr
    ti = np.empty(tied, dtype=np.int64)
    tw = np.empty(tied, dtype=np.int64)
    u = 0
    for t in range(nc):
        if keys[chunk[t]] == thr:
            ti[u] = chunk[t]
            tw[u] = w[chunk[t]]
            u += 1
    if not _one_ratio(ti, 0, tied, p, w, integral):
        return LIM
    return _select(tw, k - (nc - tied) - 1)


def refill_c(s, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d) -> None:
    """:func:`refill_np` in place, with the same chunk in the same order: the filter compacts the pool, the rest of
    the pool stays in its order, a short chunk is insertion-sorted (stable, as the two stable argsorts are)."""
    right = s == RIGHT
    plen = SR[s, PLEN]
    SR[s, BPOS] = 0
    SR[s, BLEN] = 0
    if plen == 0:
        return
    pool = POOL[s]
    m = 0
    if IR[D_FITS] == 1:  # _admit's test inline and branch-free (a call binds four arrays: atomic counts per item)
        gap = VR[GAP]
        for t in range(plen):
            x = pool[t]
            pool[m] = x
            m += (d[x] >= -gap) if right else (d[x] <= gap)
    else:
        for t in range(plen):
            x = pool[t]
            if _admit(right, d[x], x, IR, VR, UP, UW):
                pool[m] = x
                m += 1
    k = _chunk_size(s, SR, plen, m)
    if k == 0:
        return
    chunk = np.empty(m, dtype=np.int64)  # ties of key may take more than k
    nc = 0
    if k < m:
        kk = np.empty(m, dtype=np.float64)
        for t in range(m):
            kk[t] = keys[pool[t]]
        thr = _select(kk, m - k) if right else _select(kk, k - 1)
        r = 0
        for t in range(m):
            x = pool[t]
            if (keys[x] >= thr) if right else (keys[x] <= thr):
                chunk[nc] = x
                nc += 1
            else:
                pool[r] = x
                r += 1
        if nc > 2 * k:  # ties of the threshold's key more than doubled the chunk: the heavier ones go back
            wcut = _tie_cut(chunk, nc, keys, thr, k, p, w, IR[INTEGRAL] == 1)
            u = 0
            for t in range(nc):
                x = chunk[t]
                if keys[x] == thr and w[x] > wcut:
                    pool[r] = x
                    r += 1
                else:
                    chunk[u] = x
                    u += 1
            nc = u
        SR[s, PLEN] = r
    else:
        chunk[:m] = pool[:m]
        nc = m
        SR[s, PLEN] = 0
    chunk = chunk[:nc]
    if nc <= 64:
        for t in range(1, nc):
            x = chunk[t]
            u = t - 1
            while u >= 0 and _comes_first(x, chunk[u], keys, w, right):
                chunk[u + 1] = chunk[u]
                u -= 1
            chunk[u + 1] = x
    else:
        chunk = _sorted(chunk, keys, w, NEAR_RIGHT if right else NEAR_LEFT)
    order = order_ties(chunk, keys[chunk], p, w, right, IR[INTEGRAL] == 1)
    SR[s, BLEN] = bundle(s, order, IR, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, p, w, d)


def _pop(s, IR, VR, SR, BUF, BUFD, UP, UW, UML) -> int:
    """Pop units of side s's sorted chunk until one passes the Dembo-Hammer test at today's gap (returned) or the
    chunk is used up (-1: the caller refills it); the ones that fail are fixed (left in the break solution, or out
    of it)."""
    right = s == RIGHT
    while SR[s, BPOS] < SR[s, BLEN]:
        pos = SR[s, BPOS]
        u = BUF[s, pos]
        SR[s, BPOS] = pos + 1
        if _admit(right, BUFD[s, pos], u, IR, VR, UP, UW):
            return u
        SR[s, FIXED] += UML[u]
    return -1


def _last_at_most(W, xs, at):
    """at[i] = the last index of the ascending W with W <= xs[i] (-1: none), for every i: branch-free binary
    searches, four at a time (each step waits on its load; four independent chains overlap)."""
    S = W.shape[0]
    m = xs.shape[0]
    t = 0
    while t < m:
        x0, x1, x2, x3 = xs[t], xs[min(t + 1, m - 1)], xs[min(t + 2, m - 1)], xs[min(t + 3, m - 1)]
        a0, a1, a2, a3 = 0, 0, 0, 0
        n = S
        while n > 1:
            half = n >> 1
            a0 = a0 + half if W[a0 + half] <= x0 else a0
            a1 = a1 + half if W[a1 + half] <= x1 else a1
            a2 = a2 + half if W[a2 + half] <= x2 else a2
            a3 = a3 + half if W[a3 + half] <= x3 else a3
            n -= half
        for r, (a, x) in enumerate(((a0, x0), (a1, x1), (a2, x2), (a3, x3))):
            if t + r < m:
                at[t + r] = a if S > 0 and W[a] <= x else -1
        t += 4


PAIR_BLOCK = 256  # units a pairing pass searches the list for at a time (then checks whether it met the bound)


def _pair_block(W, P, UP, units, xs, at, m, sign, best, bs, bu, bsign):
    """The pairing's search over a block of m units: each against the last state of weight <= xs (its room)."""
    _last_at_most(W, xs[:m], at)
    for t in range(m):
        if at[t] < 0:
            continue
        u = units[t]
        v = P[at[t]] + sign * UP[u]
        if bs < 0 or v > best:
            best, bs, bu, bsign = v, at[t], u, sign
    return best, bs, bu, bsign


def pair_c(W, P, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d):
    """combo's pairing heuristic, compiled (:func:`.extras.pairing` is the numpy twin): over every unit outside the
    core that passes the fixing test, right of the break (added to the best state of weight <= c - w) then left of
    it (removed from the best state of weight <= c + w), the most valuable result (the first of equals). Returns
    (value, state index, unit, sign); state index -1 where no unit pairs with any state. The units are searched in
    blocks of PAIR_BLOCK as the fixing test admits them, and whole-number values stop after the block whose best
    meets the upper bound: no result passes it (a subset sum's pairing often fills c exactly, and its units are all
    admitted: the rest of a scan over every item would change nothing)."""
    c = IR[C]
    best = P[0] - P[0]
    bs, bu, bsign = -1, -1, 0
    stop = IR[INTEGRAL] == 1
    units = np.empty(PAIR_BLOCK, dtype=np.int64)
    xs = np.empty(PAIR_BLOCK, dtype=np.int64)
    at = np.empty(PAIR_BLOCK, dtype=np.int64)
    fits, gap = IR[D_FITS] == 1, VR[GAP]  # (z does not change here: _admit's test inline where the costs fit)
    for sd in (RIGHT, LEFT):
        right = sd == RIGHT
        sign = 1 if right else -1
        m = 0
        for part in range(2):
            lo = SR[sd, BPOS] if part == 0 else 0
            hi = SR[sd, BLEN] if part == 0 else SR[sd, PLEN]
            for t in range(lo, hi):
                u = BUF[sd, t] if part == 0 else POOL[sd, t]
                du = BUFD[sd, t] if part == 0 else d[u]
                if fits:
                    if (du < -gap) if right else (du > gap):
                        continue
                elif not _admit(right, du, u, IR, VR, UP, UW):
                    continue
                units[m] = u
                xs[m] = c - sign * UW[u]
                m += 1
                if m == PAIR_BLOCK:
                    best, bs, bu, bsign = _pair_block(W, P, UP, units, xs, at, m, sign, best, bs, bu, bsign)
                    m = 0
                    if stop and bs >= 0 and best >= VR[UB]:
                        return best, bs, bu, bsign
        if m > 0:
            best, bs, bu, bsign = _pair_block(W, P, UP, units, xs, at, m, sign, best, bs, bu, bsign)
            if stop and bs >= 0 and best >= VR[UB]:
                return best, bs, bu, bsign
    return best, bs, bu, bsign


# --- the incumbent and the bounds -------------------------------------------------------------------------------------


def refresh(IR, VR) -> None:
    """Z1 and the Dembo-Hammer gap after z or the capacity changed: whole numbers gap = (psum - z1) wb +
    (c - wsum) pb (clamped: every reduced cost lies inside +-LIM); floats gap = the Lagrangian bound at c minus z1."""
    z = VR[Z]
    if IR[INTEGRAL] == 1:
        VR[Z1] = z + 1
        VR[GAP] = lin_sat(VR[PSUM] - VR[Z1], IR[WB], IR[C] - IR[WSUM], VR[PB])
    else:
        tol = max(FLOAT_TOL, 4e-16 * IR[NITEMS])
        VR[Z1] = z + tol * max(1.0, abs(z))
        VR[GAP] = lagrangian_float(IR, VR, IR[C]) - VR[Z1]


def lagrangian_float(IR, VR, c):
    """The LP bound at the break item's slope for capacity c, rounded up (float values)."""
    return VR[PSUM] + (c - IR[WSUM]) * (VR[PB] / IR[WB]) * (1 + 1e-15) + 1e-300


def _improve(L, j, IR, VR) -> None:
    P, W, V = state_at(L, IR, j)
    VR[Z] = P
    VR[INC_P] = P
    IR[INC_W] = W
    IR[INC_V] = V
    IR[INC_E] = IR[ENTRIES]
    IR[INC_NEW] = 1
    IR[INC_PAIR] = 0
    refresh(IR, VR)


def pair_in(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d) -> bool:
    """:func:`.extras.pairing` inside a first run: :func:`pair_c` over the list, and where its result beats z, the
    incumbent that state with the unit flipped on top (its registers, as :func:`_improve` sets them, and INC_PAIR).
    True where it raised z."""
    k = IR[SIZE]
    W, P, V = L[0][:k], L[1][:k], L[2][:k]
    best, s, u, sign = pair_c(W, P, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d)
    if s < 0 or not best > VR[Z]:
        return False
    VR[Z] = best
    VR[INC_P] = P[s]
    IR[INC_W] = W[s]
    IR[INC_V] = V[s]
    IR[INC_E] = IR[ENTRIES]
    IR[INC_NEW] = 1
    IR[INC_PAIR] = u + 1
    IR[INC_PAIR_SIGN] = sign
    refresh(IR, VR)
    return True


def next_pairing(size, first, growth):
    """The list size past which the pairing fires again once it fired at ``size``: combo's rule, ``growth``-fold
    from ``first`` on (:func:`.extras.fire`'s and :func:`first_run`'s)."""
    return max(size, first) * growth


def event_size(other, pairing, first, size):
    """The list size past which a run stops for the extras: the least past which one is due (``other`` the least of
    those but the pairing, ``pairing`` its next size), never below the pairing's ``first`` size nor the list's
    ``size`` now (:func:`.extras.next_size`'s rule, which the engine arms, and :func:`first_run`'s)."""
    return max(max(first, min(other, pairing)), size)


def _flip(x, u, sign, n, UML, UMS, MEMBERS) -> None:
    """Unit u's items in mask x set as its sign says (a bundle's members all alike)."""
    if u < n:
        x[u] = sign > 0
    else:
        for k in range(UML[u]):
            x[MEMBERS[UMS[u] + k]] = sign > 0


def _bit(slot):
    return TOP_BIT if slot == 63 else np.int64(1) << np.int64(slot)


# --- the search -----------------------------------------------------------------------------------------------------


def run(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d, EU, ES):
    """Search on until an event (see the constants at the top); returns (event, list).

    A step: unit u enters the core (sign +1: added, -1: removed): the list merges with its shifted copy (dominance:
    strictly increasing values), the best feasible state raises z, and the next unit's slope on each side fathoms
    (nothing left to add beats the next right unit's efficiency, nothing left to remove is worse than the next left
    unit's); then the sides take turns to offer the next unit. The step's helpers take only the arrays they read:
    compiled, every array a call binds costs an atomic reference count each way, and refill, which reads them all,
    is called only when a side's sorted chunk is used up. Every array but the list's is borrowed for the run (its
    caller holds them): the step's reference counts are the list's only."""
    IR, VR, SR, POOL, BUF = borrowed(IR), borrowed(VR), borrowed(SR), borrowed(POOL), borrowed(BUF)
    BUFD, UP, UW, UD, UMS = borrowed(BUFD), borrowed(UP), borrowed(UW), borrowed(UD), borrowed(UMS)
    UML, MEMBERS, keys, p = borrowed(UML), borrowed(MEMBERS), borrowed(keys), borrowed(p)
    w, d, EU, ES = borrowed(w), borrowed(d), borrowed(EU), borrowed(ES)
    if IR[STARTED] == 0:
        if VR[Z] >= VR[UB]:
            return DONE, L
        # (rows shorter than the list: the limit left no room to make them, see first_rows)
        if L[0].shape[0] < IR[SIZE] or not room_for(L, IR, 2):
            return MEMORY, L
        IR[STARTED] = 1
        u, sign = IR[BRK], np.int64(1)
    else:
        u, sign = np.int64(-1), np.int64(0)
    while True:
        if u >= 0:  # the step
            e = IR[ENTRIES]
            EU[e] = u
            ES[e] = sign
            IR[ENTRIES] = e + 1
            IR[UPDATES] += 2 * IR[SIZE]
            bit = _bit(e % IR[WINDOW])
            fused = FUSED and _fusable(L, IR, VR, SR, BUF, UP, UW, u, sign)
            z1 = VR[Z1]
            if fused:  # the next units are known before the merge: it fathoms as it goes, at the z the step starts at
                t, s = _head(SR, BUF, RIGHT), _head(SR, BUF, LEFT)
                L, k, feasible = merge_prune(L, IR, VR, UP[u], UW[u], sign, bit, t, s, UP, UW)
            else:
                L, k, feasible = merge(L, IR, UP[u], UW[u], sign, bit)
            if feasible > 0 and state_at(L, IR, feasible - 1)[0] > VR[Z]:
                _improve(L, feasible - 1, IR, VR)
            if not fused:
                t, s = np.int64(-1), np.int64(-1)  # the next unit of each side, untested (-1: none left)
                for side in (RIGHT, LEFT):
                    if SR[side, BPOS] == SR[side, BLEN]:
                        refill(side, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d)
                    if side == RIGHT:
                        t = _head(SR, BUF, RIGHT)
                    else:
                        s = _head(SR, BUF, LEFT)
            if not fused or VR[Z1] != z1:  # fathom (again, where the step raised z)
                L, k = prune(L, IR, VR, k, feasible, t, s, UP, UW)
            IR[SIZE] = k
            IR[PEAK] = max(IR[PEAK], k)
        if IR[SIZE] == 0 or VR[Z] >= VR[UB]:
            break
        if IR[SIZE] > IR[EVENT_SIZE]:
            return EXTRAS, L
        if IR[DEVICE_SIZE] >= 0 and IR[SIZE] >= IR[DEVICE_SIZE]:
            return DEVICE, L
        if IR[UPDATES] >= IR[PROGRESS_AT]:
            return PROGRESS, L
        m = 2 * IR[SIZE]
        if IR[BUDGET_AT] >= 0 and IR[UPDATES] + m > IR[BUDGET_AT]:
            return BUDGET, L
        if not room_for(L, IR, m):
            return MEMORY, L
        u, sign = np.int64(-1), np.int64(0)  # the next unit: the sides take turns, until both are exhausted
        while u < 0 and (IR[EXHAUSTED + LEFT] == 0 or IR[EXHAUSTED + RIGHT] == 0):
            left = IR[TURN_LEFT] == 1
            IR[TURN_LEFT] = 0 if left else 1
            side = LEFT if left else RIGHT
            if IR[EXHAUSTED + side] == 1:
                continue
            u = _pop(side, IR, VR, SR, BUF, BUFD, UP, UW, UML)
            while u < 0:
                refill(side, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d)
                if SR[side, BLEN] == 0:
                    IR[EXHAUSTED + side] = 1
                    break
                u = _pop(side, IR, VR, SR, BUF, BUFD, UP, UW, UML)
            sign = np.int64(-1) if left else np.int64(1)
        if u < 0:
            break
    return DONE, L


def arm(IR, VR, c, b, wb, wsum, n, integral, window, d_fits, pb, psum, ub, counted, g, z) -> int:
    """The registers a search over n items starts from (the engine's, in every binding, and :func:`first_run`'s):
    capacity c, the break item b (weight wb, value pb), the break solution (weight wsum, value psum), whole-number
    values or not, ``window`` decision bits, the upper bound ``ub`` lowered by the counting bound ``counted`` (-1:
    none) and to a multiple of the values' gcd ``g`` (RECORD's divisibility: every solution is worth a multiple),
    the incumbent's value z. Returns which lowered it (1: the counting bound, 2: the divisibility, 3: both)."""
    IR[C] = c
    IR[INTEGRAL] = 1 if integral else 0
    IR[BRK] = b
    IR[WB] = wb
    IR[WSUM] = wsum
    IR[NITEMS] = n
    IR[NUNITS] = n
    IR[WINDOW] = window
    IR[TURN_LEFT] = 1
    IR[SIZE] = 1
    IR[D_FITS] = 1 if d_fits else 0
    VR[PB] = pb
    VR[PSUM] = psum
    VR[UB] = ub
    fired = 0
    if counted >= 0 and counted < VR[UB]:
        VR[UB] = counted
        fired |= 1
    if g > 1 and g * (VR[UB] // g) < VR[UB]:
        VR[UB] = g * (VR[UB] // g)
        fired |= 2
    VR[Z] = z
    refresh(IR, VR)
    return fired


def first_run(p, w, c, integral, counting, window, budget, room, sizes, start_states, min_items, limits, lo, up):
    """A search's set-up and first run in one call (the compiled binding's: a small instance's solve, or a
    surrogate's, has no Python between its set-up and its answer): :func:`start`, :func:`arm` (the incumbent the
    break solution and the most valuable item after it that fits, or ``lo`` where that is worth more: a value
    reached elsewhere, items unknown), a first list of ``start_states`` states at most (within ``room`` bytes),
    :func:`run` until ``budget`` state updates or a list past an extra's size, and the selection where the search
    ended and the decision bits tell it all. ``sizes``: (the least list size past which an extra other than the
    pairing fires, the pairing's first size, its growth), as :func:`.extras.first_sizes` gives them:
    the pairing fires here (:func:`pair_in`, at :func:`.extras.fire`'s sizes) until another extra is due, which
    the engine fires. ``limits``: bit 1 ``lo`` counts, bit 2 the upper bound ``up``
    (the search stops once z meets it): :class:`Search`'s ``lower`` and ``upper``, the free items' value in them.

    Returns (how far it went, the event the run returned, the items as :func:`start` returns them (its first
    entry), the instance indices chosen (ascending, the free items included), their weight and value summed again
    from the instance as :func:`selection_sums` sums them (where it ended with them: the solution's totals, without
    a call more; else zeros and False), the optimum over the items, the upper bound, which bound fired (as
    :func:`arm`, and bit 4 where the pairing raised z), (state updates, core entries, the peak list, items fixed in
    and out, bundled items, the list's bytes), and where the search goes on (the set-up as :func:`start` returns it, the
    registers IR and VR, the list) or None). How far: 3 the search ended and nothing beat ``lo``; 2 the search ended
    (the chosen items are its answer); 1 it stopped for anything else, or the bits do not tell the selection (the
    registers, the list and the set-up's state are where it stopped, for the engine to go on from); 0 it did not
    start (a set-up :func:`start` leaves to the caller, or ``min_items`` items or fewer: the registers and the list
    are empty). (None where it ended: each array returned costs ~0.3 us to box, and a solve that ends here needs
    three of the twenty.)"""
    set_up = start(p, w, c, integral, counting)
    its, go, (ps, ws, keys), su, state, bound = set_up
    chosen = np.empty(0, dtype=np.int64)
    unsummed = (np.int64(0), p[:0].sum(), False)
    n = ps.shape[0]
    armed = go and n > min_items
    IR = np.zeros(N_IR if armed else 0, dtype=np.int64)
    VR = np.zeros(N_VR if armed else 0, dtype=ps.dtype)
    cap = first_rows(room, start_states) if armed else 0  # (as the engine's)
    W0, P0, V0 = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=ps.dtype), np.empty(cap, dtype=np.int64)
    L = (W0, P0, V0, np.empty(cap, dtype=np.int64), np.empty(cap, dtype=ps.dtype), np.empty(cap, dtype=np.int64))
    zero = np.int64(0)
    if not armed:
        z = ps[:0].sum()
        return (
            0,
            DONE,
            its,
            chosen,
            unsummed,
            z,
            z,
            zero,
            (zero, zero, zero, zero, zero, zero, zero),
            (set_up, IR, VR, L),
        )
    order, j, wsum, VS, d, fits, g, _, fit = su
    b = order[j]
    z = VS[0] + ps[fit] if fit >= 0 else VS[0]
    pf = its[2][1]  # (the free items' value: lo and up are the instance's)
    unknown = limits & 1 and lo - pf >= z  # (the incumbent is a value without items)
    if unknown:
        z = lo - pf
    ub = min(VS[1], up - pf) if limits & 2 else VS[1]
    fired = arm(IR, VR, c - its[3][1], b, ws[b], wsum, n, integral, window, fits, ps[b], VS[0], ub, bound, g, z)
    SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, EU, ES = state_views(state[0], state[1], state[2], state[3], n)
    if cap:
        W0[0], P0[0], V0[0] = wsum, VS[0], 0  # the break solution
    IR[LIST_BYTES] = 2 * cap * BYTES_PER_CANDIDATE
    IR[BUDGET_AT] = budget
    IR[MEM_BYTES] = room
    other, first, growth = sizes
    pairing = first
    IR[EVENT_SIZE] = event_size(other, pairing, first, IR[SIZE])
    IR[DEVICE_SIZE] = -1
    IR[PROGRESS_AT] = LIM
    event, L = run(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, ps, ws, d, EU, ES)
    while event == EXTRAS and IR[SIZE] > pairing and IR[SIZE] <= other:  # only the pairing is due (extras.fire's)
        k = IR[SIZE]
        if pair_in(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, ps, ws, d):
            fired |= 4
        pairing = next_pairing(k, first, growth)
        IR[NEXT_PAIRING] = pairing
        IR[EVENT_SIZE] = event_size(other, pairing, first, k)
        event, L = run(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, ps, ws, d, EU, ES)
    counts = (IR[UPDATES], IR[ENTRIES], IR[PEAK], SR[LEFT, FIXED], SR[RIGHT, FIXED], IR[NMEMBERS], IR[LIST_BYTES])
    if event != DONE:
        return 1, event, its, chosen, unsummed, VR[Z], VR[UB], fired, counts, (set_up, IR, VR, L)
    left = order[:j]
    if IR[INC_NEW] == 1:  # a state raised z: its items, as far as its bits tell
        x, dp, dw = decode(
            VR[INC_P], IR[INC_W], IR[INC_V], IR[INC_E], IR, VR, EU, ES, UP, UW, UMS, UML, MEMBERS, left, n
        )
        if not told(dp, dw, integral, VR[Z1], VR[Z]):
            return 1, event, its, chosen, unsummed, VR[Z], VR[UB], fired, counts, (set_up, IR, VR, L)
        if IR[INC_PAIR] > 0:
            _flip(x, IR[INC_PAIR] - 1, IR[INC_PAIR_SIGN], n, UML, UMS, MEMBERS)
    elif unknown:
        return 3, event, its, chosen, unsummed, VR[Z], VR[UB], fired, counts, None
    else:  # the first incumbent: the break solution and the item that fits beside it
        x = np.zeros(n, dtype=np.bool_)
        for t in range(j):
            x[left[t]] = True
        if fit >= 0:
            x[fit] = True
    items, free = its[0], its[1]
    mask = np.zeros(p.shape[0], dtype=np.bool_)
    for t in range(n):
        mask[items[t]] = x[t]
    for t in range(free.shape[0]):
        mask[free[t]] = True
    chosen = np.flatnonzero(mask)
    return 2, event, its, chosen, selection_sums(w, p, chosen), VR[Z], VR[UB], fired, counts, None


# --- the incumbent's items -----------------------------------------------------------------------------------------


def decode(P, W, V, E, IR, VR, EU, ES, UP, UW, UMS, UML, MEMBERS, left, n):
    """The items a state (value P, weight W, bits V, read after E core entries) holds as far as its bits tell: the
    break solution's items (``left``) with the flips of the last WINDOW entries applied, and what is left of its
    value and weight beyond them (both zero when the bits tell it all: :mod:`.recover` solves again otherwise)."""
    x = np.zeros(n, dtype=np.bool_)
    for t in range(left.shape[0]):
        x[left[t]] = True
    dp = P - VR[PSUM]
    dw = W - IR[WSUM]
    window = IR[WINDOW]
    for e in range(max(0, E - window), E):
        if (V >> (e % window)) & 1:
            u, sign = EU[e], ES[e]
            _flip(x, u, sign, n, UML, UMS, MEMBERS)
            # (no sign * UP[u]: in the python binding the int64 sign would cast a bundle's Python integer to int64)
            if sign > 0:
                dp -= UP[u]
                dw -= UW[u]
            else:
                dp += UP[u]
                dw += UW[u]
    return x, dp, dw


def told(dp, dw, integral, z1, z) -> bool:
    """Whether a state's bits told all its items: nothing left of its value and weight beyond the flips
    :func:`decode` applied (floats: within the margin z1 - z of their rounding). Else :mod:`.recover` solves the
    older core again."""
    return dw == 0 and (dp == 0 if integral else abs(dp) <= z1 - z)


def items_valid(w, v):
    """Whether every weight (int64) lies in [0, 2**62) and every value (int64) is >= 0: the instance's checks in one
    pass (numpy's take a reduction each); the caller names a bad entry through numpy's checks."""
    for i in range(w.shape[0]):
        if w[i] < 0 or w[i] >= LIM or v[i] < 0:
            return False
    return True


def float_items_valid(w, v):
    """:func:`items_valid` for float64 values, which must be finite too: 0 where an entry fails (the caller names it
    through numpy's checks), 2 where every value is a whole number <= 2**53 (exact in int64), else 1. One pass where
    numpy takes five."""
    whole = True
    for i in range(w.shape[0]):
        x = v[i]
        if w[i] < 0 or w[i] >= LIM or not x >= 0 or x == np.inf:  # (NaN fails x >= 0)
            return 0
        whole = whole and x == np.floor(x) and x <= EXACT_DOUBLE
    return 2 if whole else 1


def selection_sums(w, v, idx):
    """(weight, value) of the items ``idx`` (int64 weights and values), and whether both sums stayed below 2**62
    (False: the sums stopped there, and the caller sums again in Python integers): a solution's totals, summed again
    from the instance in one pass instead of two gathers and four reductions."""
    sw, sv = np.int64(0), np.int64(0)
    for t in range(idx.shape[0]):
        i = idx[t]
        if w[i] >= LIM - sw or v[i] >= LIM - sv:
            return sw, sv, False
        sw += w[i]
        sv += v[i]
    return sw, sv, True


# --- meet in the middle (Horowitz and Sahni) -----------------------------------------------------------------------


def half_states(L, IR, items, p, w):
    """The undominated subset sums of ``items`` (at most 62) with weight <= IR[C]: the list merged with its copy
    shifted by each item in turn (dominance as in a step, no bounds), the states past the capacity dropped; each
    state's bits say which of ``items`` it holds (bit t: items[t])."""
    for t in range(items.shape[0]):
        i = items[t]
        room_for(L, IR, 2 * IR[SIZE])  # (the caller checked the room: this counts the list's bytes, as a step does)
        IR[UPDATES] += 2 * IR[SIZE]
        L, k, feasible = merge(L, IR, p[i], w[i], np.int64(1), np.int64(1) << np.int64(t))
        IR[SIZE] = feasible  # heavier states only get heavier
    return L


def meet(R, IRS, items, p, w, cap):
    """Horowitz and Sahni's meet in the middle over ``items`` (indices into p, w; at most 2 x 62 of them) at
    capacity ``cap`` >= 0, in one call: the items alternate by weight into two halves (of nearly equal total
    weight: fewest states), each half's undominated subset sums grow from the list of the empty subset in R (rows
    0-5: the first half's list as the binding lays it out, 6-11 the second's; one array crosses into compiled code
    instead of twelve) with registers IRS[0] and IRS[1] (:func:`half_states`; their capacity and the bytes of the
    rows are set here), and :func:`combine` pairs them. Returns (the best value, its weight, its items ascending)."""
    for h in range(2):
        IRS[h, C] = cap
        IRS[h, LIST_BYTES] = 2 * R[0].shape[0] * BYTES_PER_CANDIDATE  # (a half's two rows of buffers)
    for r in range(12):  # the empty subset: each row's first state
        R[r][0] = 0
    order = items[np.argsort(w[items], kind="mergesort")]
    halves = (order[0::2], order[1::2])
    LA = half_states((R[0], R[1], R[2], R[3], R[4], R[5]), IRS[0], halves[0], p, w)
    LB = half_states((R[6], R[7], R[8], R[9], R[10], R[11]), IRS[1], halves[1], p, w)
    sa, sb = IRS[0, SIZE], IRS[1, SIZE]
    value, a, b = combine(LA[0][:sa], LA[1][:sa], LB[0][:sb], LB[1][:sb], cap)  # (the empty subsets pair)
    chosen = np.empty(order.shape[0], dtype=np.int64)
    k = 0
    for half, bits in ((halves[0], LA[2][a]), (halves[1], LB[2][b])):
        for t in range(half.shape[0]):
            if (bits >> t) & 1:
                chosen[k] = half[t]
                k += 1
    return value, LA[0][a] + LB[0][b], np.sort(chosen[:k])


def meet_instance(R, IRS, p, w, c):
    """:func:`meet` over every item of an instance a search takes (:func:`items`: whole-number values; c < 2**62),
    from the instance to its answer in one call (the planner's meet in the middle at once over a few items: no
    Python between them). R as for :func:`meet`, with room for the larger half of all n items. Returns (0: a total
    reaches 2**62, nothing is done and the next five are placeholders; 1: no search is needed, every item fits (or
    there is none); 2: the meet in the middle ran), the items' best value, the solution's weight, its instance
    indices ascending (the free items taken), the items, the free items, the free items' value total, the items'
    value total, whether any item is worth nothing and whether any is heavier than c."""
    its, free, TS, TW, zero_value, heavy, big = items(p, w, c, True)
    if big:
        return 0, TS[0], TW[0], free, its, free, TS[1], TS[0], zero_value, heavy
    cap = c - TW[1]
    if its.shape[0] == 0 or TW[0] <= cap:  # (no items: below 0 nothing fits, and none is one)
        code, value, weight, chosen = 1, TS[0], TW[0], its
    else:
        code = 2
        value, weight, chosen = meet(R, IRS, its, p, w, cap)
    if free.shape[0]:  # (both ascend: a merge)
        chosen = np.sort(np.concatenate((free, chosen)))
    return code, value, weight + TW[1], chosen, its, free, TS[1], TS[0], zero_value, heavy


def combine_c(WA, PA, WB, PB, c):
    """The best pair of states, one of each half (both sorted by weight, values increasing): as A's weight grows
    the best partner in B is the last one of weight <= c - W_A, found by one pointer moving down. Returns (value,
    index in A, index in B), the first pair of the best value in A's order (compiled binding; :func:`.exact.combine_np`
    is the numpy twin)."""
    j = WB.shape[0] - 1
    best = PA[0] - PA[0] - 1
    ba, bb = -1, -1
    for a in range(WA.shape[0]):
        while j >= 0 and WB[j] > c - WA[a]:
            j -= 1
        if j < 0:
            break
        v = PA[a] + PB[j]
        if v > best:
            best, ba, bb = v, a, j
    return best, ba, bb


# --- the compiled binding's list: two rows of buffers, the current one and the one the next merge writes --------------


def first_rows(room, start_states):
    """The states each of the compiled list's first six rows holds: ``start_states`` at most, within a quarter of
    ``room`` bytes (rows grown from 2 states cost a dozen allocations in a short search), 2 where that is all the
    room holds, and none where it holds less. Rows are counted against the limit as they are made (the list's
    bytes), so rows the room cannot hold are not made: a search that ends at its set-up needs no list, and one
    that would merge stops for memory before its first step (:func:`run`)."""
    cap = room // (2 * BYTES_PER_CANDIDATE) // 4
    if cap > start_states:
        cap = start_states
    if cap < 2:
        cap = 2 if 2 * 2 * BYTES_PER_CANDIDATE <= room else 0
    return cap


def room_for_c(L, IR, m) -> bool:
    """Whether a merge of m candidates fits IR[MEM_BYTES]: the spare row grows to m + 1 states (the merged list and
    the guard the next merge writes past it: :func:`_runs`), or twice its size where the rows stay within a quarter
    of the room (:func:`_grow`), so that growth is amortised, while the current row is alive."""
    cW, sW = L[0], L[3]
    if sW.shape[0] > m:
        return True
    have = cW.shape[0] * BYTES_PER_CANDIDATE
    return have + (m + 1) * BYTES_PER_CANDIDATE <= IR[MEM_BYTES]


def _grow(L, IR, m):
    """The spare row grown to hold a merge of m candidates: to twice its size (amortised growth) while the two
    rows stay within a quarter of IR[MEM_BYTES], else to m exactly. Rows grown past what the merges asked for near
    the limit would let a larger limit refuse a step that a smaller one, its rows grown exactly, takes. Within a
    quarter, a step refused (current row + m + 1 > the room, so m + 1 > 3/4 of it) needs more than the room with
    exact rows too (the list's m / 2 states and the merge's m + 1): accepted limits are monotone."""
    cW, cP, cV, sW, sP, sV = L
    want = max(m, 2 * sW.shape[0])
    if (cW.shape[0] + want) * BYTES_PER_CANDIDATE > IR[MEM_BYTES] // 4:
        want = m
    sW = np.empty(want, dtype=cW.dtype)
    sP = np.empty(want, dtype=cP.dtype)
    sV = np.empty(want, dtype=cV.dtype)
    IR[LIST_BYTES] = max(IR[LIST_BYTES], (cW.shape[0] + want) * BYTES_PER_CANDIDATE)
    return cW, cP, cV, sW, sP, sV


def merge_c(L, IR, pu, wu, sign, bit):
    """One linear pass: the list (current row) and its copy shifted by (sign * wu, sign * pu) with ``bit`` set,
    merged by weight into the spare row, keeping a state only if it is worth more than every lighter one (of equal
    weights the most valuable; of equal states the unshifted one). Returns (list with the rows swapped, states,
    states of weight <= c).

    Which run a candidate comes from is a select, not a branch (its outcome is a coin toss where the runs
    interleave: a mispredicted branch a candidate cost ~2x on the searches' own lists), the indices are read as
    unsigned (no wraparound code for negative indices) and each run ends in a guard state (:func:`_runs`): only
    the dominance test branches."""
    s = IR[SIZE]
    dw = sign * wu
    dp = sign * pu
    L = _runs(L, IR, s, dw)
    W, P, V, oW, oP, oV = L
    keep_bits = ~bit
    c = IR[C]
    i = 0
    j = 0
    k = 0
    feasible = 0
    first = True  # no state kept yet
    last = P[0] - P[0]  # the value of the last state kept
    for _ in range(2 * s):
        a, b, v, i, j = _candidate(W, P, V, i, j, dw, dp, bit, keep_bits)
        if first or b > last:
            first = False
            k = _put(oW, oP, oV, k, a, b, v)
            last = b
            if a <= c:
                feasible = k
    return (oW, oP, oV, W, P, V), k, feasible


def _runs(L, IR, s, dw):
    """The rows ready for a merge of the s states with their copy shifted by dw: the spare row holds 2s + 1
    states and the current row a guard state at s, heavier than every candidate (the last weight + |dw| + 1; the
    compiled binding's sums stay below 2**62). A run that has ended then loses every comparison, and the next
    candidate is one compare with no end-of-run tests. With the merges' first-state flag, on circle n = 10,000's
    lists (10^4 to 2 x 10^5 states, ``benchmarks/list_passes.py circle:10000:1e5``): merge_prune_c 3.25 -> 2.4 ns
    a candidate, merge_c 2.95 -> 2.2. A current row without room for the guard (rows a caller made, as a test does)
    is copied to one with it."""
    if s == 0:
        return L
    W, P, V = L[0], L[1], L[2]
    if W.shape[0] <= s:
        W, P, V = np.empty(s + 1, dtype=W.dtype), np.empty(s + 1, dtype=P.dtype), np.empty(s + 1, dtype=V.dtype)
        W[:s], P[:s], V[:s] = L[0][:s], L[1][:s], L[2][:s]
        L = (W, P, V, L[3], L[4], L[5])
    if L[3].shape[0] <= 2 * s:
        L = _grow(L, IR, 2 * s + 1)
    top, end = np.uint64(s - 1), np.uint64(s)
    W[end] = W[top] + abs(dw) + 1
    P[end] = P[top]
    V[end] = 0
    return L


def _candidate(W, P, V, i, j, dw, dp, bit, keep_bits):
    """The merge's next candidate, (weight, value, bits, i, j): the list's state i or its shifted state j, the
    lighter (the unshifted of equal weights). A run that has ended stands at its guard state (:func:`_runs`),
    which is never the lighter."""
    ii = np.uint64(i)
    jj = np.uint64(j)
    wi = W[ii]
    wj = W[jj] + dw
    first = wi <= wj
    a = wi if first else wj
    b = P[ii] if first else P[jj] + dp
    v = (V[ii] & keep_bits) if first else (V[jj] | bit)
    return a, b, v, i + (1 if first else 0), j + (0 if first else 1)


def _put(oW, oP, oV, k, a, b, v):
    """Append a state worth more than every lighter one to the k kept (over the last, of the same weight)."""
    if k > 0 and oW[np.uint64(k - 1)] == a:
        k -= 1  # the same weight, worth more
    kk = np.uint64(k)
    oW[kk] = a
    oP[kk] = b
    oV[kk] = v
    return k + 1


def _head(SR, BUF, s):
    """The next unit of side s's sorted chunk, untested (-1: the chunk is used up)."""
    return BUF[s, SR[s, BPOS]] if SR[s, BPOS] < SR[s, BLEN] else np.int64(-1)


def _fusable(L, IR, VR, SR, BUF, UP, UW, u, sign) -> bool:
    """Whether the step entering unit u may merge and fathom in one pass (:func:`merge_prune_c`): whole numbers;
    neither side's chunk needs a refill (a refill filters at the gap of the z the merge may raise; a side with
    nothing left refills to nothing, done here); a right unit is left; and every product the fathoming test forms
    stays below LIM (the candidates' values and weights lie between the list's ends and theirs shifted)."""
    if IR[INTEGRAL] != 1:
        return False
    for side in (RIGHT, LEFT):
        if SR[side, BPOS] == SR[side, BLEN]:
            if SR[side, PLEN] != 0:
                return False
            SR[side, BPOS] = 0  # what refill does where the pool is empty
            SR[side, BLEN] = 0
    if _head(SR, BUF, RIGHT) < 0:  # no right unit: every state of weight <= c goes, the merge's best after z
        return False
    W, P = L[0], L[1]
    top = IR[SIZE] - 1
    dw, dp = sign * UW[u], sign * UP[u]
    z1, c = VR[Z1], IR[C]
    amax = max(abs(P[0] - z1), abs(P[top] - z1), abs(P[0] + dp - z1), abs(P[top] + dp - z1))
    bmax = max(abs(c - W[0]), abs(c - W[top]), abs(c - W[0] - dw), abs(c - W[top] - dw))
    for side in (RIGHT, LEFT):
        x = _head(SR, BUF, side)
        if x >= 0 and not (amax < LIM // max(UW[x], 1) and bmax < LIM // max(UP[x], 1)):
            return False
    return True


def merge_prune_c(L, IR, VR, pu, wu, sign, bit, t, s, UP, UW):
    """merge_c and prune_c in one pass (whole numbers, products below LIM, a right unit t: see :func:`_fusable`):
    a state of the merge is written only if it passes the fathoming test at VR[Z1]. Dominance still runs over
    every state of the merge, kept or not, so the list is the merge's, fathomed: a state the merge replaces (of
    equal weight, worth less) is one the test would drop after it (the test grows with the value). Returns (list,
    states kept, states kept of weight <= c). The merge's best state of weight <= c, if it beats z, passes the test
    (P >= z1, W <= c) and is kept last among them: the step's incumbent is the two passes'. On circle's lists of
    10^5 states the two passes cost ~7.9 ns a candidate, this one ~5.3 when it came (replayed in one process); 2.4
    since the runs' guard states (:func:`_runs`; ``benchmarks/list_passes.py`` replays a search's lists)."""
    n = IR[SIZE]
    dw = sign * wu
    dp = sign * pu
    L = _runs(L, IR, n, dw)
    W, P, V, oW, oP, oV = L
    keep_bits = ~bit
    c = IR[C]
    z1 = VR[Z1]
    pt, wt = UP[t], UW[t]
    has_s = s >= 0
    ps, ws = (UP[s], UW[s]) if has_s else (pt, wt)
    i = 0
    j = 0
    k = 0
    first = True  # no state merged yet (a flag, not a count: a count here cost ~0.4 ns a candidate, replayed)
    feasible = 0
    last = P[0] - P[0]  # the value of the merge's last state, kept or not
    for _ in range(2 * n):
        a, b, v, i, j = _candidate(W, P, V, i, j, dw, dp, bit, keep_bits)
        if first or b > last:
            first = False
            last = b
            if a <= c:
                ok = (b - z1) * wt + (c - a) * pt >= 0
            else:
                ok = has_s and (b - z1) * ws + (c - a) * ps >= 0
            if ok:
                k = _put(oW, oP, oV, k, a, b, v)
                if a <= c:
                    feasible = k
    return (oW, oP, oV, W, P, V), k, feasible


def _keep_part(W, P, V, lo, hi, out, z1, c, pt, wt, integral):
    """Compact the states [lo, hi) that pass (P - z1) wt + (c - W) pt >= 0 to ``out``; returns the new end."""
    if hi <= lo:
        return out
    if not integral:
        slope = pt / wt
        for i in range(lo, hi):
            if (P[i] - z1) + (c - W[i]) * slope >= 0:
                W[out], P[out], V[out] = W[i], P[i], V[i]
                out += 1
        return out
    # P and W increase along the list: the extremes bound every product
    amax = max(abs(P[lo] - z1), abs(P[hi - 1] - z1))
    bmax = max(abs(c - W[lo]), abs(c - W[hi - 1]))
    if amax < LIM // max(wt, 1) and bmax < LIM // max(pt, 1):
        for i in range(lo, hi):
            if (P[i] - z1) * wt + (c - W[i]) * pt >= 0:
                W[out], P[out], V[out] = W[i], P[i], V[i]
                out += 1
    else:
        for i in range(lo, hi):
            if lin_ge0_c(P[i] - z1, wt, c - W[i], pt):
                W[out], P[out], V[out] = W[i], P[i], V[i]
                out += 1
    return out


def prune_c(L, IR, VR, k, feasible, t, s, UP, UW):
    """Fathom in place: a state of weight <= c survives iff it can still beat z adding units at the slope of the
    next right unit t, one of weight > c iff removing units at the slope of the next left unit s (none left: it
    cannot). Returns (list, states kept)."""
    W, P, V = L[0], L[1], L[2]
    z1, c, integral = VR[Z1], IR[C], IR[INTEGRAL] == 1
    out = 0
    if t >= 0:
        out = _keep_part(W, P, V, np.int64(0), feasible, out, z1, c, UP[t], UW[t], integral)
    if s >= 0:
        out = _keep_part(W, P, V, feasible, k, out, z1, c, UP[s], UW[s], integral)
    return L, out


def state_at_c(L, IR, j):
    return L[1][j], L[0][j], L[2][j]
