"""Kernel 4: one item over a whole batch of profiles (knapsack_gpu.solve_batch on CUDA), one launch per item.

The batch's profiles are the rows of a (B, L) tensor; item j of row b has its own weight w[b, j] and value v[b, j],
so the shift differs by row: the grid spans rows (axis 0) and blocks of capacities (axis 1), and each program
reads its row's item once. Ping-pong rows (a program must read f_{j-1}(c - w) before anyone writes it): out of
``src`` into ``dst``, f'(c) = max(f(c), f(c - w) + v) for c >= w, taken only where strictly better (the tie rule of
the bit table everywhere else). The decision bits go to plane j of the table, 32 cells to an int32 word (bit c % 32
of word c // 32; bit 31 is the sign bit), planes (n, B, words). knapsack_gpu/dense/batch.py's torch pass computes the
same, bit for bit.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# 1024 cells and 4 warps a program: the single-item kernel's streaming setting (kernels/item.py); 32 words of bits a
# program. Not tuned on a device yet: benchmarks/gpu_check.py's batch section measures it against the copy bandwidth.
BLOCK = 1024
NUM_WARPS = 4
WORD = 32  # cells a word of decision bits holds


@triton.jit
def _batch_item_kernel(
    src_ptr,
    dst_ptr,
    bits_ptr,
    w_ptr,
    v_ptr,
    j,
    n,
    rows,
    length,
    words,
    RECORD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)  # (B * L reaches past 2**31: offsets in int64)
    blk = tl.program_id(1).to(tl.int64)
    c = blk * BLOCK + tl.arange(0, BLOCK)
    inside = c < length
    w = tl.load(w_ptr + row * n + j)
    v = tl.load(v_ptr + row * n + j)
    base = row * length
    old = tl.load(src_ptr + base + c, mask=inside, other=0)
    fits = inside & (c >= w)
    cand = tl.load(src_ptr + base + c - w, mask=fits, other=0) + v
    take = fits & (cand > old)
    tl.store(dst_ptr + base + c, tl.where(take, cand, old), mask=inside)
    if RECORD:
        flags = tl.reshape(take.to(tl.int32), (BLOCK // 32, 32))
        word = tl.sum(flags << tl.arange(0, 32)[None, :], axis=1)  # distinct bits: the sum is their OR
        at = blk * (BLOCK // 32) + tl.arange(0, BLOCK // 32)
        tl.store(bits_ptr + (j * rows + row) * words + at, word, mask=at < words)


def batch_item_update(
    src: torch.Tensor, dst: torch.Tensor, bits: torch.Tensor | None, w: torch.Tensor, v: torch.Tensor, j: int
) -> None:
    """Apply item ``j`` of every row: ``dst`` = one DP step of ``src``.

    Args:
        src, dst: (B, L) profiles, C-contiguous, the same dtype (int32 or int64) and device.
        bits: (n, B, words) int32 decision planes with words = ceil(L / 32), or None.
        w, v: (B, n) weights (int64) and values (the profiles' dtype), C-contiguous.
        j: the item.
    """
    rows, length = src.shape
    if rows == 0 or length == 0:
        return
    words = triton.cdiv(length, WORD)
    grid = (rows, triton.cdiv(length, BLOCK))
    _batch_item_kernel[grid](
        src,
        dst,
        bits if bits is not None else src,
        w,
        v,
        j,
        w.shape[1],
        rows,
        length,
        words,
        RECORD=bits is not None,
        BLOCK=BLOCK,
        num_warps=NUM_WARPS,
    )
