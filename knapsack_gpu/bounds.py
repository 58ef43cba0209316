"""Bounds on the optimum, and the capacity windows they leave to the DP.

All functions take a reduced instance: weights 0 < w <= C, values > 0, and total weight > C.

- Lower bound: greedy by efficiency v/w up to the break item b (the first that does not fit), a fill pass over the
  items after it, and the best single item; always with the items that reach it.
- Upper bound: the LP (Dantzig) bound, computed as the Lagrangian bound at r = v_b / w_b,
  U(r) = r C + sum_i max(0, v_i - r w_i), which is an upper bound for every r >= 0. It is therefore valid even where
  float64 misorders items of nearly equal efficiency, and exact in integers: w_b U = v_b C + sum max(0, d_i) with the
  reduced costs d_i = v_i w_b - v_b w_i. Martello and Toth's U2 (the break item in or out) tightens it by up to an
  item's value and closes instances where the greedy set is optimal.
- Windows: after the items before j and j itself, a profile cell c can lie on a solution worth T or more only if
  LP(processed items, c) + LP(the rest, C - c) >= T. That sum is concave in c with its maximum at the capacity the
  whole LP solution gives the processed items, so the cells that pass form an interval, computed up front for every
  item (no profile values are read): from the slopes at the maximum for any processing order, and by binary search on
  exact LP values where the items run in efficiency order. Floating-point bounds get a margin, so a window is only
  ever too wide.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .arith import INT64_MAX, exact_sum, saturating_cumsum

# Relative slack on float64 bound arithmetic: prefix sums of up to ~1e7 terms, each off by one ulp at most.
FLOAT_SLACK = 1e-9
# Windows at least this wide are narrowed by binary search on exact LP values (efficiency order only).
REFINE_MIN_WIDTH = 256


def efficiency_order(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Positions by decreasing v/w, ties by position (stable). float64 may misorder near-equal efficiencies: every
    bound below stays valid for any order, only its strength depends on it."""
    return np.argsort(-(values / weights.astype(np.float64)), kind="stable")


@dataclass(frozen=True)
class Bounds:
    """Bounds of one reduced instance.

    Attributes:
        order: int64 (m,), item positions by decreasing efficiency.
        brk: index into ``order`` of the break item.
        lower: a value some selection reaches (int for whole-number values); ``lower_items`` (ascending positions).
        upper: an upper bound on the optimum (int, or a float with margin).
        reduced: (m,) reduced costs d_i = v_i w_b - v_b w_i (object or int64 array; float v_i - r w_i for float
            values): flipping item i from its LP choice costs at least |d_i| / w_b.
        lp_num, lp_den: the LP bound is lp_num / lp_den (lp_den = w_b); flipping i bounds the optimum by
            (lp_num - |d_i|) / lp_den.
        integral: values are whole numbers (all arithmetic above is exact).
        incumbent: original indices of a whole selection (forced items included) worth ``lower`` plus the
            forced items' value, when the caller recorded one (see :meth:`with_lower`).
    """

    order: np.ndarray
    brk: int
    lower: int | float
    lower_items: np.ndarray
    upper: int | float
    reduced: np.ndarray
    lp_num: int | float
    lp_den: int
    integral: bool
    incumbent: np.ndarray | None = None

    @property
    def closed(self) -> bool:
        """The lower bound is optimal: no DP is needed."""
        return self.lower >= self.upper

    def with_lower(self, value: int | float, items: np.ndarray | None, incumbent: np.ndarray | None) -> Bounds:
        """These bounds with another lower bound (a selection found elsewhere, e.g. before variable fixing)."""
        return replace(self, lower=value, lower_items=items, incumbent=incumbent)

    def flip_bound(self) -> np.ndarray:
        """Per item: an upper bound on every solution that takes the opposite of the item's LP choice (floats)."""
        red = np.abs(self.reduced.astype(np.float64))
        return (float(self.lp_num) - red) / self.lp_den


def _reduced_costs(w: np.ndarray, v: np.ndarray, wb: int, vb: int, integral: bool) -> np.ndarray:
    if not integral:
        return v - (vb / wb) * w
    if int(v.max()) <= INT64_MAX // wb and int(w.max()) <= INT64_MAX // max(vb, 1):
        return v * np.int64(wb) - np.int64(vb) * w  # both products fit, so their difference does
    return v.astype(object) * wb - w.astype(object) * vb


