"""The backends' passes agree bit for bit: profiles and decision tables, both modes, every recorder path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from knapsack_gpu.backtrack import bit_array
from knapsack_gpu.memory import Meter, Workspace
from knapsack_gpu.passes import numpy_pass
from knapsack_gpu.passes.base import Job
from knapsack_gpu.passes.numpy_pass import NumpyPass
from knapsack_gpu.passes.torch_pass import TorchPass
from knapsack_gpu.reference import reference_profile

DTYPES = [torch.int32, torch.int64, torch.float32, torch.float64]


def make_job(rng, m, length, dtype, cover):
    w = rng.integers(0, max(2, length // 3), m)
    v = rng.integers(1, 50, m).astype(np.float64)
    if dtype.is_floating_point:
        v = v + 0.25  # exact in float32 too
    np_dtype = {torch.int32: np.int32, torch.int64: np.int64, torch.float32: np.float32, torch.float64: np.float64}
    values = v.astype(np_dtype[dtype])
    sentinel = None
    if cover:
        values = -values
        sentinel = values.dtype.type(-np.inf if dtype.is_floating_point else -(int(v.sum()) + 1))
    return Job(w.astype(np.int64), values, length, cover, dtype, sentinel)


def run(pass_cls, job, device="cpu"):
    meter = Meter(1 << 30, torch.device(device))
    p = pass_cls(torch.device(device), job.dtype, Workspace(meter))
    bits = p.new_bits(job.m, job.length)
    bits.fill_(0xA5)  # poison: every byte the backtrack may read must be written (or zeroed on purpose)
    if pass_cls is NumpyPass:
        bits.zero_()  # NumpyPass asks for a zeroed table and ORs into it; the poison applies to torch's packing
    profile = p.run(job, bits).clone()
    return profile.cpu(), bit_array(bits, job.m, job.length)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("cover", [False, True], ids=["standard", "cover"])
@pytest.mark.parametrize("path", ["staged", "chunked"])
def test_numpy_and_torch_passes_agree(dtype, cover, path, monkeypatch):
    if path == "chunked":
        monkeypatch.setattr(numpy_pass, "STAGE_BYTES", 0)
        monkeypatch.setattr(numpy_pass, "CHUNK_BYTES", 64)  # 8 to 16 cells a chunk: many chunk edges
    rng = np.random.default_rng(11)
    for m, length in [(1, 1), (3, 5), (9, 33), (17, 100), (24, 257)]:
        job = make_job(rng, m, length, dtype, cover)
        f_np, b_np = run(NumpyPass, job)
        f_t, b_t = run(TorchPass, job)
        assert torch.equal(f_np, f_t)
        assert np.array_equal(b_np, b_t)
        if not cover:
            expect = reference_profile(job.weights.tolist(), job.values.tolist(), length - 1)
            assert f_np.tolist() == expect
