"""Every instance family against brute force (n <= 16): value, feasibility and the canonical selection."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from oracle import assert_feasible, assert_value

import knapsack_gpu
from knapsack_gpu.generate import FAMILIES
from knapsack_gpu.reference import brute_force, reference_dp


@pytest.mark.parametrize("family", sorted(FAMILIES), ids=str)
def test_families_against_brute_force(family, target):
    device, backend = target
    rng = np.random.default_rng(zlib.crc32(family.encode()))
    for trial in range(25):
        n = int(rng.integers(1, 17))
        w, v, cap = FAMILIES[family](rng, n, R=int(rng.choice([10, 100, 1000])))
        best, optimal = brute_force(w.tolist(), v.tolist(), cap)
        sol = knapsack_gpu.solve(w, v, cap, device=device, backend=backend)
        assert_feasible(sol, w, cap)
        assert_value(sol, v, best)
        canon = knapsack_gpu.solve(w, v, cap, device=device, backend=backend, canonical=True)
        assert_feasible(canon, w, cap)
        assert_value(canon, v, best)
        if v.dtype.kind != "f":
            assert sol.selected in optimal
            # canonical=True breaks ties exactly as torch's dp_knapsack (strict improvement).
            assert canon.selected == reference_dp(w.tolist(), v.tolist(), cap)[1], f"trial {trial}"


@pytest.mark.parametrize(
    "w, v, cap, best",
    [
        ([], [], 0, 0),
        ([], [], 10, 0),
        ([3, 4], [5, 6], 0, 0),
        ([0, 3], [5, 6], 0, 5),
        ([1, 2, 3], [1, 2, 3], 100, 6),  # all fit
        ([5, 6], [7, 8], 4, 0),  # none fit
        ([2, 2, 2, 2], [3, 3, 3, 3], 5, 6),  # duplicates
        ([4], [0], 4, 0),
        ([0, 0], [0, 0], 0, 0),
    ],
    ids=["empty", "empty-cap", "cap0", "cap0-free", "all-fit", "none-fit", "duplicates", "zero-value", "all-zero"],
)
def test_edge_cases(w, v, cap, best, target):
    device, backend = target
    sol = knapsack_gpu.solve(w, v, cap, device=device, backend=backend, canonical=True)
    assert sol.value == best
    assert_feasible(sol, w, cap)
    assert sol.selected == reference_dp(w, v, cap)[1]


def test_zero_value_items_never_taken_and_free_items_always(target):
    device, backend = target
    sol = knapsack_gpu.solve([0, 3, 0, 2, 5], [7, 0, 0, 4, 9], 7, device=device, backend=backend)
    assert sol.selected == [0, 3, 4]
    assert sol.value == 20


def test_result_types_follow_the_values(target):
    device, backend = target
    ints = knapsack_gpu.solve([1, 2], [3, 4], 2, device=device, backend=backend)
    assert isinstance(ints.value, int) and ints.value == 4
    whole_floats = knapsack_gpu.solve([1, 2], [3.0, 4.0], 2, device=device, backend=backend)
    assert isinstance(whole_floats.value, int) and whole_floats.stats["dtype"] == "int64"  # the states engine
    dense = knapsack_gpu.solve([1, 2], [3.0, 4.0], 2, device=device, backend=backend, strategy="dense")
    assert isinstance(dense.value, int) and dense.stats["dtype"] == "int32"  # the narrowest exact DP dtype
    for strategy in ("auto", "dense"):
        floats = knapsack_gpu.solve([1, 2], [3.5, 4.25], 3, device=device, backend=backend, strategy=strategy)
        assert isinstance(floats.value, float) and floats.value == 7.75 and floats.stats["dtype"] == "float64"
