"""What combo adds once the state list grows, and RECORD's divisibility bound, each fired once per search.

- gcd capacity reduction (combo's ``rudidiv``): the items the Dembo-Hammer test fixes must keep their side in every
  solution better than z, so such a solution weighs ws + (a multiple of d), ws the weight of the items fixed in and
  d the gcd of the other weights: the capacity can drop to ws + d * floor((c - ws) / d).
- divisibility of values (RECORD: da Silva, de Queiroz, Schouery 2026): in the same way every better solution is worth
  ps + (a multiple of g), g the gcd of the open items' values, so the upper bound drops to the largest such value.
- dominance fixing (RECORD): an item that at least K other items dominate (no heavier, no less valuable), K the
  most items any solution holds, is left out of some optimal solution: one of its dominators is always free to take
  its place. Ties go by (weight, -value, index), a strict order, so that swapping ends; items after the break only
  (fixing one in the break solution out would move the break).
- the surrogate relaxation with a cardinality constraint (:mod:`.relax`).
- the pairing heuristic (combo's ``heuristic``): for every item outside the core, the best state it completes (a
  right item: the best state of weight <= c - w_i) or frees room for (a left item: weight <= c + w_i); one
  vectorised search over the list per side.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from . import common
from .common import Incumbent
from .exact import exact_total as total
from .kernels import registers as K
from .kernels.search import event_size, next_pairing
from .relax import most_items, surrogate


def _gcd_and_sum(eng, a: np.ndarray, items: np.ndarray, fixed_in: np.ndarray) -> tuple[int, int]:
    """(the gcd of a[items], the exact sum of a[fixed_in]): one compiled pass where the engine's sums fit int64."""
    if eng.B.compiled:  # (a search whose sums pass int64 runs the python binding)
        g, t = eng.B.gcd_and_sum(a, items, fixed_in)
        return int(g), int(t)
    if not items.size:
        g = 0
    elif a.dtype == object:
        g = math.gcd(*a[items].tolist())
    else:
        g = int(np.gcd.reduce(a[items]))
    return g, total(a[fixed_in])


