"""The search: :func:`run` (the loop: a unit enters the core, the list merges and is fathomed, the sides take
turns), the registers it starts from (:func:`arm`), the incumbent and the gap, combo's pairing inside a run, and a
first run from the instance to its answer in one call (:func:`first_run`)."""

from __future__ import annotations

import numpy as np

from .instance import _flip, decode, selection_sums, start, state_views, told
from .merge import _fusable, _head, first_rows
from .registers import (
    BLEN,
    BPOS,
    BRK,
    BUDGET,
    BUDGET_AT,
    BYTES_PER_CANDIDATE,
    D_FITS,
    DEVICE,
    DEVICE_SIZE,
    DONE,
    ENTRIES,
    EVENT_SIZE,
    EXHAUSTED,
    EXTRAS,
    FIXED,
    FLOAT_TOL,
    FUSED,
    GAP,
    INC_E,
    INC_NEW,
    INC_P,
    INC_PAIR,
    INC_PAIR_SIGN,
    INC_V,
    INC_W,
    INTEGRAL,
    LEFT,
    LIM,
    LIST_BYTES,
    MEM_BYTES,
    MEMORY,
    N_IR,
    N_VR,
    NEXT_PAIRING,
    NITEMS,
    NMEMBERS,
    NUNITS,
    PB,
    PEAK,
    PLEN,
    PROGRESS,
    PROGRESS_AT,
    PSUM,
    RIGHT,
    SIZE,
    STARTED,
    TOP_BIT,
    TURN_LEFT,
    UB,
    UPDATES,
    WB,
    WINDOW,
    WSUM,
    Z1,
    C,
    Z,
    borrowed,
    lin_sat,
    merge,
    merge_prune,
    prune,
    refill,
    room_for,
    state_at,
)
from .sides import _admit, _pop


def _last_at_most(W, xs, at):
    """at[i] = the last index of the ascending W with W <= xs[i] (-1: none), for every i: branch-free binary
    searches, four at a time (each step waits on its load; four independent chains overlap)."""
    S = W.shape[0]
    m = xs.shape[0]
    t = 0
    while t < m:
        x0, x1, x2, x3 = xs[t], xs[min(t + 1, m - 1)], xs[min(t + 2, m - 1)], xs[min(t + 3, m - 1)]
        a0, a1, a2, a3 = 0, 0, 0, 0
        n = S
        while n > 1:
            half = n >> 1
            a0 = a0 + half if W[a0 + half] <= x0 else a0
            a1 = a1 + half if W[a1 + half] <= x1 else a1
            a2 = a2 + half if W[a2 + half] <= x2 else a2
            a3 = a3 + half if W[a3 + half] <= x3 else a3
            n -= half
        for r, (a, x) in enumerate(((a0, x0), (a1, x1), (a2, x2), (a3, x3))):
            if t + r < m:
                at[t + r] = a if S > 0 and W[a] <= x else -1
        t += 4


PAIR_BLOCK = 256  # units a pairing pass searches the list for at a time (then checks whether it met the bound)


def _pair_block(W, P, UP, units, xs, at, m, sign, best, bs, bu, bsign):
    """The pairing's search over a block of m units: each against the last state of weight <= xs (its room)."""
    _last_at_most(W, xs[:m], at)
    for t in range(m):
        if at[t] < 0:
            continue
        u = units[t]
        v = P[at[t]] + sign * UP[u]
        if bs < 0 or v > best:
            best, bs, bu, bsign = v, at[t], u, sign
    return best, bs, bu, bsign


