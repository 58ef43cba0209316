"""The compiled binding's list: two rows of buffers (the current one and the one the next merge writes), the
merge of a step, its fathoming, and both in one pass; :mod:`..lists` holds the numpy and torch twins."""

from __future__ import annotations

import numpy as np

from .arith import lin_ge0_c
from .registers import (
    BLEN,
    BPOS,
    BYTES_PER_CANDIDATE,
    INTEGRAL,
    LEFT,
    LIM,
    LIST_BYTES,
    MEM_BYTES,
    PLEN,
    RIGHT,
    SIZE,
    Z1,
    C,
)

# --- the compiled binding's list: two rows of buffers, the current one and the one the next merge writes --------------


def first_rows(room, start_states):
    """The states each of the compiled list's first six rows holds: ``start_states`` at most, within a quarter of
    ``room`` bytes (rows grown from 2 states cost a dozen allocations in a short search), 2 where that is all the
    room holds, and none where it holds less. Rows are counted against the limit as they are made (the list's
    bytes), so rows the room cannot hold are not made: a search that ends at its set-up needs no list, and one
    that would merge stops for memory before its first step (:func:`run`)."""
    cap = room // (2 * BYTES_PER_CANDIDATE) // 4
    if cap > start_states:
        cap = start_states
    if cap < 2:
        cap = 2 if 2 * 2 * BYTES_PER_CANDIDATE <= room else 0
    return cap


def room_for_c(L, IR, m) -> bool:
    """Whether a merge of m candidates fits IR[MEM_BYTES]: the spare row grows to m + 1 states (the merged list and
    the guard the next merge writes past it: :func:`_runs`), or twice its size where the rows stay within a quarter
    of the room (:func:`_grow`), so that growth is amortised, while the current row is alive."""
    cW, sW = L[0], L[3]
    if sW.shape[0] > m:
        return True
    have = cW.shape[0] * BYTES_PER_CANDIDATE
    return have + (m + 1) * BYTES_PER_CANDIDATE <= IR[MEM_BYTES]


def _grow(L, IR, m):
    """The spare row grown to hold a merge of m candidates: to twice its size (amortised growth) while the two
    rows stay within a quarter of IR[MEM_BYTES], else to m exactly. Rows grown past what the merges asked for near
    the limit would let a larger limit refuse a step that a smaller one, its rows grown exactly, takes. Within a
    quarter, a step refused (current row + m + 1 > the room, so m + 1 > 3/4 of it) needs more than the room with
    exact rows too (the list's m / 2 states and the merge's m + 1): accepted limits are monotone."""
    cW, cP, cV, sW, sP, sV = L
    want = max(m, 2 * sW.shape[0])
    if (cW.shape[0] + want) * BYTES_PER_CANDIDATE > IR[MEM_BYTES] // 4:
        want = m
    sW = np.empty(want, dtype=cW.dtype)
    sP = np.empty(want, dtype=cP.dtype)
    sV = np.empty(want, dtype=cV.dtype)
    IR[LIST_BYTES] = max(IR[LIST_BYTES], (cW.shape[0] + want) * BYTES_PER_CANDIDATE)
    return cW, cP, cV, sW, sP, sV


def merge_c(L, IR, pu, wu, sign, bit):
    """One linear pass: the list (current row) and its copy shifted by (sign * wu, sign * pu) with ``bit`` set,
    merged by weight into the spare row, keeping a state only if it is worth more than every lighter one (of equal
    weights the most valuable; of equal states the unshifted one). Returns (list with the rows swapped, states,
    states of weight <= c).

    Which run a candidate comes from is a select, not a branch (its outcome is a coin toss where the runs
    interleave: a mispredicted branch a candidate cost ~2x on the searches' own lists), the indices are read as
    unsigned (no wraparound code for negative indices) and each run ends in a guard state (:func:`_runs`): only
    the dominance test branches."""
    s = IR[SIZE]
    dw = sign * wu
    dp = sign * pu
    L = _runs(L, IR, s, dw)
    W, P, V, oW, oP, oV = L
    keep_bits = ~bit
    c = IR[C]
    i = 0
    j = 0
    k = 0
    feasible = 0
    first = True  # no state kept yet
    last = P[0] - P[0]  # the value of the last state kept
    for _ in range(2 * s):
        a, b, v, i, j = _candidate(W, P, V, i, j, dw, dp, bit, keep_bits)
        if first or b > last:
            first = False
            k = _put(oW, oP, oV, k, a, b, v)
            last = b
            if a <= c:
                feasible = k
    return (oW, oP, oV, W, P, V), k, feasible


