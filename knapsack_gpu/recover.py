"""Recover the chosen items: one pass with a bit table when it fits, else Hirschberg splits down to bit-table leaves.

The host drives the recursion; every forward pass runs on the pass's device and only the split index and value (and
the bits a backtrack reads) cross back. A split hands capacities c and cap - c to the halves: they add up to exactly
cap (PyTorch's dp_knapsack_sliding_hirschberg hands out cap + 1 and returns plans over budget, pytorch#197871), and a
half's profile is cut at the total weight of its items, beyond which it is flat.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .memory import format_bytes
from .passes.base import ForwardPass, Job


@dataclass
class RecoveryStats:
    strategy: str = "bits"
    passes: int = 0
    item_passes: int = 0
    cell_updates: int = 0
    leaves: int = 0
    depth: int = 0
    extra: dict = field(default_factory=dict)


def min_bytes(p: ForwardPass, m: int, length: int) -> int:
    """The least working memory any plan needs: the pass's buffers, the kept half-profile and the split."""
    return p.workspace_bytes(length, False) + p.items_bytes(m) + length * p.itemsize + p.split_bytes(length)


def bits_bytes(p: ForwardPass, m: int, length: int) -> int:
    """Working memory of the single-pass plan: the pass's buffers, decision staging and the whole bit table."""
    return p.workspace_bytes(length, True) + p.items_bytes(m) + p.bits_bytes(m, length)


class Recovery:
    """Solve one reduced job exactly.

    Args:
        p: the forward pass (backend and device).
        job: all items, full profile length.
        limit: working-memory limit in bytes.
    """

    def __init__(self, p: ForwardPass, job: Job, limit: int):
        self.p = p
        self.job = job
        self.limit = limit
        self.stats = RecoveryStats()
        self.prefix = np.concatenate([[0], np.cumsum(job.weights)]).tolist()

    def run(self) -> tuple[list[int], int | float]:
        """Returns (ascending local indices chosen, the DP optimum in DP units)."""
        job, p = self.job, self.p
        L = job.length
        if bits_bytes(p, job.m, L) <= self.limit:
            self.stats.strategy = "bits"
            self._start(job.m)
            return self._leaf(job, L - 1)
        need = min_bytes(p, job.m, L)
        if need > self.limit:
            raise MemoryError(
                f"this instance needs at least {need} bytes ({format_bytes(need)}) of working memory on "
                f"{p.device} (profile length {L}, {p.dtype}); memory_limit is {self.limit} "
                f"({format_bytes(self.limit)})"
            )
        self.stats.strategy = "hirschberg"
        self._start(job.m * (self._levels(need) + 1))
        self.keep = p.ws.get("keep", L, p.dtype)
        return self._split(0, job.m, job.length - 1, 0)

    def _levels(self, base: int) -> int:
        """Estimated split levels above the bit-table leaves (assuming halves keep the whole profile length)."""
        m, d = self.job.m, 0
        while m > 1 and self.p.bits_bytes(m, self.job.length) + 8 * self.job.length > self.limit - base:
            m, d = (m + 1) // 2, d + 1
        return d

    def _start(self, item_passes: int) -> None:
        if self.p.progress is not None:
            self.p.progress.start(item_passes)

    def _sub(self, lo: int, hi: int, length: int) -> Job:
        j = self.job
        return Job(j.weights[lo:hi], j.values[lo:hi], length, j.cover, j.dtype, j.sentinel)

    def _forward(self, job: Job, bits=None):
        self.stats.passes += 1
        self.stats.item_passes += job.m
        self.stats.cell_updates += job.schedule.cells
        return self.p.run(job, bits)

    def _leaf(self, job: Job, start: int) -> tuple[list[int], int | float]:
        from .backtrack import backtrack

        self.stats.leaves += 1
        bits = self.p.new_bits(job.m, job.length)
        try:
            profile = self._forward(job, bits)
            value = profile[start].item()
            chosen = backtrack(bits, job, start)
        finally:
            self.p.meter.free(bits)
            for name in self.p.record_buffers:
                self.p.ws.release(name)
        return chosen, value

    def _solve(self, lo: int, hi: int, cap: int, depth: int) -> list[int]:
        """Chosen items among lo..hi-1 with capacity (or cover level) cap, as indices of the whole job."""
        m = hi - lo
        total = self.prefix[hi] - self.prefix[lo]
        cover = self.job.cover
        if m == 0:
            return []
        if cover:
            if cap == 0:
                return list(range(lo, hi))  # nothing to cover: keep everything
            if cap >= total:
                return []  # must leave out everything
        else:
            if cap >= total:
                return list(range(lo, hi))
            if cap == 0:
                return []
        if m == 1:
            return []  # the single item does not fit (standard) or must be left out (cover)
        length = min(cap, total) + 1
        p = self.p
        if p.record_extra_bytes(length) + p.bits_bytes(m, length) <= self.p.meter.room():
            self.stats.depth = max(self.stats.depth, depth)
            chosen, _ = self._leaf(self._sub(lo, hi, length), length - 1)
            return [lo + i for i in chosen]
        return self._split(lo, hi, cap, depth)[0]

    def _split(self, lo: int, hi: int, cap: int, depth: int) -> tuple[list[int], int | float]:
        mid = (lo + hi) // 2
        la = min(cap, self.prefix[mid] - self.prefix[lo]) + 1
        lb = min(cap, self.prefix[hi] - self.prefix[mid]) + 1
        fa = self.keep[:la]
        fa.copy_(self._forward(self._sub(lo, mid, la))[:la])
        fb = self._forward(self._sub(mid, hi, lb))
        c, value = self.p.split(fa, fb, cap)
        chosen = self._solve(lo, mid, c, depth + 1) + self._solve(mid, hi, cap - c, depth + 1)
        return chosen, value
