"""Choose the arithmetic the DP runs in, so that it is exact.

float32 holds integers exactly only up to 2**24, so whole-number values run in int32 or int64, picked from an upper
bound on every number the DP can produce. Non-integral values run in float64 unless the caller asks for float32.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .lazy import torch


@cache
def supported() -> tuple:
    """The dtypes a dense DP runs in (a caller may ask for any of them)."""
    return (torch.int32, torch.int64, torch.float32, torch.float64)


@cache
def _numpy() -> dict:
    return {
        torch.int16: np.int16,  # reduced values only (knapsack_gpu/reduced.py): not a dtype a caller may ask for
        torch.int32: np.int32,
        torch.int64: np.int64,
        torch.float32: np.float32,
        torch.float64: np.float64,
    }


def numpy_dtype(dtype: torch.dtype) -> type:
    return _numpy()[dtype]


def dantzig_bound(weights: np.ndarray, values: np.ndarray, capacity: int) -> int:
    """Integer upper bound on the optimum: the LP relaxation, filled greedily by value density.

    Computed in Python integers so that it is exact; a small margin covers float ties in the density sort.
    """
    if weights.size == 0:
        return 0
    order = np.argsort(-(values / np.maximum(weights, 1)), kind="stable")
    total = 0
    room = capacity
    for i in order.tolist():
        w, v = int(weights[i]), int(values[i])
        if w <= room:
            room -= w
            total += v
        else:
            total += v * room // w + 1
            break
    return total + total // 2**20 + len(weights)


def choose_dtype(integral: bool, bound: int | None, requested: torch.dtype | None) -> torch.dtype:
    """Pick the DP dtype.

    Args:
        integral: every value is a whole number.
        bound: upper bound on the magnitude of any number the DP forms (integral values only).
        requested: the caller's ``dtype`` argument, or None for the exact default.

    Returns:
        One of :func:`supported`.

    Raises:
        ValueError: the requested dtype is unsupported, integral for non-integral values, or too narrow for ``bound``.
    """
    if requested is None:
        if not integral:
            return torch.float64
        assert bound is not None
        if bound < 2**31:
            return torch.int32
        if bound < 2**63:
            return torch.int64
        raise ValueError(
            f"the optimum may reach {bound}, beyond int64: exact arithmetic is impossible; "
            "pass dtype=torch.float64 to accept rounding"
        )
    if not isinstance(requested, torch.dtype) or requested not in supported():
        raise ValueError(f"dtype={requested!r} is not supported; use one of {', '.join(map(str, supported()))}")
    if requested.is_floating_point:
        return requested
    if not integral:
        raise ValueError(f"dtype={requested} needs whole-number values; these values have fractional parts")
    limit = 2**31 if requested == torch.int32 else 2**63
    if bound is not None and bound >= limit:
        raise ValueError(f"dtype={requested} would overflow: the DP may reach {bound}; use int64 or dtype=None")
    return requested


def fits(dtype: torch.dtype, bound: int | None) -> bool:
    """Whether an integral dtype can hold ``bound`` (floats always can)."""
    if dtype.is_floating_point or bound is None:
        return True
    return bound <= torch.iinfo(dtype).max
