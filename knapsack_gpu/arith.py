"""Integer arithmetic that cannot wrap.

Weights and capacities are below 2**62 and values below 2**63, but n of them can sum past int64, where numpy wraps
silently. Sums here are exact Python ints; prefix sums saturate at a cap instead of wrapping.
"""

from __future__ import annotations

import numpy as np

INT64_MAX = 2**63 - 1


def exact_sum(a: np.ndarray) -> int | float:
    """The sum of a 1-D array of non-negative numbers: an exact Python int for integers, a float64 otherwise."""
    if a.size == 0:
        return 0 if a.dtype.kind in "iub" else 0.0
    if a.dtype.kind == "f":
        with np.errstate(over="ignore"):  # a sum past float64 is inf, which callers check
            return float(a.sum())
    top = int(a.max())
    if top == 0:
        return 0
    step = max(1, INT64_MAX // top)  # this many entries cannot overflow int64
    if step >= a.size:
        return int(a.sum(dtype=np.int64))
    return sum(int(a[i : i + step].sum(dtype=np.int64)) for i in range(0, a.size, step))


def saturating_cumsum(a: np.ndarray, cap: int) -> np.ndarray:
    """min(prefix sums of ``a``, cap) for int64 entries >= 0 and cap < 2**62, exact (no wrap past int64).

    Entries are clipped to cap first, so every prefix sum up to the first one past cap is at most 2 cap < 2**63;
    whatever numpy computes after that point is replaced by cap.
    """
    s = np.cumsum(np.minimum(a, cap))
    over = np.flatnonzero(s > cap)
    if over.size:
        s[over[0] :] = cap
    return s


def fits_int64(x: int) -> bool:
    return -(2**63) <= x <= INT64_MAX
