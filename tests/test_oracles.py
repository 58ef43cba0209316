"""Larger instances against a plain reference DP and against torch's own dp_knapsack."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from oracle import assert_feasible, assert_value

import knapsack_gpu
from knapsack_gpu.generate import FAMILIES
from knapsack_gpu.problem import make_instance
from knapsack_gpu.reduce import reduce
from knapsack_gpu.reference import brute_force, reference_dp, reference_profile
from knapsack_gpu.stages import held_bytes

dp_knapsack = pytest.importorskip("torch._functorch._activation_checkpointing.knapsack").dp_knapsack


@pytest.mark.parametrize("family", ["uncorrelated", "strongly", "subset-sum", "zeros", "float-values", "duplicates"])
def test_n300_against_reference_dp(family, target):
    device, backend = target
    rng = np.random.default_rng(300)
    w, v, cap = FAMILIES[family](rng, 300, R=40)
    best, canonical = reference_dp(w.tolist(), v.tolist(), cap)
    sol = knapsack_gpu.solve(w, v, cap, device=device, backend=backend, canonical=True)
    assert_feasible(sol, w, cap)
    assert_value(sol, v, best)
    if v.dtype.kind != "f":
        assert sol.selected == canonical


def _quantized_instance(rng, n, budget_units):
    """Memories exact in units of 1/10000 and small integer runtimes: dp_knapsack's float32 arithmetic is exact."""
    q = rng.integers(0, 2 * budget_units // max(1, n // 4) + 2, n)
    memory = (q / 10000).tolist()
    runtimes = rng.integers(0, 50, n).astype(float).tolist()
    return q, memory, runtimes, budget_units / 10000


@pytest.mark.parametrize("n, budget", [(5, 30), (40, 500), (200, 3000), (600, 10000)], ids=lambda x: str(x))
def test_matches_torch_dp_knapsack_selection(n, budget, target):
    device, backend = target
    rng = np.random.default_rng(n)
    for _ in range(3):
        q, memory, runtimes, max_memory = _quantized_instance(rng, n, budget)
        value, saved, _ = dp_knapsack(memory, runtimes, max_memory)
        sol = knapsack_gpu.solve(q, runtimes, round(max_memory * 10000), device=device, backend=backend, canonical=True)
        assert sol.value == value
        assert sol.selected == saved  # ties included: bit-table path, strict-improvement backtrack
        assert_feasible(sol, q, budget)


@functools.cache
def _hirschberg_case(family: str, seed: int):
    w, v, cap = FAMILIES[family](np.random.default_rng(seed), 200, R=60)
    return w, v, cap, reference_dp(w.tolist(), v.tolist(), cap)[0]


@pytest.mark.parametrize("extra_rows", [0, 1])
@pytest.mark.parametrize("strategy", ["dense", "pruned"])
def test_forced_hirschberg_is_optimal_and_within_limit(extra_rows, strategy, target):
    """A limit of Hirschberg's minimum plus at most a profile row: not enough for the 200-item bit table."""
    from knapsack_gpu.backends import make_pass
    from knapsack_gpu.memory import Meter, Workspace
    from knapsack_gpu.plan import min_bytes

    device, backend = target
    split = 0
    for seed, family in enumerate(["uncorrelated", "strongly", "float-values", "flop-values", "weakly"]):
        w, v, cap, best = _hirschberg_case(family, seed)
        free = knapsack_gpu.solve(w, v, cap, device=device, backend=backend, strategy=strategy)
        dtype, length, items = getattr(torch, free.stats["dtype"]), free.stats["profile_length"], free.stats["items"]
        if strategy == "pruned":  # how far bounds reduce the instance depends on the memory left for them
            length, items = cap + 1, len(w)
        p = make_pass(backend, torch.device(device), dtype, Workspace(Meter(1, torch.device(device))))
        row_bytes = length * p.itemsize
        limit = min_bytes(p, items, length) + extra_rows * row_bytes + 256 + held_bytes(len(w), device)
        sol = knapsack_gpu.solve(w, v, cap, device=device, backend=backend, memory_limit=limit, strategy=strategy)
        if extra_rows == 0 and strategy == "dense" and limit < free.stats["peak_bytes"]:
            # below the unlimited bit-table plan's peak (the Triton pass's two rows in an 8-byte dtype can outweigh
            # a ragged 200-item table: there the bit table is the smaller plan, and is taken)
            assert sol.stats["strategy"] == "dense-hirschberg", family
            split += 1
        else:  # a ragged table (prefix weights, windows) may fit in a row more than Hirschberg's minimum
            assert sol.stats["strategy"] in (f"{strategy}-hirschberg", f"{strategy}-bits"), family
        assert sol.stats["peak_bytes"] <= limit
        assert_feasible(sol, w, cap)
        assert_value(sol, v, best)
    if extra_rows == 0 and strategy == "dense":
        assert split >= 3, "the limit forced too few Hirschberg splits to test them"


def test_too_small_limit_names_the_bytes_needed(target):
    device, backend = target
    w, v, cap = FAMILIES["uncorrelated"](np.random.default_rng(1), 50, R=1000)
    with pytest.raises(MemoryError, match=r"needs memory_limit >= \d+ bytes"):
        knapsack_gpu.solve(w, v, cap, device=device, backend=backend, memory_limit=1000, strategy="dense")
    if device == "cpu":  # the per-item state alone is over 1,000 bytes of host memory, whatever the plan
        with pytest.raises(MemoryError, match=r"needs memory_limit >= \d+ bytes"):
            knapsack_gpu.solve(w, v, cap, device=device, backend=backend, memory_limit=1000)
    else:  # a CUDA limit counts device memory: a plan that needs none of it (the states engine's) fits
        sol = knapsack_gpu.solve(w, v, cap, device=device, backend=backend, memory_limit=1000)
        assert sol.stats["peak_bytes"] <= 1000
        assert_feasible(sol, w, cap)


def test_huge_capacity_is_solved_by_states_and_a_memory_error_for_a_dense_plan():
    w = [3 * 10**15 + 1, 5 * 10**15 + 2, 7 * 10**15 + 3]  # coprime: no gcd shortcut
    v = [1, 2, 3]
    sol = knapsack_gpu.solve(w, v, 10**16, device="cpu")
    best, optimal = brute_force(w, v, 10**16)
    assert sol.value == best == 3 and sol.selected in optimal and sol.weight <= 10**16
    with pytest.raises(MemoryError, match="bytes"):
        knapsack_gpu.solve(w, v, 10**16, device="cpu", strategy="dense")


@pytest.mark.parametrize("family", ["uncorrelated", "zeros", "float-values", "similar-weights"])
def test_profile_matches_reference_rows(family, target):
    device, backend = target
    rng = np.random.default_rng(7)
    w, v, cap = FAMILIES[family](rng, 30, R=60)
    f = knapsack_gpu.profile(w, v, cap, device=device, backend=backend)
    assert f.shape == (cap + 1,) and f.device.type == device
    expect = reference_profile(w.tolist(), v.tolist(), cap)
    got = f.cpu().tolist()
    if v.dtype.kind == "f":
        np.testing.assert_allclose(got, expect, rtol=1e-12)
    else:
        assert got == expect


def test_profile_with_gcd_and_free_items():
    w, v = [0, 4, 6, 10], [5, 3, 4, 9]
    f = knapsack_gpu.profile(w, v, 21, device="cpu")
    assert f.tolist() == reference_profile(w, v, 21)


def test_flop_sized_values_are_exact_in_int64():
    rng = np.random.default_rng(3)
    w = rng.integers(1, 50, 40)
    v = rng.integers(10**11, 10**12, 40)
    best, canonical = reference_dp(w.tolist(), v.tolist(), 300)
    sol = knapsack_gpu.solve(w, v, 300, device="cpu", canonical=True)
    assert sol.stats["dtype"] == "int64"
    assert sol.value == best and sol.selected == canonical
    # float32 cannot tell these apart: honoured, and documented as possibly inexact.
    approx = knapsack_gpu.solve(w, v.astype(float), 300, device="cpu", dtype=torch.float32)
    assert approx.stats["dtype"] == "float32"
    assert approx.weight <= 300


def test_recorded_half_split_reads_the_right_half_off_its_own_pass():
    """Room for the bit table of the last 60% of the items: B (that 60%) is recorded during the split pass, A
    recurses."""
    from knapsack_gpu.dense.passes.base import BitLayout, Job
    from knapsack_gpu.dense.passes.numpy_pass import NumpyPass
    from knapsack_gpu.memory import Meter, Workspace
    from knapsack_gpu.plan import min_bytes

    w, v, cap, best = _hirschberg_case("uncorrelated", 0)
    free = knapsack_gpu.solve(w, v, cap, device="cpu", strategy="dense")
    m, length = free.stats["items"], free.stats["profile_length"]
    dtype = getattr(torch, free.stats["dtype"])
    p = NumpyPass(torch.device("cpu"), dtype, Workspace(Meter(1, torch.device("cpu"))))
    job = knapsack_gpu.plan.dense(reduce(make_instance(w, v, cap), fixing=False)).job
    k = int(0.6 * m)
    lb = min(cap, int(job.weights[m - k :].sum())) + 1
    table = BitLayout.of(Job(job.weights[m - k :], job.values[m - k :], lb, False, dtype).schedule, lb).nbytes
    limit = min_bytes(p, m, length) + p.record_extra_bytes(length) + table + held_bytes(len(w), "cpu")
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", memory_limit=limit, strategy="dense")
    assert sol.stats["strategy"] == "dense-hirschberg" and sol.stats["peak_bytes"] <= limit
    assert sol.value == best and sol.weight <= cap
    # Halving would run every item at least twice; reading B off its split pass runs B's items once.
    assert sol.stats["item_passes"] < 2 * m
