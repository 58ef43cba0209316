"""The instance families: each new Pisinger class's defining relation on a seeded instance, and the shape, dtype and
capacity every family promises."""

from __future__ import annotations

import numpy as np
import pytest

from knapsack_gpu.generate import FAMILIES

R = 10_000


def instance(family: str, n: int = 2000, **kw):
    return FAMILIES[family](np.random.default_rng(15), n, R=R, fraction=0.5, **kw)


def two_spanners(w: np.ndarray, v: np.ndarray, m: int = 10) -> list[tuple[int, int]] | None:
    """Two items (w0, v0) such that every item is a * (w0, v0) of one of them with a in [1, m], or None."""
    pairs = set(zip(w.tolist(), v.tolist(), strict=True))
    covers: dict[tuple[int, int], frozenset] = {}
    for a, b in pairs:
        for k in range(1, m + 1):
            if a % k == 0 and b % k == 0:
                s = (a // k, b // k)
                covers[s] = covers.get(s, frozenset()) | {(a, b)}
    for s, cs in covers.items():
        for t, ct in covers.items():
            if s <= t and cs | ct == pairs:
                return [s, t]
    return None


@pytest.mark.parametrize("family", ["spanner-uncorrelated", "spanner-weakly", "spanner-strongly"])
def test_spanner_items_are_multiples_of_two_spanner_items_of_weight_at_most_R_over_m(family):
    w, v, _ = instance(family)
    distinct = len(set(zip(w.tolist(), v.tolist(), strict=True)))
    spanners = two_spanners(w, v)
    assert spanners is not None, f"{family}: no two items span all {distinct} distinct items"
    assert distinct <= 2 * 10
    assert all(1 <= s[0] <= R // 10 and s[1] >= 1 for s in spanners)  # weights in [1, R] divided by m = 10
    if family == "spanner-strongly":
        assert all(s[1] - s[0] in (R // 100, R // 100 + 1) for s in spanners)  # (w, w + R/10) / 10, rounded up
    w, v, _ = instance(family.removeprefix("spanner-"))  # the plain class: the check can fail
    assert two_spanners(w, v) is None


def test_multiple_strongly_correlated_adds_3R_10_where_6_divides_the_weight_else_2R_10():
    w, v, _ = instance("multiple-strongly")
    np.testing.assert_array_equal(v - w, np.where(w % 6 == 0, 3 * R // 10, 2 * R // 10))
    assert (w % 6 == 0).any() and (w % 6 != 0).any()


def test_profit_ceiling_rounds_the_weight_up_to_a_multiple_of_3():
    w, v, _ = instance("profit-ceiling")
    np.testing.assert_array_equal(v, 3 * np.ceil(w / 3).astype(np.int64))
    assert (v % 3 == 0).all() and (v >= w).all() and (v - w <= 2).all()


def test_circle_values_lie_on_two_thirds_of_a_circle_of_radius_2R():
    w, v, _ = instance("circle")
    exact = 2 / 3 * np.sqrt(4.0 * R * R - (w - 2.0 * R) ** 2)
    assert np.abs(v - exact).max() <= 0.5
    assert v.min() >= 1 and v.max() <= round(2 / 3 * np.sqrt(3) * R)  # w = R: sqrt(4R^2 - R^2)


@pytest.mark.parametrize("family", sorted(FAMILIES), ids=str)
@pytest.mark.parametrize("n", [1, 7, 500])
def test_every_family_returns_n_int64_weights_and_a_capacity_within_their_sum(family, n):
    for R_, fraction in ((10, None), (1000, 0.5), (10**6, 0.9)):
        w, v, cap = FAMILIES[family](np.random.default_rng(n), n, R=R_, fraction=fraction)
        assert w.dtype == np.int64 and w.shape == (n,) and (w >= 0).all()
        assert np.asarray(v).shape == (n,)
        assert isinstance(cap, int) and 0 <= cap <= int(w.sum())


def test_the_same_seed_gives_the_same_instance():
    for family in FAMILIES:
        a, b = instance(family, 50), instance(family, 50)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert a[2] == b[2]
