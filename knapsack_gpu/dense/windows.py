"""The capacity windows the bounds leave to a pruned dense pass.

After the items before j and j itself, a profile cell c can lie on a solution worth T or more only if
LP(processed items, c) + LP(the rest, C - c) >= T. That sum is concave in c with its maximum at the capacity the whole
LP solution gives the processed items, so the cells that pass form an interval, computed up front for every item (no
profile values are read): from the slopes at the maximum for any processing order, and by binary search on exact LP
values where the items run in efficiency order. Floating-point bounds get a margin, so a window is only ever too wide.
"""

from __future__ import annotations

import numpy as np

from ..arith import saturating_cumsum
from ..bounds import FLOAT_SLACK, efficiency_order

# Windows at least this wide are narrowed by binary search on exact LP values (efficiency order only).
REFINE_MIN_WIDTH = 256


def lp_solution(w: np.ndarray, v: np.ndarray, capacity: int) -> tuple[np.ndarray, float]:
    """The LP relaxation's x in [0, 1] per item (float64) and its value."""
    order = efficiency_order(w, v)
    cum = saturating_cumsum(w[order], capacity + 1)
    k = int(np.searchsorted(cum, capacity, side="right"))
    x = np.zeros(w.size)
    x[order[:k]] = 1.0
    if k < w.size:
        used = int(cum[k - 1]) if k else 0
        x[order[k]] = (capacity - used) / float(w[order[k]])
    return x, float(np.dot(x, v.astype(np.float64)))


