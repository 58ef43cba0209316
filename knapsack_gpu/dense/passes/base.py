"""One forward DP sweep: the contract every backend (numpy, torch, triton) implements.

Standard mode, profile f over capacities c = 0..L-1, item j = (w, v):
    f'(c) = max(f(c), f(c - w) + v)   for lo_j <= c <= hi_j
Cover mode (the complement: u(d) = best -lost value covering at least d of weight), value -v:
    u'(d) = max(u(d), u(max(d - w, 0)) - v)   for lo_j <= d <= hi_j
The update range [lo_j, hi_j] lies within [w (standard) or 0 (cover), top_j], top_j = min(L - 1, W_j) with W_j the
prefix weight of items 0..j. Above top_j nothing changes in cover mode (covering more than W_j is impossible: the
sentinel stays), and in standard mode the profile is the prefix value V_j, which passes fill lazily instead of
computing. Inside [lo, top] a job may narrow the range further:
- ``target``: only f(target) is wanted (a bit-table leaf): item j skips c < target - (weight of the items after j),
  which no backtrack from target reaches;
- ``window``: capacities that cannot lie on a solution worth the bounds' threshold (see :mod:`knapsack_gpu.bounds`).
  Cells outside keep their older values: still achievable, never overstated, and every cell of a good enough
  solution is inside, so f(target) is exact whenever the optimum reaches the threshold.

Decisions: standard takes an item only on strict improvement (">"), which is dp_knapsack's tie-breaking; cover leaves
an item out on ">=", which selects the same set. Decisions are recorded only inside [lo, hi]: elsewhere the item is
not taken, except above top_j in standard mode, where every item so far fits and the backtrack takes it.

Bit table (one layout for every backend, :class:`BitLayout`): items in planes of eight; bit j % 8 of a byte is item
j's decision. Plane g stores capacities [base_g, base_g + length_g), the union of its items' update ranges rounded out
to multiples of 8, at byte offset offset_g of one flat uint8 buffer: ragged rows, so a narrow window costs no more
bits than cells. A CPU pass packs a group of eight with two vector ops and a GPU kernel accumulates it in registers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...arith import saturating_cumsum
from ...lazy import torch
from ...memory import Meter, Workspace, element_size
from ...progress import Reporter

# Per-item scalars reach the hot loops as Python lists, this many items at a time: list entries cost ~40 bytes each,
# so a whole million-item schedule as lists would be hundreds of MB; chunks keep it to a few hundred KB.
LIST_CHUNK = 4096
RAMP_CHUNK = 1 << 20  # a reduced profile's initial ramp is written this many cells at a time (an int64 temporary)


def split_chunk(length: int) -> int:
    """Cells a reduced-value split sums at a time in int64: at most 64 chunks a split, and an int64 temporary of at
    most an eighth of a byte a cell (4096 cells at least), so the split never needs more than the rows it reads."""
    return max(1, min(length, max(4096, length >> 6)))


def round8(n: int) -> int:
    return (n + 7) & ~7


@dataclass
class Schedule:
    """Per-item update ranges as compact arrays (int64 unless noted). ``lo > hi`` means the item updates nothing.

    Attributes:
        w: weights; v: values (DP dtype, negated in cover mode).
        lo, hi: the update range; top: min(L - 1, W_j), the prefix weight bound.
        before: standard mode, value of the tail above top before item j (V_{j-1}, DP dtype); final: after the last.
        cells: total cells updated, sum of max(hi - lo + 1, 0).
        top0: the top before the first item: 0 (the empty profile is V_{-1} = 0 above cell 0), or L - 1 for a
            reduced-value job, whose rows hold the whole empty profile (no prefix rule).
    """

    w: np.ndarray
    v: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    top: np.ndarray
    before: np.ndarray
    final: object
    cells: int
    top0: int = 0

    def lists(self, names: str = "w v lo hi top before") -> Iterator[tuple[int, tuple[list, ...]]]:
        """(first item, per-name Python lists) for consecutive chunks of items."""
        arrays = [getattr(self, name) for name in names.split()]
        m = self.w.shape[0]
        for j0 in range(0, m, LIST_CHUNK):
            yield j0, tuple(a[j0 : j0 + LIST_CHUNK].tolist() if a.size else [] for a in arrays)


@dataclass
class Job:
    """A forward pass over a run of items.

    Attributes:
        weights: int64 array (m,), item weights in DP units, in processing order.
        values: array (m,) in the DP dtype, negated in cover mode.
        length: profile length L (capacity + 1).
        cover: complement mode.
        dtype: DP dtype.
        sentinel: cover mode's "cannot cover" value (most negative the DP may meet); unused in standard mode.
        target: when set, only the value at this capacity is wanted (see the module docstring).
        window: optional (lo, hi) arrays (m,) of capacities that may matter (standard mode; floats allowed,
            +-inf for unbounded sides).
        ramp: (P, h0, F) for reduced values (:mod:`knapsack_gpu.reduced`, standard mode): the profile is
            h = Q*f - P*c less a constant, empty as max(h0 - P*c, F), and without the prefix rule (above the prefix
            weight h is not constant).
    """

    weights: np.ndarray
    values: np.ndarray
    length: int
    cover: bool
    dtype: torch.dtype
    sentinel: object = None
    target: int | None = None
    window: tuple[np.ndarray, np.ndarray] | None = None
    ramp: tuple[int, int, int] | None = None

    @property
    def m(self) -> int:
        return int(self.weights.shape[0])

    @cached_property
    def schedule(self) -> Schedule:
        L, w = self.length, self.weights
        prefix = saturating_cumsum(w, L - 1)
        top = prefix if self.ramp is None else np.full_like(w, L - 1)
        lo = np.zeros_like(w) if self.cover else w.copy()
        hi = top.copy()
        if self.target is not None and w.size:
            # A backtrack from target meets item j at c >= target - (weight of the items after j).
            after = np.append(saturating_cumsum(w[::-1], L)[::-1][1:], 0)
            np.maximum(lo, self.target - after, out=lo)
        if self.window is not None:
            wlo, whi = self.window
            np.maximum(lo, np.clip(np.ceil(wlo), 0, L).astype(np.int64), out=lo)
            np.minimum(hi, np.clip(np.floor(whi), -1, L - 1).astype(np.int64), out=hi)
        cells = int(np.maximum(hi - lo + 1, 0).sum())
        np_dtype = self.values.dtype
        if self.cover:
            before, final = self.values[:0], None
        else:
            # The tail value V_{j-1} is used only while items 0..j-1 all fit (prefix weight < L), where it is at
            # most the optimum; past that point it is clipped, never wrapped.
            wide = np.float64 if np_dtype.kind == "f" else np.int64
            with np.errstate(over="ignore"):  # float sums past float64 turn inf only where unused
                sums = np.cumsum(self.values, dtype=wide)
            if np_dtype.kind != "f":
                limit = np.iinfo(np_dtype).max
                over = np.flatnonzero((sums > limit) | (sums < 0))  # past limit, or wrapped past int64
                if over.size:
                    sums[over[0] :] = limit
            values = np.concatenate([[0], sums]).astype(np_dtype)
            before, final = values[:-1], values[-1]
        top0 = 0 if self.ramp is None else L - 1
        return Schedule(self.weights, self.values, lo, hi, top, before, final, cells, top0)


@dataclass(frozen=True)
class BitLayout:
    """Where each plane of eight items keeps its decision bits (see the module docstring).

    Attributes:
        base: int64 (planes,), first capacity stored (a multiple of 8).
        length: int64 (planes,), capacities stored (a multiple of 8, 0 for a plane that records nothing).
        offset: int64 (planes,), byte offset in the flat buffer (a multiple of 8).
        nbytes: the buffer's size.
    """

    base: np.ndarray
    length: np.ndarray
    offset: np.ndarray
    nbytes: int

    @staticmethod
    def of(schedule: Schedule, length: int) -> BitLayout:
        lo, hi = schedule.lo, schedule.hi
        m = lo.size
        planes = (m + 7) // 8
        pad = planes * 8 - m
        big = np.iinfo(np.int64).max
        lo_p = np.concatenate([np.where(lo <= hi, lo, big), np.full(pad, big)]).reshape(planes, 8).min(axis=1)
        hi_p = np.concatenate([np.where(lo <= hi, hi, -1), np.full(pad, -1)]).reshape(planes, 8).max(axis=1)
        used = hi_p >= lo_p
        base = np.where(used, lo_p & ~7, 0)
        size = np.where(used, ((hi_p + 8) & ~7) - base, 0)
        size = np.minimum(size, round8(length) - base)
        offset = np.concatenate([[0], np.cumsum(size)])
        return BitLayout(base.astype(np.int64), size.astype(np.int64), offset[:-1].astype(np.int64), int(offset[-1]))

    def plane(self, table: torch.Tensor, g: int) -> torch.Tensor:
        """Plane g's bytes: capacities [base_g, base_g + length_g)."""
        start = int(self.offset[g])
        return table[start : start + int(self.length[g])]


