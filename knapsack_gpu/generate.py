"""Instance families of Pisinger (Kellerer, Pferschy, Pisinger 2004, ch. 5.5) and a few the partitioner meets.

Used by the tests, the benchmarks and the demo. Every generator takes a numpy Generator and returns
(weights int64 (n,), values (n,), capacity int).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Generated = tuple[np.ndarray, np.ndarray, int]


def _capacity(rng: np.random.Generator, w: np.ndarray, fraction: float | None) -> int:
    f = rng.uniform(0.2, 0.8) if fraction is None else fraction
    return int(f * int(w.sum()))


def uncorrelated(rng, n, R=1000, fraction=None) -> Generated:
    w = rng.integers(1, R + 1, n)
    return w, rng.integers(1, R + 1, n), _capacity(rng, w, fraction)


def weakly_correlated(rng, n, R=1000, fraction=None) -> Generated:
    w = rng.integers(1, R + 1, n)
    v = np.maximum(1, w + rng.integers(-(R // 10), R // 10 + 1, n))
    return w, v, _capacity(rng, w, fraction)


def strongly_correlated(rng, n, R=1000, fraction=None) -> Generated:
    w = rng.integers(1, R + 1, n)
    return w, w + R // 10, _capacity(rng, w, fraction)


def inverse_strongly_correlated(rng, n, R=1000, fraction=None) -> Generated:
    v = rng.integers(1, R + 1, n)
    w = v + R // 10
    return w, v, _capacity(rng, w, fraction)


def almost_strongly_correlated(rng, n, R=1000, fraction=None) -> Generated:
    w = rng.integers(1, R + 1, n)
    v = w + R // 10 + rng.integers(-(R // 500), R // 500 + 1, n)
    return w, v, _capacity(rng, w, fraction)


def subset_sum(rng, n, R=1000, fraction=None) -> Generated:
    w = rng.integers(1, R + 1, n)
    return w, w.copy(), _capacity(rng, w, fraction)


def similar_weights(rng, n, R=1000, fraction=None) -> Generated:
    w = rng.integers(100 * R, 100 * R + R // 10 + 1, n)
    return w, rng.integers(1, R + 1, n), _capacity(rng, w, fraction)


def zeros(rng, n, R=1000, fraction=None) -> Generated:
    """Uncorrelated, with about a quarter of the weights and a quarter of the values set to 0."""
    w, v, _ = uncorrelated(rng, n, R)
    w[rng.random(n) < 0.25] = 0
    v[rng.random(n) < 0.25] = 0
    return w, v, _capacity(rng, w, fraction)


def float_values(rng, n, R=1000, fraction=None) -> Generated:
    w = rng.integers(1, R + 1, n)
    return w, rng.uniform(0, R, n), _capacity(rng, w, fraction)


def flop_values(rng, n, R=1000, fraction=None) -> Generated:
    """Integer values up to 1e12, like the partitioner's FLOP estimates: exact only in int64."""
    w = rng.integers(1, R + 1, n)
    return w, rng.integers(1, 10**12, n), _capacity(rng, w, fraction)


def duplicates(rng, n, R=1000, fraction=None) -> Generated:
    """Few distinct (weight, value) pairs, many ties."""
    kinds = max(1, n // 4)
    w0, v0 = rng.integers(1, R + 1, kinds), rng.integers(1, R + 1, kinds)
    pick = rng.integers(0, kinds, n)
    return w0[pick], v0[pick], _capacity(rng, w0[pick], fraction)


# Pisinger 2005, "Where are the hard knapsack problems?" (and Kellerer, Pferschy, Pisinger 2004): classes whose
# items share structure that bounds alone do not see (multiples, divisibility, a concave profit curve).


def _spanner(distribution: Callable[..., Generated], rng, n, R, fraction, v: int, m: int) -> Generated:
    """spanner(v, m): v items of `distribution` with weights in [1, R], weights and values divided by m (rounded up,
    at least 1); each of the n items is one of them, chosen at random, times a multiplier drawn from [1, m]."""
    w0, v0, _ = distribution(rng, v, R)
    w0, v0 = np.maximum(1, -(-w0 // m)), np.maximum(1, -(-v0 // m))
    pick, a = rng.integers(0, v, n), rng.integers(1, m + 1, n)
    w = a * w0[pick]
    return w, a * v0[pick], _capacity(rng, w, fraction)


def spanner_uncorrelated(rng, n, R=1000, fraction=None, v=2, m=10) -> Generated:
    return _spanner(uncorrelated, rng, n, R, fraction, v, m)


def spanner_weakly(rng, n, R=1000, fraction=None, v=2, m=10) -> Generated:
    return _spanner(weakly_correlated, rng, n, R, fraction, v, m)


def spanner_strongly(rng, n, R=1000, fraction=None, v=2, m=10) -> Generated:
    return _spanner(strongly_correlated, rng, n, R, fraction, v, m)


def multiple_strongly_correlated(rng, n, R=1000, fraction=None, d=6) -> Generated:
    """mstr(k1 = 3R/10, k2 = 2R/10, d): strongly correlated with two offsets, k1 where d divides the weight."""
    w = rng.integers(1, R + 1, n)
    v = w + np.where(w % d == 0, 3 * R // 10, 2 * R // 10)
    return w, v, _capacity(rng, w, fraction)


def profit_ceiling(rng, n, R=1000, fraction=None, d=3) -> Generated:
    """pceil(d): value d * ceil(w / d), the weight rounded up to a multiple of d."""
    w = rng.integers(1, R + 1, n)
    return w, d * -(-w // d), _capacity(rng, w, fraction)


def circle(rng, n, R=1000, fraction=None, d=2 / 3) -> Generated:
    """circle(d): value d * sqrt(4R^2 - (w - 2R)^2) rounded (at least 1), on a circle of radius 2R centred at (2R, 0).

    4R^2 - (w - 2R)^2 = w (4R - w) is formed in int64, exactly."""
    w = rng.integers(1, R + 1, n)
    v = np.maximum(1, np.rint(d * np.sqrt(w * (4 * R - w))).astype(np.int64))
    return w, v, _capacity(rng, w, fraction)


def partitioner(rng, n, capacity=10_000, fraction=None) -> Generated:
    """The torch.compile partitioner's scale: quantized memories (units of 1e-4) and float runtimes.

    Weights average 2 * capacity / n, so about half the memory fits.
    """
    w = rng.integers(1, max(2, 4 * capacity // n), n)
    return w, rng.uniform(0, 1000, n), capacity


FAMILIES: dict[str, Callable[..., Generated]] = {
    "uncorrelated": uncorrelated,
    "weakly": weakly_correlated,
    "strongly": strongly_correlated,
    "inverse-strongly": inverse_strongly_correlated,
    "almost-strongly": almost_strongly_correlated,
    "subset-sum": subset_sum,
    "similar-weights": similar_weights,
    "spanner-uncorrelated": spanner_uncorrelated,
    "spanner-weakly": spanner_weakly,
    "spanner-strongly": spanner_strongly,
    "multiple-strongly": multiple_strongly_correlated,
    "profit-ceiling": profit_ceiling,
    "circle": circle,
    "zeros": zeros,
    "float-values": float_values,
    "flop-values": flop_values,
    "duplicates": duplicates,
}