def slope_windows(
    w: np.ndarray,
    v: np.ndarray,
    capacity: int,
    threshold: float,
    *,
    extra: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Windows for items processed in the given order, any order.

    After items 0..j, g_j(c) = LP(items 0..j, c) + LP(items j+1.. and ``extra``, C - c) is concave with its maximum
    U at c*_j, the capacity the LP solution of everything gives items 0..j. Moving c down by t loses at least t times
    (the least efficient item 0..j uses) - (the most efficient item of the rest has room for); moving up, the reverse.
    So g_j(c) >= threshold only on [c*_j - (U - threshold) / down_j, c*_j + (U - threshold) / up_j].

    Args:
        w, v: the processed items in processing order (weights int64, values).
        capacity: the knapsack capacity of this (sub-)problem.
        threshold: only cells that can reach this value matter.
        extra: (weights, values) of items outside the pass that still count as "the rest" (a Hirschberg half).

    Returns:
        (lo, hi) float64 arrays (m,); lo > hi where nothing passes. Unbounded sides are +-inf.
    """
    ew, ev = extra if extra is not None else (w[:0], v[:0])
    allw, allv = np.concatenate([w, ew]), np.concatenate([v, ev])
    x, U = lp_solution(allw, allv, capacity)
    m = w.size
    xe, x = x[m:], x[:m]
    dens = v / w.astype(np.float64)
    edens = ev / ew.astype(np.float64) if ew.size else dens[:0]
    inf = np.inf
    din = np.where(x > 0, dens, inf)  # items the LP uses: giving capacity away costs their efficiency
    dout = np.where(x < 1, dens, -inf)  # items with room: extra capacity earns their efficiency
    e_in = np.min(np.where(xe > 0, edens, inf), initial=inf)
    e_out = np.max(np.where(xe < 1, edens, -inf), initial=-inf)
    p_in = np.minimum.accumulate(din)
    p_out = np.maximum.accumulate(dout)
    s_out = np.maximum(np.append(np.maximum.accumulate(dout[::-1])[::-1][1:], -inf), e_out)
    s_in = np.minimum(np.append(np.minimum.accumulate(din[::-1])[::-1][1:], inf), e_in)
    cstar = np.cumsum(x * w)
    slack = max(U * (1 + FLOAT_SLACK) - threshold, 0.0) + FLOAT_SLACK * max(1.0, abs(U))
    width_tol = FLOAT_SLACK * capacity + 2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # Densities carry float64 rounding: a slope within that error of zero is treated as flat (unbounded side).
        down = p_in - np.where(np.isfinite(s_out), s_out, 0.0) - 1e-14 * np.abs(p_in)
        up = s_in - np.where(np.isfinite(p_out), p_out, 0.0) - 1e-14 * np.abs(s_in)
        lo = np.where(np.isfinite(p_in) & (down > 0), cstar - slack / down - width_tol, -inf)
        hi = np.where(np.isfinite(s_in) & (up > 0), cstar + slack / up + width_tol, inf)
    return np.floor(lo), np.ceil(hi)


def _lp_range(PW: np.ndarray, PV: np.ndarray, dens: np.ndarray, start, stop, x):
    """LP value of sorted positions [start, stop) with capacity x (vectorised; float64 prefix sums)."""
    base = PW[start]
    k = np.clip(np.searchsorted(PW, base + x, side="right") - 1, start, stop)
    frac = (base + x - PW[k]) * dens[np.minimum(k, dens.size - 1)]
    return PV[k] - PV[start] + np.where(k < stop, frac, 0.0)


def sorted_windows(
    w: np.ndarray,
    v: np.ndarray,
    capacity: int,
    threshold: float,
    *,
    start: int = 0,
    stop: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Windows for a pass over positions [start, stop) of items in efficiency order, narrowed by binary search on
    exact LP values.

    The rest of item j's pass is positions [0, start) (the more efficient Hirschberg half, outside the pass) and
    [j + 1, len): LP(rest, x) fills the first, then the second. Slope windows bracket the search.

    Returns:
        (lo, hi) float64 arrays over the pass's items, as :func:`slope_windows`.
    """
    stop = w.size if stop is None else stop
    rest = np.r_[0:start, stop : w.size]
    lo, hi = slope_windows(w[start:stop], v[start:stop], capacity, threshold, extra=(w[rest], v[rest]))
    cap = float(capacity)
    lo, hi = np.maximum(lo, 0.0), np.minimum(hi, cap)
    wide = np.flatnonzero(hi - lo >= REFINE_MIN_WIDTH)
    if not wide.size:
        return lo, hi
    wf, vf = w.astype(np.float64), v.astype(np.float64)
    PW = np.concatenate([[0.0], np.cumsum(wf)])
    PV = np.concatenate([[0.0], np.cumsum(vf)])
    dens = vf / wf
    j = wide + start  # positions of the refined items
    wE = PW[start]

    def g(c):
        room = cap - c
        before = _lp_range(PW, PV, dens, 0, start, np.minimum(room, wE))
        after = _lp_range(PW, PV, dens, j + 1, w.size, np.maximum(room - wE, 0.0))
        return _lp_range(PW, PV, dens, start, j + 1, c) + before + np.where(room > wE, after, 0.0)

    x, U = lp_solution(w, v, capacity)
    cstar = np.cumsum(x[start:stop] * wf[start:stop])
    cstar = np.clip(np.floor(cstar[wide]), lo[wide], hi[wide])
    target = threshold - FLOAT_SLACK * max(1.0, abs(U))
    # Bisection on integers held in float64: exact below 2**53; past that (or after 64 steps) the bracket simply
    # stays wider, which keeps the window a superset.
    a, b = lo[wide].copy(), cstar.copy()  # the smallest c in [a, b] with g(c) >= target (g rises up to c*)
    for _ in range(64):
        mid = np.floor((a + b) / 2)
        ok = g(mid) >= target
        b, a = np.where(ok, mid, b), np.where(ok, a, np.minimum(mid + 1, b))
        if not np.any(a < b):
            break
    new_lo = a
    a, b = cstar.copy(), hi[wide].copy()  # the largest c in [a, b] with g(c) >= target
    for _ in range(64):
        mid = np.ceil((a + b) / 2)
        ok = g(mid) >= target
        a, b = np.where(ok, mid, a), np.where(ok, b, np.maximum(mid - 1, a))
        if not np.any(a < b):
            break
    lo[wide], hi[wide] = np.maximum(new_lo - 1, lo[wide]), np.minimum(b + 1, hi[wide])
    return lo, hi
