"""Walk a decision-bit table from the last item to the first (layout: passes/base.py)."""

from __future__ import annotations

import numpy as np

from ..lazy import torch
from .passes.base import BitLayout, Job

# A table up to this size crosses to the host whole (one copy); a larger one is read one plane at a time, only over
# the capacities that plane can reach, so a multi-GB device table costs n / 8 small copies.
WHOLE_COPY_BYTES = 16 << 20


def backtrack(bits: tuple[torch.Tensor, BitLayout], job: Job, start: int) -> list[int]:
    """Recover the chosen items of ``job`` from its decision bits.

    Args:
        bits: (table, layout) as written by a pass over ``job``.
        job: the pass's job.
        start: capacity (standard) or cover level (cover) to walk back from, <= job.length - 1.

    Returns:
        Ascending local indices of the items in the knapsack (in cover mode: the items not left out).
    """
    table, layout = bits
    s = job.schedule
    cover = job.cover
    whole = table.cpu().numpy() if table.device.type == "cpu" or table.numel() <= WHOLE_COPY_BYTES else None
    c = start
    chosen: list[int] = []
    window, lo, hi = None, 0, -1  # plane bytes for capacities [lo, hi]
    for j in range(job.m - 1, -1, -1):
        if j == job.m - 1 or (j & 7) == 7:
            g = j >> 3
            base, size = int(layout.base[g]), int(layout.length[g])
            if whole is not None:
                off = int(layout.offset[g])
                window, lo, hi = whole[off : off + size], base, base + size - 1
            else:  # only the capacities this plane can reach from c
                reach = max(base, c - int(s.w[g << 3 : j + 1].sum()))
                top = min(c, base + size - 1)
                window = layout.plane(table, g)[reach - base : top - base + 1].cpu().numpy() if top >= reach else None
                lo, hi = reach, top
        w = int(s.w[j])
        bit = lo <= c <= hi and (int(window[c - lo]) >> (j & 7)) & 1
        if cover:
            if bit:
                c = c - w if c > w else 0  # left out: it covers w
            else:
                chosen.append(j)
        elif c > s.top[j] or bit:
            # Above top every item so far fits and the pass wrote no bit: taken (see passes/base.py).
            chosen.append(j)
            c -= w
    chosen.reverse()
    return chosen


def bit_array(bits: tuple[torch.Tensor, BitLayout], m: int, length: int) -> np.ndarray:
    """Unpack to a bool array of shape (m, length), for tests and debugging."""
    table, layout = bits
    data = table.cpu().numpy()
    out = np.zeros((m, length), dtype=bool)
    for j in range(m):
        g = j >> 3
        base, size, off = int(layout.base[g]), int(layout.length[g]), int(layout.offset[g])
        n = min(size, length - base)
        if n > 0:
            out[j, base : base + n] = (data[off : off + n] >> (j & 7)) & 1
    return out
