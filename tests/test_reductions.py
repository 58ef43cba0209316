"""Each exact reduction fires where it should and keeps the optimum and the canonical selection."""

from __future__ import annotations

import numpy as np
import torch

import knapsack_gpu
import knapsack_gpu.stages
from knapsack_gpu.plan import dense
from knapsack_gpu.problem import make_instance
from knapsack_gpu.reduce import reduce
from knapsack_gpu.reference import brute_force, reference_dp


def _solve_and_check(w, v, cap, **kw):
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", canonical=True, **kw)
    best, canonical = reference_dp(list(w), list(v), cap)
    assert sol.value == best
    assert sol.selected == canonical
    assert sol.weight <= cap
    return sol


def test_heavy_zero_weight_zero_value():
    sol = _solve_and_check([50, 0, 3, 4, 2], [9, 5, 0, 6, 7], 6)
    assert {"heavy", "zero-weight", "zero-value"} <= set(sol.stats["reductions"])
    assert sol.selected == [1, 3, 4]


def test_take_all_skips_the_dp():
    sol = _solve_and_check([1, 2, 3], [4, 5, 6], 6)
    assert sol.stats["strategy"] == "reduced" and "take-all" in sol.stats["reductions"]
    assert sol.stats["cell_updates"] == 0


def test_gcd_divides_weights_and_capacity():
    sol = _solve_and_check([6, 9, 15, 21], [5, 7, 11, 14], 32)
    assert "gcd" in sol.stats["reductions"]
    assert sol.stats["profile_length"] <= 32 // 3 + 1


def test_complement_is_shorter_and_canonical():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 12))
        w = rng.integers(1, 20, n)
        v = rng.integers(0, 6, n)  # small values: many ties
        cap = int(w.sum()) - int(rng.integers(1, max(2, w.sum() // 3)))
        red = reduce(make_instance(w, v, cap), fixing=False)
        sol = _solve_and_check(w.tolist(), v.tolist(), cap, strategy="dense")
        if red.n and dense(red).job.cover:
            assert "complement" in sol.stats["reductions"]
            assert sol.stats["profile_length"] < cap + 1


def test_complement_through_hirschberg():
    rng = np.random.default_rng(1)
    w = rng.integers(1, 100, 300)
    v = rng.integers(1, 100, 300)
    cap = int(w.sum()) - 400
    host = knapsack_gpu.stages.HOST_BYTES_PER_ITEM * len(w)
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", memory_limit=8_000 + host, strategy="dense")  # 4 rows of 401
    assert "complement" in sol.stats["reductions"] and sol.stats["strategy"] == "dense-hirschberg"
    assert sol.value == reference_dp(w.tolist(), v.tolist(), cap)[0]
    assert sol.weight <= cap


def test_dtype_follows_the_bound():
    assert reduce(make_instance([1, 2], [2**29, 2**29], 3)).dtype == torch.int32
    assert reduce(make_instance([1, 2], [2**30, 2**30], 3), whole_profile=True).dtype == torch.int64
    assert knapsack_gpu.solve([1, 2], [2**30, 2**30], 3).value == 2**31  # taken whole: no DP, exact anyway
    # The Dantzig bound, not the sum of all values, decides: only one of these fits.
    assert reduce(make_instance([5, 5, 5], [2**30, 2**30, 2**30], 5)).dtype == torch.int32
    assert reduce(make_instance([1, 2], [0.5, 1], 3)).dtype == torch.float64
    assert reduce(make_instance([1, 2], [1, 2], 3), torch.float32).dtype == torch.float32


def test_int32_boundary_is_exact():
    # Optimum just below 2**31 in int32, just above in int64; both exact.
    for top in (2**31 - 2, 2**31 + 3):
        w, v = [3, 4, 5, 6], [top // 2, top // 2, top - top // 2, 7]
        sol = knapsack_gpu.solve(w, v, 9, device="cpu")
        assert sol.value == brute_force(w, v, 9)[0]


def test_int32_when_only_the_bound_fits_although_the_value_sum_does_not():
    """All values sum past 2**31 but at most 2.5 items fit: int32, and prefix sums past it must not break the pass."""
    w, v = [10] * 10, [2**29 + i for i in range(10)]
    for backend in ("numpy", "torch"):
        sol = knapsack_gpu.solve(w, v, 25, device="cpu", backend=backend, strategy="pruned")
        assert sol.stats["dtype"] == "int32"
        assert sol.value == 2 * 2**29 + 17
