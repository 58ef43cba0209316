"""Bounds on the optimum of a reduced instance, for the dense plans (windows: :mod:`knapsack_gpu.dense.windows`).

All functions take a reduced instance: weights 0 < w <= C, values > 0, and total weight > C.

- Lower bound: greedy by efficiency v/w up to the break item b (the first that does not fit), a fill pass over the
  items after it, and the best single item; always with the items that reach it.
- Upper bound: the LP (Dantzig) bound, computed as the Lagrangian bound at r = v_b / w_b,
  U(r) = r C + sum_i max(0, v_i - r w_i), which is an upper bound for every r >= 0. It is therefore valid even where
  float64 misorders items of nearly equal efficiency, and exact in integers: w_b U = v_b C + sum max(0, d_i) with the
  reduced costs d_i = v_i w_b - v_b w_i. Martello and Toth's U2 (the break item in or out) tightens it by up to an
  item's value and closes instances where the greedy set is optimal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .arith import INT64_MAX, exact_sum, saturating_cumsum

# Relative slack on float64 bound arithmetic: prefix sums of up to ~1e7 terms, each off by one ulp at most.
FLOAT_SLACK = 1e-9


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
