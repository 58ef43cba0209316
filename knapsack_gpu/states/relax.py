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

from .. import numba_jit
from . import exact, modes
from .common import Incumbent, StatesOverflow
from .exact import exact_total


def exact_bound(p: np.ndarray, w: np.ndarray, c: int, b: int) -> int:
    """floor of the Lagrangian bound at the slope of item b: w_b U = p_b c + sum_j max(0, p_j w_b - p_b w_j);
    b < 0: every item fits."""
    if b < 0:
        return exact_total(p[p > 0])
    pb, wb = int(p[b]), int(w[b])
    d = exact.reduced_costs(p, w, pb, wb)
    return (pb * c + exact_total(d[d > 0])) // wb


def tie_order(p: np.ndarray, s: int) -> np.ndarray:
    """An order of the surrogate problem's items (values p, weights w + s > 0) in which its exact ties of efficiency
    follow the original efficiency order: the sub-search breaks those ties by position (v = w + k makes every
    surrogate efficiency 1), and in the original order its break solution and search stay near the original's
    cardinality. Items of one surrogate ratio r have p = r (w + s), so p / w = r (1 + s / w) falls as p grows where
    s > 0 and rises where s < 0: sorting by value is enough (equal values there are identical items), and costs a
    sort of the open items where the original order took one of every item."""
    return np.argsort(p if s > 0 else -p, kind="stable")


def _search(eng, p, w, c: int, lo: int, hi: int, card: int, start) -> tuple[int, int]:
    """The multiplier s in [lo, hi] whose LP bound is least and the break item of that LP (0, -1 when none beats
    ``start``): :func:`.kernels.surrogate_bisect` on float64 copies, compiled wherever this process has the compiled
    kernels (whatever binding the engine's list is in: Python integers or a device list make no difference to
    floats)."""
    B = eng.B
    if not B.compiled and numba_jit.enabled() and (numba_jit.ready("i") or numba_jit.ready("f")):
        B = modes.compiled()
    pf, wf = p.astype(np.float64), w.astype(np.float64)
    s, b = B.surrogate_bisect(pf, wf, float(c), int(lo), int(hi), int(card), float(start))
    return int(s), int(b)


def _case(eng, sign: int, card: int, items: np.ndarray, fixed_in: np.ndarray):
    """An upper bound on the solutions better than z holding <= card items (sign 1: multipliers s in [0, max w]) or
    >= card items (sign -1: s in [-max w, 0]); z where there is none. Only the open ``items`` take part: every better
    solution holds the items the Dembo-Hammer test fixed at their break-solution values (``fixed_in``: those at 1).
    The set-up is one compiled call (:func:`.kernels.surrogate_case`) where the engine's values are int64 and its
    products fit; :func:`_prepare` is its twin in Python integers."""
    got = None
    if eng.B.compiled:  # (a search whose sums pass int64 runs the python binding)
        got = eng.B.surrogate_case(eng.p, eng.w, eng.c, items, fixed_in, sign, card, eng.ub, eng.z)
        if got[0] == 2:
            got = None
    status, u, s, ps, room, k, forced, rest, p_rest, ws_rest = got or _prepare(eng, sign, card, items, fixed_in)
    if status == 0:
        return eng.num(u)
    return _solve(eng, int(u), int(ps), int(room), int(k), items, fixed_in, forced, rest, p_rest, ws_rest)


def _prepare(eng, sign: int, card: int, items: np.ndarray, fixed_in: np.ndarray) -> tuple:
    """:func:`.kernels.surrogate_case` in numpy and Python integers (any size of values and weights)."""
    p, w, z = eng.p[items], eng.w[items], eng.z
    p1 = exact_total(eng.p[fixed_in])
    c = eng.c - exact_total(eng.w[fixed_in])
    k = card - int(fixed_in.size)  # what the open items may hold
    none = np.empty(0, dtype=np.int64)
    if c < 0 or k < 0 or (sign < 0 and k > items.size):
        return 0, z, 0, p1, c, k, none, none, none, none
    top = int(w.max())
    s, b = _search(eng, p, w, c, 0 if sign > 0 else -top, top if sign > 0 else 0, k, eng.ub - p1)
    if s == 0:
        return 0, eng.ub, s, p1, c, k, none, none, none, none  # no multiplier beat the bound the search has
    cs = max(0, c + s * k)
    ws = w + s
    u = p1 + exact_bound(p, ws, cs, b)
    if u <= z:
        return 0, u, s, p1, c, k, none, none, none, none
    forced = np.flatnonzero(ws <= 0)
    rest = np.flatnonzero(ws > 0)
    rest = rest[tie_order(p[rest], s)]
    ps = p1 + exact_total(p[forced])
    room = cs - exact_total(ws[forced])
    return 1, u, s, ps, room, k, forced, rest, p[rest], ws[rest]


def _solve(eng, u: int, ps: int, room: int, k: int, items, fixed_in, forced, rest, p_rest, ws_rest) -> int:
    """The surrogate problem solved exactly (values ``p_rest``, weights ``ws_rest``, capacity ``room``; the forced
    items' value ``ps`` on top): its optimum bounds the case (its LP bound ``u`` where the solve overflows), and
    where it holds exactly k items and beats z it is the new incumbent."""
    z = eng.z
    budget = None if eng.budget is None else max(0, eng.budget - eng.stats.state_updates)
    try:
        value, sel = eng.solve(  # (the package's search: a surrogate's solve is a search of its own)
            p_rest,
            ws_rest,
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
    if sel is not None and forced.size + sel.size == k and ps + value > z:
        chosen = np.concatenate([fixed_in, items[forced], items[rest[sel]]])
        eng.improve(Incumbent(ps + value, selection=chosen))
    return ps + value


def most_items(eng) -> int:
    """The most items any solution holds: the lightest ones, as many as fit (a selection, not a sort)."""
    return int(eng.B.count_within(eng.w, eng.c))


def fewest_items(eng, z) -> int:
    """The fewest items a solution worth more than z holds: the most valuable ones, as few as beat z (n + 1 where
    all of them do not). The k most valuable are worth at most z iff the n - k least valuable are worth at least
    total - z, so this is n minus the most of the least valuable that stay below total - z."""
    t = eng.total
    if z >= t:
        return eng.n + 1
    return eng.n - int(eng.B.count_within(eng.p, t - z - 1))


def surrogate(eng) -> None:
    """Tighten ``eng.ub`` (and maybe raise z) by the surrogate relaxation, where the cardinality limits allow."""
    z = eng.z
    b1 = int(eng.left_items.size)
    card1 = most_items(eng)  # at most this many items fit
    card2 = fewest_items(eng, z)  # a better solution needs at least this many
    if card2 == b1 + 1:
        cases = [(-1, b1 + 1)]
    elif card1 == b1:
        cases = [(1, b1)]
    elif card1 == b1 + 1 or card2 == b1:
        cases = [(-1, b1 + 1), (1, b1)]
    else:
        return
    u, z_open = None, None
    for sign, card in cases:
        if eng.z != z_open:  # (a first case may raise z: the gap narrows, more items are fixed)
            (items, fixed_in), z_open = eng.open_items(), eng.z
        u_case = _case(eng, sign, card, items, fixed_in)
        u = u_case if u is None else max(u, u_case)
    u = max(u, eng.z)  # (a bound on better solutions: where there are none, z is optimal)
    if u < eng.ub:
        eng.ub = u
        eng.fired.add("surrogate")
