"""Exact arithmetic for the states engine: an efficiency order floats cannot break, and sign tests of cross
products that never round or wrap.

- Efficiency keys are p / w correctly rounded to float64 (numpy division when p and w are below 2**53, so both are
  exact doubles; Python's int division, also correctly rounded, beyond). Rounding is monotone, so a larger key
  always means a larger efficiency; only equal keys can hide an order, and :func:`order_ties` settles those exactly.
- ``a * x + b * y >= 0`` for int64 arrays a, b and Python ints x, y: in int64 where the products provably fit, else
  screened in float64 with an error bound, and the few entries inside the bound decided in Python integers.
"""

from __future__ import annotations

import numpy as np

from .kernels.bounds import lp_fits

EXACT_DOUBLE = 2**53
SAFE_PRODUCT = 2**62  # two products below this add up without wrapping int64
# float64 screening: |fl(a*x + b*y) - (a*x + b*y)| <= 4.01 * 2**-53 * (|a*x| + |b*y|); 2**-50 leaves room.
SCREEN = 2.0**-50


def keys(p: np.ndarray, w: np.ndarray, doubles: bool | None = None) -> np.ndarray:
    """Efficiencies p / w as float64, monotone in the exact ratio (whole numbers) or plain (float values);
    ``doubles``: every value and weight is known to be below 2**53 (None: looked up)."""
    if p.dtype.kind == "f" or p.size == 0 or doubles:
        return p / w
    if int(p.max()) < EXACT_DOUBLE and int(w.max()) < EXACT_DOUBLE:
        return p.astype(np.float64) / w.astype(np.float64)
    return np.array([a / b for a, b in zip(p.tolist(), w.tolist(), strict=True)], dtype=np.float64)


