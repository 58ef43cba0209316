"""The numpy pass split over threads: bit for bit the single-thread pass (profiles and decisions), in every mode."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import knapsack_gpu
import knapsack_gpu.dense.passes.numpy_pass as numpy_pass
from knapsack_gpu.testing import random_job, run_pass


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 128 int32 cells, so that short profiles cross many blocks; counts the items that ran threaded."""
    monkeypatch.setattr(numpy_pass, "CHUNK_BYTES", 1 << 9)
    monkeypatch.setattr(numpy_pass, "STAGE_BYTES", 1 << 6)  # the chunked recorder, which threads use
    calls = []
    real = numpy_pass._Threads.item
    monkeypatch.setattr(numpy_pass._Threads, "item", lambda self, *a: calls.append(1) or real(self, *a))
    return calls


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64, torch.float64], ids=str)
def test_threaded_pass_equals_one_thread(small_chunks, monkeypatch, threads, dtype):
    rng = np.random.default_rng(threads * 7 + dtype.itemsize)
    for trial in range(12):
        cover = trial % 3 == 0 and dtype != torch.int16
        ramp = dtype == torch.int16 or (trial % 4 == 1 and not cover and not dtype.is_floating_point)
        length = int(rng.integers(600, 5000))
        job = random_job(
            rng,
            int(rng.integers(1, 30)),
            length,
            dtype,
            cover,
            max_w=int(rng.choice([3, 50, length // 3])),
            windows=trial % 2 == 0 and not cover,
            ramp=ramp,
        )
        monkeypatch.setattr(numpy_pass.NumpyPass, "threads", 1)
        f1, b1 = run_pass("numpy", job)
        monkeypatch.setattr(numpy_pass.NumpyPass, "threads", threads)
        f2, b2 = run_pass("numpy", job)
        assert torch.equal(f1, f2) and np.array_equal(b1, b2), (trial, length)
    assert small_chunks, "no item ran threaded"


def test_solve_threads_argument():
    rng = np.random.default_rng(0)
    w = rng.integers(1, 1000, 60)
    v = rng.integers(1, 1000, 60)
    one = knapsack_gpu.solve(w, v, 20_000, device="cpu", strategy="dense", threads=1)
    two = knapsack_gpu.solve(w, v, 20_000, device="cpu", strategy="dense", threads=2)
    assert one.value == two.value and one.stats["threads"] == 1 == two.stats["threads"]  # too short to split
    assert knapsack_gpu.solve(w, v, 20_000, device="cpu", strategy="dense").stats["threads"] >= 1
    with pytest.raises(ValueError, match="threads = 0"):
        knapsack_gpu.solve(w, v, 100, threads=0)
    with pytest.raises(TypeError, match="threads must be"):
        knapsack_gpu.solve(w, v, 100, threads=1.5)
