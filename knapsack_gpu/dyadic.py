"""Float weights made whole, exactly: every finite binary float is an odd integer times a power of two, so one
power-of-two scale turns a row of float weights (and its capacity) into integers without changing the instance.

``torch.rand`` draws float32 multiples of 2**-24: weights * 2**24 are whole numbers below 2**24, and a capacity of 25
becomes 25 * 2**24 < 2**29. numpy's float64 ``random()`` is k * 2**-53: capacities near 2**58, still inside int64.
Where the exact scale would take a weight to 2**62 or past it (magnitudes far apart: 1e-30 beside 1), no engine holds
the instance and :class:`ScaleError` names the entries and says what to do. Decimal data (3.01 meaning 301/100) is
not a binary fraction: its exact scale is 2**49; a user who means hundredths scales by 100 and rounds (only they
know). Float values get the same treatment in a batch (:func:`whole_values`), where the optimum stays an exact
float64.

Rows are instances: one scale per row (a batch's rows are independent instances). No torch here.
"""

from __future__ import annotations

import numpy as np

from .arith import exact_sum
from .limits import MAX_EXACT_FLOAT_INT, MAX_WEIGHT

# The exponent of the lowest set bit of 0 (it needs no scale): far above any float64's
_ZERO = 1 << 20


class ScaleError(ValueError):
    """The exact power-of-two scale of float weights passes what the engines hold (weights below 2**62)."""


def lowest_bits(x: np.ndarray) -> np.ndarray:
    """For finite float64 ``x`` (any shape): the exponent e of each entry's lowest set bit, x = odd * 2**e (int64;
    0 gives a large sentinel: it needs no scale)."""
    m, e = np.frexp(x)  # x = m 2**e, 0.5 <= |m| < 1: m 2**53 is the 53-bit integer mantissa, exactly
    q = np.abs(m * 2.0**53).astype(np.int64)
    low = q & -q  # its lowest set bit, a power of two (0 for x = 0)
    tz = np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1  # log2 of that power (exact: one bit)
    return np.where(q == 0, _ZERO, e.astype(np.int64) - 53 + tz)


def exponent(x: np.ndarray, axis: int | None = None) -> np.ndarray | int:
    """The least k >= 0 for which every entry of ``x`` times 2**k is a whole number (along ``axis``: one per row)."""
    if x.size == 0:
        return 0 if axis is None else np.zeros(x.shape[:axis] + x.shape[axis + 1 :], dtype=np.int64)
    k = np.maximum(-lowest_bits(x).min(axis=axis), 0)
    return int(k) if axis is None else k


def single(name: str, b: int, i: int | None = None) -> str:
    """How an entry of a single instance (one row) is named: weights[i], capacity."""
    return name if i is None else f"{name}[{i}]"


