"""Plain, obviously right reference solvers that the tests compare the fast paths against.

Written for clarity, not speed: Python numbers, no reductions, no tricks (the textbook DP steps a whole row at a time
through numpy's object arrays, whose loops add and compare the Python numbers themselves).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations


def brute_force(weights: Sequence[int], values: Sequence[float], capacity: int) -> tuple[float, list[list[int]]]:
    """Enumerate every subset (n <= ~20).

    Returns:
        (the optimum, every optimal subset as an ascending index list).
    """
    n = len(weights)
    best = 0
    optimal: list[list[int]] = [[]]
    for k in range(1, n + 1):
        for subset in combinations(range(n), k):
            if sum(weights[i] for i in subset) > capacity:
                continue
            value = sum(values[i] for i in subset)
            if value > best:
                best, optimal = value, [list(subset)]
            elif value == best:
                optimal.append(list(subset))
    return best, optimal


def reference_dp(weights: Sequence[int], values: Sequence[float], capacity: int) -> tuple[float, list[int]]:
    """The textbook full-table DP with dp_knapsack's backtrack: take item i only if it strictly improves.

    Row i + 1 is row i with ``row[c] = max(prev[c], prev[c - w] + v)`` for every c >= w at once. The table holds Python
    numbers (dtype=object: numpy only runs the loop), so sums are exact for any int, as a list of lists was, 5x faster.

    Returns:
        (the optimum, the canonical selection: among optimal sets, the one that avoids later items first).
    """
    import numpy as np

    n = len(weights)
    table = np.zeros((n + 1, capacity + 1), dtype=object)
    for i in range(n):
        w, v = weights[i], values[i]
        table[i + 1] = table[i]
        if w <= capacity:
            table[i + 1, w:] = np.maximum(table[i, w:], table[i, : capacity + 1 - w] + v)
    selected = []
    c = capacity
    for i in range(n, 0, -1):
        if table[i, c] > table[i - 1, c]:
            selected.append(i - 1)
            c -= weights[i - 1]
    selected.reverse()
    return table[n, capacity], selected


def reference_profile(weights: Sequence[int], values: Sequence[float], capacity: int) -> list:
    """The best value for every capacity 0..capacity: the last row of the textbook table."""
    row = [0] * (capacity + 1)
    for w, v in zip(weights, values, strict=False):
        row = [row[c] if c < w else max(row[c], row[c - w] + v) for c in range(capacity + 1)]
    return row


def meet_in_the_middle(weights: Sequence[int], values: Sequence[int], capacity: int) -> int:
    """The optimum for any capacity, n <= ~40: every subset of each half (2**(n/2) each), one half sorted by weight
    with a running best value, the other half looked up in it. Integer weights and values; sums must fit int64.
    """
    import numpy as np

    n = len(weights)
    half = n // 2

    def subsets(w, v):
        sw, sv = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        for wi, vi in zip(w, v, strict=True):
            sw, sv = np.concatenate([sw, sw + wi]), np.concatenate([sv, sv + vi])
        return sw, sv

    aw, av = subsets(weights[:half], values[:half])
    bw, bv = subsets(weights[half:], values[half:])
    order = np.argsort(bw, kind="stable")
    bw, bv = bw[order], np.maximum.accumulate(bv[order])
    fits = aw <= capacity
    k = np.searchsorted(bw, capacity - aw[fits], side="right") - 1  # always >= 0: the empty subset weighs 0
    return int((av[fits] + bv[k]).max())
