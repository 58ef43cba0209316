"""Kernel 1: one item over the whole profile, fused: one read of f(c), one of f(c - w), one write, and the decision bit.

Semantics are the pass contract of knapsack_gpu/passes/base.py, materialised for ping-pong rows: the output row is
written everywhere (f(c) below lo, the update on [lo, hi], the prefix value V_j above hi in standard mode), because
programs run concurrently and cannot update one row in place. Decision bits go to the item's byte plane
(bit j % 8 of byte [j // 8, c]); the first item of a plane stores, the others read-modify-write.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .common import item_arrays, load_item, relax, source

# 1024 elements and 4 warps per program: the usual streaming-kernel setting (8 elements per thread, 4-8 KB in flight
# per program); not tuned on a device yet, benchmarks/gpu_check.py measures it against the copy bandwidth.
BLOCK = 1024
NUM_WARPS = 4


@triton.jit
def _item_kernel(
    src_ptr,
    dst_ptr,
    bits_ptr,
    w_ptr,
    v_ptr,
    lo_ptr,
    hi_ptr,
    tail_ptr,
    j,
    length,
    row8,
    COVER: tl.constexpr,
    RECORD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)  # capacities reach 1e9 and more: offsets in int64
    c = pid * BLOCK + tl.arange(0, BLOCK)
    w, v, lo, hi = load_item(w_ptr, v_ptr, lo_ptr, hi_ptr, j)
    inside = c < length
    old = tl.load(src_ptr + c, mask=inside, other=0)
    cand = tl.load(src_ptr + source(c, w, COVER), mask=(c >= lo) & (c <= hi), other=0) + v
    new, take = relax(old, cand, c, lo, hi, tl.load(tail_ptr + j), COVER)
    tl.store(dst_ptr + c, new, mask=inside)
    if RECORD:
        shift = j % 8
        plane = bits_ptr + tl.cast(j // 8, tl.int64) * row8 + c
        in_row = c < row8
        started = (tl.zeros([BLOCK], dtype=tl.int32) + shift) != 0  # not the plane's first item: keep its bits
        byte = (take.to(tl.uint8) << shift).to(tl.uint8)
        prev = tl.load(plane, mask=in_row & started, other=0)
        tl.store(plane, (byte | prev).to(tl.uint8), mask=in_row)


def item_update(
    src: torch.Tensor,
    dst: torch.Tensor,
    bits: torch.Tensor | None,
    items: dict[str, torch.Tensor],
    j: int,
    cover: bool,
) -> None:
    """Apply item ``j`` to the profile ``src`` (length L), writing ``dst``.

    Args:
        src, dst: 1-D profiles of the same length, dtype and device.
        bits: uint8 (planes, round8(L)) decision table, or None.
        items: device arrays "w", "lo", "hi" (int64), "v", "tail" (profile dtype), indexed by item.
        j: the item's index in those arrays (and its decision row).
        cover: complement mode.
    """
    length = src.shape[0]
    row8 = (length + 7) & ~7
    grid = (triton.cdiv(row8, BLOCK),)
    _item_kernel[grid](
        src,
        dst,
        bits if bits is not None else src,
        *item_arrays(items),
        j,
        length,
        row8,
        COVER=cover,
        RECORD=bits is not None,
        BLOCK=BLOCK,
        num_warps=NUM_WARPS,
    )
