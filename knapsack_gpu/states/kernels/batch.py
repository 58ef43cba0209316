"""Many instances in one call: :func:`first_runs` takes rows of a batch, each from its set-up to its answer through
:func:`.search.first_run` (the same search a single solve starts with), with no Python between two rows. A row the
first run does not close within its budget is left to the caller, which solves it with the whole planner
(:func:`knapsack_gpu.solve_batch`)."""

from __future__ import annotations

import numpy as np

from .registers import borrowed
from .search import first_run

SOLVED = 2  # went[b]: the row's optimum, weight and items are set
OPEN = 1  # the row needs the planner (the first run stopped short, or a total passed 2**62)


def first_runs(P, W, C, lo, hi, integral, counting, window, budget, room, sizes, start_states, value, weight, chosen,
               went):  # fmt: skip
    """Rows lo..hi of a batch of whole-number instances: values P and weights W (B x n, int64, C-contiguous; a row's
    padding is items of weight 0 and value 0), capacities C (B,). Each row runs :func:`.search.first_run` with
    ``budget`` state updates, ``room`` bytes for its list, ``sizes`` as :func:`.extras.first_sizes` gives them (a
    list past them needs the engine's extras: the planner's), ``integral``, ``counting``, ``window`` and
    ``start_states`` as a single solve passes them; a row every item of which fits takes them all. Where it
    closes, value[b] and weight[b] are its optimum and that selection's weight (summed again from the row) and
    chosen[b] marks the items (bool, B x n); went[b] says which rows closed (:data:`SOLVED`) and which are left
    (:data:`OPEN`). Every array is borrowed (its caller holds it): a row's views then cost no reference counts,
    which threads taking rows of the same arrays would otherwise contend for (one cache line, atomically)."""
    P, W, C, value, weight = borrowed(P), borrowed(W), borrowed(C), borrowed(value), borrowed(weight)
    chosen, went = borrowed(chosen), borrowed(went)
    zero = P[0, 0] - P[0, 0]
    for b in range(lo, hi):
        p, w, c = P[b], W[b], C[b]
        r = first_run(p, w, c, integral, counting, window, budget, room, sizes, start_states, 0, 0, zero, zero)
        how, its = r[0], r[2]
        if how == 2:
            sums = r[4]
            if not sums[2]:  # (a total reached 2**62: the planner sums in Python integers)
                went[b] = OPEN
                continue
            picked = r[3]
            value[b], weight[b] = sums[1], sums[0]
        elif how == 0:  # no search started: nothing to choose, or everything fits (else the planner's case)
            items, free, TS, TW, big = its[0], its[1], its[2], its[3], its[6]
            if big or (items.shape[0] > 0 and TW[0] > c - TW[1]):
                went[b] = OPEN
                continue
            picked = np.concatenate((items, free))
            value[b], weight[b] = TS[0] + TS[1], TW[0] + TW[1]
        else:
            went[b] = OPEN
            continue
        row = chosen[b]
        for t in range(picked.shape[0]):
            row[picked[t]] = True
        went[b] = SOLVED


# --- a batch's float rows made whole (the numpy twins: knapsack_gpu.dyadic) ------------------------------------------

_FRACTION = (1 << 52) - 1  # a float64's stored mantissa bits
_MAGNITUDE = (1 << 63) - 1  # all but the sign (-0.0 is 0)
MAX_SCALE = 1000  # rows needing 2**k past this (subnormals) take the numpy twin: 2.0**k would overflow a double


def _fraction_bits(bits) -> int:
    """The most bits after the binary point among the float64 entries whose raw bits are ``bits`` (finite, >= 0):
    the least k >= 0 that makes every entry times 2**k whole (:func:`knapsack_gpu.dyadic.exponent`)."""
    best = 0
    for i in range(bits.shape[0]):
        u = bits[i] & _MAGNITUDE
        if u == 0:
            continue
        e = u >> 52
        m = u & _FRACTION
        if e == 0:  # subnormal: m 2**-1074
            e = 1
        else:
            m |= 1 << 52
        tz = 0  # trailing zeros of m > 0, in six halvings (no loop over the bits)
        if (m & 0xFFFFFFFF) == 0:
            m >>= 32
            tz += 32
        if (m & 0xFFFF) == 0:
            m >>= 16
            tz += 16
        if (m & 0xFF) == 0:
            m >>= 8
            tz += 8
        if (m & 0xF) == 0:
            m >>= 4
            tz += 4
        if (m & 0x3) == 0:
            m >>= 2
            tz += 2
        if (m & 0x1) == 0:
            tz += 1
        f = 1075 - e - tz  # x = m 2**(e - 1075): its lowest set bit is 2**(e - 1075 + tz)
        if f > best:
            best = f
    return best


def scale_rows_c(X, C, lo, hi, W, caps, k, flag):
    """Rows lo..hi of finite float64 weights >= 0 (B x n, C-contiguous) and float64 capacities (B,) as whole numbers
    at each row's exact scale, as :func:`knapsack_gpu.dyadic.scale_rows` makes them: W[b] = X[b] 2**k[b] (int64),
    caps[b] = floor(C[b] 2**k[b]), the row's total weight where that is less. flag[b] = 1 where the row needs the
    numpy twin (a scale past MAX_SCALE, a weight or a capacity below the total at 2**62 or more: it raises there)."""
    for b in range(lo, hi):
        row = X[b]
        e = _fraction_bits(row.view(np.int64))
        k[b] = e
        if e > MAX_SCALE:
            flag[b] = 1
            continue
        s = 2.0**e
        out = W[b]
        total = 0
        bad = False
        for i in range(row.shape[0]):
            x = row[i] * s  # exact: a power of two
            if x >= 4.611686018427388e18:  # 2**62
                bad = True
                break
            t = np.int64(x)
            out[i] = t
            if total > (1 << 62) - t:  # (a total at 2**62 or more: the twin sums it in Python integers)
                bad = True
                break
            total += t
        if not bad:
            c = np.floor(C[b] * s)
            if c >= total:
                caps[b] = total
            elif c >= 4.611686018427388e18:
                bad = True
            else:
                caps[b] = np.int64(c)
        flag[b] = 1 if bad else 0


def whole_values_c(V, lo, hi, limit, P, k, ok):
    """Rows lo..hi of finite float64 values >= 0 as whole numbers where every sum of the row stays below ``limit``
    at its scale, as :func:`knapsack_gpu.dyadic.whole_values` makes them: P[b] = V[b] 2**k[b] (int64) and ok[b];
    rows not ok keep their floats (P[b] zeros)."""
    for b in range(lo, hi):
        row = V[b]
        e = _fraction_bits(row.view(np.int64))
        k[b] = e
        out = P[b]
        if e > MAX_SCALE:
            ok[b] = False
            out[:] = 0
            continue
        s = 2.0**e
        total = 0.0
        for i in range(row.shape[0]):
            total += row[i] * s  # (a float sum of whole numbers: exact while it stays below 2**53)
        ok[b] = total < limit
        if ok[b]:
            for i in range(row.shape[0]):
                out[i] = np.int64(row[i] * s)
        else:
            out[:] = 0