def pair_c(W, P, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d):
    """combo's pairing heuristic, compiled (:func:`.extras.pairing` is the numpy twin): over every unit outside the
    core that passes the fixing test, right of the break (added to the best state of weight <= c - w) then left of
    it (removed from the best state of weight <= c + w), the most valuable result (the first of equals). Returns
    (value, state index, unit, sign); state index -1 where no unit pairs with any state. The units are searched in
    blocks of PAIR_BLOCK as the fixing test admits them, and whole-number values stop after the block whose best
    meets the upper bound: no result passes it (a subset sum's pairing often fills c exactly, and its units are all
    admitted: the rest of a scan over every item would change nothing)."""
    c = IR[C]
    best = P[0] - P[0]
    bs, bu, bsign = -1, -1, 0
    stop = IR[INTEGRAL] == 1
    units = np.empty(PAIR_BLOCK, dtype=np.int64)
    xs = np.empty(PAIR_BLOCK, dtype=np.int64)
    at = np.empty(PAIR_BLOCK, dtype=np.int64)
    fits, gap = IR[D_FITS] == 1, VR[GAP]  # (z does not change here: _admit's test inline where the costs fit)
    for sd in (RIGHT, LEFT):
        right = sd == RIGHT
        sign = 1 if right else -1
        m = 0
        for part in range(2):
            lo = SR[sd, BPOS] if part == 0 else 0
            hi = SR[sd, BLEN] if part == 0 else SR[sd, PLEN]
            for t in range(lo, hi):
                u = BUF[sd, t] if part == 0 else POOL[sd, t]
                du = BUFD[sd, t] if part == 0 else d[u]
                if fits:
                    if (du < -gap) if right else (du > gap):
                        continue
                elif not _admit(right, du, u, IR, VR, UP, UW):
                    continue
                units[m] = u
                xs[m] = c - sign * UW[u]
                m += 1
                if m == PAIR_BLOCK:
                    best, bs, bu, bsign = _pair_block(W, P, UP, units, xs, at, m, sign, best, bs, bu, bsign)
                    m = 0
                    if stop and bs >= 0 and best >= VR[UB]:
                        return best, bs, bu, bsign
        if m > 0:
            best, bs, bu, bsign = _pair_block(W, P, UP, units, xs, at, m, sign, best, bs, bu, bsign)
            if stop and bs >= 0 and best >= VR[UB]:
                return best, bs, bu, bsign
    return best, bs, bu, bsign


# --- the incumbent and the bounds -------------------------------------------------------------------------------------


def refresh(IR, VR) -> None:
    """Z1 and the Dembo-Hammer gap after z or the capacity changed: whole numbers gap = (psum - z1) wb +
    (c - wsum) pb (clamped: every reduced cost lies inside +-LIM); floats gap = the Lagrangian bound at c minus z1."""
    z = VR[Z]
    if IR[INTEGRAL] == 1:
        VR[Z1] = z + 1
        VR[GAP] = lin_sat(VR[PSUM] - VR[Z1], IR[WB], IR[C] - IR[WSUM], VR[PB])
    else:
        tol = max(FLOAT_TOL, 4e-16 * IR[NITEMS])
        VR[Z1] = z + tol * max(1.0, abs(z))
        VR[GAP] = lagrangian_float(IR, VR, IR[C]) - VR[Z1]


def lagrangian_float(IR, VR, c):
    """The LP bound at the break item's slope for capacity c, rounded up (float values)."""
    return VR[PSUM] + (c - IR[WSUM]) * (VR[PB] / IR[WB]) * (1 + 1e-15) + 1e-300


def _improve(L, j, IR, VR) -> None:
    P, W, V = state_at(L, IR, j)
    VR[Z] = P
    VR[INC_P] = P
    IR[INC_W] = W
    IR[INC_V] = V
    IR[INC_E] = IR[ENTRIES]
    IR[INC_NEW] = 1
    IR[INC_PAIR] = 0
    refresh(IR, VR)


def pair_in(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d) -> bool:
    """:func:`.extras.pairing` inside a first run: :func:`pair_c` over the list, and where its result beats z, the
    incumbent that state with the unit flipped on top (its registers, as :func:`_improve` sets them, and INC_PAIR).
    True where it raised z."""
    k = IR[SIZE]
    W, P, V = L[0][:k], L[1][:k], L[2][:k]
    best, s, u, sign = pair_c(W, P, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d)
    if s < 0 or not best > VR[Z]:
        return False
    VR[Z] = best
    VR[INC_P] = P[s]
    IR[INC_W] = W[s]
    IR[INC_V] = V[s]
    IR[INC_E] = IR[ENTRIES]
    IR[INC_NEW] = 1
    IR[INC_PAIR] = u + 1
    IR[INC_PAIR_SIGN] = sign
    refresh(IR, VR)
    return True


def next_pairing(size, first, growth):
    """The list size past which the pairing fires again once it fired at ``size``: combo's rule, ``growth``-fold
    from ``first`` on (:func:`.extras.fire`'s and :func:`first_run`'s)."""
    return max(size, first) * growth


def event_size(other, pairing, first, size):
    """The list size past which a run stops for the extras: the least past which one is due (``other`` the least of
    those but the pairing, ``pairing`` its next size), never below the pairing's ``first`` size nor the list's
    ``size`` now (:func:`.extras.next_size`'s rule, which the engine arms, and :func:`first_run`'s)."""
    return max(max(first, min(other, pairing)), size)


def _bit(slot):
    return TOP_BIT if slot == 63 else np.int64(1) << np.int64(slot)


