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

# Whether searches use the bound (tests turn it off to reach the extras it would make needless).
COUNTING = True


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


def counted_np(c: int, g1: np.ndarray, g2: np.ndarray, k1: int, k2: int) -> int:
    """The counting bound over two groups of sorted weights (ascending) with offsets k1, k2; g1 empty: one group
    (numpy; :func:`.kernels.counted_c` is the compiled twin)."""
    L1, H1 = _prefix(g1)
    L2, H2 = _prefix(g2)
    n1 = np.flatnonzero(L1 <= c)
    return int((_best_second(c, L1[n1], H1[n1], L2, H2, k2) + k1 * n1).max())


def _prefix(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weights of the n lightest and of the n heaviest items, n = 0..size."""
    return np.concatenate([[0], np.cumsum(g)]), np.concatenate([[0], np.cumsum(g[::-1])])


def offset_bound(p: np.ndarray, w: np.ndarray, c: int, counted=counted_np) -> int | None:
    """The counting bound above, or None when the values are not weights plus at most two offsets, are the weights
    themselves (or the sums could pass int64: the caller runs Python integers there and skips this bound).
    ``counted``: the binding's :func:`counted_np` (the weights are sorted here, in numpy). The compiled binding's
    set-up computes it in :func:`.kernels.offset_bound_c`."""
    d = p - w
    lo, hi = int(d.min()), int(d.max())
    if max(abs(lo), abs(hi)) * w.size >= 2**61:
        return None
    if lo == hi == 0:  # a subset sum: at most c, which the LP bound gives already
        return None
    # int32 sorts in half the time of int64 (numpy's SIMD sort), where the weights fit
    sort = _sort32 if int(w.max()) < 2**31 else np.sort
    if lo == hi:
        return counted(c, w[:0], sort(w), 0, lo)
    low = d == lo
    g1, g2 = w[low], w[d == hi]
    if g1.size + g2.size != w.size:
        return None
    return counted(c, sort(g1), sort(g2), lo, hi)


def _sort32(a: np.ndarray) -> np.ndarray:
    return np.sort(a.astype(np.int32)).astype(np.int64)
