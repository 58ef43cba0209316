"""Meet in the middle (Horowitz and Sahni, 1974) for searches with few open items: where weights are huge and
every efficiency nearly equal (a subset sum of a few dozen items near 2**50), bounds fix nothing and the states list
grows to every distinct subset sum, 2**n of them; two lists of 2**(n/2) do the same work.

It runs in two places. The planner runs it over every item at once where that pays (:func:`at_once`: few items, or
an engine's list projected past a half list's), and the engine hands over to it when it has spent a share of its
work (SWITCH_SHARE) and few items are still open: those it has not fixed (Dembo-Hammer at its incumbent: every
better solution keeps the fixed ones at their side). Either way the items split into two halves; each half's
undominated subset sums are built by the engine's own merge (:func:`.kernels.half_states`), and one pass pairs every
state of one half with the best partner of the other (:func:`.kernels.combine_c`), all in one call
(:func:`.kernels.meet`). O(2**(n/2)) time and memory (Schroeppel and Shamir's O(2**(n/4)) memory is not implemented:
where the two lists do not fit the memory limit, the engine goes on).
"""

from __future__ import annotations

import numpy as np

from . import lists, modes
from .kernels import registers as K

# The most open items a meet in the middle takes: two lists of 2**23 states (~0.75 GiB at its peak).
MAX_ITEMS = 46
# Bytes a meet in the middle holds a state of its larger half: compiled, two lists, each of two rows of buffers (the
# list, and the one its next merge writes) sized at once for its last merge; interpreted, the first list and numpy's
# merge of the second at its peak.
BYTES_PER_STATE = 4 * K.BYTES_PER_CANDIDATE
BYTES_PER_STATE_NUMPY = K.BYTES_PER_CANDIDATE + lists.BYTES_PER_CANDIDATE
# Where the meet in the middle does not run at once, the engine hands over once it has done this share of the state
# updates the meet in the middle would do: searches it ends in time end within a few thousand updates, and one that
# goes on costs a third more (values near ties of 31 and 35 items, weights near 2**50: 4.5 and 15 ms with a third,
# 7.1 and 26 ms with the whole; a numpy meet in the middle 8.7 and 49 ms).
SWITCH_SHARE = 1 / 3
# Up to this many items a meet in the middle runs at once, whatever the items: its lists of 2**14 states at most
# take 0.6 ms compiled at worst (a subset sum of 28 items near 2**50; values that let dominance thin the lists: ~0.1
# ms), where the engine over such items spends 0.2-0.5 ms on its set-up, extras and Python before it ends or hands
# over (benchmarks/few_items.py).
DIRECT_ITEMS = 28
# A search looks at its open items once it has done this many updates (~1 ms compiled): nearly every search has ended
# by then, and below it a meet in the middle would save at most that much.
LOOK_UPDATES = 200_000


