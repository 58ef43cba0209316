"""Walk a decision-bit table from the last item to the first (layout: see passes/base.py)."""

from __future__ import annotations

import numpy as np
import torch

from .passes.base import Job

# A table up to this size crosses to the host whole (one copy); a larger one is read one 8-item group at a time,
# only over the capacities that group can reach, so a multi-GB device table costs n / 8 small copies.
WHOLE_COPY_BYTES = 16 << 20


def backtrack(bits: torch.Tensor, job: Job, start: int) -> list[int]:
    """Recover the chosen items of ``job`` from its decision bits.

    Args:
        bits: uint8 (ceil(m / 8), round8(L)) as written by a pass over ``job``.
        job: the pass's job.
        start: capacity (standard) or cover level (cover) to walk back from, <= job.length - 1.

    Returns:
        Ascending local indices of the items in the knapsack (in cover mode: the items not left out).
    """
    s = job.schedule
    weights, his, cover = s.weights, s.hi, job.cover
    whole = None
    if bits.device.type == "cpu":
        whole = bits.numpy()
    elif bits.numel() <= WHOLE_COPY_BYTES:
        whole = bits.cpu().numpy()
    c = start
    chosen: list[int] = []
    window, base = None, 0
    for j in range(job.m - 1, -1, -1):
        if j == job.m - 1 or (j & 7) == 7:
            g = j >> 3
            if whole is not None:
                window = whole[g]
            else:  # only the capacities this group can reach from c
                base = max(0, c - sum(weights[g << 3 : j + 1]))
                window = bits[g, base : c + 1].cpu().numpy()
        w = weights[j]
        if cover:
            if (int(window[c - base]) >> (j & 7)) & 1:
                c = c - w if c > w else 0  # left out: it covers w
            else:
                chosen.append(j)
        elif c > his[j] or (int(window[c - base]) >> (j & 7)) & 1:
            # Above hi every item so far fits and the pass wrote no bit: taken (see passes/base.py).
            chosen.append(j)
            c -= w
    chosen.reverse()
    return chosen


def bit_array(bits: torch.Tensor, m: int, length: int) -> np.ndarray:
    """Unpack to a bool array of shape (m, length), for tests and debugging."""
    table = bits.cpu().numpy()
    out = np.zeros((m, length), dtype=bool)
    for j in range(m):
        out[j] = (table[j >> 3, :length] >> (j & 7)) & 1
    return out
