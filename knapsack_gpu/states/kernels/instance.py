"""From an instance to a search's state and back: the items a search takes, the set-up (break item, reduced
costs, LP bound), the state's allocations and their views, the instance checks, and the items a state's decision
bits tell (:func:`decode`). :mod:`..exact` holds the numpy twins of :func:`items_c` and :func:`setup_c`."""

from __future__ import annotations

import numpy as np

from .arith import _values_gcd
from .bounds import offset_bound_c
from .registers import (
    CHUNK,
    EXACT_DOUBLE,
    FIRST_CHUNK,
    LEFT,
    LIM,
    N_SR,
    PLEN,
    PSUM,
    RIGHT,
    WINDOW,
    WSUM,
    break_order,
    items,
    lin_sat,
    muldiv,
    setup,
)


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


# --- the incumbent's items -----------------------------------------------------------------------------------------


def _flip(x, u, sign, n, UML, UMS, MEMBERS) -> None:
    """Unit u's items in mask x set as its sign says (a bundle's members all alike)."""
    if u < n:
        x[u] = sign > 0
    else:
        for k in range(UML[u]):
            x[MEMBERS[UMS[u] + k]] = sign > 0


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
