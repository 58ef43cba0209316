"""Instance families of Pisinger (Kellerer, Pferschy, Pisinger 2004, ch. 5.5) and a few the partitioner meets, and
Jooken, Leyman and De Causmaecker's class (EJOR 2022).

Used by the tests, the benchmarks and the demo. Every generator takes a numpy Generator and returns
(weights int64 (n,), values (n,), capacity int).
"""

from __future__ import annotations

import re
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


# Jooken, Leyman, De Causmaecker, "A new class of hard problem instances for the 0-1 knapsack problem", EJOR 301(3)
# 2022. The rules below are those of the authors' generator.cpp (github.com/JorikJooken/knapsackProblemInstances),
# read as a reference, and every one of the 30 shipped instances in ../shared/instances/jooken obeys them item by item
# (tests/test_generate.py checks it where the instances are present). The authors seeded std::mt19937 from
# std::random_device, so their draws cannot be reproduced: only the rules and the statistics can.


def jooken(rng, n, c=10**6, g=6, f=0.1, eps=0.0, s=100) -> Generated:
    """Jooken's class: g - 1 groups of near-identical big items and a fraction f of small items, capacity c.

    - The generator's parameter g counts the small items as a group: there are g - 1 groups of big items.
    - small = int(n * f) (the double product truncated), per = (n - small) // (g - 1) items in each big group; the
      n - (g - 1) * per left over (at least `small`) are the small items.
    - Group j = 1..g-1 has the base (1/2^j + eps) * c (float64); each item draws two noises u, u' uniform in [1, s],
      profit int(base + u) and weight int(base + u') (float64 sums, truncated, as the C++ casts do).
    - A small item has profit and weight uniform in [1, s], independently.
    - The capacity is c. Items come in the generator's order: group 1, ..., group g - 1, then the small items.
      Each item draws its profit noise first, then its weight noise (the authors' order; their RNG differs).

    Any size works, e.g. n = 20, c = 1000, g = 4, s = 10 for brute-force tests: the same structure, scaled down.
    Bases are exact while c < 2^53.

    Args:
        rng: numpy Generator.
        n: number of items >= 0.
        c: capacity >= 0, the scale of the big items (group j weighs about c / 2^j + eps * c).
        g: >= 2; g - 1 big groups.
        f: fraction of small items, 0 <= f <= 1.
        eps: >= 0, every base's offset as a fraction of c (the authors use 0 and 1e-5 .. 0.1).
        s: >= 1, the noise range (the authors use 100, 200, 300).

    Returns:
        (weights int64, profits int64, capacity c).
    """
    if n < 0 or c < 0 or g < 2 or not 0 <= f <= 1 or eps < 0 or s < 1:
        raise ValueError(f"jooken: need n, c >= 0, g >= 2, 0 <= f <= 1, eps >= 0, s >= 1; got {n, c, g, f, eps, s}")
    small = int(n * f)
    per = (n - small) // (g - 1)
    noise = rng.integers(1, s + 1, (n, 2))  # per item: profit noise, then weight noise
    base = np.zeros(n)
    big = per * (g - 1)
    base[:big] = np.repeat([(1.0 / 2.0**j + eps) * float(c) for j in range(1, g)], per)
    v = (base + noise[:, 0]).astype(np.int64)  # truncation toward zero, as (int) in C++ (all positive here)
    w = (base + noise[:, 1]).astype(np.int64)
    return w, v, int(c)


_JOOKEN_NAME = re.compile(r"n_(\d+)_c_(\d+)_g_(\d+)_f_([0-9.e+-]+)_eps_([0-9.e+-]+)_s_(\d+)")


def jooken_parameters(name: str) -> dict:
    """The generator's parameters from a shipped instance's name (a ".in" suffix or a folder is fine), e.g.
    "n_1000_c_10000000000_g_10_f_0.1_eps_0.0001_s_200": {"n", "c", "g", "f", "eps", "s"}, for ``jooken(rng, **p)``."""
    m = _JOOKEN_NAME.search(name)
    if m is None:
        raise ValueError(f"not a Jooken instance name: {name!r}")
    n, c, g, f, eps, s = m.groups()
    return {"n": int(n), "c": int(c), "g": int(g), "f": float(f), "eps": float(eps), "s": int(s)}


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