def _runs(L, IR, s, dw):
    """The rows ready for a merge of the s states with their copy shifted by dw: the spare row holds 2s + 1
    states and the current row a guard state at s, heavier than every candidate (the last weight + |dw| + 1; the
    compiled binding's sums stay below 2**62). A run that has ended then loses every comparison, and the next
    candidate is one compare with no end-of-run tests. With the merges' first-state flag, on circle n = 10,000's
    lists (10^4 to 2 x 10^5 states, ``benchmarks/list_passes.py circle:10000:1e5``): merge_prune_c 3.25 -> 2.4 ns
    a candidate, merge_c 2.95 -> 2.2. A current row without room for the guard (rows a caller made, as a test does)
    is copied to one with it."""
    if s == 0:
        return L
    W, P, V = L[0], L[1], L[2]
    if W.shape[0] <= s:
        W, P, V = np.empty(s + 1, dtype=W.dtype), np.empty(s + 1, dtype=P.dtype), np.empty(s + 1, dtype=V.dtype)
        W[:s], P[:s], V[:s] = L[0][:s], L[1][:s], L[2][:s]
        L = (W, P, V, L[3], L[4], L[5])
    if L[3].shape[0] <= 2 * s:
        L = _grow(L, IR, 2 * s + 1)
    top, end = np.uint64(s - 1), np.uint64(s)
    W[end] = W[top] + abs(dw) + 1
    P[end] = P[top]
    V[end] = 0
    return L


def _candidate(W, P, V, i, j, dw, dp, bit, keep_bits):
    """The merge's next candidate, (weight, value, bits, i, j): the list's state i or its shifted state j, the
    lighter (the unshifted of equal weights). A run that has ended stands at its guard state (:func:`_runs`),
    which is never the lighter."""
    ii = np.uint64(i)
    jj = np.uint64(j)
    wi = W[ii]
    wj = W[jj] + dw
    first = wi <= wj
    a = wi if first else wj
    b = P[ii] if first else P[jj] + dp
    v = (V[ii] & keep_bits) if first else (V[jj] | bit)
    return a, b, v, i + (1 if first else 0), j + (0 if first else 1)


def _put(oW, oP, oV, k, a, b, v):
    """Append a state worth more than every lighter one to the k kept (over the last, of the same weight)."""
    if k > 0 and oW[np.uint64(k - 1)] == a:
        k -= 1  # the same weight, worth more
    kk = np.uint64(k)
    oW[kk] = a
    oP[kk] = b
    oV[kk] = v
    return k + 1


def _head(SR, BUF, s):
    """The next unit of side s's sorted chunk, untested (-1: the chunk is used up)."""
    return BUF[s, SR[s, BPOS]] if SR[s, BPOS] < SR[s, BLEN] else np.int64(-1)


