"""One forward DP sweep: the contract every backend (numpy, torch, triton) implements.

Standard mode, profile f over capacities c = 0..L-1, item (w, v):
    f'(c) = max(f(c), f(c - w) + v)   for lo <= c <= hi, lo = w
Cover mode (the complement: u(d) = best -lost value covering at least d of weight), value -v:
    u'(d) = max(u(d), u(max(d - w, 0)) - v)   for 0 <= d <= hi
where hi = min(L - 1, prefix weight W_j). Above W_j nothing changes in cover mode (covering more than W_j is
impossible: the sentinel stays), and in standard mode the profile is the constant prefix value V_j, which the pass
fills lazily instead of computing. Decision bits: standard takes an item only on strict improvement (">"), which is
dp_knapsack's tie-breaking; cover leaves an item out on ">=", which selects the same set. Bits above hi are never
written: the backtrack treats them as "taken" in standard mode (every item fits there) and cover mode never visits them.

Bit layout, shared by every backend: a uint8 tensor of shape (ceil(n / 8), L8), L8 = L rounded up to 8; bit j % 8 of
byte [j // 8, c] is the decision of item j at capacity c. Eight items share one byte per capacity, so a CPU pass
packs a group of eight with two vector ops and a GPU kernel accumulates a group in registers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from ..memory import Meter, Workspace, element_size
from ..progress import Progress


def round8(n: int) -> int:
    return (n + 7) & ~7


@dataclass
class Schedule:
    """Per-item update ranges, as Python lists so the hot loop never touches numpy scalars it does not need."""

    weights: list[int]
    values: list  # numpy scalars of the DP dtype (negated in cover mode)
    lo: list[int]
    hi: list[int]
    before: list  # standard mode: value of the tail above hi before each item (prefix value sum V_{j-1})
    final: object  # standard mode: the tail value after the last item
    cells: int


@dataclass
class Job:
    """A forward pass over a run of items.

    Attributes:
        weights: int64 array (m,), item weights in DP units.
        values: array (m,) in the DP dtype, negated in cover mode.
        length: profile length L (capacity + 1).
        cover: complement mode.
        dtype: DP dtype.
        sentinel: cover mode's "cannot cover" value (most negative the DP may meet); unused in standard mode.
        target: when set, only the value at this capacity is wanted (a bit-table leaf): items skip the capacities
            no backtrack from ``target`` can reach, and the rest of the final profile is not meaningful.
    """

    weights: np.ndarray
    values: np.ndarray
    length: int
    cover: bool
    dtype: torch.dtype
    sentinel: object = None
    target: int | None = None

    @property
    def m(self) -> int:
        return int(self.weights.shape[0])

    @cached_property
    def schedule(self) -> Schedule:
        L = self.length
        w = self.weights
        # Capping weights at L keeps the cumulative sum in int64 and does not change min(L - 1, W_j).
        capped = np.cumsum(np.minimum(w, L))
        hi = np.minimum(capped, L - 1)
        lo = np.zeros_like(w) if self.cover else w
        if self.target is not None:
            # Only f(target) is wanted: a backtrack from target meets item j at c >= target - (weight after j),
            # and every read of item j's update lies above that bound for item j - 1. (A capped weight only
            # hides bounds that are <= 0 anyway.)
            after = capped[-1] - capped if w.size else capped
            lo = np.maximum(lo, self.target - after)
        cells = int(np.maximum(hi - lo + 1, 0).sum())
        np_dtype = self.values.dtype
        wide = np.float64 if np_dtype.kind == "f" else np.int64
        # Prefix sums of values run in the wide type: entries past the point where items stop fitting may exceed
        # the DP dtype, but those are never used (the tail is only filled while every item so far fits).
        prefix = np.concatenate([[0], np.cumsum(self.values, dtype=wide)])
        narrow = prefix.astype(np_dtype)  # wraps past the dtype only where unused
        before = list(narrow[:-1]) if not self.cover else []
        final = narrow[-1] if not self.cover else None
        return Schedule(
            weights=w.tolist(),
            values=list(self.values),
            lo=lo.tolist(),
            hi=hi.tolist(),
            before=before,
            final=final,
            cells=cells,
        )


class ForwardPass(ABC):
    """A backend's forward pass. Buffers come from a shared :class:`Workspace`, so they are allocated once."""

    name: str = "?"
    record_buffers: tuple[str, ...] = ("stage",)
    """Workspace buffers only recording uses; released after each bit-table leaf so splits keep their room."""

    def __init__(self, device: torch.device, dtype: torch.dtype, ws: Workspace, progress: Progress | None = None):
        self.device = device
        self.dtype = dtype
        self.ws = ws
        self.progress = progress
        self.itemsize = element_size(dtype)

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
    def run(self, job: Job, bits: torch.Tensor | None) -> torch.Tensor:
        """Run every item of ``job`` from the empty profile.

        Args:
            job: the items and profile length.
            bits: uint8 (ceil(m / 8), round8(L)) on the device to record decisions into, or None.

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
        return length * self.itemsize

    def record_extra_bytes(self, length: int) -> int:
        """Bytes recording decisions at ``length`` would add to what the workspace already holds (bits excluded)."""
        return max(0, 8 * round8(length) - self.ws.nbytes("stage"))

    def bits_bytes(self, m: int, length: int) -> int:
        return ((m + 7) // 8) * round8(length)

    zero_bits: bool = False
    """Whether :meth:`run` needs a zeroed table (it ORs decisions in) or writes every byte itself."""

    def new_bits(self, m: int, length: int) -> torch.Tensor:
        """A (ceil(m / 8), round8(length)) uint8 table, a view of one pooled buffer that only grows."""
        planes, row = (m + 7) // 8, round8(length)
        t = self.ws.get("bits", planes * row, torch.uint8).view(planes, row)
        if self.zero_bits:
            t.zero_()
        return t

    def init_profile(self, job: Job, row: torch.Tensor) -> None:
        """Empty profile: zeros (standard), or 0 then the cannot-cover sentinel (cover)."""
        if job.cover:
            row[1:].fill_(job.sentinel)
            row[:1].zero_()
        else:
            row[:1].zero_()


def split_range(la: int, lb: int, cap: int) -> tuple[int, int]:
    """The c in [0, cap] with c < la and cap - c < lb; outside it one side is saturated and no better."""
    return max(0, cap - (lb - 1)), min(cap, la - 1)
