"""The dense DP over a whole batch at once (``solve_batch`` on CUDA): a (B, L) profile tensor, one launch per item
for every row (kernels/batch.py, or the torch pass here), the decision bits in device memory, the items recovered by
a walk over the bits that runs on the device for every row at once.

Where it runs (:func:`rows_for`): rows of whole-number values whose capacity is moderate, L = C + 1 <= MAX_LENGTH
cells (a POMO row of float32 weights is made whole at 2**24: C near 4e8, the compiled states engine's ground on the
CPU, which ``solve_batch`` sends it to). Rows are taken in order of capacity, in chunks whose profiles and bit
planes fit the memory limit (:func:`chunk_rows`): a chunk's L is its own largest capacity + 1.
"""

from __future__ import annotations

import numpy as np
import torch

from ..memory import default_limit

# The longest profile a row of the dense batch may have: 2**24 cells (the Triton grid's second axis holds 65,535
# blocks of 1,024); every row of a chunk is as long as its longest, and B x L cells must fit the memory limit.
MAX_LENGTH = 1 << 24
WORD = 32  # cells a word of decision bits holds (kernels/batch.py)
# The least rows a chunk may hold for the dense batch to run: fewer would pay a launch per item for a handful of rows
# (the compiled CPU path is cheaper there).
MIN_CHUNK = 64


def dtype_for(P: np.ndarray) -> torch.dtype:
    """int32 where every row's total value is below 2**31 (no cell can pass it), else int64."""
    return torch.int32 if P.size == 0 or int(P.sum(axis=1).max()) < 2**31 else torch.int64


