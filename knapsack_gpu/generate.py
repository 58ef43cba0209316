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
    "zeros": zeros,
    "float-values": float_values,
    "flop-values": flop_values,
    "duplicates": duplicates,
}
