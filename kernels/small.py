"""Kernel 3: a profile that fits one program runs every item in one launch.

The torch.compile partitioner's regime (n up to thousands, C <= ~1e4): a launch per item would cost more than its
work. One program holds the whole profile in registers and loops over the items; the shifted read goes through two
alternating scratch blocks (one barrier per item). Decision bits of eight items accumulate in a register byte per
capacity and are stored once per plane, over the plane's stored range.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .common import item_arrays, load_item, relax, source

# Up to 16384 capacities in one program: 32 values a thread at 16 warps (64 registers for 8-byte values).
MAX_LENGTH = 16384


@triton.jit
def _small_kernel(
    src_ptr,
    dst_ptr,
    bits_ptr,
    pdelta_ptr,
    pbase_ptr,
    pend_ptr,
    scratch_ptr,
    w_ptr,
    v_ptr,
    lo_ptr,
    hi_ptr,
    top_ptr,
    tail_ptr,
    m,
    length,
    COVER: tl.constexpr,
    RECORD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    c = tl.arange(0, BLOCK)  # int32: at most MAX_LENGTH capacities, and fewer registers than int64
    cur = tl.load(src_ptr + c, mask=c < length, other=0)
    acc = tl.zeros([BLOCK], dtype=tl.uint8)
    for j in range(m):
        w, v, lo, hi, top, tail = load_item(w_ptr, v_ptr, lo_ptr, hi_ptr, top_ptr, tail_ptr, j)
        buf = scratch_ptr + (j % 2) * BLOCK
        tl.store(buf + c, cur)
        tl.debug_barrier()
        cand = tl.load(buf + source(c, w, COVER), mask=(c >= lo) & (c <= hi), other=0) + v
        cur, take = relax(cur, cand, c, lo, hi, top, tail, COVER)
        if RECORD:
            acc = acc | (take.to(tl.uint8) << (j % 8)).to(tl.uint8)
            if ((j % 8) == 7) | (j == m - 1):
                g = j // 8
                stored = (c >= tl.load(pbase_ptr + g)) & (c < tl.load(pend_ptr + g))
                tl.store(bits_ptr + tl.load(pdelta_ptr + g) + c, acc, mask=stored)
                acc = tl.zeros([BLOCK], dtype=tl.uint8)
    tl.store(dst_ptr + c, cur, mask=c < length)


def block_for(length: int) -> int:
    return max(16, triton.next_power_of_2((length + 7) & ~7))


def small_pass(
    src: torch.Tensor,
    dst: torch.Tensor,
    bits: torch.Tensor | None,
    planes: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None,
    scratch: torch.Tensor,
    items: dict[str, torch.Tensor],
    m: int,
    cover: bool,
) -> None:
    """Run all ``m`` items over ``src`` (length <= MAX_LENGTH) in one launch, writing the final profile to ``dst``.

    Args:
        src: the initial profile; dst: receives the final one (may not alias src).
        bits: uint8 decision table (ragged layout) or None; planes: (pdelta, base, end) int64 per plane.
        scratch: at least ``2 * block_for(L)`` elements of the profile dtype.
        items: device arrays "w", "lo", "hi", "top" (int64), "v", "tail" (profile dtype).
        m: number of items.
        cover: complement mode.
    """
    length = src.shape[0]
    assert length <= MAX_LENGTH
    block = block_for(length)
    pdelta, pbase, pend = planes if planes is not None else (items["w"],) * 3
    _small_kernel[(1,)](
        src,
        dst,
        bits if bits is not None else src,
        pdelta,
        pbase,
        pend,
        scratch,
        *item_arrays(items),
        m,
        length,
        COVER=cover,
        RECORD=bits is not None,
        BLOCK=block,
        # 8 values a thread at most: 4 warps up to 1K values, 16 warps from 4K.
        num_warps=4 if block <= 1024 else (8 if block <= 4096 else 16),
    )