def exact_total(a: np.ndarray) -> int | float:
    """The exact sum (a Python int; a float for float arrays) of any values, negative ones included."""
    if a.dtype.kind == "f":
        return float(a.sum())
    if a.dtype == object:
        return int(sum(a.tolist()))
    if a.size and (int(a.max()) >= 2**62 // a.size or int(a.min()) <= -(2**62) // a.size):
        return int(sum(a.tolist()))
    return int(a.sum())


def _abs_max(a) -> int:
    if isinstance(a, (int, np.integer)):
        return abs(int(a))
    return max(abs(int(a.max())), abs(int(a.min()))) if a.size else 0


def lin_ge0(a: np.ndarray, x: int, b: np.ndarray, y: int, amax: int | None = None, bmax: int | None = None):
    """The mask ``a * x + b * y >= 0``, exact, for integer (int64 or object) arrays a, b and Python ints x, y.

    ``amax`` / ``bmax`` bound |a| and |b| when the caller knows them (saves two reductions)."""
    if a.dtype == object or b.dtype == object:
        return (a * x + b * y) >= 0
    amax = _abs_max(a) if amax is None else amax
    bmax = _abs_max(b) if bmax is None else bmax
    if amax * abs(x) < SAFE_PRODUCT and bmax * abs(y) < SAFE_PRODUCT:
        return (a * np.int64(x) + b * np.int64(y)) >= 0
    fa, fb = a.astype(np.float64) * float(x), b.astype(np.float64) * float(y)
    f = fa + fb
    err = (np.abs(fa) + np.abs(fb)) * SCREEN
    out = f >= 0
    unsure = np.flatnonzero(np.abs(f) <= err)
    if unsure.size:
        ua, ub = a[unsure].tolist(), b[unsure].tolist()
        out[unsure] = [ai * x + bi * y >= 0 for ai, bi in zip(ua, ub, strict=True)]
    return out


def reduced_costs(p: np.ndarray, w: np.ndarray, pb: int, wb: int) -> np.ndarray:
    """d_i = p_i * wb - w_i * pb exactly: int64 where every product fits, else Python ints in an object array."""
    if int(p.max(initial=0)) * wb < SAFE_PRODUCT and int(w.max(initial=0)) * pb < SAFE_PRODUCT:
        return p * np.int64(wb) - w * np.int64(pb)
    return p.astype(object) * wb - w.astype(object) * pb


def order_ties(order: np.ndarray, k: np.ndarray, p: np.ndarray, w: np.ndarray, descending: bool) -> np.ndarray:
    """Reorder runs of equal keys (``k`` = the keys of ``order``, sorted) by exact efficiency, stably.

    Most runs hold one exact ratio (identical items, or subset-sum-like classes): those are left as they are.
    Float values have no exact ratio to honour and are returned unchanged."""
    if order.size < 2 or p.dtype.kind == "f":
        return order
    tie = np.flatnonzero(k[1:] == k[:-1])
    if not tie.size:
        return order
    i, j = order[tie], order[tie + 1]
    # adjacent pairs of one run: exactly equal ratios iff p_i w_j == p_j w_i
    pi, wj, pj, wi = p[i], w[j], p[j], w[i]
    if max(_abs_max(pi), _abs_max(pj)) * max(_abs_max(wi), _abs_max(wj)) < SAFE_PRODUCT:
        differ = pi * wj != pj * wi
    else:
        rows = zip(pi.tolist(), wj.tolist(), pj.tolist(), wi.tolist(), strict=True)
        differ = np.array([a * d != c * b for a, d, c, b in rows], dtype=bool)
    if not differ.any():
        return order
    from fractions import Fraction  # rare: only runs of equal keys with different exact ratios get here

    order = order.copy()
    # run boundaries: a run is a maximal stretch of equal keys; sort those holding a differing pair
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    ends = np.r_[starts[1:], order.size]
    bad = np.unique(np.searchsorted(starts, tie[differ], side="right") - 1)
    for r in bad.tolist():
        a, e = int(starts[r]), int(ends[r])
        run = order[a:e].tolist()
        pr, wr = p[order[a:e]].tolist(), w[order[a:e]].tolist()
        ratio = {it: Fraction(pp, ww) for it, pp, ww in zip(run, pr, wr, strict=True)}
        run.sort(key=lambda it: (-ratio[it], it) if descending else (ratio[it], it))
        order[a:e] = run
    return order


# --- the python binding's exact helpers (see kernels.py for the compiled ones) ---------------------------------------

LIM = 2**62


def lin_sat(a, x, b, y) -> int:
    """a * x + b * y in Python integers: exact, unclamped (the python binding keeps its registers in Python integers,
    and its reduced costs may pass the compiled binding's clamp)."""
    return int(a) * int(x) + int(b) * int(y)


def lin_ge0_py(a, x, b, y) -> bool:
    """a * x + b * y >= 0 in Python integers."""
    return int(a) * int(x) + int(b) * int(y) >= 0


def muldiv(a, b, c) -> int:
    """floor(a * b / c) in Python integers."""
    return (int(a) * int(b)) // int(c)


def ratio_cmp(pa, wa, pb, wb) -> int:
    """Compare pa / wa with pb / wb exactly: -1, 0 or 1."""
    left, right = int(pa) * int(wb), int(pb) * int(wa)
    return (left > right) - (left < right)


def order_ties_k(order, k, p, w, descending, integral):
    """:func:`order_ties` with the compiled kernel's signature."""
    return order_ties(order, k, p, w, descending) if integral else order


def break_order(keys, p, w, cap, integral):
    """(order, j): the items in efficiency order (key descending, exact ratio, then index) and the break item's
    position, the first whose prefix of weights passes ``cap`` (numpy: a full sort; the compiled binding selects in
    expected O(n))."""
    order = np.argsort(-keys, kind="stable")
    order = order_ties_k(order, keys[order], p, w, True, integral)
    cw = np.cumsum(w[order])
    return order, int(np.searchsorted(cw, cap, side="right"))


def lp_at_np(p, w, ids, psum, wsum, fs, cap, kk=None):
    """:func:`.kernels.lp_at_c` by a full sort (the python binding): the greedy LP of float items (p, w + fs) at
    capacity cap, items of weight <= 0 first, equal keys by id ``ids`` ascending: (everything fits, value and weight of
    the items before the break item, its value and weight, how many precede it, the break item's id). Leaves the
    arrays as they are."""
    if lp_fits(p.size, wsum, fs, cap):
        return True, float(psum), 0.0, 0.0, 1.0, p.size, -1
    x = w + fs
    pos = x > 0
    keys = np.where(pos, p / np.where(pos, x, 1.0), np.inf)
    order = np.lexsort((ids, -keys))
    j = min(int(np.argmax(np.cumsum(x[order]) > cap)), order.size - 1)
    before = order[:j]
    b = int(order[j])
    return False, float(p[before].sum()), float(x[before].sum()), float(p[b]), float(x[b]), j, int(ids[b])


def setup_np(keys, p, w, c, integral):
    """:func:`.kernels.setup_c` in numpy and Python integers (the python binding)."""
    import math

    order, j = break_order(keys, p, w, c, integral)
    b = int(order[j])
    left = order[:j]
    wsum = exact_total(w[left])
    VS = np.zeros(2, dtype=p.dtype)
    VS[0] = exact_total(p[left])
    pb = p[b].item() if hasattr(p[b], "item") else p[b]
    wb = int(w[b])
    if integral:
        d = reduced_costs(p, w, pb, wb)
        fits = _abs_max(d) < LIM // max(p.size, 1)
        VS[1] = VS[0] + ((c - wsum) * pb) // wb
        g = math.gcd(*p.tolist()) if p.dtype == object else int(np.gcd.reduce(p))
        offsets = np.unique(p - w)
        two = offsets.size <= 2
    else:
        d = p - (pb / wb) * w
        fits, g, two = True, 0, False
        VS[1] = VS[0] + (c - wsum) * (pb / wb) * (1 + 1e-15) + 1e-300
    rest = order[j + 1 :]
    fit = rest[w[rest] <= c - wsum]
    first = int(fit[np.argmax(p[fit])]) if fit.size else -1
    return order, j, wsum, VS, d, fits, g, two, first


def count_within_np(x, cap):
    """:func:`.kernels.count_within_c` by a sort (the python binding; any integers, Python ones included)."""
    return int(np.searchsorted(np.cumsum(np.sort(x)), cap, side="right"))


def items_np(p, w, c, integral):
    """:func:`.kernels.items_c` in numpy (exact totals for whole numbers, the flag ``big`` where they reach 2**62)."""
    positive = p > 0
    fits = w <= c
    items = np.flatnonzero(positive & fits & (w > 0))
    free = np.flatnonzero(positive & (w <= 0))
    TS = np.zeros(2, dtype=object if p.dtype.kind != "f" else np.float64)
    TW = np.zeros(2, dtype=object)
    TS[0], TS[1] = exact_total(p[items]), exact_total(p[free])
    TW[0], TW[1] = exact_total(w[items]), exact_total(w[free])
    big = max(abs(TW[0]), abs(TW[1])) >= LIM or (integral and max(TS[0], TS[1]) >= LIM)
    return items, free, TS, TW, not positive.all(), not fits.all(), big


def combine_np(WA, PA, WB, PB, c):
    """:func:`.kernels.combine_c` in numpy."""
    j = np.searchsorted(WB, c - WA, side="right") - 1
    ok = np.flatnonzero(j >= 0)
    if not ok.size:
        return -1, -1, -1
    v = PA[ok] + PB[j[ok]]
    a = int(np.argmax(v))
    return v[a], int(ok[a]), int(j[ok[a]])


def same(a):
    """The array itself: the interpreted bindings' :func:`.borrow.borrowed` (no reference counts to spare)."""
    return a