# --- the search -----------------------------------------------------------------------------------------------------


def run(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d, EU, ES):
    """Search on until an event (see the constants at the top); returns (event, list).

    A step: unit u enters the core (sign +1: added, -1: removed): the list merges with its shifted copy (dominance:
    strictly increasing values), the best feasible state raises z, and the next unit's slope on each side fathoms
    (nothing left to add beats the next right unit's efficiency, nothing left to remove is worse than the next left
    unit's); then the sides take turns to offer the next unit. The step's helpers take only the arrays they read:
    compiled, every array a call binds costs an atomic reference count each way, and refill, which reads them all,
    is called only when a side's sorted chunk is used up. Every array but the list's is borrowed for the run (its
    caller holds them): the step's reference counts are the list's only."""
    IR, VR, SR, POOL, BUF = borrowed(IR), borrowed(VR), borrowed(SR), borrowed(POOL), borrowed(BUF)
    BUFD, UP, UW, UD, UMS = borrowed(BUFD), borrowed(UP), borrowed(UW), borrowed(UD), borrowed(UMS)
    UML, MEMBERS, keys, p = borrowed(UML), borrowed(MEMBERS), borrowed(keys), borrowed(p)
    w, d, EU, ES = borrowed(w), borrowed(d), borrowed(EU), borrowed(ES)
    if IR[STARTED] == 0:
        if VR[Z] >= VR[UB]:
            return DONE, L
        # (rows shorter than the list: the limit left no room to make them, see first_rows)
        if L[0].shape[0] < IR[SIZE] or not room_for(L, IR, 2):
            return MEMORY, L
        IR[STARTED] = 1
        u, sign = IR[BRK], np.int64(1)
    else:
        u, sign = np.int64(-1), np.int64(0)
    while True:
        if u >= 0:  # the step
            e = IR[ENTRIES]
            EU[e] = u
            ES[e] = sign
            IR[ENTRIES] = e + 1
            IR[UPDATES] += 2 * IR[SIZE]
            bit = _bit(e % IR[WINDOW])
            fused = FUSED and _fusable(L, IR, VR, SR, BUF, UP, UW, u, sign)
            z1 = VR[Z1]
            if fused:  # the next units are known before the merge: it fathoms as it goes, at the z the step starts at
                t, s = _head(SR, BUF, RIGHT), _head(SR, BUF, LEFT)
                L, k, feasible = merge_prune(L, IR, VR, UP[u], UW[u], sign, bit, t, s, UP, UW)
            else:
                L, k, feasible = merge(L, IR, UP[u], UW[u], sign, bit)
            if feasible > 0 and state_at(L, IR, feasible - 1)[0] > VR[Z]:
                _improve(L, feasible - 1, IR, VR)
            if not fused:
                t, s = np.int64(-1), np.int64(-1)  # the next unit of each side, untested (-1: none left)
                for side in (RIGHT, LEFT):
                    if SR[side, BPOS] == SR[side, BLEN]:
                        refill(side, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d)
                    if side == RIGHT:
                        t = _head(SR, BUF, RIGHT)
                    else:
                        s = _head(SR, BUF, LEFT)
            if not fused or VR[Z1] != z1:  # fathom (again, where the step raised z)
                L, k = prune(L, IR, VR, k, feasible, t, s, UP, UW)
            IR[SIZE] = k
            IR[PEAK] = max(IR[PEAK], k)
        if IR[SIZE] == 0 or VR[Z] >= VR[UB]:
            break
        if IR[SIZE] > IR[EVENT_SIZE]:
            return EXTRAS, L
        if IR[DEVICE_SIZE] >= 0 and IR[SIZE] >= IR[DEVICE_SIZE]:
            return DEVICE, L
        if IR[UPDATES] >= IR[PROGRESS_AT]:
            return PROGRESS, L
        m = 2 * IR[SIZE]
        if IR[BUDGET_AT] >= 0 and IR[UPDATES] + m > IR[BUDGET_AT]:
            return BUDGET, L
        if not room_for(L, IR, m):
            return MEMORY, L
        u, sign = np.int64(-1), np.int64(0)  # the next unit: the sides take turns, until both are exhausted
        while u < 0 and (IR[EXHAUSTED + LEFT] == 0 or IR[EXHAUSTED + RIGHT] == 0):
            left = IR[TURN_LEFT] == 1
            IR[TURN_LEFT] = 0 if left else 1
            side = LEFT if left else RIGHT
            if IR[EXHAUSTED + side] == 1:
                continue
            u = _pop(side, IR, VR, SR, BUF, BUFD, UP, UW, UML)
            while u < 0:
                refill(side, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d)
                if SR[side, BLEN] == 0:
                    IR[EXHAUSTED + side] = 1
                    break
                u = _pop(side, IR, VR, SR, BUF, BUFD, UP, UW, UML)
            sign = np.int64(-1) if left else np.int64(1)
        if u < 0:
            break
    return DONE, L


