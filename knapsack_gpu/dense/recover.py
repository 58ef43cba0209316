"""Recover the chosen items of a dense plan: one pass with a bit table when it fits, else Hirschberg splits down to
bit-table leaves.

The host drives the recursion; every forward pass runs on the pass's device and only the split index and values (and
the bits a backtrack reads) cross back. A split hands capacities c and cap - c to the halves: they add up to exactly
cap (PyTorch's dp_knapsack_sliding_hirschberg hands out cap + 1 and returns plans over budget, pytorch#197871), and a
half's profile is cut at the total weight of its items, beyond which it is flat.

Pruned plans give every pass windows (:mod:`knapsack_gpu.bounds`) for the value it must reach: the top-level pass the
lower bound, a sub-problem the exact value its split promised, so deeper passes are narrower still.

Memory: the pass's buffers and the kept half-profile are reserved up front (``plan.min_bytes``), as is room for the
split's temporary; what is left holds decision bits. The bit table is one pooled buffer that later leaves reuse,
because fresh memory is expensive to fault in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..memory import format_bytes
from ..plan import min_bytes, single_pass_bytes
from ..reduced import Scale
from .passes.base import BitLayout, ForwardPass, Job, round8

# (pass start, pass stop, sub-problem start, sub-problem stop, capacity, value to reach) -> (lo, hi) windows of the
# pass's items (job indices); None for an unpruned plan.
WindowFn = Callable[[int, int, int, int, int, float], tuple[np.ndarray, np.ndarray]]


@dataclass
class RecoveryStats:
    strategy: str = "bits"
    passes: int = 0
    item_passes: int = 0
    cell_updates: int = 0
    leaves: int = 0
    depth: int = 0


class Recovery:
    """Solve one dense job exactly.

    Args:
        p: the forward pass (backend and device).
        job: all items, full profile length, the top-level windows (if pruned).
        limit: working-memory limit in bytes.
        windows: how passes get their windows (None: unpruned).
        threshold: the value the whole job must reach (the lower bound) when pruned.
        slack: subtracted from a sub-problem's promised value before it becomes a window threshold (float values
            carry rounding; 0 for integers).
        scale: the job's reduced values (:mod:`knapsack_gpu.reduced`), or None. Values inside the recursion (what
            a split promised, what a profile holds) are then h = Q*f - P*c at their capacity; windows and the
            result are in f.
    """

    def __init__(
        self,
        p: ForwardPass,
        job: Job,
        limit: int,
        windows: WindowFn | None = None,
        threshold: float | None = None,
        slack: float = 0.0,
        scale: Scale | None = None,
    ):
        self.p = p
        self.scale = scale
        self.job = job
        self.limit = limit
        self.windows = windows if threshold is not None else None
        self.threshold = threshold
        self.slack = slack
        self.stats = RecoveryStats()
        self.prefix = np.concatenate([[0], np.cumsum(np.minimum(job.weights, job.length))])
        self.split_reserve = 0

    def run(self) -> tuple[list[int], int | float]:
        """Returns (ascending local indices chosen, the DP optimum in DP units)."""
        job, p = self.job, self.p
        L = job.length
        reach = self.threshold
        if reach is not None and self.scale is not None:
            reach = self.scale.reduced(reach, L - 1)
        window = job.window if job.window is not None else self._window(0, job.m, 0, job.m, L - 1, reach)
        top = self._sub(0, job.m, L, target=L - 1, window=window)
        room = self.limit - p.meter.current  # what the caller holds outside this recovery (per-item state)
        if single_pass_bytes(p, job.m, L, BitLayout.of(top.schedule, L).nbytes) <= room:
            self.stats.strategy = "bits"
            self._start(top.schedule.cells, "dense pass")
            p.reserve(job.m, L)
            chosen, value = self._leaf(top, L - 1)
            return chosen, self._value(value, L - 1)
        need = min_bytes(p, job.m, L)
        if need > room:
            held = self.limit - room
            raise MemoryError(
                f"a dense plan needs memory_limit >= {need + held} bytes ({format_bytes(need + held)}: {held} of "
                f"per-item state, {need} for profile length {L} in {p.dtype} on {p.device}); memory_limit is "
                f"{self.limit} ({format_bytes(self.limit)})"
            )
        self.stats.strategy = "hirschberg"
        self.split_reserve = p.split_bytes(L)
        # cells: the top pass's, times the item passes the recursion may run over the items it has
        self._start(top.schedule.cells * self._estimate(room - need) // max(1, job.m), "Hirschberg")
        p.reserve(job.m, L)
        self.keep = p.ws.get("keep", L, p.dtype)
        chosen, value = self._split(0, job.m, L - 1, 0, reach)
        return chosen, self._value(value, L - 1)

    def _value(self, value, cap: int):
        """The DP's value at ``cap`` in f from what a profile holds there."""
        return value if self.scale is None else self.scale.value(value, cap)

    def _bits_budget(self, length: int) -> int:
        """Bytes a bit table over ``length`` capacities may take now: what the pooled table does not already hold
        is free room, minus the split's reserve and the recorder's own buffers."""
        base = self.p.meter.current - self.p.ws.nbytes("bits")
        return self.limit - self.split_reserve - base - self.p.record_extra_bytes(length)

    def _recordable(self, length: int, budget: int) -> int:
        """How many items' decisions over ``length`` capacities surely fit in ``budget`` bytes, counting whole rows
        (a ragged table is never larger)."""
        return max(0, budget) // round8(length) * 8

    def _fits(self, job: Job) -> bool:
        """Whether ``job``'s (ragged) bit table fits the budget now."""
        return BitLayout.of(job.schedule, job.length).nbytes <= self._bits_budget(job.length)

    def _recordable_suffix(self, lo: int, hi: int, cap: int) -> int:
        """The most items at the end of lo..hi-1 (at most hi - lo - 1) whose untargeted table fits now; windows
        would only shrink it."""
        best, a, b = 0, 1, hi - lo - 1
        while a <= b:
            k = (a + b) // 2
            lb = min(cap, int(self.prefix[hi] - self.prefix[hi - k])) + 1
            if self._fits(self._sub(hi - k, hi, lb)):
                best, a = k, k + 1
            else:
                b = k - 1
        return best

    def _estimate(self, spare: int) -> int:
        """Item passes the recursion will run if every sub-problem kept the whole profile length (an upper bound),
        with ``spare`` bytes beyond the minimum for bits."""
        k = self._recordable(self.job.length, spare - self.p.record_extra_bytes(self.job.length))

        def passes(m: int) -> int:
            if m <= max(k, 1):
                return m
            if 2 * k >= m:
                return m + passes(m - k)
            return m + 2 * passes((m + 1) // 2)

        return passes(self.job.m)

    def _start(self, cells: int, phase: str) -> None:
        if self.p.progress is not None:
            self.p.progress.start(cells, "cells", phase)

    def _sub(self, lo: int, hi: int, length: int, target: int | None = None, window=None) -> Job:
        j = self.job
        return Job(j.weights[lo:hi], j.values[lo:hi], length, j.cover, j.dtype, j.sentinel, target, window, j.ramp)

    def _window(self, a: int, b: int, lo: int, hi: int, cap: int, reach) -> tuple[np.ndarray, np.ndarray] | None:
        """Windows of a pass over items a..b-1 inside the sub-problem lo..hi-1 that must reach ``reach`` (a profile
        value at ``cap``: h for reduced values, which the windows see as f)."""
        if self.windows is None:
            return None
        if self.scale is not None and reach is not None:
            reach = self.scale.value(reach, cap)  # whole numbers only: promised values are exact
        return self.windows(a, b, lo, hi, cap, reach)

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
        layout = BitLayout.of(job.schedule, job.length)
        if self.p.ws.nbytes("bits") > self._bits_budget(job.length):
            self.p.ws.release("bits")  # a smaller table fits where the pooled one plus staging would not
        bits = self.p.new_bits(layout)
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

    def _solve(self, lo: int, hi: int, cap: int, depth: int, value) -> list[int]:
        """Chosen items among lo..hi-1 with capacity (or cover level) cap worth ``value`` (exactly, as the split
        found it), as job indices."""
        m = hi - lo
        total = int(self.prefix[hi] - self.prefix[lo])
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
        window = self._window(lo, hi, lo, hi, cap, value - self.slack)
        leaf = self._sub(lo, hi, length, target=length - 1, window=window)
        if self._fits(leaf):
            self.stats.depth = max(self.stats.depth, depth)
            chosen, _ = self._leaf(leaf, length - 1)
            return [lo + i for i in chosen]
        return self._split(lo, hi, cap, depth, value - self.slack)[0]

    def _split(self, lo: int, hi: int, cap: int, depth: int, reach) -> tuple[list[int], int | float]:
        """Split lo..hi-1 into A and B, forward both, pick the exact split c, recurse with c and cap - c.

        When the bit table of at least half the items fits, B is that many items and its pass records them: B's
        items are then read off its own split pass, and only A recurses (T(n) = nC + T(n - k), not nC + 2T(n/2)).
        ``reach``: the value the passes' windows keep (None: unpruned).
        """
        m = hi - lo
        k = self._recordable_suffix(lo, hi, cap)
        record = 2 * k >= m
        mid = hi - k if record else (lo + hi) // 2
        la = min(cap, int(self.prefix[mid] - self.prefix[lo])) + 1
        lb = min(cap, int(self.prefix[hi] - self.prefix[mid])) + 1
        wa = self._window(lo, mid, lo, hi, cap, reach)
        wb = self._window(mid, hi, lo, hi, cap, reach)
        fa = self.keep[:la]
        fa.copy_(self._forward(self._sub(lo, mid, la, window=wa))[:la])
        split = {}

        def at_split(fb):
            c, total = self.p.split(fa, fb, cap)
            split["c"], split["b"] = c, fb[cap - c].item()
            split["a"] = total - split["b"]  # what A's part is worth at c
            # Reduced rows hold h - offset: a sum of two halves carries the offset twice, the whole once.
            return cap - c, total + (self.scale.offset if self.scale is not None else 0)

        if record:
            right, total = self._leaf(self._sub(mid, hi, lb, window=wb), lb - 1, before=at_split)
            self.stats.depth = max(self.stats.depth, depth)
            left = self._solve(lo, mid, split["c"], depth + 1, split["a"])
            return left + [mid + i for i in right], total
        _, total = at_split(self._forward(self._sub(mid, hi, lb, window=wb)))
        c, a, b = split["c"], split["a"], split["b"]
        chosen = self._solve(lo, mid, c, depth + 1, a) + self._solve(mid, hi, cap - c, depth + 1, b)
        return chosen, total
