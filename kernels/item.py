"""Kernel 1: one item over a capacity range, fused: one read of f(c), one of f(c - w), one write, the decision bit.

Semantics are the pass contract of knapsack_gpu/dense/passes/base.py for ping-pong rows: the launch covers every cell
where the output row may differ from the input (this item's range and what the previous launch changed, see
passes/triton_pass.py), writing f(c) outside the item's [lo, hi], the update inside, and the prefix value V_j above
top in standard mode (above the previous item's top it reads V_{j-1}, not the row). Decision bits are OR-ed into the
item's plane of the (zeroed) table where the item is taken.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .common import item_arrays, load_item, load_prev, update_cells

# 1024 elements and 4 warps per program: the usual streaming-kernel setting (8 elements per thread, 4-8 KB in flight
# per program); not tuned on a device yet, benchmarks/gpu_check.py measures it against the copy bandwidth.
BLOCK = 1024
NUM_WARPS = 4


@triton.jit
def _item_kernel(
    src_ptr,
    dst_ptr,
    bits_ptr,
    pdelta_ptr,
    w_ptr,
    v_ptr,
    lo_ptr,
    hi_ptr,
    top_ptr,
    tail_ptr,
    j,
    start,
    end,
    top0,
    COVER: tl.constexpr,
    RECORD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)  # capacities reach 1e9 and more: offsets in int64
    c = start + pid * BLOCK + tl.arange(0, BLOCK)
    w, v, lo, hi, top, tail = load_item(w_ptr, v_ptr, lo_ptr, hi_ptr, top_ptr, tail_ptr, j)
    inside = c < end
    ptop, ptail = load_prev(top_ptr, tail_ptr, j, top0)
    rows = (src_ptr, dst_ptr, bits_ptr, pdelta_ptr)
    update_cells(*rows, c, inside, j, w, v, lo, hi, top, tail, ptop, ptail, COVER, RECORD)


def item_update(
    src: torch.Tensor,
    dst: torch.Tensor,
    bits: torch.Tensor | None,
    pdelta: torch.Tensor | None,
    items: dict[str, torch.Tensor],
    j: int,
    start: int,
    end: int,
    top0: int,
    cover: bool,
) -> None:
    """Apply item ``j`` to the profile ``src`` over capacities [start, end), writing ``dst`` there.

    Args:
        src, dst: 1-D profiles of the same length, dtype and device.
        bits: zeroed uint8 decision table (ragged layout), or None; pdelta: int64 per plane, offset - base.
        items: device arrays "w", "lo", "hi", "top" (int64), "v", "tail" (profile dtype), indexed by item.
        j: the item's index in those arrays (and its decision bit).
        start, end: the launch range.
        top0: the schedule's top before the first item (see passes/base.py).
        cover: complement mode.
    """
    if end <= start:
        return
    grid = (triton.cdiv(end - start, BLOCK),)
    _item_kernel[grid](
        src,
        dst,
        bits if bits is not None else src,
        pdelta if pdelta is not None else items["w"],
        *item_arrays(items),
        j,
        start,
        end,
        top0,
        COVER=cover,
        RECORD=bits is not None,
        BLOCK=BLOCK,
        num_warps=NUM_WARPS,
    )