def scale_rows(W: np.ndarray, C: np.ndarray, label=single) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of finite float64 weights >= 0 (B x n) and their capacities (B,, finite, >= 0) as whole numbers, each row
    at its own exact scale: (int64 weights W * 2**k, int64 capacities floor(C * 2**k), k (B,)). The same instances
    exactly: whole-number weights fit a capacity where they fit its floor. A capacity at or past its row's total
    weight becomes the total (every item fits either way). ``label(name, b, i=None)``: how a message names an
    entry (:func:`single`: weights[i]; a batch's: weights[b, i]).

    Raises:
        ScaleError: a scaled weight, or a scaled capacity below its row's total weight, would reach 2**62; the message
            names the entry, the one that sets the scale, and what to do.
    """
    B = W.shape[0]
    low = lowest_bits(W) if W.size else np.zeros(W.shape, dtype=np.int64)
    k = np.maximum(-low.min(axis=1), 0) if W.shape[1] else np.zeros(B, dtype=np.int64)
    scaled = np.ldexp(W, k[:, None])  # exact: the same mantissas, the exponents moved
    over = scaled >= MAX_WEIGHT
    if over.any():
        b, i = (int(x) for x in np.argwhere(over)[0])
        what = f"{label('weights', b, i)} = {float(W[b, i])!r}"
        if not k[b]:
            raise ScaleError(f"{what}: weights must be < 2**62")
        fine = int(np.argmin(low[b]))
        raise ScaleError(
            f"{what}: float weights are solved exactly at one power-of-two scale, and "
            f"{label('weights', b, fine)} = {float(W[b, fine])!r} needs 2**{int(k[b])}, which takes this one to "
            "2**62 or past it (the engines hold weights below 2**62); round the weights to a coarser grid first, "
            "e.g. np.round(w * 2**20) / 2**20, or pass whole numbers"
        )
    Wi = scaled.astype(np.int64)
    return Wi, capacities(Wi, C, k, label), k


def capacities(Wi: np.ndarray, C: np.ndarray, k: np.ndarray, label=single) -> np.ndarray:
    """Each row's capacity C (B,: whole numbers as int64, or floats) at its weights' scale 2**k, rounded down, as
    int64: a capacity at or past the row's total weight Wi (B x n, whole numbers) is the total (every item fits
    either way). Exact: int64 capacities are shifted, floats scaled by ldexp.

    Raises:
        ScaleError: a row's capacity is 2**62 or more at its scale and below its total weight.
    """
    B, n = Wi.shape
    if C.dtype.kind == "f":
        caps = np.floor(np.ldexp(C, k))  # (inf past float64's range: at least the total, then)
    elif not k.any() or int(C.max(initial=0)) < 2 ** (62 - min(int(k.max()), 62)):
        caps = C.astype(np.int64) << k  # exact, below 2**62
    else:  # (large whole capacities at a scale: each in Python integers)
        caps = [int(c) << int(e) for c, e in zip(C.tolist(), k.tolist(), strict=True)]
    if isinstance(caps, np.ndarray) and (n == 0 or int(Wi.max(initial=0)) < MAX_WEIGHT // n):  # totals fit int64
        totals = Wi.sum(axis=1)
        fits = caps >= totals
        out = totals.copy()  # (not np.where with float capacities: totals past 2**53 would round)
        out[~fits] = np.minimum(caps[~fits], MAX_WEIGHT - 1).astype(np.int64)
        bad = ~fits & (caps >= MAX_WEIGHT)
    else:  # (weights near 2**62, or large whole capacities: the totals in Python integers)
        out = np.empty(B, dtype=np.int64)
        bad = np.zeros(B, dtype=bool)
        for b in range(B):
            total = exact_sum(Wi[b])
            cap = total if caps[b] >= total else int(caps[b])  # (a float capacity here is a whole number)
            bad[b] = cap >= MAX_WEIGHT
            out[b] = min(cap, MAX_WEIGHT - 1)
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        at = f"at the weights' exact scale 2**{int(k[b])} it is" if k[b] else "it is"
        raise ScaleError(
            f"{label('capacity', b)} = {C[b].item()!r}: {at} 2**62 or more, and so is their total weight (the "
            "engines hold capacities below 2**62); round the weights to a coarser grid first, or pass whole numbers"
        )
    return out


def whole_values(V: np.ndarray, limit: int = MAX_EXACT_FLOAT_INT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of finite float64 values >= 0 (B x n) as whole numbers where it keeps every row's optimum an exact float64:
    (int64 values V * 2**k, k (B,), ok (B,)), ok where the row's scaled total stays below ``limit`` (2**53: any sum of
    its values is then an exact double at the row's scale). Rows not ok keep their float values (their int64 row here
    is zeros)."""
    k = exponent(V, axis=1) if V.shape[1] else np.zeros(V.shape[0], dtype=np.int64)
    kk = np.minimum(k, 1100)  # (past float64's range every value would overflow: those rows are not ok)
    with np.errstate(over="ignore"):
        scaled = np.ldexp(V, kk[:, None])
        ok = (scaled.sum(axis=1) < limit) & (k <= 1100)
    Vi = np.where(ok[:, None], scaled, 0.0).astype(np.int64)
    return Vi, k, ok
