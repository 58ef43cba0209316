"""The partitioner's knapsack inputs: validation and dp_knapsack's quantization, shared by
:mod:`knapsack_gpu.partitioner` and :mod:`knapsack_gpu.pareto`.

PyTorch's solvers take (memory: list[float], runtimes: list[float], max_memory: float) and quantize memory with
S = 10000 (round(m * S)). Quantized weights can be as large as the caller's floats; here they are clamped where that
changes nothing (an item heavier than the budget never fits; a budget past the total weight fits everything), so any
finite input stays within the solver's 2**62 limit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

ROUNDINGS = ("nearest", "safe")


def _is_number(x: object) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float, np.integer, np.floating))


def check(memory: Sequence[float], runtimes: Sequence[float], max_memory: float) -> None:
    """Raise TypeError/ValueError naming the argument (``memory``, ``runtimes`` or ``max_memory``) and the index."""
    if len(memory) != len(runtimes):
        raise ValueError(f"memory has {len(memory)} entries but runtimes has {len(runtimes)}: they must match")
    for name, seq in (("memory", memory), ("runtimes", runtimes)):
        for i, x in enumerate(seq):
            if not _is_number(x):
                raise TypeError(f"{name}[{i}] = {x!r} is not a number")
            if not math.isfinite(x):
                raise ValueError(f"{name}[{i}] = {x}: {name} must be finite")
            if x < 0:
                raise ValueError(f"{name}[{i}] = {x}: {name} must be >= 0")
    if not _is_number(max_memory):
        raise TypeError(f"max_memory = {max_memory!r} is not a number")
    if not math.isfinite(max_memory) or max_memory < 0:
        raise ValueError(f"max_memory = {max_memory}: it must be a finite number >= 0")
    try:
        total = math.fsum(float(r) for r in runtimes)
    except OverflowError:
        total = math.inf
    if not math.isfinite(total):
        raise ValueError("runtimes sum past the largest float64 (about 1.8e308); scale them down")


def _nearest(x: float, scale: int) -> int | None:
    """dp_knapsack's round(x * scale), or None where the float product overflows."""
    product = x * scale
    return round(product) if math.isfinite(product) else None


def quantize(memory: Sequence[float], max_memory: float, scale: int, rounding: str) -> tuple[list[int], int]:
    """Integer weights and budget.

    "nearest" is dp_knapsack's own: Python's round(m * scale). "safe" rounds weights up and the budget down in exact
    rational arithmetic, so a plan within the integer budget is within the float budget too.

    Raises:
        ValueError: an unknown rounding, or ``max_memory * scale`` past float64 in "nearest" mode.
    """
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding={rounding!r}; choose 'nearest' (dp_knapsack's) or 'safe'")
    if rounding == "nearest":
        budget = _nearest(max_memory, scale)
        if budget is None:
            raise ValueError(f"max_memory = {max_memory}: times scale {scale} it is past the largest float64")
        weights = [_nearest(m, scale) for m in memory]
    else:
        s = Fraction(scale)
        budget = math.floor(Fraction(max_memory) * s)
        weights = [math.ceil(Fraction(m) * s) for m in memory]
    heavy = budget + 1
    weights = [heavy if w is None or w > budget else w for w in weights]  # never fits either way
    return weights, min(budget, sum(weights))  # past the total, every item fits either way


def values(runtimes: Sequence[float]) -> np.ndarray:
    """Whole-number runtimes (the "flops" estimator's, up to ~1e12) as exact int64; the others as float64."""
    if all(float(r).is_integer() and abs(r) < 2**62 for r in runtimes):
        return np.array([int(r) for r in runtimes], dtype=np.int64)
    return np.asarray(runtimes, dtype=np.float64)
