"""The instance families: each new Pisinger class's defining relation on a seeded instance, and the shape, dtype and
capacity every family promises."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import knapsack_gpu
from knapsack_gpu.formats import read_instance
from knapsack_gpu.generate import FAMILIES, jooken, jooken_parameters
from knapsack_gpu.reference import brute_force

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


# Jooken, Leyman, De Causmaecker (EJOR 2022): generate.jooken follows the rules of the authors' generator.cpp.


def jooken_rules(n, c, g, f, eps, s) -> tuple[int, int, list[np.ndarray]]:
    """(items per big group, small items, the values int(base_j + u), u = 1..s, each group's items may take)."""
    per = (n - int(n * f)) // (g - 1)
    bases = [(1.0 / 2.0**j + eps) * float(c) for j in range(1, g)]
    return per, n - per * (g - 1), [np.array([int(b + u) for u in range(1, s + 1)]) for b in bases]


def assert_jooken_structure(w, v, cap, n, c, g, f, eps, s):
    per, small, allowed = jooken_rules(n, c, g, f, eps, s)
    assert w.dtype == np.int64 and v.dtype == np.int64 and w.shape == v.shape == (n,) and cap == c
    for j, values in enumerate(allowed):
        wj, vj = w[j * per : (j + 1) * per], v[j * per : (j + 1) * per]
        assert np.isin(wj, values).all() and np.isin(vj, values).all(), f"group {j + 1}"
    ws, vs = w[per * (g - 1) :], v[per * (g - 1) :]
    assert len(ws) == small >= int(n * f)
    assert ((1 <= ws) & (ws <= s) & (1 <= vs) & (vs <= s)).all()
    big_w, big_v = w[: per * (g - 1)], v[: per * (g - 1)]
    if len(big_w):  # the efficiency band: profit and weight of a big item differ by at most the noise range
        assert np.abs(big_v - big_w).max() <= s - 1
        assert np.abs(big_v / big_w - 1).max() <= (s - 1) / big_w.min()


JOOKEN_CASES = [  # (n, c, g, f, eps, s): the published ranges, then scaled down with the same structure
    (1000, 10**10, 10, 0.1, 1e-4, 200),
    (800, 10**10, 14, 0.3, 1e-5, 100),
    (1200, 10**6, 6, 0.3, 0.0, 200),
    (400, 10**8, 2, 0.2, 0.1, 100),
    (30, 1000, 4, 0.2, 0.01, 10),
    (17, 64, 5, 0.0, 0.0, 3),
]


@pytest.mark.parametrize("case", JOOKEN_CASES, ids=str)
def test_jooken_groups_noise_and_small_items_follow_the_generators_rules(case):
    n, c, g, f, eps, s = case
    w, v, cap = jooken(np.random.default_rng(3), n, c, g, f, eps, s)
    assert_jooken_structure(w, v, cap, *case)
    per, small, allowed = jooken_rules(*case)
    if per >= 50:  # the noise covers its range: both ends drawn, and about as often
        big = w[: per * (g - 1)] - np.repeat([a[0] - 1 for a in allowed], per)
        assert big.min() == 1 and big.max() == s
        assert abs(big.mean() - (s + 1) / 2) < 0.1 * s


def test_jooken_the_same_seed_gives_the_same_instance_and_another_seed_another():
    a, b, d = (jooken(np.random.default_rng(seed), 300, 10**8, 10, 0.1, 1e-5, 100) for seed in (7, 7, 8))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], d[0])


def test_jooken_edge_parameters():
    rng = np.random.default_rng(0)
    w, v, _ = jooken(rng, 40, 2**10, 4, 0.25, 0.0, 5)  # eps = 0: bases exactly c / 2^j
    assert_jooken_structure(w, v, 2**10, 40, 2**10, 4, 0.25, 0.0, 5)
    assert set((w[:30] - np.repeat([512, 256, 128], 10)).tolist()) <= set(range(1, 6))
    w, v, _ = jooken(rng, 5, 10**6, 6, 0.0, 0.001, 100)  # groups of one item, no small item
    assert_jooken_structure(w, v, 10**6, 5, 10**6, 6, 0.0, 0.001, 100)
    w, v, _ = jooken(rng, 50, 10**6, 5, 0.2, 0.01, 1)  # s = 1: every noise is 1, a group's items are identical
    assert_jooken_structure(w, v, 10**6, 50, 10**6, 5, 0.2, 0.01, 1)
    np.testing.assert_array_equal(w, v)
    assert len(set(w[:10].tolist())) == 1 and (w[40:] == 1).all()
    w, v, _ = jooken(rng, 9, 100, 3, 1.0, 0.0, 4)  # f = 1: only small items
    assert ((1 <= w) & (w <= 4)).all() and ((1 <= v) & (v <= 4)).all()
    w, v, _ = jooken(rng, 7, 1000, 4, 0.0, 0.0, 2)  # 7 // 3 = 2 per group: the one left over is small
    assert_jooken_structure(w, v, 1000, 7, 1000, 4, 0.0, 0.0, 2)
    assert w[-1] <= 2
    w, v, cap = jooken(rng, 0, 1000, 3, 0.1, 0.0, 10)
    assert w.shape == v.shape == (0,) and cap == 1000
    for bad in ({"g": 1}, {"s": 0}, {"f": 1.5}, {"eps": -0.1}, {"c": -1}):
        with pytest.raises(ValueError):
            jooken(rng, 10, **{"c": 100, "g": 3, "f": 0.1, "eps": 0.0, "s": 5, **bad})


