"""Triton kernels bit for bit against the torch pass (profiles and decision bits), through solve() against oracles.

Without a GPU these run on CPU tensors in Triton's interpreter (TRITON_INTERPRET=1, set in conftest.py), at small
sizes; block sizes are shrunk so that tiles, halos and the persistent loop are all crossed.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from conftest import HAS_CUDA, HAS_TRITON, TRITON_DEVICE
from oracle import assert_feasible, assert_value

import knapsack_gpu
import knapsack_gpu.stages
from knapsack_gpu.dense.passes.base import BitLayout
from knapsack_gpu.memory import Meter, Workspace
from knapsack_gpu.plan import dense, min_bytes, single_pass_bytes
from knapsack_gpu.problem import make_instance
from knapsack_gpu.reduce import reduce
from knapsack_gpu.reference import brute_force, reference_dp
from knapsack_gpu.testing import pairwise, random_job, run_pass

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed")

DEVICE = TRITON_DEVICE
DTYPES = [torch.int32, torch.int64, torch.float32, torch.float64]


PATHS = ["sweep", "item", "tile", "mixed"]
SLOW = pytest.mark.slow

# (items, profile length) of the bit-for-bit jobs. The default suite stops at 40 items over 130 cells: five bit planes,
# several tile groups, three chunks, five item blocks and more tiles than the two persistent programs, on every path.
# The slow tier (pytest -m slow; CI runs it) runs the sizes these tests first had, up to 40 items over 400 cells, at
# twice the cost: the same edges crossed more often (weights up to a third of 400 cells are too heavy for tiles, so
# the tile kernel runs at the smaller sizes of either list).
SIZES = [(1, 1), (3, 7), (8, 64), (9, 65), (20, 200), (17, 210), (40, 130)]
SLOW_SIZES = [(1, 1), (3, 7), (8, 64), (9, 65), (20, 200), (17, 333), (40, 400)]


def force_path(monkeypatch, path: str, scale: int = 1) -> str:
    """Which kernel runs: the one-launch sweep, the single-item kernel, multi-item tiles, or all three in one pass
    (sweeps for ranges of at most 40 cells, the others beside them). Chunks, blocks and halos are ``scale`` times the
    small sizes below, so that a profile of a few hundred cells (scale 1) crosses every one of them."""
    k = knapsack_gpu.dense.passes.triton_pass.kernels()
    monkeypatch.setattr(k.sweep, "CHUNK", 64 * scale)  # several chunks per item range on the longer profiles
    if path != "sweep":
        monkeypatch.setattr(k.sweep, "MAX_CELLS", 40 if path == "mixed" else -1)
    if path == "item":
        monkeypatch.setattr(k.item, "BLOCK", 32 * scale)
        monkeypatch.setattr(k.tile, "HALO_MAX", -1)  # every item is "heavy": kernel 1 only
    if path in ("tile", "mixed"):
        monkeypatch.setattr(k.item, "BLOCK", 32 * scale)
        monkeypatch.setattr(k.tile, "BLOCK", 64 * scale)
        monkeypatch.setattr(k.tile, "HALO_MAX", 24 * scale)  # halos up to 24 of 64: tiles of 40..64 outputs
        monkeypatch.setattr(k.tile, "MAX_PROGRAMS", 2)  # several tiles per persistent program
    return path


@pytest.fixture(params=PATHS)
def kernel_path(request, monkeypatch):
    return force_path(monkeypatch, request.param)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("cover", [False, True], ids=["standard", "cover"])
@pytest.mark.parametrize("windows", [False, True], ids=["all-cells", "windows"])
def test_kernels_match_torch_pass(kernel_path, dtype, cover, windows):
    match_torch_pass(kernel_path, dtype, cover, windows, SIZES)


# The slow tier's longer profiles over every pair of factors rather than every combination (16 jobs, not 64): each
# path and each dtype meets every mode, and the default tier above runs the full product at its sizes.
@SLOW
@pytest.mark.parametrize(
    "path, dtype, cover, windows",
    [
        pytest.param(*job, id=f"{job[0]}-{job[1]}-{'cover' if job[2] else 'standard'}-{'windows' if job[3] else 'all'}")
        for job in pairwise(PATHS, DTYPES)
    ],
)
def test_kernels_match_torch_pass_at_the_longer_sizes(monkeypatch, path, dtype, cover, windows):
    match_torch_pass(force_path(monkeypatch, path), dtype, cover, windows, SLOW_SIZES)


def match_torch_pass(kernel_path, dtype, cover, windows, sizes):
    """Every job of ``sizes`` through the forced kernel path and the torch pass: equal profiles and decision bits,
    and the launches the path should make."""
    from knapsack_gpu.dense.passes.triton_pass import launch_plan

    kern = knapsack_gpu.dense.passes.triton_pass.kernels()
    rng = np.random.default_rng(5)
    kinds = set()
    for m, length in sizes:
        job = random_job(rng, m, length, dtype, cover, windows=windows)
        if m % 2:  # a leaf's pass: only f(C) wanted, item ranges start where a backtrack can reach
            job = dataclasses.replace(job, target=length - 1)
        kinds |= {k for k, *_ in launch_plan(job, True, kern.sweep.MAX_CELLS, kern.plan_groups).launches}
        f_triton, b_triton = run_pass("triton", job, DEVICE)
        f_torch, b_torch = run_pass("torch", job, DEVICE)
        assert torch.equal(f_triton, f_torch), (m, length)
        assert np.array_equal(b_triton, b_torch), (m, length)
    expected = {"mixed": {"sweep", "item", "tile"}, "sweep": {"sweep"}}.get(kernel_path, {"item", kernel_path})
    assert kinds == expected if kernel_path != "mixed" else kinds >= expected, kinds


@pytest.mark.parametrize(
    "sizes",
    [[(8, 64), (17, 210), (40, 130)], pytest.param([(8, 64), (17, 333), (40, 400)], marks=SLOW)],
    ids=["sizes", "slow-sizes"],
)
@pytest.mark.parametrize("dtype", [torch.int16, torch.int32], ids=str)
def test_kernels_on_reduced_values(kernel_path, dtype, sizes):
    """Reduced-value jobs (negative values, the empty profile a ramp cut by a floor, no prefix rule) on every kernel
    path, against the numpy pass."""
    rng = np.random.default_rng(8)
    for m, length in sizes:
        for windows in (False, True):
            job = random_job(rng, m, length, dtype, cover=False, windows=windows, ramp=True)
            f_triton, b_triton = run_pass("triton", job, DEVICE)
            f_numpy, b_numpy = run_pass("numpy", job, "cpu")
            assert torch.equal(f_triton.cpu(), f_numpy), (m, length, windows)
            assert np.array_equal(b_triton, b_numpy), (m, length, windows)


@pytest.mark.parametrize("k", range(1, 9))
def test_tile_runs_of_k_items_equal_k_single_passes(k, monkeypatch):
    """Light items grouped k at a time, halos crossing tile edges, against single-item passes."""
    kern = knapsack_gpu.dense.passes.triton_pass.kernels()
    monkeypatch.setattr(kern.sweep, "MAX_CELLS", -1)
    monkeypatch.setattr(kern.tile, "BLOCK", 64)
    monkeypatch.setattr(kern.tile, "HALO_MAX", 30)
    monkeypatch.setattr(kern.tile, "K_MAX", k)
    monkeypatch.setattr(kern.tile, "MAX_PROGRAMS", 3)
    rng = np.random.default_rng(k)
    for dtype in (torch.int32, torch.float64):
        job = random_job(rng, 16, 301, dtype, cover=bool(k % 2), max_w=30 // k)
        job.weights[job.weights > 30 // k] = 30 // k  # all light: runs of exactly k (plane-aligned)
        groups = kern.plan_groups(job.weights.tolist(), record=True)
        assert max(c for _, c in groups) == min(k, 8)
        f_triton, b_triton = run_pass("triton", job, DEVICE)
        f_torch, b_torch = run_pass("torch", job, DEVICE)
        assert torch.equal(f_triton, f_torch)
        assert np.array_equal(b_triton, b_torch)


def test_plan_groups_respects_planes_and_halo():
    from knapsack_gpu.kernels.tile import HALO_MAX, plan_groups

    weights = [1] * 20 + [HALO_MAX + 1] + [HALO_MAX // 2] * 3
    groups = plan_groups(weights, record=True)
    assert groups[:3] == [(0, 8), (8, 8), (16, 4)]  # plane-aligned runs of light items
    assert (20, 1) in groups  # the heavy item goes alone (kernel 1)
    assert sum(c for _, c in groups) == len(weights)
    assert plan_groups([1] * 20, record=False) == [(0, 16), (16, 4)]


@pytest.mark.parametrize("family", ["uncorrelated", "strongly", "zeros", "float-values", "flop-values"])
def test_solve_with_triton_against_oracles(kernel_path, family):
    rng = np.random.default_rng(abs(len(family) * 7919 + len(kernel_path)))
    from knapsack_gpu.generate import FAMILIES

    for _ in range(4):
        w, v, cap = FAMILIES[family](rng, int(rng.integers(1, 15)), R=40)
        sol = knapsack_gpu.solve(w, v, cap, device=DEVICE, backend="triton", canonical=True)
        assert sol.stats["backend"] == "triton"
        best, optimal = brute_force(w.tolist(), v.tolist(), cap)
        assert_feasible(sol, w, cap)
        assert_value(sol, v, best)
        if v.dtype.kind != "f":
            assert sol.selected == reference_dp(w.tolist(), v.tolist(), cap)[1]


@pytest.mark.parametrize("scale", [8, pytest.param(1, marks=SLOW)], ids=["coarse", "fine"])
@pytest.mark.parametrize("path", PATHS)
def test_triton_hirschberg(monkeypatch, path, scale):
    # Blocks 8x the small ones by default: the 1,541-cell profile still spans several chunks, item blocks and tiles per
    # persistent program, and the interpreter pays per program: the same 10 passes, 4 leaves and depth 2, 5x cheaper.
    force_path(monkeypatch, path, scale=scale)
    rng = np.random.default_rng(9)
    w = rng.integers(1, 40, 150)
    v = rng.integers(1, 100, 150)
    cap = int(w.sum()) // 2
    dev = torch.device(DEVICE)
    job = dense(reduce(make_instance(w, v, cap), fixing=False)).job
    p = knapsack_gpu.backends.make_pass("triton", dev, job.dtype, Workspace(Meter(1, dev)))
    top = dataclasses.replace(job, target=job.length - 1)
    single = single_pass_bytes(p, job.m, job.length, BitLayout.of(top.schedule, job.length).nbytes)
    least = min_bytes(p, job.m, job.length)
    assert single > least
    limit = (least + single) // 2 + knapsack_gpu.stages.held_bytes(len(w), DEVICE)  # enough to split, not the table
    sol = knapsack_gpu.solve(w, v, cap, device=DEVICE, backend="triton", memory_limit=limit, strategy="dense")
    assert sol.stats["strategy"] == "dense-hirschberg" and sol.stats["peak_bytes"] <= limit
    assert sol.value == reference_dp(w.tolist(), v.tolist(), cap)[0]
    assert_feasible(sol, w, cap)


@pytest.mark.skipif(HAS_CUDA, reason="the message for machines without CUDA")
def test_triton_needs_cuda_or_the_interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(ValueError, match="backend='triton' runs on CUDA devices"):
        knapsack_gpu.solve([1, 2], [3, 4], 2, device="cpu", backend="triton")
    # auto never picks triton on the CPU
    assert knapsack_gpu.solve([1, 2, 3], [3, 4, 5], 3, device="cpu").stats["backend"] == "numpy"