def divisibility(eng, items: np.ndarray, fixed_in: np.ndarray) -> None:
    """Round the upper bound down to what the open items' values can reach (the engine applies the gcd of all the
    values when it starts); ``items``, ``fixed_in``: ``eng.open_items()``."""
    if not eng.integral:
        return
    g, base = _gcd_and_sum(eng, eng.p, items, fixed_in)
    if g > 1:
        ub = base + g * ((eng.ub - base) // g)
        if ub < eng.ub:
            eng.ub = ub
            eng.fired.add("divisibility")


def gcd_capacity(eng, items: np.ndarray, fixed_in: np.ndarray) -> bool:
    """combo's capacity reduction by the gcd of the open items' weights (``items``, ``fixed_in``: ``eng.open_items()``);
    whether it lowered the capacity."""
    g, ws = _gcd_and_sum(eng, eng.w, items, fixed_in)
    if g > 1:
        c = ws + g * ((eng.c - ws) // g)
        if c < eng.c:
            eng.set_capacity(c)
            eng.fired.add("gcd")
            return True
    return False


def dominated(p: np.ndarray, w: np.ndarray, k: int, among: np.ndarray) -> np.ndarray:
    """The items of ``among`` that at least k other items dominate: in the order (weight, -value, index) the k-th
    largest value before an item is >= its own (a running k-smallest heap of the largest values seen)."""
    if k <= 0 or not among.size:
        return among[:0] if k > 0 else among
    n = int(p.size)
    order = np.lexsort((np.arange(n), -p, w))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    last = int(pos[among].max())
    if last < k:
        return among[:0]
    vals = p[order[: last + 1]].tolist()
    heap = vals[:k]
    heapq.heapify(heap)
    hit = np.zeros(last + 1, dtype=bool)
    for t in range(k, last + 1):
        v = vals[t]
        if heap[0] >= v:
            hit[t] = True
        else:
            heapq.heapreplace(heap, v)
    return among[hit[pos[among]]]


def dominance(eng) -> None:
    """Fix out the items after the break that as many items dominate as a solution can hold."""
    among = eng.remaining(K.RIGHT)
    among = among[among < eng.n]  # plain items; a bundle's members are identical, it has no order to keep
    out = dominated(eng.p, eng.w, most_items(eng), among)
    if out.size:
        eng.drop(K.RIGHT, out)
        eng.fired.add("dominance")


def pairing(eng) -> None:
    """Raise z with one item outside the core on top of a state (compiled: :func:`.kernels.pair_c`)."""
    c, num = eng.c, eng.num
    W, P, V = eng.host_lists()
    if eng.B.compiled:
        value, s, item, sign = eng.B.pair_c(W, P, *eng.arrays[:16])
        best = (num(value), int(s), int(item), int(sign)) if s >= 0 else None
    else:
        best = _pairing_np(eng, c, num, W, P)
    if best is not None and best[0] > eng.z:
        value, s, item, sign = best
        state = (num(P[s]), int(W[s]), int(V[s]), int(eng.IR[K.ENTRIES]))
        eng.improve(Incumbent(value, state=state, extra=((item, sign),)))
        eng.fired.add("pairing")


def _pairing_np(eng, c, num, W, P):
    best = None
    for side, sign in ((K.RIGHT, 1), (K.LEFT, -1)):
        items = eng.remaining(side)
        if not items.size:
            continue
        pi, wi, _ = eng.unit_arrays(items)
        at = np.searchsorted(W, c - wi if sign > 0 else c + wi, side="right") - 1
        ok = np.flatnonzero(at >= 0)
        if not ok.size:
            continue
        cand = P[at[ok]] + sign * pi[ok]
        j = int(np.argmax(cand))
        if best is None or cand[j] > best[0]:
            best = (num(cand[j]), int(at[ok[j]]), int(items[ok[j]]), sign)
    return best


def _others(done: set, relax: bool, big: bool) -> list[tuple[str, int]]:
    """The extras other than the pairing still to fire (``done``: those tried), each with the list size past which
    it does."""
    out = [("gcd", common.GCD_STATES)] if "gcd" not in done else []
    if relax and "surrogate" not in done:
        out.append(("surrogate", common.SURROGATE_STATES))
    if not big and "dominance" not in done:
        out.append(("dominance", common.DOMINANCE_STATES))
    return out


def least_other(done: set, relax: bool, big: bool) -> int:
    """The least list size past which an extra other than the pairing fires (BIG: none is left); the engine keeps
    it (``Engine.least_other``) and :func:`fire` renews it, so that arming the kernels builds no list."""
    least = common.BIG
    for _, size in _others(done, relax, big):
        if size < least:  # (not min(): a builtin's call costs ~0.2 us, a generator ~1 us)
            least = size
    return least


def next_size(eng) -> int:
    """The list size past which :func:`fire` has something to do (the kernels stop there; at least the list's own
    size: :func:`.kernels.event_size`)."""
    return event_size(eng.least_other, eng.next_pairing, common.PAIRING_STATES, eng.size)


_NONE: frozenset = frozenset()


def first_sizes(relax: bool) -> tuple[int, int, int]:
    """What a first run (:func:`.kernels.first_run`: a search none of whose extras has fired yet, values in int64)
    needs to fire the pairing as :func:`fire` does until another extra is due: (the least list size past which
    another extra fires, the pairing's first size, its growth)."""
    return least_other(_NONE, relax, False), common.PAIRING_STATES, common.PAIRING_GROWTH


def fire(eng) -> None:
    """Called by the engine once the list passed :func:`next_size`: each extra once, at combo's list sizes."""
    size = eng.size
    due = {name for name, at in _others(eng.fired_once, eng.relax, eng.big) if size > at}
    eng.fired_once.update(due)
    eng.least_other = least_other(eng.fired_once, eng.relax, eng.big)
    if "gcd" in due:
        items, fixed_in = eng.open_items()
        if gcd_capacity(eng, items, fixed_in):  # a smaller capacity narrows the gap: fewer items are open
            items, fixed_in = eng.open_items()
        divisibility(eng, items, fixed_in)
    if "surrogate" in due:
        surrogate(eng)
        eng.next_pairing = 0  # a tighter bound: look for a solution that meets it now
    if "dominance" in due:
        dominance(eng)
    if size > eng.next_pairing:
        eng.next_pairing = next_pairing(size, common.PAIRING_STATES, common.PAIRING_GROWTH)
        pairing(eng)