def _positive_sum(d: np.ndarray) -> int | float:
    pos = d[d > 0]
    if pos.dtype == object:
        return sum(pos.tolist())
    return exact_sum(pos)


def greedy(w: np.ndarray, v: np.ndarray, capacity: int, order: np.ndarray, brk: int) -> tuple[int | float, np.ndarray]:
    """The greedy prefix up to the break item, then a fill pass over the items after it.

    Returns:
        (its value, ascending positions).
    """
    taken = list(order[:brk].tolist())
    room = capacity - exact_sum(w[order[:brk]])
    rest = order[brk + 1 :]
    if rest.size and room > 0:
        ws = w[rest]
        lightest = np.minimum.accumulate(ws[::-1])[::-1]  # the fill stops once nothing left can fit
        for pos, wi, low in zip(rest.tolist(), ws.tolist(), lightest.tolist(), strict=True):
            if room < low:
                break
            if wi <= room:
                room -= wi
                taken.append(pos)
    items = np.sort(np.asarray(taken, dtype=np.int64))
    return exact_sum(v[items]), items


def _lagrangian(w: np.ndarray, v: np.ndarray, capacity: int, r: float, skip: int) -> float:
    """r C + sum_{i != skip} max(0, v_i - r w_i): an upper bound on the LP without item ``skip``, for any r >= 0,
    plus a margin for float64 rounding."""
    gain = v - r * w
    gain[skip] = 0.0
    total = r * capacity + float(gain[gain > 0].sum())
    return total + FLOAT_SLACK * (r * capacity + float(v.sum())) + 1.0


def _martello_toth(w: np.ndarray, v: np.ndarray, capacity: int, order: np.ndarray, brk: int) -> int:
    """U2 = max(break item out, break item in): each side is a Lagrangian bound at the efficiency of the item that
    would fill the gap (the best after the break item, the worst before it), so misordered floats cannot break it."""
    wf, vf = w.astype(np.float64), v.astype(np.float64)
    b = int(order[brk])
    after, before = order[brk + 1 :], order[:brk]
    r_out = float(np.max(vf[after] / wf[after])) if after.size else 0.0
    out = _lagrangian(wf, vf, capacity, r_out, b)
    if not before.size:  # nothing to make room with: the break item alone does not fit (w_b <= C rules this out)
        return int(out)
    r_in = float(np.min(vf[before] / wf[before]))
    inside = vf[b] + _lagrangian(wf, vf, capacity - int(w[b]), r_in, b)
    return int(max(out, inside))


def compute(weights: np.ndarray, values: np.ndarray, capacity: int, integral: bool) -> Bounds:
    """Bounds of a reduced instance (0 < w <= capacity, v > 0, sum(w) > capacity).

    Args:
        weights: int64 (m,).
        values: int64 (m,) when ``integral`` else float64.
        capacity: the knapsack capacity.
        integral: whole-number values: the LP bound and reduced costs are exact integers.
    """
    w, v = weights, values
    order = efficiency_order(w, v)
    brk = int(np.searchsorted(saturating_cumsum(w[order], capacity + 1), capacity, side="right"))
    if brk >= order.size:
        raise ValueError("bounds need total weight > capacity (take-all instances are reduced before)")
    ib = int(order[brk])
    wb, vb = int(w[ib]), v[ib].item()
    d = _reduced_costs(w, v, wb, vb, integral)
    lower, items = greedy(w, v, capacity, order, brk)
    best = int(np.argmax(v))
    if v[best] > lower:
        lower, items = v[best].item(), np.array([best], dtype=np.int64)
    if integral:
        num, den = vb * capacity + _positive_sum(d), wb
        upper = min(num // wb, _martello_toth(w, v, capacity, order, brk))
    else:
        lp = vb / wb * capacity + _positive_sum(d)
        num, den = lp + FLOAT_SLACK * max(1.0, abs(lp)), 1
        upper = num
    return Bounds(order, brk, lower, items, upper, d, num, den, integral)


def upper_bound(weights: np.ndarray, values: np.ndarray, capacity: int) -> int:
    """An exact integer upper bound on every f(c), c <= capacity: the value sum, or the bounds' upper bound."""
    if exact_sum(weights) <= capacity:
        return exact_sum(values)
    return compute(weights, values, capacity, True).upper


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