def arm(IR, VR, c, b, wb, wsum, n, integral, window, d_fits, pb, psum, ub, counted, g, z) -> int:
    """The registers a search over n items starts from (the engine's, in every binding, and :func:`first_run`'s):
    capacity c, the break item b (weight wb, value pb), the break solution (weight wsum, value psum), whole-number
    values or not, ``window`` decision bits, the upper bound ``ub`` lowered by the counting bound ``counted`` (-1:
    none) and to a multiple of the values' gcd ``g`` (RECORD's divisibility: every solution is worth a multiple),
    the incumbent's value z. Returns which lowered it (1: the counting bound, 2: the divisibility, 3: both)."""
    IR[C] = c
    IR[INTEGRAL] = 1 if integral else 0
    IR[BRK] = b
    IR[WB] = wb
    IR[WSUM] = wsum
    IR[NITEMS] = n
    IR[NUNITS] = n
    IR[WINDOW] = window
    IR[TURN_LEFT] = 1
    IR[SIZE] = 1
    IR[D_FITS] = 1 if d_fits else 0
    VR[PB] = pb
    VR[PSUM] = psum
    VR[UB] = ub
    fired = 0
    if counted >= 0 and counted < VR[UB]:
        VR[UB] = counted
        fired |= 1
    if g > 1 and g * (VR[UB] // g) < VR[UB]:
        VR[UB] = g * (VR[UB] // g)
        fired |= 2
    VR[Z] = z
    refresh(IR, VR)
    return fired


def first_run(p, w, c, integral, counting, window, budget, room, sizes, start_states, min_items, limits, lo, up):
    """A search's set-up and first run in one call (the compiled binding's: a small instance's solve, or a
    surrogate's, has no Python between its set-up and its answer): :func:`start`, :func:`arm` (the incumbent the
    break solution and the most valuable item after it that fits, or ``lo`` where that is worth more: a value
    reached elsewhere, items unknown), a first list of ``start_states`` states at most (within ``room`` bytes),
    :func:`run` until ``budget`` state updates or a list past an extra's size, and the selection where the search
    ended and the decision bits tell it all. ``sizes``: (the least list size past which an extra other than the
    pairing fires, the pairing's first size, its growth), as :func:`.extras.first_sizes` gives them:
    the pairing fires here (:func:`pair_in`, at :func:`.extras.fire`'s sizes) until another extra is due, which
    the engine fires. ``limits``: bit 1 ``lo`` counts, bit 2 the upper bound ``up``
    (the search stops once z meets it): :class:`Search`'s ``lower`` and ``upper``, the free items' value in them.

    Returns (how far it went, the event the run returned, the items as :func:`start` returns them (its first
    entry), the instance indices chosen (ascending, the free items included), their weight and value summed again
    from the instance as :func:`selection_sums` sums them (where it ended with them: the solution's totals, without
    a call more; else zeros and False), the optimum over the items, the upper bound, which bound fired (as
    :func:`arm`, and bit 4 where the pairing raised z), (state updates, core entries, the peak list, items fixed in
    and out, bundled items, the list's bytes), and where the search goes on (the set-up as :func:`start` returns it, the
    registers IR and VR, the list) or None). How far: 3 the search ended and nothing beat ``lo``; 2 the search ended
    (the chosen items are its answer); 1 it stopped for anything else, or the bits do not tell the selection (the
    registers, the list and the set-up's state are where it stopped, for the engine to go on from); 0 it did not
    start (a set-up :func:`start` leaves to the caller, or ``min_items`` items or fewer: the registers and the list
    are empty). (None where it ended: each array returned costs ~0.3 us to box, and a solve that ends here needs
    three of the twenty.)"""
    set_up = start(p, w, c, integral, counting)
    its, go, (ps, ws, keys), su, state, bound = set_up
    chosen = np.empty(0, dtype=np.int64)
    unsummed = (np.int64(0), p[:0].sum(), False)
    n = ps.shape[0]
    armed = go and n > min_items
    IR = np.zeros(N_IR if armed else 0, dtype=np.int64)
    VR = np.zeros(N_VR if armed else 0, dtype=ps.dtype)
    cap = first_rows(room, start_states) if armed else 0  # (as the engine's)
    W0, P0, V0 = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=ps.dtype), np.empty(cap, dtype=np.int64)
    L = (W0, P0, V0, np.empty(cap, dtype=np.int64), np.empty(cap, dtype=ps.dtype), np.empty(cap, dtype=np.int64))
    zero = np.int64(0)
    if not armed:
        z = ps[:0].sum()
        return (
            0,
            DONE,
            its,
            chosen,
            unsummed,
            z,
            z,
            zero,
            (zero, zero, zero, zero, zero, zero, zero),
            (set_up, IR, VR, L),
        )
    order, j, wsum, VS, d, fits, g, _, fit = su
    b = order[j]
    z = VS[0] + ps[fit] if fit >= 0 else VS[0]
    pf = its[2][1]  # (the free items' value: lo and up are the instance's)
    unknown = limits & 1 and lo - pf >= z  # (the incumbent is a value without items)
    if unknown:
        z = lo - pf
    ub = min(VS[1], up - pf) if limits & 2 else VS[1]
    fired = arm(IR, VR, c - its[3][1], b, ws[b], wsum, n, integral, window, fits, ps[b], VS[0], ub, bound, g, z)
    SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, EU, ES = state_views(state[0], state[1], state[2], state[3], n)
    if cap:
        W0[0], P0[0], V0[0] = wsum, VS[0], 0  # the break solution
    IR[LIST_BYTES] = 2 * cap * BYTES_PER_CANDIDATE
    IR[BUDGET_AT] = budget
    IR[MEM_BYTES] = room
    other, first, growth = sizes
    pairing = first
    IR[EVENT_SIZE] = event_size(other, pairing, first, IR[SIZE])
    IR[DEVICE_SIZE] = -1
    IR[PROGRESS_AT] = LIM
    event, L = run(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, ps, ws, d, EU, ES)
    while event == EXTRAS and IR[SIZE] > pairing and IR[SIZE] <= other:  # only the pairing is due (extras.fire's)
        k = IR[SIZE]
        if pair_in(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, ps, ws, d):
            fired |= 4
        pairing = next_pairing(k, first, growth)
        IR[NEXT_PAIRING] = pairing
        IR[EVENT_SIZE] = event_size(other, pairing, first, k)
        event, L = run(L, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, ps, ws, d, EU, ES)
    counts = (IR[UPDATES], IR[ENTRIES], IR[PEAK], SR[LEFT, FIXED], SR[RIGHT, FIXED], IR[NMEMBERS], IR[LIST_BYTES])
    if event != DONE:
        return 1, event, its, chosen, unsummed, VR[Z], VR[UB], fired, counts, (set_up, IR, VR, L)
    left = order[:j]
    if IR[INC_NEW] == 1:  # a state raised z: its items, as far as its bits tell
        x, dp, dw = decode(
            VR[INC_P], IR[INC_W], IR[INC_V], IR[INC_E], IR, VR, EU, ES, UP, UW, UMS, UML, MEMBERS, left, n
        )
        if not told(dp, dw, integral, VR[Z1], VR[Z]):
            return 1, event, its, chosen, unsummed, VR[Z], VR[UB], fired, counts, (set_up, IR, VR, L)
        if IR[INC_PAIR] > 0:
            _flip(x, IR[INC_PAIR] - 1, IR[INC_PAIR_SIGN], n, UML, UMS, MEMBERS)
    elif unknown:
        return 3, event, its, chosen, unsummed, VR[Z], VR[UB], fired, counts, None
    else:  # the first incumbent: the break solution and the item that fits beside it
        x = np.zeros(n, dtype=np.bool_)
        for t in range(j):
            x[left[t]] = True
        if fit >= 0:
            x[fit] = True
    items, free = its[0], its[1]
    mask = np.zeros(p.shape[0], dtype=np.bool_)
    count = free.shape[0]
    for t in range(n):
        mask[items[t]] = x[t]
        count += x[t]
    for t in range(free.shape[0]):
        mask[free[t]] = True
    chosen = np.empty(count, dtype=np.int64)  # (ascending: np.flatnonzero's, without its generic ravel)
    k = 0
    for i in range(mask.shape[0] if count else 0):  # (branch-free: every index written, the chosen ones kept)
        chosen[k] = i
        k += mask[i]
        if k == count:
            break
    return 2, event, its, chosen, selection_sums(w, p, chosen), VR[Z], VR[UB], fired, counts, None
