"""Meet in the middle (Horowitz and Sahni) in one call: two halves' undominated subset sums by the list's own
merge, paired by one pass (:func:`combine_c`; :func:`..exact.combine_np` is the numpy twin). :mod:`..mitm` decides
when it runs."""

from __future__ import annotations

import numpy as np

from .registers import BYTES_PER_CANDIDATE, LIST_BYTES, SIZE, UPDATES, C, combine, items, merge, room_for

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
