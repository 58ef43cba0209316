"""Every plan, forced in turn, against independent oracles: the textbook DP, brute force, and meet in the middle for
capacities no dense row could hold. Pruned and unpruned passes agree on the value; the states list keeps to its
memory limit; canonical=True keeps dp_knapsack's selection while pruning."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from oracle import assert_feasible, assert_value

import knapsack_gpu
from knapsack_gpu.generate import FAMILIES
from knapsack_gpu.reference import brute_force, meet_in_the_middle, reference_dp

STRATEGIES = ["auto", "states", "pruned", "dense"]


@pytest.mark.parametrize("family", sorted(FAMILIES), ids=str)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_plan_against_the_textbook_dp(family, strategy):
    rng = np.random.default_rng(zlib.crc32(f"{family}/{strategy}".encode()))
    for trial in range(40):
        n = int(rng.integers(1, 60))
        # similar-weights multiplies weights by 100: keep its capacities within what the Python oracle runs fast
        w, v, cap = FAMILIES[family](
            rng, n, R=int(rng.choice([10] if family == "similar-weights" else [10, 100, 1000]))
        )
        best, canonical = reference_dp(w.tolist(), v.tolist(), cap)
        sol = knapsack_gpu.solve(w, v, cap, device="cpu", strategy=strategy)
        assert_feasible(sol, w, cap)
        assert_value(sol, v, best)
        if strategy != "states":
            canon = knapsack_gpu.solve(w, v, cap, device="cpu", strategy=strategy, canonical=True)
            assert_feasible(canon, w, cap)
            assert_value(canon, v, best)
            if v.dtype.kind != "f":
                assert canon.selected == canonical, (family, trial)


def test_closed_plan_returns_the_incumbent_only_when_bounds_meet():
    sol = knapsack_gpu.solve([2, 3, 4], [4, 6, 8], 5, device="cpu", strategy="closed")  # greedy is optimal
    assert sol.stats["strategy"] == "closed" and sol.value == 10 and sol.weight == 5
    with pytest.raises(ValueError, match="strategy='closed' needs bounds that meet"):
        knapsack_gpu.solve([3, 4, 5, 6], [4, 5, 7, 8], 10, device="cpu", strategy="closed")


@pytest.mark.parametrize("seed", range(6))
def test_huge_capacities_against_meet_in_the_middle(seed):
    """n <= 36, capacities 1e12..1e15: no dense row fits; states (or bounds) must still be exact."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 37))
    scale = int(rng.choice([10**12, 10**13, 10**15])) // n
    w = rng.integers(scale // 2, scale, n)
    v = w + rng.integers(-scale // 10, scale // 10, n) if seed % 2 else rng.integers(1, 10**6, n)
    v = np.maximum(v, 1)
    cap = int(w.sum()) // 2
    best = meet_in_the_middle(w.tolist(), v.tolist(), cap)
    for strategy in ("auto", "states"):
        sol = knapsack_gpu.solve(w, v, cap, device="cpu", strategy=strategy)
        assert sol.value == best and sol.weight <= cap
        assert sol.stats["strategy"] in ("states", "closed", "reduced")
    with pytest.raises(MemoryError, match="bytes"):
        knapsack_gpu.solve(w, v, cap, device="cpu", strategy="dense", memory_limit=1 << 30)


def test_meet_in_the_middle_oracle_against_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(0, 12))
        w, v = rng.integers(0, 50, n).tolist(), rng.integers(0, 50, n).tolist()
        cap = int(rng.integers(0, 200))
        assert meet_in_the_middle(w, v, cap) == brute_force(w, v, cap)[0]


def test_textbook_dp_oracle_against_brute_force():
    """reference_dp, the oracle of most tests here: brute force's optimum, one of its optimal sets, exact past int64."""
    rng = np.random.default_rng(4)
    for trial in range(60):
        n = int(rng.integers(0, 11))
        w = rng.integers(0, 30, n).tolist()
        v = rng.integers(0, 8, n).tolist()  # small values: many ties for the backtrack to break
        if trial % 3 == 1:
            v = [x / 4 for x in v]
        elif trial % 3 == 2:
            v = [x + 2**70 for x in v]
        cap = int(rng.integers(0, 80))
        best, optimal = brute_force(w, v, cap)
        value, selected = reference_dp(w, v, cap)
        assert value == best and type(value) is type(best), (trial, value, best)
        assert selected in optimal


def test_pruned_and_unpruned_agree_and_pruning_cuts_cells():
    rng = np.random.default_rng(5)
    for family in ("uncorrelated", "weakly", "strongly", "almost-strongly", "float-values", "flop-values"):
        w, v, cap = FAMILIES[family](rng, 400, R=1000)
        pruned = knapsack_gpu.solve(w, v, cap, device="cpu", strategy="pruned")
        full = knapsack_gpu.solve(w, v, cap, device="cpu", strategy="dense")
        assert pruned.weight <= cap and full.weight <= cap
        if v.dtype.kind == "f" and not np.all(v == np.floor(v)):
            assert pruned.value == pytest.approx(full.value, rel=1e-12)
        else:
            assert pruned.value == full.value, family
        assert pruned.stats["cell_updates"] < full.stats["cell_updates"], family


def test_states_list_keeps_to_its_memory_limit():
    rng = np.random.default_rng(8)
    w = rng.integers(10**9, 2 * 10**9, 30)
    v = w + rng.integers(0, 10**7, 30)  # strongly correlated, huge capacity: many undominated states
    cap = int(w.sum()) // 2
    free = knapsack_gpu.solve(w, v, cap, device="cpu", strategy="states")
    assert free.stats["strategy"] == "states" and free.stats["peak_states"] > 100
    assert free.value == meet_in_the_middle(w.tolist(), v.tolist(), cap)
    limit = free.stats["peak_bytes"]
    again = knapsack_gpu.solve(w, v, cap, device="cpu", strategy="states", memory_limit=limit)
    assert again.value == free.value and again.stats["peak_bytes"] <= limit
    with pytest.raises(MemoryError, match="states list needs"):
        knapsack_gpu.solve(w, v, cap, device="cpu", strategy="states", memory_limit=limit // 4)


def test_strategy_is_validated_and_read_from_the_environment(monkeypatch):
    with pytest.raises(ValueError, match="strategy='bogus'"):
        knapsack_gpu.solve([1, 2], [3, 4], 2, strategy="bogus")
    monkeypatch.setenv("KNAPSACK_GPU_STRATEGY", "dense")
    assert knapsack_gpu.solve([3, 4, 5], [4, 5, 7], 8, device="cpu").stats["strategy"].startswith("dense")
    monkeypatch.setenv("KNAPSACK_GPU_STRATEGY", "nope")
    with pytest.raises(ValueError, match="KNAPSACK_GPU_STRATEGY='nope'"):
        knapsack_gpu.solve([3, 4, 5], [4, 5, 7], 8, device="cpu")


def test_states_cannot_be_canonical():
    with pytest.raises(ValueError, match="canonical"):
        knapsack_gpu.solve([3, 4, 5], [4, 5, 7], 8, device="cpu", strategy="states", canonical=True)


@pytest.mark.parametrize("seed", range(4))
def test_states_ops_agree_between_numpy_and_torch(seed):
    """The states engine runs numpy ops on the CPU and torch ops on CUDA: the torch path, run here on CPU tensors
    from the first state on, must find the same optimum and a selection worth it."""
    import torch

    from knapsack_gpu.memory import Meter
    from knapsack_gpu.states import StatesStats, solve_items

    rng = np.random.default_rng(seed)
    w = rng.integers(10**6, 10**9, 40)
    v = (w + rng.integers(0, 10**6, 40)) if seed % 2 else rng.integers(1, 10**9, 40)
    cap = int(w.sum()) // 3
    best = meet_in_the_middle(w.tolist(), v.tolist(), cap)
    updates = []
    for place in ({"binding": "python"}, {"device": torch.device("cpu"), "device_states": 0}):
        meter, st = Meter(1 << 30, torch.device("cpu")), StatesStats()
        value, chosen = solve_items(v, w, cap, meter=meter, stats=st, **place)
        assert value == best == int(v[chosen].sum()) and int(w[chosen].sum()) <= cap
        updates.append(st.state_updates)
    assert updates[0] == updates[1] > 0  # the same search, op for op
