"""Kernel 3: a run of items whose launch ranges are narrow, all in one launch of one program.

The torch.compile partitioner's regime (n up to thousands, C <= ~1e4), and any pass whose windows are narrow (n =
10,000 items over a few thousand cells each): a launch per item would cost more than its work. One program walks the
items in order over the two ping-pong rows, each item over its own launch range [start_j, end_j) (the same ranges
the per-item launches would cover, see passes/triton_pass.py) in chunks of CHUNK cells, with one barrier between
items: a barrier orders the block's global reads and writes, so item j + 1 reads what item j wrote. Nothing is held
in registers across items, so no profile length or dtype can spill; the rows stay in L1/L2 when they are short.
Decision bits are OR-ed into the (zeroed) table per item where the item is taken.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .common import item_arrays, load_item, load_prev, update_cells

# Below this many cells a launch range is "narrow" (passes/triton_pass.py sends it here): one SM moves 16K cells of
# 8-byte values (3 accesses each, ~400 KB from L1/L2) in a few microseconds, about one launch's overhead.
MAX_CELLS = 16384
# 2048 cells per step at 8 warps: 8 values a thread, so 8-byte values with their int64 capacities fit far below
# the register limit, and 256 threads keep enough loads in flight for one SM's share of the L2 bandwidth.
CHUNK = 2048
NUM_WARPS = 8


@triton.jit
def _sweep_kernel(
    a_ptr,
    b_ptr,
    bits_ptr,
    pdelta_ptr,
    start_ptr,
    end_ptr,
    w_ptr,
    v_ptr,
    lo_ptr,
    hi_ptr,
    top_ptr,
    tail_ptr,
    j0,
    m,
    top0,
    COVER: tl.constexpr,
    RECORD: tl.constexpr,
    CHUNK: tl.constexpr,
):
    x = tl.arange(0, CHUNK)
    for i in range(m):
        j = j0 + i
        if i % 2 == 0:  # item j reads the row item j - 1 wrote
            src_ptr, dst_ptr = a_ptr, b_ptr
        else:
            src_ptr, dst_ptr = b_ptr, a_ptr
        w, v, lo, hi, top, tail = load_item(w_ptr, v_ptr, lo_ptr, hi_ptr, top_ptr, tail_ptr, j)
        ptop, ptail = load_prev(top_ptr, tail_ptr, j, top0)
        end = tl.load(end_ptr + i)
        for c0 in range(tl.load(start_ptr + i), end, CHUNK):
            c = c0 + x
            rows = (src_ptr, dst_ptr, bits_ptr, pdelta_ptr)
            update_cells(*rows, c, c < end, j, w, v, lo, hi, top, tail, ptop, ptail, COVER, RECORD)
        tl.debug_barrier()


def sweep(
    a: torch.Tensor,
    b: torch.Tensor,
    bits: torch.Tensor | None,
    pdelta: torch.Tensor | None,
    ranges: tuple[torch.Tensor, torch.Tensor],
    items: dict[str, torch.Tensor],
    j0: int,
    m: int,
    top0: int,
    cover: bool,
) -> None:
    """Apply items j0 .. j0 + m - 1 one after the other, item j0 + i over [start[i], end[i]), from row ``a``.

    Args:
        a, b: 1-D profiles (ping-pong rows; ``a`` holds the profile before item j0).
        bits: zeroed uint8 decision table (ragged layout), or None; pdelta: int64 per plane, offset - base.
        ranges: (start, end) int64 device arrays of at least m entries, the launch range of each item.
        items: device arrays "w", "lo", "hi", "top" (int64), "v", "tail" (profile dtype), indexed by item.
        j0, m: the run of items.
        top0: the schedule's top before the first item (see passes/base.py).
        cover: complement mode.

    The profile after the last item is in ``b`` for odd m, in ``a`` for even m.
    """
    if m <= 0:
        return
    _sweep_kernel[(1,)](
        a,
        b,
        bits if bits is not None else a,
        pdelta if pdelta is not None else items["w"],
        *ranges,
        *item_arrays(items),
        j0,
        m,
        top0,
        COVER=cover,
        RECORD=bits is not None,
        CHUNK=CHUNK,
        num_warps=NUM_WARPS,
    )
