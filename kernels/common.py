"""The per-item update every kernel applies, written once (see knapsack_gpu/passes/base.py for the contract)."""

from __future__ import annotations

import triton
import triton.language as tl


def item_arrays(items: dict) -> tuple:
    """The per-item device arrays in the order every kernel takes them: load_item's (w, v, lo, hi), then tail."""
    return items["w"], items["v"], items["lo"], items["hi"], items["tail"]


@triton.jit
def load_item(w_ptr, v_ptr, lo_ptr, hi_ptr, j):
    """Item j's weight, value and update range [lo, hi] (per-item arrays: Python floats would arrive as fp32)."""
    return tl.load(w_ptr + j), tl.load(v_ptr + j), tl.load(lo_ptr + j), tl.load(hi_ptr + j)


@triton.jit
def source(c, w, COVER: tl.constexpr):
    """Where f(c)'s candidate comes from: c - w, saturating at 0 in cover mode (covering more than needed)."""
    if COVER:
        return tl.maximum(c - w, 0)
    return c - w


@triton.jit
def relax(cur, cand, c, lo, hi, tail, COVER: tl.constexpr):
    """New values and decisions for capacities c: the candidate wins on strict improvement (cover: on ties too)
    inside [lo, hi]; above hi the standard profile is the prefix value ``tail``.

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
        new = tl.where(c > hi, tail, new)
    return new, take