def _fusable(L, IR, VR, SR, BUF, UP, UW, u, sign) -> bool:
    """Whether the step entering unit u may merge and fathom in one pass (:func:`merge_prune_c`): whole numbers;
    neither side's chunk needs a refill (a refill filters at the gap of the z the merge may raise; a side with
    nothing left refills to nothing, done here); a right unit is left; and every product the fathoming test forms
    stays below LIM (the candidates' values and weights lie between the list's ends and theirs shifted)."""
    if IR[INTEGRAL] != 1:
        return False
    for side in (RIGHT, LEFT):
        if SR[side, BPOS] == SR[side, BLEN]:
            if SR[side, PLEN] != 0:
                return False
            SR[side, BPOS] = 0  # what refill does where the pool is empty
            SR[side, BLEN] = 0
    if _head(SR, BUF, RIGHT) < 0:  # no right unit: every state of weight <= c goes, the merge's best after z
        return False
    W, P = L[0], L[1]
    top = IR[SIZE] - 1
    dw, dp = sign * UW[u], sign * UP[u]
    z1, c = VR[Z1], IR[C]
    amax = max(abs(P[0] - z1), abs(P[top] - z1), abs(P[0] + dp - z1), abs(P[top] + dp - z1))
    bmax = max(abs(c - W[0]), abs(c - W[top]), abs(c - W[0] - dw), abs(c - W[top] - dw))
    for side in (RIGHT, LEFT):
        x = _head(SR, BUF, side)
        if x >= 0 and not (amax < LIM // max(UW[x], 1) and bmax < LIM // max(UP[x], 1)):
            return False
    return True


def merge_prune_c(L, IR, VR, pu, wu, sign, bit, t, s, UP, UW):
    """merge_c and prune_c in one pass (whole numbers, products below LIM, a right unit t: see :func:`_fusable`):
    a state of the merge is written only if it passes the fathoming test at VR[Z1]. Dominance still runs over
    every state of the merge, kept or not, so the list is the merge's, fathomed: a state the merge replaces (of
    equal weight, worth less) is one the test would drop after it (the test grows with the value). Returns (list,
    states kept, states kept of weight <= c). The merge's best state of weight <= c, if it beats z, passes the test
    (P >= z1, W <= c) and is kept last among them: the step's incumbent is the two passes'. On circle's lists of
    10^5 states the two passes cost ~7.9 ns a candidate, this one ~5.3 when it came (replayed in one process); 2.4
    since the runs' guard states (:func:`_runs`; ``benchmarks/list_passes.py`` replays a search's lists)."""
    n = IR[SIZE]
    dw = sign * wu
    dp = sign * pu
    L = _runs(L, IR, n, dw)
    W, P, V, oW, oP, oV = L
    keep_bits = ~bit
    c = IR[C]
    z1 = VR[Z1]
    pt, wt = UP[t], UW[t]
    has_s = s >= 0
    ps, ws = (UP[s], UW[s]) if has_s else (pt, wt)
    i = 0
    j = 0
    k = 0
    first = True  # no state merged yet (a flag, not a count: a count here cost ~0.4 ns a candidate, replayed)
    feasible = 0
    last = P[0] - P[0]  # the value of the merge's last state, kept or not
    for _ in range(2 * n):
        a, b, v, i, j = _candidate(W, P, V, i, j, dw, dp, bit, keep_bits)
        if first or b > last:
            first = False
            last = b
            if a <= c:
                ok = (b - z1) * wt + (c - a) * pt >= 0
            else:
                ok = has_s and (b - z1) * ws + (c - a) * ps >= 0
            if ok:
                k = _put(oW, oP, oV, k, a, b, v)
                if a <= c:
                    feasible = k
    return (oW, oP, oV, W, P, V), k, feasible


def _keep_part(W, P, V, lo, hi, out, z1, c, pt, wt, integral):
    """Compact the states [lo, hi) that pass (P - z1) wt + (c - W) pt >= 0 to ``out``; returns the new end."""
    if hi <= lo:
        return out
    if not integral:
        slope = pt / wt
        for i in range(lo, hi):
            if (P[i] - z1) + (c - W[i]) * slope >= 0:
                W[out], P[out], V[out] = W[i], P[i], V[i]
                out += 1
        return out
    # P and W increase along the list: the extremes bound every product
    amax = max(abs(P[lo] - z1), abs(P[hi - 1] - z1))
    bmax = max(abs(c - W[lo]), abs(c - W[hi - 1]))
    if amax < LIM // max(wt, 1) and bmax < LIM // max(pt, 1):
        for i in range(lo, hi):
            if (P[i] - z1) * wt + (c - W[i]) * pt >= 0:
                W[out], P[out], V[out] = W[i], P[i], V[i]
                out += 1
    else:
        for i in range(lo, hi):
            if lin_ge0_c(P[i] - z1, wt, c - W[i], pt):
                W[out], P[out], V[out] = W[i], P[i], V[i]
                out += 1
    return out


def prune_c(L, IR, VR, k, feasible, t, s, UP, UW):
    """Fathom in place: a state of weight <= c survives iff it can still beat z adding units at the slope of the
    next right unit t, one of weight > c iff removing units at the slope of the next left unit s (none left: it
    cannot). Returns (list, states kept)."""
    W, P, V = L[0], L[1], L[2]
    z1, c, integral = VR[Z1], IR[C], IR[INTEGRAL] == 1
    out = 0
    if t >= 0:
        out = _keep_part(W, P, V, np.int64(0), feasible, out, z1, c, UP[t], UW[t], integral)
    if s >= 0:
        out = _keep_part(W, P, V, feasible, k, out, z1, c, UP[s], UW[s], integral)
    return L, out


def state_at_c(L, IR, j):
    return L[1][j], L[0][j], L[2][j]
