"""Recover the chosen items: one pass with a bit table when it fits, else Hirschberg splits down to bit-table leaves.

The host drives the recursion; every forward pass runs on the pass's device and only the split index and value (and
the bits a backtrack reads) cross back. A split hands capacities c and cap - c to the halves: they add up to exactly
cap (PyTorch's dp_knapsack_sliding_hirschberg hands out cap + 1 and returns plans over budget, pytorch#197871), and a
half's profile is cut at the total weight of its items, beyond which it is flat.

Memory: the pass's buffers and the kept half-profile are reserved up front (``min_bytes``), as is room for the split's
temporary; what is left holds decision bits. The bit table is one pooled buffer that later leaves reuse, because
fresh memory is expensive to fault in (about 1.5 s/GB on the 2-core VM, against 0.1 s/GB to rewrite it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .memory import format_bytes
from .passes.base import ForwardPass, Job, round8


@dataclass
class RecoveryStats:
    strategy: str = "bits"
    passes: int = 0
    item_passes: int = 0
    cell_updates: int = 0
    leaves: int = 0
    depth: int = 0


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
        self.split_reserve = 0

    def run(self) -> tuple[list[int], int | float]:
        """Returns (ascending local indices chosen, the DP optimum in DP units)."""
        job, p = self.job, self.p
        L = job.length
        if bits_bytes(p, job.m, L) <= self.limit:
            self.stats.strategy = "bits"
            self._start(job.m)
            p.reserve(job.m, L)
            return self._leaf(self._sub(0, job.m, L, target=L - 1), L - 1)
        need = min_bytes(p, job.m, L)
        if need > self.limit:
            raise MemoryError(
                f"this instance needs at least {need} bytes ({format_bytes(need)}) of working memory on "
                f"{p.device} (profile length {L}, {p.dtype}); memory_limit is {self.limit} "
                f"({format_bytes(self.limit)})"
            )
        self.stats.strategy = "hirschberg"
        self.split_reserve = p.split_bytes(L)
        self._start(self._estimate(need))
        p.reserve(job.m, L)
        self.keep = p.ws.get("keep", L, p.dtype)
        return self._split(0, job.m, job.length - 1, 0)

    def _bits_budget(self, length: int) -> int:
        """Bytes a bit table over ``length`` capacities may take now: what the pooled table does not already hold
        is free room, minus the split's reserve and the recorder's own buffers."""
        base = self.p.meter.current - self.p.ws.nbytes("bits")
        return self.limit - self.split_reserve - base - self.p.record_extra_bytes(length)

    def _recordable(self, length: int, budget: int | None = None) -> int:
        """How many items' decisions over ``length`` capacities fit in ``budget`` bytes (default: the budget now)."""
        budget = self._bits_budget(length) if budget is None else budget
        return max(0, budget) // round8(length) * 8

    def _estimate(self, need: int) -> int:
        """Item passes the recursion will run if every sub-problem kept the whole profile length (an upper bound)."""
        k = self._recordable(self.job.length, self.limit - need - self.p.record_extra_bytes(self.job.length))

        def passes(m: int) -> int:
            if m <= max(k, 1):
                return m
            if 2 * k >= m:
                return m + passes(m - k)
            return m + 2 * passes((m + 1) // 2)

        return passes(self.job.m)

    def _start(self, item_passes: int) -> None:
        if self.p.progress is not None:
            self.p.progress.start(item_passes)

    def _sub(self, lo: int, hi: int, length: int, target: int | None = None) -> Job:
        j = self.job
        return Job(j.weights[lo:hi], j.values[lo:hi], length, j.cover, j.dtype, j.sentinel, target)

    def _forward(self, job: Job, bits=None):
        self.stats.passes += 1
        self.stats.item_passes += job.m
        self.stats.cell_updates += job.schedule.cells
        return self.p.run(job, bits)

    def _leaf(self, job: Job, start: int, before=None) -> tuple[list[int], int | float]:
        """Forward ``job`` recording bits, call ``before(profile)`` (a split), backtrack from its start capacity.

        Returns (chosen local indices, the profile's value at the start, or what ``before`` returned).
        """
        from .backtrack import backtrack

        self.stats.leaves += 1
        if self.p.ws.nbytes("bits") > self._bits_budget(job.length):
            self.p.ws.release("bits")  # a smaller table fits where the pooled one plus staging would not
        bits = self.p.new_bits(job.m, job.length)
        try:
            profile = self._forward(job, bits)
            if before is None:
                value = profile[start].item()
            else:
                start, value = before(profile)
            chosen = backtrack(bits, job, start)
        finally:
            for name in self.p.record_buffers:
                self.p.ws.release(name)
        return chosen, value

    def _solve(self, lo: int, hi: int, cap: int, depth: int) -> list[int]:
        """Chosen items among lo..hi-1 with capacity (or cover level) cap, as indices of the whole job."""
        m = hi - lo
        total = self.prefix[hi] - self.prefix[lo]
        if m == 0:
            return []
        if self.job.cover:
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
        if self._recordable(length) >= m:
            self.stats.depth = max(self.stats.depth, depth)
            chosen, _ = self._leaf(self._sub(lo, hi, length, target=length - 1), length - 1)
            return [lo + i for i in chosen]
        return self._split(lo, hi, cap, depth)[0]

    def _split(self, lo: int, hi: int, cap: int, depth: int) -> tuple[list[int], int | float]:
        """Split lo..hi-1 into A and B, forward both, pick the exact split c, recurse with c and cap - c.

        When the bit table of at least half the items fits, B is that many items and its pass records them: B's
        items are then read off its own split pass, and only A recurses (T(n) = nC + T(n - k), not nC + 2T(n/2)).
        """
        m = hi - lo
        length = min(cap, self.prefix[hi] - self.prefix[lo]) + 1
        k = min(self._recordable(length), m - 1)
        record = 2 * k >= m
        mid = hi - k if record else (lo + hi) // 2
        la = min(cap, self.prefix[mid] - self.prefix[lo]) + 1
        lb = min(cap, self.prefix[hi] - self.prefix[mid]) + 1
        fa = self.keep[:la]
        fa.copy_(self._forward(self._sub(lo, mid, la))[:la])
        if record:
            split = {}

            def at_split(fb):
                c, value = self.p.split(fa, fb, cap)
                split["c"] = c
                return cap - c, value

            right, value = self._leaf(self._sub(mid, hi, lb), lb - 1, before=at_split)
            self.stats.depth = max(self.stats.depth, depth)
            return self._solve(lo, mid, split["c"], depth + 1) + [mid + i for i in right], value
        fb = self._forward(self._sub(mid, hi, lb))
        c, value = self.p.split(fa, fb, cap)
        chosen = self._solve(lo, mid, c, depth + 1) + self._solve(mid, hi, cap - c, depth + 1)
        return chosen, value
