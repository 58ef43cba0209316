"""Kernel 2: k consecutive light items per launch, over capacity tiles carrying a halo of their summed weights.

A program loads f on [t0 - H, t0 + T) (H = the k weights' sum, T = BLOCK - H), applies the k items one after the
other in registers, and writes only [t0, t0 + T): after item i the values are exact from t0 - H + (w_0 + .. + w_i) up,
so the output tile is exact after all k. The shifted read f(c - w) needs other threads' values, so each item goes
through a per-program scratch block (two, alternating: one barrier per item) that stays in L1/L2. HBM then sees one
read and one write of the profile per k items instead of per item. Decision bits of the k items (all in one byte
plane: the launcher aligns groups to planes when recording) accumulate in a register byte and are stored once.

Programs are persistent (a grid of at most MAX_PROGRAMS looping over the tiles), so the scratch is small.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .common import item_arrays, load_item, relax, source

# 8192 values per tile: 32 (int32) to 64 (int64) registers a thread at 8 warps. A halo of at most a quarter keeps
# at least 75% of every load useful. Items heavier than that go to kernel 1. Not yet tuned on a device.
BLOCK = 8192
NUM_WARPS = 8
HALO_MAX = BLOCK // 4
K_MAX = 16
# Persistent grid: enough programs to fill a large GPU (132 SMs on an H200, a few programs each).
MAX_PROGRAMS = 1024


@triton.jit
def _tile_kernel(
    src_ptr,
    dst_ptr,
    bits_ptr,
    scratch_ptr,
    w_ptr,
    v_ptr,
    lo_ptr,
    hi_ptr,
    tail_ptr,
    j0,
    k,
    halo,
    length,
    row8,
    n_tiles,
    COVER: tl.constexpr,
    RECORD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    x = tl.arange(0, BLOCK)
    scratch = scratch_ptr + pid.to(tl.int64) * (2 * BLOCK)
    tile_out = BLOCK - halo
    for t in range(pid, n_tiles, tl.num_programs(0)):
        base = tl.cast(t, tl.int64) * tile_out - halo  # global capacity of local index 0
        c = base + x
        cur = tl.load(src_ptr + c, mask=(c >= 0) & (c < length), other=0)
        acc = tl.zeros([BLOCK], dtype=tl.uint8)
        tl.debug_barrier()  # the previous tile's last reads of the scratch are done
        for i in range(k):
            j = j0 + i
            w, v, lo, hi = load_item(w_ptr, v_ptr, lo_ptr, hi_ptr, j)
            buf = scratch + (i % 2) * BLOCK
            tl.store(buf + x, cur)
            tl.debug_barrier()
            s = source(c, w, COVER) - base  # local index of the candidate's source
            # s < 0: the source lies below this tile's region. Such cells are halo cells that are not exact yet
            # whatever they hold, and never reach the output (there s >= halo - w >= 0).
            cand = tl.load(buf + s, mask=(c >= lo) & (c <= hi) & (s >= 0), other=0) + v
            cur, take = relax(cur, cand, c, lo, hi, tl.load(tail_ptr + j), COVER)
            if RECORD:
                acc = acc | (take.to(tl.uint8) << (j % 8)).to(tl.uint8)
        out = (x >= halo) & (c < length)
        tl.store(dst_ptr + c, cur, mask=out)
        if RECORD:
            plane = bits_ptr + tl.cast(j0 // 8, tl.int64) * row8 + c
            in_row = (x >= halo) & (c < row8)
            started = (tl.zeros([BLOCK], dtype=tl.int32) + j0 % 8) != 0  # the plane began in an earlier launch
            prev = tl.load(plane, mask=in_row & started, other=0)
            tl.store(plane, (acc | prev).to(tl.uint8), mask=in_row)


def plan_groups(weights: list[int], record: bool) -> list[tuple[int, int]]:
    """Split items into launches (first item, count): runs of light items for kernel 2, single items for kernel 1.

    A run grows while its weights sum to at most HALO_MAX and it has at most K_MAX items; when recording it also
    stays inside one byte plane (eight items), so a tile writes each of its bit bytes once.
    """
    groups = []
    j, m = 0, len(weights)
    while j < m:
        k, halo = 1, weights[j]
        if halo <= HALO_MAX:
            limit = min(K_MAX, 8 - (j & 7)) if record else K_MAX
            while k < limit and j + k < m and halo + weights[j + k] <= HALO_MAX:
                halo += weights[j + k]
                k += 1
        groups.append((j, k))
        j += k
    return groups


def scratch_numel(row8: int) -> int:
    """Scratch elements any launch over a profile of row8 capacities needs (two blocks per persistent program)."""
    n_tiles = triton.cdiv(row8, BLOCK - HALO_MAX)
    return min(n_tiles, MAX_PROGRAMS) * 2 * BLOCK


def tile_update(
    src: torch.Tensor,
    dst: torch.Tensor,
    bits: torch.Tensor | None,
    scratch: torch.Tensor,
    items: dict[str, torch.Tensor],
    j0: int,
    k: int,
    halo: int,
    cover: bool,
) -> None:
    """Apply items j0 .. j0 + k - 1 (weights summing to ``halo`` <= HALO_MAX) to ``src``, writing ``dst``.

    Args:
        src, dst: 1-D profiles (ping-pong rows).
        bits: uint8 (planes, round8(L)) decision table or None; recording needs the k items in one plane.
        scratch: at least ``scratch_numel(round8(L))`` elements of the profile dtype.
        items: device arrays "w", "lo", "hi" (int64), "v", "tail" (profile dtype).
        j0, k, halo: the run of items and the sum of their weights.
        cover: complement mode.
    """
    assert 0 <= halo <= HALO_MAX and 1 <= k
    assert bits is None or (j0 // 8) == ((j0 + k - 1) // 8), "a recorded run must stay in one byte plane"
    length = src.shape[0]
    row8 = (length + 7) & ~7
    n_tiles = triton.cdiv(row8, BLOCK - halo)
    grid = (min(n_tiles, MAX_PROGRAMS),)
    _tile_kernel[grid](
        src,
        dst,
        bits if bits is not None else src,
        scratch,
        *item_arrays(items),
        j0,
        k,
        halo,
        length,
        row8,
        n_tiles,
        COVER=cover,
        RECORD=bits is not None,
        BLOCK=BLOCK,
        num_warps=NUM_WARPS,
    )