def bytes_per_row(n: int, length: int, dtype: torch.dtype, backend: str) -> int:
    """Device bytes a row of a chunk holds: two profile rows, its bit planes, its items; the torch pass's
    temporaries besides (a gather index and the candidates: ~3 more rows)."""
    esize = torch.empty(0, dtype=dtype).element_size()
    words = -(-length // WORD)
    rows = 2 + (0 if backend == "triton" else 3)
    temps = 0 if backend == "triton" else length * 8  # (the torch pass's int64 gather index)
    return rows * length * esize + temps + n * words * 4 + n * (8 + esize)


def rows_for(batch, rows: np.ndarray) -> np.ndarray:
    """The rows of ``rows`` the dense batch takes: whole-number values and L = C + 1 <= MAX_LENGTH."""
    return rows[batch.whole[rows] & (batch.C[rows] < MAX_LENGTH)]


def chunk_rows(order: np.ndarray, caps: np.ndarray, n: int, dtype, backend: str, limit: int) -> list[np.ndarray]:
    """Rows ``order`` (ascending capacity ``caps``) cut into chunks that each fit ``limit`` bytes (each chunk as long
    as its last row's capacity + 1); rows past a chunk of MIN_CHUNK are left out (an empty list: none fits)."""
    chunks, start = [], 0
    while start < order.size:
        lo, hi = start + 1, order.size  # the longest chunk from start that fits: a binary search
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if (mid - start) * bytes_per_row(n, int(caps[order[mid - 1]]) + 1, dtype, backend) <= limit:
                lo = mid
            else:
                hi = mid - 1
        if (lo - start) * bytes_per_row(n, int(caps[order[lo - 1]]) + 1, dtype, backend) > limit:
            break
        if lo - start < MIN_CHUNK and lo < order.size:
            break
        chunks.append(order[start:lo])
        start = lo
    return chunks


def torch_item(src: torch.Tensor, dst: torch.Tensor, bits: torch.Tensor | None, w: torch.Tensor, v: torch.Tensor,
               j: int) -> None:  # fmt: skip
    """kernels/batch.py's step in torch ops (the fallback, and the reference the kernel is tested against bit for
    bit): f'(c) = f(c - w) + v where c >= w and that is strictly more, else f(c); bits packed 32 cells a word."""
    rows, length = src.shape
    c = torch.arange(length, device=src.device)
    at = c[None, :] - w[:, j : j + 1]
    fits = at >= 0
    cand = torch.gather(src, 1, at.clamp_(min=0)) + v[:, j : j + 1]
    take = fits & (cand > src)
    torch.where(take, cand, src, out=dst)
    if bits is not None:
        bits[j] = pack(take)


def pack(take: torch.Tensor) -> torch.Tensor:
    """(rows, L) bool -> (rows, ceil(L / 32)) int32 words, bit c % 32 of word c // 32 (two's complement)."""
    rows, length = take.shape
    words = -(-length // WORD)
    padded = torch.zeros(rows, words * WORD, dtype=torch.int64, device=take.device)
    padded[:, :length] = take
    shifts = torch.arange(WORD, dtype=torch.int64, device=take.device)
    word = (padded.view(rows, words, WORD) << shifts).sum(dim=2)
    return torch.where(word >= 2**31, word - 2**32, word).to(torch.int32)


def recover(bits: torch.Tensor, w: torch.Tensor, caps: torch.Tensor) -> torch.Tensor:
    """Every row's chosen items from its bit planes, walking from the last item at the row's capacity: item j is
    taken where its bit is set at the capacity left, which then drops by its weight (one gather a step, all rows at
    once). Returns (rows, n) bool."""
    n, rows, _ = bits.shape
    c = caps.clone()
    chosen = torch.zeros(rows, n, dtype=torch.bool, device=bits.device)
    r = torch.arange(rows, device=bits.device)
    for j in range(n - 1, -1, -1):
        word = bits[j, r, c // WORD].to(torch.int64)
        bit = ((word >> (c % WORD)) & 1).bool()
        chosen[:, j] = bit
        c = c - torch.where(bit, w[:, j], 0)
    return chosen


def solve(batch, out, rows: np.ndarray, device: torch.device, memory_limit, backend: str, stats: dict) -> np.ndarray:
    """The dense batch over the rows of ``rows`` it takes (:func:`rows_for`), chunk by chunk, into ``out``; returns
    the mask over ``rows`` of those it answered (the others: the caller's CPU path)."""
    take = rows_for(batch, rows)
    done = np.zeros(rows.size, dtype=bool)
    if take.size == 0 or batch.n == 0:
        return done
    name = _backend(backend, device)
    limit = int(memory_limit) if memory_limit is not None else default_limit(device)
    dtype = dtype_for(batch.P[take])
    order = take[np.argsort(batch.C[take], kind="stable")]
    chunks = chunk_rows(order, batch.C, batch.n, dtype, name, limit)
    step = _kernel(name)
    launches = 0
    for chunk in chunks:
        L = int(batch.C[chunk[-1]]) + 1
        w = torch.from_numpy(np.ascontiguousarray(batch.W[chunk])).to(device)
        v = torch.from_numpy(np.ascontiguousarray(batch.P[chunk])).to(device=device, dtype=dtype)
        caps = torch.from_numpy(batch.C[chunk]).to(device)
        f = [torch.zeros(chunk.size, L, dtype=dtype, device=device), torch.empty(chunk.size, L, dtype=dtype,
                                                                                   device=device)]  # fmt: skip
        bits = torch.zeros(batch.n, chunk.size, -(-L // WORD), dtype=torch.int32, device=device)
        for j in range(batch.n):
            step(f[j & 1], f[1 - (j & 1)], bits, w, v, j)
        launches += batch.n
        final = f[batch.n & 1]
        value = final.gather(1, caps[:, None]).squeeze(1)
        chosen = recover(bits, w, caps)
        picked = torch.where(chosen, w, 0).sum(dim=1)
        out.value[chunk] = value.cpu().numpy()
        out.weight[chunk] = picked.cpu().numpy()
        out.chosen[chunk] = chosen.cpu().numpy()
        out.went[chunk] = 2
        got = torch.where(chosen, v.to(torch.int64), 0).sum(dim=1).cpu().numpy()
        if not np.array_equal(got, out.value[chunk]):  # the items must give the optimum, or no answer
            raise RuntimeError("internal error: a dense batch's recovered items are not worth its optimum")
        del f, bits
    answered = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    done = np.isin(rows, answered)
    stats["engines"]["dense"] += int(answered.size)
    stats["device"] = str(device)
    stats["dense_backend"] = name
    stats["launches"] = stats.get("launches", 0) + launches
    return done


def _backend(backend: str, device: torch.device) -> str:
    from ..backends import have_triton, triton_interpreting

    if backend not in ("auto", "torch", "triton"):
        raise ValueError(f"backend={backend!r}: a dense batch runs 'auto', 'torch' or 'triton'")
    runs = have_triton() and (device.type == "cuda" or triton_interpreting())
    if backend == "triton" and not runs:
        raise ValueError("backend='triton' needs triton and a CUDA device (or TRITON_INTERPRET=1 on the CPU)")
    return "triton" if backend == "triton" or (backend == "auto" and runs and device.type == "cuda") else "torch"


def _kernel(name: str):
    if name == "triton":
        from ..dense.passes.triton_pass import kernels

        return kernels().batch_item_update
    return torch_item
