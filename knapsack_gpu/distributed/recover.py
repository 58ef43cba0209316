"""Recover the chosen items of a sharded solve: a sharded bit table when it fits, else Hirschberg splits.

- Bits: one sharded pass records decision bits on the rank that owns each capacity; the backtrack starts on the rank
  holding the target capacity and hands (item, capacity) down from rank to rank (P - 1 small messages).
- Hirschberg: split the items into halves A and B, one sharded pass over each, and pick c* maximising
  f_A(c) + f_B(C - c) by one all-reduce of every rank's best (value, capacity), ties to the smallest c. The halves get
  capacities c* and C - c*, which add up to exactly C. A sub-problem whose profile is no longer than a shard and fits a
  rank's memory is solved on one rank by the single-process solver, with no communication; sub-problems are dealt
  to ranks largest first (LPT). Larger ones recurse collectively, ending in sharded bit tables once those fit.

Every rank runs the same sequence of collective steps: the plan depends only on the problem, the world size and the
agreed (minimum) memory limit, never on rank-local state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..dense import recover
from ..memory import format_bytes
from ..stages import HOST_BYTES_PER_ITEM
from .shard import GROUP_DIVISOR, ITEMSIZE, ShardedPass, ShardJob

# Single-process memory a local sub-problem is allowed to assume it needs: the single-device solver's smallest plan
# keeps about four profiles (row, candidate, kept half, split); one more covers the backend's chunks and item arrays;
# and it holds HOST_BYTES_PER_ITEM per item on the CPU.
LOCAL_PROFILES = 5
LOCAL_SLACK = 1 << 10
# Candidate chunk: large enough that the per-op cost of torch on the CPU (5-18 us) stays below ~2% of a chunk's
# memory traffic, small enough to stay in the last-level cache.
CHUNK = 1 << 20


def smallest_chunk(shard: int) -> int:
    """The fewest cells a halo area or candidate chunk may have in a tight plan: 1/GROUP_DIVISOR of the shard.

    Each message (the serial exchange sends an item's reads a halo area at a time) and each torch op (the update runs
    a chunk at a time) has a fixed cost (tens of microseconds); at one cell an item pays it per cell, and the stated
    minimum ran minutes where a roomier limit took a second (issue 24). A share of the shard bounds an item to
    GROUP_DIVISOR of each per rank at any size, for about (3 * itemsize + 1) / GROUP_DIVISOR bytes per shard cell (a
    tenth over the Hirschberg plan's two int32 rows); the halo area then also holds a light group as large as a roomy
    plan's (group_cap = min(halo, shard / GROUP_DIVISOR))."""
    return -(-shard // GROUP_DIVISOR)


@dataclass
class Plan:
    """How one rank's memory is spent, in cells of the DP dtype unless named bytes.

    Attributes:
        strategy: "bits" (one recording pass) or "hirschberg".
        shard: the largest shard; halo: the halo area below it; chunk: the candidate chunk.
        bit_bytes: the bit table allocated up front (bits strategy).
        keep: a kept half-profile and split()'s temporary (Hirschberg).
        send: a send buffer as large as the halo area, to overlap an item's exchange with its update (0: none).
    """

    strategy: str
    shard: int
    halo: int
    chunk: int
    bit_bytes: int
    keep: bool
    send: int = 0

    def bytes(self, itemsize: int) -> int:
        keep = self.shard * itemsize + self.chunk * itemsize if self.keep else 0
        cells = self.shard + self.halo + self.send
        return cells * itemsize + self.chunk * (itemsize + 1) + keep + self.bit_bytes


def full_plans(length: int, world: int, m: int, max_weight: int, dtype: torch.dtype) -> list[Plan]:
    """The bit-table and Hirschberg plans with a halo area for the widest item and full-size chunks, each first with
    a send buffer (exchange overlapped with the update), then without."""
    shard = -(-length // world)
    need_halo = 0 if world == 1 else min(shard, max_weight)
    chunk = min(shard, CHUNK)
    bits = (m + 7) // 8 * shard
    return [
        Plan("bits", shard, need_halo, chunk, bits, False, need_halo),
        Plan("bits", shard, need_halo, chunk, bits, False),
        Plan("hirschberg", shard, need_halo, chunk, 0, True, need_halo),
        Plan("hirschberg", shard, need_halo, chunk, 0, True),
    ]


def plan_memory(limit: int, length: int, world: int, m: int, max_weight: int, dtype: torch.dtype) -> Plan:
    """Pick the strategy and buffer sizes for a profile of ``length`` over ``world`` ranks within ``limit`` bytes.

    Preference: the bit table with a halo area for the widest item; else Hirschberg with it; else the same two with a
    smaller halo area (items whose halo does not fit run rank by rank) and smaller chunks, never below
    :func:`smallest_chunk`.

    Raises:
        MemoryError: not even the smallest tight plan fits; the message gives its bytes (the stated minimum: any
            limit at or above it plans, and solves in a time of the same order as a roomy plan).
    """
    isz = ITEMSIZE[dtype]
    full = full_plans(length, world, m, max_weight, dtype)
    for plan in full:
        if plan.bytes(isz) <= limit:
            return plan
    floors = tight_floors(full)
    for least in floors:
        if least.bytes(isz) > limit:
            continue
        per_chunk = isz + 1 + (isz if least.keep else 0)
        room = limit - Plan(least.strategy, least.shard, 0, 0, least.bit_bytes, least.keep).bytes(isz)
        spare = room - least.halo * isz - least.chunk * per_chunk
        # Most of the spare room goes to the halo area (fewer items run rank by rank), a quarter to chunks; what the
        # halo area cannot use (the widest item fits) goes to chunks too.
        chunk = min(full[0].chunk, least.chunk + spare // (4 * per_chunk))
        halo = min(full[0].halo, (room - chunk * per_chunk) // isz)
        chunk = min(full[0].chunk, (room - halo * isz) // per_chunk)
        return Plan(least.strategy, least.shard, halo, chunk, least.bit_bytes, least.keep)
    need = min(p.bytes(isz) for p in floors)
    raise MemoryError(
        f"the sharded solve needs at least {need} bytes ({format_bytes(need)}) per rank for a profile of {length} "
        f"capacities ({dtype}) over {world} ranks; memory_limit is {limit} ({format_bytes(limit)}) per rank: "
        "raise it or add ranks"
    )


def tight_floors(full: list[Plan]) -> list[Plan]:
    """The bit-table and Hirschberg plans of ``full`` (no send buffer) at their smallest: halo area and chunk of
    :func:`smallest_chunk` cells, or what the roomy plan uses where that is less."""
    fewest = smallest_chunk(full[0].shard)
    return [
        Plan(p.strategy, p.shard, min(p.halo, fewest), min(p.chunk, fewest), p.bit_bytes, p.keep) for p in full[1::2]
    ]


@dataclass
class RecoveryStats(recover.RecoveryStats):
    """The single-process recovery's counters, plus the splits and the sub-problems a rank solved alone."""

    splits: int = 0
    local_subproblems: int = 0  # solved on this rank
    local_cells: int = 0
    local_peak: int = 0
    local_error: BaseException | None = field(default=None, repr=False)


class Recovery:
    """Solve one reduced problem exactly, collectively.

    Args:
        sp: the sharded pass (buffers allocated for ``plan``).
        weights: item weights in DP units (> 0), values: their DP values (> 0), both Python lists.
        orig_values: the same values as a numpy array (int64 or float64), for local sub-problems.
        capacity: in DP units, < sum(weights).
        plan: from :func:`plan_memory`.
        limit: per-rank memory limit (bytes), for local sub-problems too.
    """

    def __init__(self, sp: ShardedPass, weights: list[int], values: list, orig_values: np.ndarray, capacity: int,
                 plan: Plan, limit: int):  # fmt: skip
        self.sp = sp
        self.comm = sp.comm
        self.w, self.v, self.orig_values = weights, values, orig_values
        self.capacity = capacity
        self.plan = plan
        self.limit = limit
        self.isz = ITEMSIZE[sp.dtype]
        self.prefix = [0]
        for x in weights:
            self.prefix.append(self.prefix[-1] + x)
        self.stats = RecoveryStats(strategy=plan.strategy)
        self.local_cap = -(-(capacity + 1) // self.comm.world)
        self.keep = None

    def _job(self, lo: int, hi: int, length: int, target: int | None = None) -> ShardJob:
        return ShardJob(self.w[lo:hi], self.v[lo:hi], length, target)

    def _forward(self, job: ShardJob, record: bool = False) -> torch.Tensor:
        self.stats.passes += 1
        self.stats.item_passes += job.m
        return self.sp.run(job, record)

    def run(self) -> tuple[list[int], int | float | None]:
        """Returns (indices this rank decided to take, the DP optimum where this rank knows it, else None)."""
        chosen: list[int] = []
        value = None
        local: list[tuple[int, int, int]] = []
        stack = [(0, len(self.w), self.capacity, 0)]
        if self.plan.keep:
            self.keep = self.sp.buffers.alloc("keep", self.plan.shard, self.sp.dtype)
            self.sp.split_reserve = self.plan.chunk * self.isz
        while stack:
            lo, hi, cap, depth = stack.pop()
            self.comm.phase = f"sub-problem items {lo}..{hi - 1}, capacity {cap}"
            total = self.prefix[hi] - self.prefix[lo]
            if hi == lo or cap == 0:
                continue
            if cap >= total:
                chosen.extend(range(lo, hi))
                continue
            if hi - lo == 1:
                continue  # the one item does not fit
            length = cap + 1
            self.stats.depth = max(self.stats.depth, depth)
            local_bytes = LOCAL_PROFILES * length * self.isz + LOCAL_SLACK + HOST_BYTES_PER_ITEM * (hi - lo)
            if depth and length <= self.local_cap and local_bytes <= self.limit:
                local.append((lo, hi, cap))
                continue
            shard = -(-length // self.comm.world)
            if (hi - lo + 7) // 8 * shard <= self.sp.bits_room():
                self.stats.leaves += 1
                job = self._job(lo, hi, length, target=cap)
                profile = self._forward(job, record=True)
                if depth == 0 and profile.numel() and self.comm.rank == self.comm.world - 1:
                    value = profile[-1].item()
                self.comm.phase = f"backtrack of items {lo}..{hi - 1}"
                chosen.extend(lo + j for j in self.sp.backtrack(job, cap))
                continue
            if self.keep is None:  # a bits plan whose leaf table no longer fits: cannot happen at depth 0
                raise AssertionError("internal error: Hirschberg split without a kept buffer")
            self.stats.splits += 1
            mid = (lo + hi) // 2
            fa = self._forward(self._job(lo, mid, length))
            keep = self.keep[: fa.numel()]
            keep.copy_(fa)
            fb = self._forward(self._job(mid, hi, length))
            self.comm.phase = f"split of items {lo}..{hi - 1}"
            c, split_value = self.sp.split(keep, fb, length)
            if depth == 0:
                value = split_value
            stack.append((mid, hi, cap - c, depth + 1))
            stack.append((lo, mid, c, depth + 1))
        self.comm.phase = "local sub-problems"
        self.sp.buffers.clear()
        chosen.extend(self._local(local))
        return chosen, value

    def _local(self, problems: list[tuple[int, int, int]]) -> list[int]:
        """Deal the small sub-problems to ranks, largest first to the least loaded; solve this rank's share alone."""
        from ..solver import solve as solve_one

        loads = [0] * self.comm.world
        mine = []
        for lo, hi, cap in sorted(problems, key=lambda p: (-(p[1] - p[0]) * (p[2] + 1), p[0])):
            r = min(range(self.comm.world), key=lambda k: (loads[k], k))
            loads[r] += (hi - lo) * (cap + 1)
            if r == self.comm.rank:
                mine.append((lo, hi, cap))
        chosen: list[int] = []
        device = self.sp.device
        for lo, hi, cap in mine:
            try:
                sol = solve_one(
                    np.asarray(self.w[lo:hi], dtype=np.int64),
                    self.orig_values[lo:hi],
                    cap,
                    device=device,
                    memory_limit=self.limit,
                )
            except Exception as exc:  # reported to every rank by the final all-reduce, so none of them hangs
                self.stats.local_error = exc
                return []
            self.stats.local_subproblems += 1
            self.stats.local_cells += int(sol.stats.get("cell_updates", 0))
            self.stats.local_peak = max(self.stats.local_peak, int(sol.stats.get("peak_bytes", 0)))
            chosen.extend(lo + i for i in sol.selected)
        return chosen
