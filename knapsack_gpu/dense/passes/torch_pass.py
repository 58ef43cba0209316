"""The device-generic pass: torch ops on any device (the CUDA path when Triton is unavailable, or when its two rows
do not fit).

The row is updated in place over each item's range, in descending chunks of at most CHUNK cells: a chunk's candidate
f(c - w) + v is materialised into its own buffer first and reads only cells below the chunk's top, which no later
chunk of this item has changed, so the in-place max reads only old values. One row and a chunk, not two rows: at
C = 1e10 that is the difference between a plan that fits one H200 and one that does not. Decisions go to an 8-row
boolean staging buffer (all False between groups); every eight items, viewing a plane's columns as int64 words
(eight capacities of one item per word, each byte 0 or 1), shifting row j left by j and summing the rows puts item
j's decision in bit j of every byte. No op allocates per item except the split's flip.
"""

from __future__ import annotations

import torch

from .base import BitLayout, ForwardPass, Job, round8, split_range, wide_split

# 16M cells a chunk: a few launches an item at C = 1e10, and a candidate buffer of 64 MB (int32) beside the row.
CHUNK = 1 << 24


class TorchPass(ForwardPass):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._shift_rows = None

    @property
    def _shifts(self) -> torch.Tensor:
        if self._shift_rows is None:  # made on first use: a pass object also sizes plans for absent devices
            self._shift_rows = torch.arange(8, dtype=torch.int64, device=self.device)[:, None]
        return self._shift_rows

    def workspace_bytes(self, length: int, record: bool) -> int:
        return (length + min(length, CHUNK)) * self.itemsize + (8 * round8(length) if record else 0)

    def reserve(self, m: int, length: int) -> None:
        self.ws.get("row", length, self.dtype)
        self.ws.get("cand", min(length, CHUNK), self.dtype)

    def run(self, job: Job, bits: tuple[torch.Tensor, BitLayout] | None) -> torch.Tensor:
        L = job.length
        row = self.ws.get("row", L, self.dtype)
        cand_all = self.ws.get("cand", min(L, CHUNK), self.dtype)
        self.init_profile(job, row)
        s = job.schedule
        record = bits is not None
        if record:
            table, layout = bits
            L8 = round8(L)
            stage = self.ws.get("stage", 8 * L8, torch.bool).view(8, L8)
            stage.zero_()
        cover = job.cover
        decide = torch.ge if cover else torch.gt
        to_py = float if self.dtype.is_floating_point else int
        filled = s.top0  # cells above it hold V_{j-1}, filled as the prefix weight grows
        m = job.m
        ops = self.init_ops(job) + record  # the staging rows' zero_
        for j0, (ws, vs, los, his, tops, befores) in s.lists():
            for i, w in enumerate(ws):
                j = j0 + i
                v, lo, hi = to_py(vs[i]), los[i], his[i]
                if not cover and tops[i] > filled:
                    row[filled + 1 : tops[i] + 1].fill_(to_py(befores[i]))
                    filled = tops[i]
                    ops += 1
                st = stage[j & 7] if record else None
                if self.progress is not None and hi >= lo:
                    self.progress.add(hi - lo + 1)
                start = max(w, lo)
                b = hi + 1
                while b > start:
                    a = max(start, b - CHUNK)
                    cand = cand_all[: b - a]
                    torch.add(row[a - w : b - w], v, out=cand)
                    cur = row[a:b]
                    if record:
                        decide(cand, cur, out=st[a:b])
                    torch.maximum(cur, cand, out=cur)
                    ops += 3 if record else 2
                    b = a
                if cover:
                    k = min(w, hi + 1)
                    if k > lo:
                        cur = row[lo:k]
                        if record:
                            torch.le(cur, v, out=st[lo:k])
                        cur.clamp_(min=v)
                        ops += 2 if record else 1
                if record and ((j & 7) == 7 or j == m - 1):
                    g = j >> 3
                    base, size = int(layout.base[g]), int(layout.length[g])
                    if size:
                        group = stage[: (j & 7) + 1, base : base + size].view(torch.int64)
                        group.bitwise_left_shift_(self._shifts[: (j & 7) + 1])
                        torch.sum(group, dim=0, out=layout.plane(table, g).view(torch.int64))
                        group.zero_()
                        ops += 3
        if not cover and filled < L - 1:
            row[filled + 1 :].fill_(to_py(s.final))
            ops += 1
        self.launches += ops
        return row

    def split(self, fa: torch.Tensor, fb: torch.Tensor, cap: int) -> tuple[int, float | int]:
        c, best, ops = torch_split(self.meter, fa, fb, cap, self.wide_split)
        self.launches += ops
        return c, best


def torch_split(meter, fa: torch.Tensor, fb: torch.Tensor, cap: int, wide: bool) -> tuple[int, float | int, int]:
    """Split on the device; only the index and the value cross back. ``wide``: sum in int64 (reduced values).

    Returns:
        (c, the sum there, the torch ops it issued).
    """
    c_lo, c_hi = split_range(fa.shape[0], fb.shape[0], cap)
    if wide:

        def chunk_best(s0: int, s1: int) -> tuple[int, int]:
            t = fa[s0:s1].to(torch.int64) + fb[cap - s1 + 1 : cap - s0 + 1].flip(0).to(torch.int64)
            value, i = torch.max(t, dim=0)
            return int(value.item()), int(i.item())

        # 32 B a cell: the flip, both int64 copies and their sum; 5 ops a chunk
        c, best, chunks = wide_split(c_lo, c_hi, chunk_best, meter, 4 * 8)
        return c, best, 5 * chunks
    a = fa[c_lo : c_hi + 1]
    with meter.temporary(a.numel() * a.element_size()):  # torch.flip has no out=
        a.add_(fb[cap - c_hi : cap - c_lo + 1].flip(0))
    best, i = torch.max(a, dim=0)
    return c_lo + int(i.item()), best.item(), 3  # flip, add, max (then the index and value cross back)
