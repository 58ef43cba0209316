"""The dense DP over a batch (solve_batch on CUDA): the Triton kernel bit for bit against the torch pass (in Triton's
interpreter where there is no GPU), poisoned output rows, ragged capacities within a chunk, chunks cut by the memory
limit, and the optima against the plain DP and the CPU path."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import HAS_TRITON, TRITON_DEVICE

import knapsack_gpu
from knapsack_gpu.dense import batch as dense_batch
from knapsack_gpu.reference import reference_dp


def _rows(seed: int, B: int, n: int, top: int = 40):
    rng = np.random.default_rng(seed)
    W = rng.integers(0, top, (B, n))
    V = rng.integers(0, 60, (B, n))
    C = rng.integers(0, max(1, int(W.sum(axis=1).max())), B)
    return W, V, C


@pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed")
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("length", [1, 31, 33, 1024, 1500], ids=lambda x: f"L{x}")
def test_the_kernel_matches_the_torch_pass_bit_for_bit(dtype, length):
    """One item step of every row, from poisoned destinations (the dtype's minimum: a cell the kernel failed to
    write would show): profiles and decision words equal to the torch pass's, items heavier than the row, of
    weight 0 and of value 0 included."""
    from knapsack_gpu.dense.passes.triton_pass import kernels

    dev = TRITON_DEVICE
    gen = torch.Generator().manual_seed(length)
    B, n = 5, 4
    w = torch.randint(0, length + 3, (B, n), generator=gen)
    w[0, 0], w[1, 1] = 0, length + 10
    v = torch.randint(0, 9, (B, n), generator=gen).to(dtype)
    v[2, 2] = 0
    src = torch.randint(0, 50, (B, length), generator=gen).to(dtype).cummax(dim=1).values
    src, w, v = src.to(dev), w.to(dev), v.to(dev)
    words = -(-length // 32)
    for j in range(n):
        want = torch.full_like(src, torch.iinfo(dtype).min)
        got = torch.full_like(src, torch.iinfo(dtype).min)
        bits_want = torch.full((n, B, words), -7, dtype=torch.int32, device=dev)
        bits_got = bits_want.clone()
        dense_batch.torch_item(src, want, bits_want, w, v, j)
        kernels().batch_item_update(src, got, bits_got, w, v, j)
        assert torch.equal(got, want), f"item {j}: profiles differ"
        assert torch.equal(bits_got[j], bits_want[j]), f"item {j}: decision words differ"


def test_pack_puts_cell_c_at_bit_c_mod_32():
    take = torch.zeros(2, 70, dtype=torch.bool)
    take[0, 31] = take[0, 0] = take[1, 69] = True
    words = dense_batch.pack(take)
    assert words.shape == (2, 3) and words.dtype == torch.int32
    assert words[0, 0].item() == -(2**31) + 1 and words[1, 2].item() == 1 << (69 - 64)


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_dense_batch_against_the_plain_dp(backend):
    """solve_batch with strategy="dense" on the CPU (the torch pass, or the kernel in Triton's interpreter): every
    optimum the textbook DP's, every selection within its row's capacity and worth the optimum; rows of different
    capacities in one chunk."""
    if backend == "triton" and not HAS_TRITON:
        pytest.skip("triton is not installed")
    W, V, C = _rows(1, 12, 9)
    res = knapsack_gpu.solve_batch(W, V, C, device=TRITON_DEVICE if backend == "triton" else "cpu",
                                   strategy="dense", backend=backend)  # fmt: skip
    assert res.stats["engines"]["dense"] == 12 and res.stats["dense_backend"] == backend
    for b in range(12):
        assert res.value[b] == reference_dp(W[b].tolist(), V[b].tolist(), int(C[b]))[0]
        sel = np.flatnonzero(res.selected[b])
        assert W[b][sel].sum() <= C[b] and V[b][sel].sum() == res.value[b] == int(V[b][sel].sum())
        assert res.weight[b] == W[b][sel].sum()


def test_chunks_follow_the_memory_limit_and_rows_past_it_go_to_the_cpu():
    """A limit that holds a few rows a chunk cuts the batch into chunks in order of capacity (the same optima as
    one chunk); a limit below a chunk of MIN_CHUNK rows leaves every row to the CPU path."""
    W, V, C = _rows(2, 150, 6, top=30)
    whole = knapsack_gpu.solve_batch(W, V, C, device="cpu", strategy="dense")
    L = int(C.max()) + 1
    per_row = dense_batch.bytes_per_row(6, L, dense_batch.dtype_for(V), "torch")
    cut = knapsack_gpu.solve_batch(W, V, C, device="cpu", strategy="dense", memory_limit=per_row * 70)
    assert np.array_equal(cut.value, whole.value) and cut.stats["engines"]["dense"] == 150
    assert cut.stats["launches"] > whole.stats["launches"]  # (more than one chunk: a launch an item each)
    tiny = knapsack_gpu.solve_batch(W, V, C, device="cpu", strategy="dense", memory_limit=per_row * 10)
    assert tiny.stats["engines"]["dense"] == 0 and np.array_equal(tiny.value, whole.value)
    cpu = knapsack_gpu.solve_batch(W, V, C, device="cpu", strategy="states")
    assert np.array_equal(cpu.value, whole.value)


def test_rows_past_the_longest_profile_and_float_rows_stay_on_the_cpu():
    """Float weights made whole at 2**24 (capacities near 4e8) are no dense rows; int64 values past 2**31 in a row's
    total take int64 profiles."""
    torch.manual_seed(0)
    res = knapsack_gpu.solve_batch(torch.rand(4, 20), torch.rand(4, 20), 5.0, device="cpu", strategy="dense")
    assert res.stats["engines"]["dense"] == 0 and res.stats["engines"]["compiled"] + res.stats["engines"][
        "planner"] == 4  # fmt: skip
    W, V, C = _rows(3, 4, 5)
    big = V * 2**30
    assert dense_batch.dtype_for(big) == torch.int64
    res = knapsack_gpu.solve_batch(W, big, C, device="cpu", strategy="dense")
    for b in range(4):
        assert res.value[b] == reference_dp(W[b].tolist(), big[b].tolist(), int(C[b]))[0]
