"""The device-generic pass: torch ops on any device (the CUDA path when Triton is unavailable).

The row is updated in place: the candidate f(c - w) + v is materialised into its own buffer first, so the in-place
max reads only old values. Decisions go to an 8-row boolean staging buffer; every eight items, viewing it as int64
words (eight capacities of one item per word, each byte 0 or 1), shifting row j left by j and summing the rows puts
item j's decision in bit j of every byte, the shared bit layout. No op allocates per item.
"""

from __future__ import annotations

import torch

from .base import ForwardPass, Job, round8, split_range


class TorchPass(ForwardPass):
    name = "torch"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._shifts = torch.arange(8, dtype=torch.int64, device=self.device)[:, None]

    def workspace_bytes(self, length: int, record: bool) -> int:
        return 2 * length * self.itemsize + (8 * round8(length) if record else 0)

    def reserve(self, m: int, length: int) -> None:
        self.ws.get("row", length, self.dtype)
        self.ws.get("cand", length, self.dtype)

    def run(self, job: Job, bits: torch.Tensor | None) -> torch.Tensor:
        L = job.length
        row = self.ws.get("row", L, self.dtype)
        cand_all = self.ws.get("cand", L, self.dtype)
        self.init_profile(job, row)
        s = job.schedule
        record = bits is not None
        if record:
            L8 = round8(L)
            stage = self.ws.get("stage", 8 * L8, torch.bool).view(8, L8)
        cover = job.cover
        decide = torch.ge if cover else torch.gt
        progress = self.progress.update if self.progress is not None else None
        to_py = float if self.dtype.is_floating_point else int
        filled = 0
        m = job.m
        for j in range(m):
            w, v, lo, hi = s.weights[j], to_py(s.values[j]), s.lo[j], s.hi[j]
            if not cover and hi > filled:
                row[filled + 1 : hi + 1].fill_(to_py(s.before[j]))
                filled = hi
            if record:
                st = stage[j & 7]
                if lo > 0:
                    st[: min(lo, hi + 1)].zero_()
                if hi + 1 < L8:
                    st[hi + 1 :].zero_()
            start = max(w, lo)
            if start <= hi:
                cand = cand_all[: hi + 1 - start]
                torch.add(row[start - w : hi + 1 - w], v, out=cand)
                cur = row[start : hi + 1]
                if record:
                    decide(cand, cur, out=st[start : hi + 1])
                torch.maximum(cur, cand, out=cur)
            if cover:
                k = min(w, hi + 1)
                if k > lo:
                    cur = row[lo:k]
                    if record:
                        torch.le(cur, v, out=st[lo:k])
                    cur.clamp_(min=v)
            if record and ((j & 7) == 7 or j == m - 1):
                k = (j & 7) + 1
                group = stage[:k].view(torch.int64)
                group.bitwise_left_shift_(self._shifts[:k])
                torch.sum(group, dim=0, out=bits[j >> 3].view(torch.int64))
            if progress is not None:
                progress(max(hi - lo + 1, 0))
        if not cover and filled < L - 1:
            row[filled + 1 :].fill_(to_py(s.final))
        return row

    def split(self, fa: torch.Tensor, fb: torch.Tensor, cap: int) -> tuple[int, float | int]:
        return torch_split(self.meter, fa, fb, cap)


def torch_split(meter, fa: torch.Tensor, fb: torch.Tensor, cap: int) -> tuple[int, float | int]:
    """Split on the device; only the index and the value cross back."""
    c_lo, c_hi = split_range(fa.shape[0], fb.shape[0], cap)
    a = fa[c_lo : c_hi + 1]
    with meter.temporary(a.numel() * a.element_size()):  # torch.flip has no out=
        a.add_(fb[cap - c_hi : cap - c_lo + 1].flip(0))
    best, i = torch.max(a, dim=0)
    return c_lo + int(i.item()), best.item()
