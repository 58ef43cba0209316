"""The backends' passes agree bit for bit: profiles and decision tables, both modes, every recorder path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from knapsack_gpu.dense.passes import numpy_pass
from knapsack_gpu.reference import reference_profile
from knapsack_gpu.testing import random_job, run_pass

DTYPES = [torch.int32, torch.int64, torch.float32, torch.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("cover", [False, True], ids=["standard", "cover"])
@pytest.mark.parametrize("path", ["staged", "chunked"])
@pytest.mark.parametrize("targeted", [False, True], ids=["whole-profile", "target-only"])
@pytest.mark.parametrize("windows", [False, True], ids=["all-cells", "windows"])
def test_numpy_and_torch_passes_agree(dtype, cover, path, targeted, windows, monkeypatch):
    if path == "chunked":
        monkeypatch.setattr(numpy_pass, "STAGE_BYTES", 0)
        monkeypatch.setattr(numpy_pass, "CHUNK_BYTES", 64)  # 8 to 16 cells a chunk: many chunk edges
    rng = np.random.default_rng(11)
    for m, length in [(1, 1), (3, 5), (9, 33), (17, 100), (24, 257)]:
        job = random_job(rng, m, length, dtype, cover, windows=windows)
        if targeted:  # only f(C) is wanted: items skip capacities no backtrack from C can reach
            job = dataclasses.replace(job, target=length - 1)
        f_np, b_np = run_pass("numpy", job)
        f_t, b_t = run_pass("torch", job)
        assert torch.equal(f_np, f_t)
        assert np.array_equal(b_np, b_t)
        if not cover:
            expect = reference_profile(job.weights.tolist(), job.values.tolist(), length - 1)
            if windows:  # cells outside a window keep older values: achievable, never overstated
                assert all(a <= b for a, b in zip(f_np.tolist(), expect, strict=True))
            elif targeted:
                assert f_np[-1].item() == expect[-1]
            else:
                assert f_np.tolist() == expect