def half_size(m: int) -> int:
    """States of the larger half list of m items, at most (before dominance and the capacity thin them)."""
    return 1 << ((m + 1) // 2)


def updates(m: int) -> int:
    """The state updates of a meet in the middle over m items, at most (before dominance and the capacity thin its
    lists): each merge builds twice the states it starts from, so a half list of 2**h states costs about 2 * 2**h."""
    return 2 * (half_size(m) + (1 << (m // 2)))


def fits(meter, m: int, compiled: bool) -> bool:
    """Whether a meet in the middle over m open items, in the compiled binding or numpy's, fits the item limit and
    what the memory ``meter`` leaves."""
    if m > MAX_ITEMS:
        return False
    need = (half_size(m) + 2) * (BYTES_PER_STATE if compiled else BYTES_PER_STATE_NUMPY)
    return meter is None or need <= meter.limit - meter.current


def over_every_item(n: int, c: int, meter, compiled: bool) -> bool:
    """Whether a meet in the middle takes every item of an instance in one call, before any set-up: at most
    DIRECT_ITEMS of them, c < 2**62, and fits(). The engine and the dry run decide by this one rule."""
    return n <= DIRECT_ITEMS and c < 2**62 and fits(meter, n, compiled)


def over_open_items(p: np.ndarray, w: np.ndarray, c: int, meter, compiled: bool) -> bool:
    """Whether a meet in the middle takes the open items left after the set-up (their values p, weights w, and the
    capacity c they share) in the engine's place: at_once() and fits(). The engine and the dry run decide by this."""
    return fits(meter, p.shape[0], compiled) and at_once(p, w, c)


def at_once(p: np.ndarray, w: np.ndarray, c: int) -> bool:
    """Whether a meet in the middle over all of these items (at most MAX_ITEMS, whole numbers) should run before
    the engine does any work: where its two half lists are smaller than the engine's set-up costs (DIRECT_ITEMS), or
    where the engine's projected list is longer than a half list.

    The projection: at the mean efficiency r = sum(p) / sum(w) a subset S is worth r w(S) + e(S), e the items'
    deviations p - r w, |e(S)| <= E = sum |e|. Every state's bound stays above the incumbent, and the Dembo-Hammer
    test fixes no item, until some subset fills the capacity to within about 2E / r; with subset sums spread over
    sum(w), that takes a list of about s = r sum(w) / 2E states (where the efficiencies tie, E = 0: every subset
    sum), at most 2**m, or the distinct sums the capacity leaves room for (subset sums of small weights end at a full
    knapsack). The engine builds two candidates a state for each of the m - log2(s) items still to enter by then;
    the meet in the middle two for each state of its half lists."""
    m = p.shape[0]
    if m <= DIRECT_ITEMS:
        return True
    pl, wl = p.tolist(), w.tolist()
    sp, sw = sum(pl), sum(wl)
    spread = sum(abs(a * sw - b * sp) for a, b in zip(pl, wl, strict=True))  # E sum(w), in Python integers
    s = min(1 << m, min(int(c), sw) + 1)
    if spread:
        s = min(s, sp * sw // (2 * spread))
    return updates(m) <= 2 * s * max(1, m - s.bit_length() + 1)


# A half list's registers before its first merge (one state; no memory limit: the caller checked fits()).
_REGISTERS = np.zeros((2, K.N_IR), dtype=np.int64)
_REGISTERS[:, K.SIZE], _REGISTERS[:, K.MEM_BYTES] = 1, K.LIM


def best(B, p: np.ndarray, w: np.ndarray, items: np.ndarray, cap: int, stats, meter) -> tuple:
    """The most valuable subset of ``items`` (indices into p, w) of weight <= ``cap`` >= 0: (its value, its
    items, ascending), by :func:`.kernels.meet` in host binding B (compiled, or numpy; Python integers where p is
    an object array). The state updates go to ``stats``, the lists' bytes to ``meter``."""
    R, IRS = _lists(B, p, w, items.size)
    value, _, chosen = B.meet(R, IRS, items, p, w, cap)
    _count(B, IRS, stats, meter)
    return value, chosen


def whole(B, p: np.ndarray, w: np.ndarray, c: int, stats, meter) -> tuple:
    """:func:`best` over every item of an instance a search takes (whole-number values, at most MAX_ITEMS of them
    and fits() for them all; c < 2**62), in one call (:func:`.kernels.meet_instance`: its tuple; where the meet
    ran, its state updates go to ``stats`` and its bytes to ``meter``)."""
    R, IRS = _lists(B, p, w, p.shape[0])
    got = B.meet_instance(R, IRS, p, w, c)
    if got[0] == 2:
        _count(B, IRS, stats, meter)
    return got


def _lists(B, p: np.ndarray, w: np.ndarray, m: int) -> tuple:
    """(R, IRS) for :func:`.kernels.meet` over m items in binding B: compiled, twelve rows sized at once for a
    half's last merge (2 x its states and a guard: rows that grow cost fresh pages a merge, 3-4x the merge's own
    time on these lists); numpy's merge makes new arrays, so its twelve may share three of one state."""
    IRS = _REGISTERS.astype(object if p.dtype == object else np.int64)  # (a copy: cheaper than setting two)
    if not B.compiled:
        return (np.zeros(1, dtype=w.dtype), np.zeros(1, dtype=p.dtype), np.zeros(1, dtype=np.int64)) * 4, IRS
    return np.empty((12, half_size(m) + 2), dtype=np.int64), IRS


def _count(B, IRS, stats, meter) -> None:
    """A meet's state updates and peak list to ``stats``, its bytes to ``meter`` (compiled: both lists' rows are
    alive; numpy's: the first list, and the second's merges)."""
    a, b = IRS.tolist()
    stats.add_run(a[K.UPDATES] + b[K.UPDATES], 0, a[K.SIZE] if a[K.SIZE] > b[K.SIZE] else b[K.SIZE])
    if meter is not None:
        kept = a[K.LIST_BYTES] if B.compiled else a[K.SIZE] * K.BYTES_PER_CANDIDATE
        meter.note_peak(max(a[K.LIST_BYTES], kept + b[K.LIST_BYTES]))


def host(eng):
    """The host binding a meet in the middle runs in for the engine ``eng`` (its lists are built on the host)."""
    return modes.host(eng.host_binding, eng.p)


def solve(eng):
    """The best solution better than the engine's incumbent, over its open items, or None where the incumbent is
    optimal: (value, the engine's item indices). Its list is released first; the lists are built on the host."""
    eng.release()
    items, fixed_in = eng.open_items()
    p, w = eng.p, eng.w
    base_p = sum(p[fixed_in].tolist()) if fixed_in.size else 0
    cap = eng.c - (sum(w[fixed_in].tolist()) if fixed_in.size else 0)
    if cap < 0:
        return None
    value, chosen = best(host(eng), p, w, items, cap, eng.stats, eng.meter)
    if base_p + value <= eng.z:
        return None
    return base_p + eng.num(value), np.sort(np.concatenate([fixed_in, chosen]))
