"""The surrogate relaxation with a cardinality constraint (Martello, Pisinger and Toth 1999), combo's strong bound.

Where values and weights are correlated (v = w + k and the like) the LP bound is far above the optimum and the
number of items chosen is the real constraint. Every solution holds at most card1 items (the card1 lightest fill the
knapsack), every solution better than z at least card2 (the card2 - 1 most valuable do not beat z); the break
solution holds b1. When card1 or card2 pins the count next to b1, impose sum x <= b1 or sum x >= b1 + 1 (or take the
better of both, since one of them holds), fold it into the weight constraint with an integer multiplier s (weights
w + s, capacity c + s * card), find by binary search the s whose LP bound is least, and where that bound still beats
z solve the surrogate problem exactly: its optimum bounds the original from above, and a surrogate optimum with
exactly card items is feasible for the original, so it may raise z as well.

The bound that is kept is a Lagrangian bound at the slope of the surrogate's break item, evaluated in exact
integers: valid whatever order the float keys give, and equal to the LP bound when they give the right one.
"""

from __future__ import annotations

import numpy as np

from . import exact
from .exact import exact_total


def _break_item(eng, p: np.ndarray, w: np.ndarray, c: int) -> int | None:
    """The break item of the greedy LP of items (p, w) at capacity c, in the exact efficiency order (found in the
    engine's binding); items with w <= 0 are always taken. None: everything fits."""
    free = w <= 0
    cap = c - exact_total(w[free])
    rest = np.flatnonzero(~free)
    pr, wr = p[rest], w[rest]
    if exact_total(wr) <= cap:
        return None
    order, j = eng.B.break_order(exact.keys(pr, wr), pr, wr, cap, eng.integral)
    return int(rest[order[j]])


def exact_bound(p: np.ndarray, w: np.ndarray, c: int, b: int | None) -> int:
    """floor of the Lagrangian bound at the slope of item b: w_b U = p_b c + sum_j max(0, p_j w_b - p_b w_j)."""
    if b is None:
        return exact_total(p[p > 0])
    pb, wb = int(p[b]), int(w[b])
    d = exact.reduced_costs(p, w, pb, wb)
    return (pb * c + exact_total(d[d > 0])) // wb


def _search(eng, p, w, c: int, lo: int, hi: int, card: int, start: float) -> int:
    """The multiplier s in [lo, hi] whose LP bound is least (0 when none beats ``start``):
    :func:`.kernels.surrogate_bisect` on float64 copies, compiled wherever this process has the compiled kernels
    (whatever binding the engine's list is in: Python integers or a device list make no difference to floats)."""
    from .. import jit
    from . import modes

    B = eng.B
    if not B.compiled and jit.enabled() and (jit.ready("i") or jit.ready("f")):
        B = modes.compiled()
    pf, wf = p.astype(np.float64), w.astype(np.float64)
    return int(B.surrogate_bisect(pf, wf, float(c), int(lo), int(hi), int(card), float(start)))


def _case(eng, lo: int, hi: int, card: int) -> int:
    """An upper bound on the solutions better than z holding <= card items (multipliers s in [0, hi]) or >= card
    items (s in [lo, 0])."""
    from . import solve_items
    from .common import Incumbent, StatesOverflow

    p, w, c, z = eng.p, eng.w, eng.c, eng.z
    s = _search(eng, p, w, c, lo, hi, card, float(eng.ub))
    cs = max(0, c + s * card)
    ws = w + s
    u = exact_bound(p, ws, cs, _break_item(eng, p, ws, cs))
    if u <= z or s == 0:
        return u
    forced = np.flatnonzero(ws <= 0)
    # In the original efficiency order: the surrogate's ties (v = w + k makes every surrogate efficiency 1) then
    # break the way the original order does, so its break solution and search stay near the original's cardinality.
    rest = eng.by_key[ws[eng.by_key] > 0]
    ps = exact_total(p[forced])
    room = cs - exact_total(ws[forced])
    budget = None if eng.budget is None else max(0, eng.budget - eng.stats.state_updates)
    try:
        value, sel = solve_items(
            p[rest],
            ws[rest],
            room,
            lower=z - ps,
            device=eng.device,
            device_states=eng.device_states,
            binding=eng.host_binding,
            meter=eng.meter,
            max_updates=budget,
            relax=False,
            stats=eng.stats,
            depth=eng.depth + 1,
            progress=eng.progress,
        )
    except StatesOverflow:
        return u  # the LP bound of the surrogate still holds
    if sel is not None and forced.size + sel.size == card and ps + value > z:
        eng.improve(Incumbent(ps + value, selection=np.concatenate([forced, rest[sel]])))
    return ps + value


def surrogate(eng) -> None:
    """Tighten ``eng.ub`` (and maybe raise z) by the surrogate relaxation, where the cardinality limits allow."""
    p, w, c, z = eng.p, eng.w, eng.c, eng.z
    b1 = int(eng.left_items.size)
    cw = np.cumsum(np.sort(w))
    card1 = int(np.searchsorted(cw, c, side="right"))  # at most this many items fit
    cp = np.cumsum(np.sort(p)[::-1])
    card2 = int(np.searchsorted(cp, z, side="right")) + 1  # a better solution needs at least this many
    top = int(w.max())
    if card2 == b1 + 1:
        u = max(_case(eng, -top, 0, b1 + 1), z)
    elif card1 == b1:
        u = _case(eng, 0, top, b1)
    elif card1 == b1 + 1 or card2 == b1:
        u = max(_case(eng, -top, 0, b1 + 1), _case(eng, 0, top, b1))
    else:
        return
    if u < eng.ub:
        eng.ub = u
        eng.fired.add("surrogate")
