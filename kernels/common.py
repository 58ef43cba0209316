"""The per-item update every kernel applies, written once (see knapsack_gpu/dense/passes/base.py for the contract)."""

from __future__ import annotations

import triton
import triton.language as tl

ITEM_ARRAYS = ("w", "v", "lo", "hi", "top", "tail")
"""The per-item device arrays, in the order every kernel takes them."""


def item_arrays(items: dict) -> tuple:
    return tuple(items[name] for name in ITEM_ARRAYS)


@triton.jit
def load_item(w_ptr, v_ptr, lo_ptr, hi_ptr, top_ptr, tail_ptr, j):
    """Item j's weight, value, update range [lo, hi], prefix bound top and tail value V_j (per-item arrays: Python
    floats would arrive as fp32)."""
    return (
        tl.load(w_ptr + j),
        tl.load(v_ptr + j),
        tl.load(lo_ptr + j),
        tl.load(hi_ptr + j),
        tl.load(top_ptr + j),
        tl.load(tail_ptr + j),
    )


@triton.jit
def load_prev(top_ptr, tail_ptr, j, top0):
    """Item j - 1's top and tail value V_{j-1} (before the first item: ``top0`` and 0): above that top the profile
    the item reads is V_{j-1} whatever the row holds, so no pass fills the prefix range on the host. top0 is 0 (the
    rows hold cell 0 of the empty profile) or L - 1 (a reduced-value job: the rows hold all of it)."""
    return tl.load(top_ptr + j - 1, mask=j > 0, other=top0), tl.load(tail_ptr + j - 1, mask=j > 0, other=0)


@triton.jit
def prefixed(old, c, ptop, ptail, COVER: tl.constexpr):
    """The profile before an item: what the row holds up to the previous item's top, V_{j-1} above (standard mode;
    in cover mode the row holds the sentinel there already)."""
    if COVER:
        return old
    return tl.where(c > ptop, ptail, old)


@triton.jit
def local(v, base, BLOCK: tl.constexpr):
    """Capacity ``v`` as an int32 index relative to ``base``, clamped to [-1, BLOCK]: comparisons of indices in
    [0, BLOCK) against it are those of the capacities, with half the registers of int64 capacities."""
    return tl.minimum(tl.maximum(v - base, -1), BLOCK).to(tl.int32)


@triton.jit
def source(c, w, COVER: tl.constexpr):
    """Where f(c)'s candidate comes from: c - w, saturating at 0 in cover mode (covering more than needed)."""
    if COVER:
        return tl.maximum(c - w, 0)
    return c - w


@triton.jit
def relax(cur, cand, c, lo, hi, top, tail, COVER: tl.constexpr):
    """New values and decisions for capacities c: the candidate wins on strict improvement (cover: on ties too)
    inside [lo, hi]; above top the standard profile is the prefix value ``tail`` (every item so far fits).

    Returns:
        (new values, decisions) shaped like ``c``.
    """
    upd = (c >= lo) & (c <= hi)
    if COVER:
        take = upd & (cand >= cur)
    else:
        take = upd & (cand > cur)
    new = tl.where(take, cand, cur)
    if not COVER:
        new = tl.where(c > top, tail, new)
    return new, take


@triton.jit
def or_bits(bits_ptr, pdelta_ptr, plane, c, byte, mask):
    """OR ``byte`` into the decision table at capacities c of ``plane`` (ragged: address = pdelta[plane] + c)."""
    addr = bits_ptr + tl.load(pdelta_ptr + plane) + c
    prev = tl.load(addr, mask=mask, other=0)
    tl.store(addr, (prev | byte).to(tl.uint8), mask=mask)


@triton.jit
def update_cells(
    src_ptr, dst_ptr, bits_ptr, pdelta_ptr, c, inside, j, w, v, lo, hi, top, tail, ptop, ptail, COVER, RECORD
):
    """Item j over capacities c (where ``inside``), from row src into row dst, straight from and to memory: one
    read of f(c), one of f(c - w), one write, and the decision bit OR-ed into the table where the item is taken."""
    old = prefixed(tl.load(src_ptr + c, mask=inside, other=0), c, ptop, ptail, COVER)
    cand = tl.load(src_ptr + source(c, w, COVER), mask=inside & (c >= lo) & (c <= hi), other=0) + v
    new, take = relax(old, cand, c, lo, hi, top, tail, COVER)
    tl.store(dst_ptr + c, new, mask=inside)
    if RECORD:
        byte = (take.to(tl.uint8) << (j % 8)).to(tl.uint8)
        or_bits(bits_ptr, pdelta_ptr, j // 8, c, byte, inside & take)
