"""Launch counts: what a GPU pays per launch shows up without one.

Every torch and triton pass counts the device operations it issues (``ForwardPass.launches``, ``stats["launches"]``).
These pin the counts on known jobs, so that a change that puts a launch back per item fails here, not on a device.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import HAS_TRITON, TRITON_DEVICE, device_for

import knapsack_gpu
from knapsack_gpu.backends import make_pass
from knapsack_gpu.dense.passes.base import BitLayout, Job
from knapsack_gpu.memory import Meter, Workspace
from knapsack_gpu.testing import run_pass

needs_triton = pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed")

# init_profile on both rows, the item arrays (w v lo hi top tail start end), the planes' offsets.
TRITON_FIXED = 2 + 8 + 1


def narrow_job(m: int, length: int, width: int, seed: int = 3) -> Job:
    """m items of weight <= 40 whose windows are ``width`` cells wide, sliding up the profile."""
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 40, m).astype(np.int64)
    v = rng.integers(1, 90, m).astype(np.int64)
    centre = np.linspace(width, length - width, m)
    window = (centre - width / 2, centre + width / 2)
    return Job(w, v, length, False, torch.int64, window=window)


def launches(backend: str, job: Job, record: bool = True) -> tuple[int, object]:
    dev = torch.device(device_for(backend))
    p = make_pass(backend, dev, job.dtype, Workspace(Meter(1 << 40, dev)))
    p.reserve(job.m, job.length)
    bits = p.new_bits(BitLayout.of(job.schedule, job.length)) if record else None
    p.run(job, bits)
    return p.launches, p


@needs_triton
def test_a_profile_that_fits_one_program_is_one_launch():
    """The partitioner's regime: 600 items over 2,001 capacities, one sweep launch whatever m."""
    from knapsack_gpu.dense.passes.triton_pass import launch_plan

    rng = np.random.default_rng(1)
    job = Job(rng.integers(1, 300, 600), rng.integers(1, 99, 600), 2001, False, torch.int64)
    n, p = launches("triton", job)
    plan = launch_plan(job, True, p.kern.sweep.MAX_CELLS, p.kern.plan_groups)
    assert [k for k, *_ in plan.launches] == ["sweep"]
    assert n == TRITON_FIXED + 1  # the sweep; every item fits nowhere near 2,000, so no final fill
    f, bits = run_pass("triton", job, TRITON_DEVICE)
    g, bits2 = run_pass("torch", job)
    assert torch.equal(f, g) and np.array_equal(bits, bits2)


@needs_triton
def test_narrow_windows_over_a_long_profile_are_one_launch():
    """300 items, windows of 1,500 cells over 200,000 capacities: one sweep, not a launch per item, and exact."""
    job = narrow_job(300, 200_001, 1500)
    n, _ = launches("triton", job)
    assert n == TRITON_FIXED + 1 + 1  # the sweep, then the cells above the last prefix weight filled
    f, bits = run_pass("triton", job, TRITON_DEVICE)
    g, bits2 = run_pass("torch", job)
    assert torch.equal(f, g) and np.array_equal(bits, bits2)


@needs_triton
def test_wide_ranges_launch_per_group(monkeypatch):
    """Ranges wider than a sweep takes: light items go to tiles of up to 8 (recording) or K_MAX, heavy ones alone."""
    kern = knapsack_gpu.dense.passes.triton_pass.kernels()
    monkeypatch.setattr(kern.sweep, "MAX_CELLS", 100)
    monkeypatch.setattr(kern.tile, "BLOCK", 512)  # the groups follow HALO_MAX and K_MAX; 64 cost 8x the programs
    monkeypatch.setattr(kern.tile, "HALO_MAX", 16)
    w = np.array([1500] + [1] * 31 + [400] * 4, dtype=np.int64)  # the prefix passes C = 2000: no final fill
    job = Job(w, np.ones(36, dtype=np.int64), 2001, False, torch.int64)
    n, _ = launches("triton", job, record=True)
    assert n == TRITON_FIXED + 1 + 4 + 4  # item 0 alone, tiles of 7, 8, 8, 8 (one plane each), 4 heavy alone
    n, _ = launches("triton", job, record=False)
    assert n == TRITON_FIXED - 1 + 1 + 2 + 4  # no bits, no plane offsets; tiles of 16 and 15


def test_torch_pass_ops_per_item():
    """The torch pass: add, compare, max per item with bits (2 without), a fill where the prefix grows, and three
    ops per plane of eight to pack the bits."""
    job = narrow_job(64, 5001, 300)
    n, _ = launches("torch", job, record=True)
    s = job.schedule
    updating = int((np.maximum(s.w, s.lo) <= s.hi).sum())
    grows = int((s.top > np.concatenate([[0], s.top[:-1]])).sum())
    planes = int((BitLayout.of(s, job.length).length > 0).sum())
    assert n == 1 + 1 + 3 * updating + grows + 3 * planes + 1  # init, zero the stage, ..., the final fill


@pytest.mark.parametrize("backend", ["torch"] + (["triton"] if HAS_TRITON else []))
def test_solve_reports_launches(backend):
    from knapsack_gpu.generate import partitioner

    w, v, cap = partitioner(np.random.default_rng(0), 2000, 10_000)
    sol = knapsack_gpu.solve(w, v, cap, device=device_for(backend), backend=backend, canonical=True)
    assert sol.stats["launches"] > 0
    if backend == "triton":  # one pass, one sweep: no launch per item (2,000 items reach the DP here)
        assert sol.stats["launches"] <= (TRITON_FIXED + 2) * sol.stats["passes"] + 3 * sol.stats["leaves"]
    assert knapsack_gpu.solve(w, v, cap, device="cpu", backend="numpy").stats["launches"] is None  # no device ops
