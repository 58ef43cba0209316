"""A counting bound for instances whose values are their weights plus one of at most two offsets.

In the correlated classes v_j = w_j + k_j with k_j taking one value (strongly correlated: +k; inverse strongly: -k;
subset sum: 0) or two (multiple strongly correlated: +0.3R where 6 divides w_j, else +0.2R). Then a solution with
n_g items of group g is worth w(S) + sum_g k_g n_g, and w(S) is at most min(c, the weight of the n_g heaviest items
of each group), while it is at least the weight of the n_g lightest, which must fit. The largest such value over all
counts is an upper bound on the optimum; on multiple strongly correlated instances it is the optimum itself, where
the LP bound is hundreds above it (n = 10,000, R = 1e4: 40632258 and 40611088 exactly, against LP bounds 837 and
more above). It is the surrogate relaxation's cardinality idea with one count per offset, evaluated exactly in
integers over every count (O(n log n)), where combo searches one multiplier.
"""

from __future__ import annotations

import numpy as np


def _best_second(c: int, L1: np.ndarray, H1: np.ndarray, L2: np.ndarray, H2: np.ndarray, k2: int) -> np.ndarray:
    """For every count n1 (rows of L1, H1), the best of min(c, H1 + H2[n2]) + k2 n2 over the n2 with L1 + L2[n2] <= c.

    That sequence in n2 rises while the heaviest items still add more weight than -k2 and the cap c is not reached,
    and falls after: unimodal, so its maximum is one of a few candidate counts."""
    top = np.searchsorted(L2, c - L1, side="right") - 1  # the most items of group 2 that still fit
    heavy = np.diff(H2)  # the n2-th heaviest weight, decreasing
    rising = int(np.searchsorted(-heavy, k2, side="left")) if k2 < 0 else heavy.size  # increments h + k2 > 0
    cap = np.searchsorted(H2, c - H1, side="left")  # first n2 where the heaviest reach the cap
    best = np.full(L1.shape, np.iinfo(np.int64).min, dtype=np.int64)
    for cand in (np.zeros_like(top), top, np.minimum(rising, cap - 1), np.minimum(rising, cap), cap - 1, cap):
        n2 = np.clip(cand, 0, top)
        best = np.maximum(best, np.minimum(c, H1 + H2[n2]) + k2 * n2)
    return best


def offset_bound(p: np.ndarray, w: np.ndarray, c: int) -> int | None:
    """The counting bound above, or None when the values are not weights plus at most two offsets (or the sums
    could pass int64: the caller runs Python integers there and skips this bound)."""
    d = p - w
    lo, hi = int(d.min()), int(d.max())
    if max(abs(lo), abs(hi)) * w.size >= 2**61:
        return None
    groups = [w] if lo == hi else [w[d == lo], w[d == hi]]
    if lo != hi and groups[0].size + groups[1].size != w.size:
        return None
    offsets = [lo] if lo == hi else [lo, hi]
    sums = []
    for g in groups:
        g = np.sort(g)
        sums.append((np.concatenate([[0], np.cumsum(g)]), np.concatenate([[0], np.cumsum(g[::-1])])))
    if len(groups) == 1:
        L, H = sums[0]
        zero = np.zeros(1, dtype=np.int64)
        return int(_best_second(c, zero, zero, L, H, offsets[0]).max())
    (L1, H1), (L2, H2) = sums
    n1 = np.flatnonzero(L1 <= c)
    best = _best_second(c, L1[n1], H1[n1], L2, H2, offsets[1]) + offsets[0] * n1
    return int(best.max())
