"""Kernel 2: k consecutive light items per launch, over capacity tiles carrying a halo of their summed weights.

A program loads f on [t0 - H, t0 + T) (H = the k weights' sum, T = BLOCK - H), applies the k items one after the
other in registers, and writes only [t0, t0 + T): after item i the values are exact from t0 - H + (w_0 + .. + w_i) up,
so the output tile is exact after all k. The shifted read f(c - w) needs other threads' values, so each item goes
through a per-program scratch block (two, alternating: one barrier per item) that stays in L1/L2. HBM then sees one
read and one write of the profile per k items instead of per item. Decision bits of the k items (all in one plane:
the launcher aligns groups to planes when recording) accumulate in a register byte and are OR-ed in once.

Tiles cover the launch range [start, end) only (see passes/triton_pass.py). Programs are persistent (a grid of at
most MAX_PROGRAMS looping over the tiles), so the scratch is small.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .common import item_arrays, load_item, load_prev, local, or_bits, prefixed, relax

# 8192 values per tile at 16 warps: 16 values a thread, which with the bit byte and the int32 index keeps every
# variant within 128 registers, so no spill and one 16-warp block per SM (25% occupancy; int32/float32 without bits
# reach 50%), where 32 values a thread at 8 warps took 180-255 registers and one 8-warp block (12.5%).
# benchmarks/kernel_report.py prints each variant. A halo of at most a quarter keeps at least 75% of every load
# useful; items heavier than that go to kernel 1.
BLOCK = 8192
NUM_WARPS = 16
# ptxas's own choice left 4 B of spill at 64 registers with triton 3.6 (int32, no bits); allowing the 128 that 512
# threads may use anyway removes it.
MAXNREG = 128
HALO_MAX = BLOCK // 4
K_MAX = 16
# Persistent grid: enough programs to fill a large GPU (132 SMs on an H200, a few programs each).
MAX_PROGRAMS = 1024


@triton.jit
def _tile_kernel(
    src_ptr,
    dst_ptr,
    bits_ptr,
    pdelta_ptr,
    scratch_ptr,
    w_ptr,
    v_ptr,
    lo_ptr,
    hi_ptr,
    top_ptr,
    tail_ptr,
    j0,
    k,
    halo,
    start,
    end,
    length,
    n_tiles,
    top0,
    COVER: tl.constexpr,
    RECORD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    # Everything per element is an int32 index x into the tile; capacities stay scalar (int64) and are compared
    # through local(): the values and the bit byte are then the only per-element state kept across the k items.
    x = tl.arange(0, BLOCK)
    scratch = scratch_ptr + pid.to(tl.int64) * (2 * BLOCK)
    tile_out = BLOCK - halo
    ptop, ptail = load_prev(top_ptr, tail_ptr, j0, top0)
    for t in range(pid, n_tiles, tl.num_programs(0)):
        base = start + tl.cast(t, tl.int64) * tile_out - halo  # capacity of local index 0
        zero = local(0, base, BLOCK)  # local index of capacity 0 (-1 when it lies below the tile)
        cur = tl.load(src_ptr + base + x, mask=(x >= zero) & (x < local(length, base, BLOCK)), other=0)
        cur = prefixed(cur, x, local(ptop, base, BLOCK), ptail, COVER)
        acc = tl.zeros([BLOCK], dtype=tl.uint8)
        tl.debug_barrier()  # the previous tile's last reads of the scratch are done
        for i in range(k):
            j = j0 + i
            w, v, lo, hi, top, tail = load_item(w_ptr, v_ptr, lo_ptr, hi_ptr, top_ptr, tail_ptr, j)
            buf = scratch + (i % 2) * BLOCK
            tl.store(buf + x, cur)
            tl.debug_barrier()
            s = x - w.to(tl.int32)  # local index of the candidate's source (w <= halo <= BLOCK)
            if COVER:
                s = tl.maximum(s, zero)  # covering more than needed: the source saturates at capacity 0
            # s < 0: the source lies below this tile's region. Such cells are halo cells that are not exact yet
            # whatever they hold, and never reach the output (there s >= halo - w >= 0).
            upd_lo, upd_hi = local(lo, base, BLOCK), local(hi, base, BLOCK)
            cand = tl.load(buf + s, mask=(x >= upd_lo) & (x <= upd_hi) & (s >= 0), other=0) + v
            cur, take = relax(cur, cand, x, upd_lo, upd_hi, local(top, base, BLOCK), tail, COVER)
            if RECORD:
                acc = acc | (take.to(tl.uint8) << (j % 8)).to(tl.uint8)
        out = (x >= halo) & (x < local(end, base, BLOCK))
        tl.store(dst_ptr + base + x, cur, mask=out)
        if RECORD:
            or_bits(bits_ptr, pdelta_ptr, j0 // 8, base + x, acc, out & (acc != 0))


def plan_groups(weights: list[int], record: bool, first: int = 0) -> list[tuple[int, int]]:
    """Split items first, first + 1, .. (their ``weights``) into launches (first item, count): runs of light items
    for kernel 2, single items for kernel 1.

    A run grows while its weights sum to at most HALO_MAX and it has at most K_MAX items; when recording it also
    stays inside one plane (eight items), so a tile ORs each of its bit bytes once.
    """
    groups = []
    j, m = first, first + len(weights)
    while j < m:
        k, halo = 1, weights[j - first]
        if halo <= HALO_MAX:
            limit = min(K_MAX, 8 - (j & 7)) if record else K_MAX
            while k < limit and j + k < m and halo + weights[j + k - first] <= HALO_MAX:
                halo += weights[j + k - first]
                k += 1
        groups.append((j, k))
        j += k
    return groups


def scratch_numel(length: int) -> int:
    """Scratch elements any launch over at most ``length`` capacities needs (two blocks per persistent program)."""
    n_tiles = triton.cdiv(length, BLOCK - HALO_MAX)
    return min(n_tiles, MAX_PROGRAMS) * 2 * BLOCK


def tile_update(
    src: torch.Tensor,
    dst: torch.Tensor,
    bits: torch.Tensor | None,
    pdelta: torch.Tensor | None,
    scratch: torch.Tensor,
    items: dict[str, torch.Tensor],
    j0: int,
    k: int,
    halo: int,
    start: int,
    end: int,
    top0: int,
    cover: bool,
) -> None:
    """Apply items j0 .. j0 + k - 1 (weights summing to ``halo`` <= HALO_MAX) to ``src`` over [start, end).

    Args:
        src, dst: 1-D profiles (ping-pong rows).
        bits: zeroed uint8 decision table (ragged layout) or None; recording needs the k items in one plane.
        pdelta: int64 per plane, offset - base.
        scratch: at least ``scratch_numel(end - start)`` elements of the profile dtype.
        items: device arrays "w", "lo", "hi", "top" (int64), "v", "tail" (profile dtype).
        j0, k, halo: the run of items and the sum of their weights.
        start, end: the launch range.
        top0: the schedule's top before the first item (see passes/base.py).
        cover: complement mode.
    """
    assert 0 <= halo <= HALO_MAX and 1 <= k
    assert bits is None or (j0 // 8) == ((j0 + k - 1) // 8), "a recorded run must stay in one plane"
    if end <= start:
        return
    n_tiles = triton.cdiv(end - start, BLOCK - halo)
    grid = (min(n_tiles, MAX_PROGRAMS),)
    _tile_kernel[grid](
        src,
        dst,
        bits if bits is not None else src,
        pdelta if pdelta is not None else items["w"],
        scratch,
        *item_arrays(items),
        j0,
        k,
        halo,
        start,
        end,
        src.shape[0],
        n_tiles,
        top0,
        COVER=cover,
        RECORD=bits is not None,
        BLOCK=BLOCK,
        num_warps=NUM_WARPS,
        maxnreg=MAXNREG,
    )