class ForwardPass(ABC):
    """A backend's forward pass. Buffers come from a shared :class:`Workspace`, so they are allocated once."""

    record_buffers: tuple[str, ...] = ("stage",)
    """Workspace buffers only recording uses; released after each bit-table leaf so splits keep their room."""

    def __init__(
        self,
        device: torch.device,
        dtype: torch.dtype,
        ws: Workspace,
        progress: Reporter | None = None,
        reduced: bool = False,
    ):
        self.device = device
        self.dtype = dtype
        self.ws = ws
        self.progress = progress
        self.itemsize = element_size(dtype)
        # Reduced values (knapsack_gpu/reduced.py) in a dtype narrower than int64: a split's sum of two halves can
        # pass the row dtype (each half uses the span), so splits add in int64, a chunk at a time.
        self.wide_split = reduced and not dtype.is_floating_point and torch.iinfo(dtype).bits < 64
        self.launches = 0
        """Device operations issued so far (kernel launches, fills, host-to-device copies; torch ops on the torch
        backend): the per-item overhead a GPU pays whatever the cells, counted without one."""

    @property
    def meter(self) -> Meter:
        return self.ws.meter

    @abstractmethod
    def workspace_bytes(self, length: int, record: bool) -> int:
        """Bytes of the buffers :meth:`run` takes from the workspace for a profile of ``length`` (bits excluded)."""

    @abstractmethod
    def reserve(self, m: int, length: int) -> None:
        """Allocate the buffers every pass of up to ``m`` items and ``length`` capacities needs (not recording):
        ``workspace_bytes(length, False) + items_bytes(m)``. Later passes reuse them, so nothing grows mid-solve."""

    @abstractmethod
    def run(self, job: Job, bits: tuple[torch.Tensor, BitLayout] | None) -> torch.Tensor:
        """Run every item of ``job`` from the empty profile.

        Args:
            job: the items and profile length.
            bits: (a zeroed uint8 table on the device, its layout) to record decisions into, or None.

        Returns:
            The final profile, a tensor of ``job.length`` on the device, valid until the next call.
        """

    @abstractmethod
    def split(self, fa: torch.Tensor, fb: torch.Tensor, cap: int) -> tuple[int, float | int]:
        """(c, fa[c] + fb[cap - c]) maximising the sum over the c where both indices are inside; may overwrite fa."""

    def items_bytes(self, m: int) -> int:
        """Bytes of per-item arrays the pass keeps on the device for ``m`` items."""
        return 0

    def split_bytes(self, length: int) -> int:
        """Temporary bytes :meth:`split` needs beyond its inputs."""
        if self.wide_split:
            return 4 * 8 * split_chunk(length)  # int64 chunks of both halves, the flip and the sum
        return length * self.itemsize

    def record_extra_bytes(self, length: int) -> int:
        """Bytes recording decisions at ``length`` would add to what the workspace already holds (bits excluded)."""
        return max(0, 8 * round8(length) - self.ws.nbytes("stage"))

    def new_bits(self, layout: BitLayout) -> tuple[torch.Tensor, BitLayout]:
        """A zeroed table for ``layout``: a view of one pooled buffer that only grows."""
        t = self.ws.get("bits", layout.nbytes, torch.uint8)
        t.zero_()
        return t, layout

    def init_profile(self, job: Job, row: torch.Tensor) -> None:
        """Empty profile: zeros (standard: the rest is filled lazily), 0 then the cannot-cover sentinel, or a
        reduced-value job's max(h0 - P*c, F) over the whole row."""
        if job.ramp is not None:
            P, h0, floor = job.ramp
            row.fill_(floor)
            cells = ramp_cells(job)
            for a in range(0, cells, RAMP_CHUNK):
                b = min(cells, a + RAMP_CHUNK)
                row[a:b].copy_(torch.arange(a, b, device=row.device).mul_(-P).add_(h0).clamp_(min=floor))
            return
        if job.cover:
            row[1:].fill_(job.sentinel)
        row[:1].zero_()

    def init_ops(self, job: Job) -> int:
        """Device operations :meth:`init_profile` issues for one row."""
        if job.ramp is not None:
            return 1 + 5 * -(-ramp_cells(job) // RAMP_CHUNK)  # fill, then arange, mul, add, clamp, copy per chunk
        return 2 if job.cover else 1

    def report(self, s: Schedule, first: int, stop: int) -> None:
        """Tell the progress listener the cells of items first..stop-1 are done (passes that report as they go,
        per chunk or per item, call ``progress.add`` themselves)."""
        if self.progress is not None:
            self.progress.add(int(np.maximum(s.hi[first:stop] - s.lo[first:stop] + 1, 0).sum()))


def ramp_cells(job: Job) -> int:
    """The cells of a reduced-value job's empty profile above its floor: max(h0 - P*c, F) > F for c below this."""
    P, h0, floor = job.ramp
    return min(job.length, (h0 - floor) // P + 1)


def wide_split(c_lo: int, c_hi: int, chunk_best, meter: Meter, bytes_per_cell: int) -> tuple[int, int, int]:
    """The first c in [c_lo, c_hi] maximising a split's sum, formed in int64 a chunk at a time (reduced values: two
    halves' sum can pass the row dtype). ``chunk_best(s0, s1)`` -> (best sum, its offset) over [s0, s1), using
    ``bytes_per_cell`` of temporaries, which the meter counts.

    Returns:
        (c, the sum there, how many chunks ran).
    """
    best, at = None, c_lo
    step = split_chunk(c_hi + 1 - c_lo)
    chunks = range(c_lo, c_hi + 1, step)
    for s0 in chunks:
        s1 = min(c_hi + 1, s0 + step)
        with meter.temporary(bytes_per_cell * (s1 - s0)):
            value, i = chunk_best(s0, s1)
        if best is None or value > best:  # strict: the first maximum, as one argmax over the range
            best, at = value, s0 + i
    return at, best, len(chunks)


def split_range(la: int, lb: int, cap: int) -> tuple[int, int]:
    """The c in [0, cap] with c < la and cap - c < lb; outside it one side is saturated and no better."""
    return max(0, cap - (lb - 1)), min(cap, la - 1)