def test_jooken_parameters_parse_the_shipped_names():
    assert jooken_parameters("jooken/n_800_c_10000000000_g_14_f_0.3_eps_1e-05_s_200.in") == {
        "n": 800, "c": 10**10, "g": 14, "f": 0.3, "eps": 1e-05, "s": 200
    }  # fmt: skip
    with pytest.raises(ValueError):
        jooken_parameters("knapPI_1_100_1000_1")


def shipped_jooken() -> list[Path]:
    """The shipped instances (../shared/instances/jooken beside the checkout or a worktree's, or
    $KNAPSACK_INSTANCES/jooken), or none."""
    repo = Path(__file__).resolve().parents[1]
    roots = [
        os.environ.get("KNAPSACK_INSTANCES"),
        repo.parent / "shared/instances",
        repo.parents[1] / "shared/instances",
    ]
    for root in roots:
        if root and (Path(root) / "jooken").is_dir():
            return sorted((Path(root) / "jooken").glob("n_*.in"))
    return []


def test_jooken_every_shipped_instance_obeys_the_rules_and_matches_the_statistics():
    """Item by item, the 30 shipped instances obey the rules (groups in order, sizes, bases, truncation, noise), and
    their small items' totals lie where the generator's do. The draws themselves (std::mt19937 seeded from
    std::random_device) cannot be reproduced."""
    files = shipped_jooken()
    if not files:
        pytest.skip("the shipped Jooken instances are not here")
    for path in files:
        inst = read_instance(path, "jooken")
        p = jooken_parameters(path.name)
        w, v = np.asarray(inst.weights, dtype=np.int64), np.asarray(inst.values, dtype=np.int64)
        assert_jooken_structure(w, v, inst.capacity, **p)
        ours = jooken(np.random.default_rng(0), **p)
        assert_jooken_structure(*ours, **p)
        per, small, _ = jooken_rules(**p)
        s = p["s"]
        mean, sd = small * (s + 1) / 2, (small * (s * s - 1) / 12) ** 0.5  # a sum of `small` draws from U[1, s]
        for total in (w[-small:].sum(), v[-small:].sum(), ours[0][-small:].sum(), ours[1][-small:].sum()):
            assert abs(total - mean) < 5 * sd, path.name
        big = per * (p["g"] - 1)  # profit - weight of a big item: u - u', symmetric around 0 in [-(s - 1), s - 1]
        for d in (v[:big] - w[:big], ours[1][:big] - ours[0][:big]):
            assert abs(d.mean()) < 5 * s / (6 * big) ** 0.5 and np.abs(d).max() <= s - 1


@pytest.mark.parametrize(
    "case",
    [(12, 1000, 4, 0.25, 0.01, 10), (14, 200, 3, 0.3, 0.0, 5), (12, 10**6, 5, 0.1, 1e-4, 100),
     (13, 10**10, 5, 0.3, 1e-5, 300), (10, 64, 6, 0.0, 0.0, 3)],
    ids=str,
)  # fmt: skip
def test_jooken_tiny_instances_solve_to_the_brute_force_optimum(case):
    for seed in range(3):
        w, v, cap = jooken(np.random.default_rng(seed), *case)
        best, _ = brute_force(w.tolist(), v.tolist(), cap)
        sol = knapsack_gpu.solve(w, v, cap, device="cpu")
        chosen = np.asarray(sol.selected, dtype=np.int64)
        assert sol.value == best and int(v[chosen].sum()) == best and int(w[chosen].sum()) <= cap, (case, seed)
