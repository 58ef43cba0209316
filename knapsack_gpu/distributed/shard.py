"""The dense DP sharded over the capacity axis: each rank owns a contiguous slice of the profile and, for each item,
receives only the cells it reads from other ranks.

Item (w, v) sets f'(c) = max(f(c), f(c - w) + v). Rank r owns capacities [a_r, b_r) (``shard_bounds``), so updating
its cells c in [u0, u1] reads f at [u0 - w, u1 - w]; the part below a_r lives on lower ranks (one when w <= the shard,
any when heavier) and arrives by ``batch_isend_irecv`` before the rank updates. A rank whose shard holds no cell of the
item's update range [lo, hi] sends what others read from it and otherwise skips the item. Nothing is broadcast.

Update range (as in the single-device passes): lo = w, raised to target - (weight of the later items) when only
f(target) is wanted; hi = min(L - 1, prefix weight W_j). Above W_j the profile is the prefix value V_j: ranks fill those
cells lazily, when a later item's hi first reaches them.

Light items travel in groups (the multi-item halo): for consecutive items of total weight H <= ``group_cap``, each rank
receives once the H cells [a - H, a) below its shard and runs every item of the group over [a - H, b), item j over the
cells whose reads the halo (or the previous item) already made exact; after the group its own cells are exact. One
message instead of one per item; the price is recomputing about H/2 cells per item, a few percent at group_cap = S/16.

Memory per rank: its shard (S cells) plus a halo area below it (``halo_cells`` <= S) in one buffer, and a chunk
buffer (``chunk`` cells) for the shifted candidate f(c - w) + v: the update runs top-down in chunks, so a chunk never
reads a cell an earlier chunk wrote. When one item's halo exceeds the halo area (only under a tight memory limit), that
item runs rank by rank from the top, each rank receiving its reads a chunk at a time from lower ranks that have not yet
updated: exact, serial for that item, bounded memory. With room for a send buffer as large as the halo area, a single
item's exchange overlaps its update: the sender ships a copy, the receiver first updates the cells that read only its
own shard (c >= a + w) and waits for the halo after.

Decision bits (optional) stay on their rank: a uint8 (ceil(m / 8), >= S) table in the layout of passes/base.py, bit
j % 8 of byte [j // 8, c - a] = item j taken at capacity c (strict ">", dp_knapsack's tie rule); cells above the
item's step hi were not written and mean "taken".
"""

from __future__ import annotations

import bisect
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from .comm import Comm

# Bytes per cell of the profile dtypes (the planner's arithmetic; torch.empty is not needed to know them).
ITEMSIZE = {torch.int32: 4, torch.int64: 8, torch.float32: 4, torch.float64: 8}
# Tests set this to fill every fresh buffer with a value that cannot go unnoticed (a huge profile value, NaN, 0xFF
# bit bytes), so a pass that reads a cell it never wrote returns a wrong optimum instead of passing by luck.
ENV_POISON = "KNAPSACK_GPU_DIST_POISON"
# A group of light items carries at most shard / GROUP_DIVISOR of weight: the recomputed halo cells then cost at most
# 1 / (2 * GROUP_DIVISOR) of the item's work (about 3%).
GROUP_DIVISOR = 16


def shard_bounds(length: int, world: int) -> list[int]:
    """Rank r owns capacities [bounds[r], bounds[r + 1]): contiguous, sizes differ by at most one; the last rank's
    shard is never empty when length >= 1."""
    return [r * length // world for r in range(world + 1)]


def pieces(lo: int, hi: int, bounds: list[int]) -> Iterator[tuple[int, int, int]]:
    """(rank, lo', hi') for the parts of the capacities [lo, hi) each rank owns, ascending."""
    if lo >= hi:
        return
    r = bisect.bisect_right(bounds, lo) - 1
    while lo < hi:
        end = min(hi, bounds[r + 1])
        if end > lo:
            yield r, lo, end
            lo = end
        r += 1


@dataclass
class ShardJob:
    """A forward pass over a run of items.

    Attributes:
        weights: item weights in DP units, each > 0 (Python ints).
        values: item values (Python ints or floats), each > 0.
        length: profile length L (capacity + 1).
        target: when set, only f(target) is wanted (a bit-table leaf): items skip capacities no backtrack from target
            reaches, and the rest of the final profile is not meaningful.
    """

    weights: list[int]
    values: list
    length: int
    target: int | None = None

    @property
    def m(self) -> int:
        return len(self.weights)


@dataclass
class Step:
    """Items j0..j1-1 (one, or a group of light ones) run together.

    Attributes:
        los: first capacity each item updates.
        hi: last capacity any of them updates (the last item's min(L - 1, W_j)); every item runs up to it.
        before: profile value above the prefix weight before the step (V_{j0-1}), for the lazy fill.
        floor: target - (weight after item j0), the lowest capacity a backtrack reaches at j0 (0 without target).
        weight: total weight of the step's items.
    """

    j0: int
    j1: int
    los: list[int]
    hi: int
    before: object
    floor: int
    weight: int


def plan_steps(job: ShardJob, group_cap: int) -> tuple[list[Step], object]:
    """Split ``job`` into steps (a light group when consecutive weights fit ``group_cap``). Returns (steps, V_m)."""
    L, w, v = job.length, job.weights, job.values
    m = len(w)
    steps: list[Step] = []
    prefix_w, prefix_v = 0, (0 * v[0] if m else 0)  # an int or float zero, like the values
    after = sum(w)  # weight of the items not yet planned
    j = 0
    while j < m:
        j0, before, weight, los = j, prefix_v, 0, []
        floor = 0 if job.target is None else max(0, job.target - (after - w[j]))
        # A light item opens a group that takes the next light items while their total stays within group_cap.
        while j < m and (j == j0 or weight + w[j] <= group_cap):
            after -= w[j]
            los.append(w[j] if job.target is None else max(w[j], job.target - after))
            weight += w[j]
            prefix_w += w[j]
            prefix_v += v[j]
            j += 1
            if weight > group_cap:
                break
        steps.append(Step(j0, j, los, min(L - 1, prefix_w), before, floor, weight))
    return steps, prefix_v


def single_need(bounds: list[int], w: int, lo: int, hi: int) -> list[tuple[int, int, int, int]]:
    """One item (weight w, update range [lo, hi]): (rank, u0, u1, r1) for every rank that updates cells [u0, u1] of
    its shard; its reads are [u0 - w, u1 - w], of which [u0 - w, r1] (empty when r1 < u0 - w) lie on lower ranks."""
    need = []
    for r in range(len(bounds) - 1):
        ar, br = bounds[r], bounds[r + 1]
        u0, u1 = max(ar, lo), min(br - 1, hi)
        if u0 <= u1:
            need.append((r, u0, u1, min(u1 - w, ar - 1)))
    return need


def group_starts(bounds: list[int], st: Step) -> dict[int, int]:
    """A light group: rank -> e for every rank that runs it; the rank receives [e, a) (when e < a) and runs the
    group's items over [e, b)."""
    lo_min = min(st.los)
    starts = {}
    for r in range(len(bounds) - 1):
        ar, br = bounds[r], bounds[r + 1]
        if br > ar and st.hi >= ar and lo_min <= br - 1:
            starts[r] = max(0, max(ar, st.floor) - st.weight)
    return starts


def group_ranges(job: ShardJob, st: Step, e: int, top: int) -> Iterator[tuple[int, int]]:
    """(item j, first capacity it updates) for a light group run over [e, top]: item j's reads must already be exact,
    so beyond the halo's bottom e each item starts w later than the one before (e = 0: from its lo)."""
    valid = e  # the profile is exact from here up (0: everywhere)
    for k, j in enumerate(range(st.j0, st.j1)):
        w, lo = job.weights[j], st.los[k]
        start = lo if valid == 0 else max(lo, valid + w)
        valid = 0 if valid == 0 else valid + w
        if start <= top:
            yield j, start


class ShardedPass:
    """Forward passes over this rank's shard, with halo exchange; buffers allocated once by :meth:`allocate`.

    Args:
        comm: the process group.
        dtype: DP arithmetic (int32, int64, float32 or float64).
        buffers: the rank's memory accounting (:class:`Buffers`).
    """

    def __init__(self, comm: Comm, dtype: torch.dtype, buffers: Buffers):
        self.comm = comm
        self.dtype = dtype
        self.buffers = buffers
        self.device = comm.device
        self.halo_cells = 0
        self.chunk = 1
        self.cells = 0  # cell updates this rank ran, halo recomputation included
        self.halo_recompute = 0  # of which on cells another rank owns
        self.serial_items = 0  # items whose halo did not fit and ran rank by rank
        self.steps = 0
        self.hi_eff: list[int] = []
        self.split_reserve = 0  # bytes kept free for split()'s temporary once Hirschberg splits may follow

    def allocate(self, shard: int, halo: int, chunk: int, bit_bytes: int, send: int = 0) -> None:
        """Profile buffer (halo area + shard), chunk buffers, a decision-bit pool of ``bit_bytes``, and a send buffer of
        ``send`` cells (0: no overlap of an item's exchange with its update)."""
        b = self.buffers
        self.halo_cells, self.chunk = halo, max(1, chunk)
        self.ext = b.alloc("ext", halo + shard, self.dtype)
        self.sendbuf = b.alloc("send", send, self.dtype) if send else None
        self.cand = b.alloc("cand", self.chunk, self.dtype)
        self.dec = b.alloc("dec", self.chunk, torch.uint8)
        self.bit_pool = b.alloc("bits", bit_bytes, torch.uint8) if bit_bytes else None

    def bits_room(self) -> int:
        """Bytes a decision-bit table may take now: the limit less every other live buffer and split()'s temporary."""
        pool = 0 if self.bit_pool is None else self.bit_pool.numel()
        return self.buffers.limit - (self.buffers.current - pool) - self.split_reserve

    def ensure_bits(self, nbytes: int) -> None:
        """Grow the pooled bit table to ``nbytes`` (grow-only: later leaves reuse it)."""
        if self.bit_pool is None or self.bit_pool.numel() < nbytes:
            self.buffers.release("bits")
            self.bit_pool = None
            self.bit_pool = self.buffers.alloc("bits", nbytes, torch.uint8)

    def group_cap(self, bounds: list[int]) -> int:
        return min(self.halo_cells, max(bounds[r + 1] - bounds[r] for r in range(len(bounds) - 1)) // GROUP_DIVISOR)

    # ---- the forward pass -------------------------------------------------------------------------------------------

    def run(self, job: ShardJob, record: bool = False) -> torch.Tensor:
        """Run every item of ``job`` from the empty profile.

        Returns:
            This rank's shard of the final profile, a view valid until the next run (length b - a).
        """
        P, me = self.comm.world, self.comm.rank
        L = job.length
        bounds = shard_bounds(L, P)
        a, b = bounds[me], bounds[me + 1]
        Hb = self.halo_cells
        row = self.ext[Hb : Hb + (b - a)]
        steps, final = plan_steps(job, self.group_cap(bounds))
        bits = None
        if record:
            planes, width = (job.m + 7) // 8, b - a
            self.ensure_bits(planes * max(width, 1))
            bits = self.bit_pool[: planes * max(width, 1)].view(planes, max(width, 1))
            self.bits = bits
            self.hi_eff = [0] * job.m
        filled = -1
        for st in steps:
            self.steps += 1
            if st.hi > filled:
                f0, f1 = max(filled + 1, a), min(st.hi, b - 1)
                if f0 <= f1:
                    row[f0 - a : f1 - a + 1].fill_(st.before)
                filled = st.hi
            if bits is not None:
                for j in range(st.j0, st.j1):
                    self.hi_eff[j] = st.hi
                    if j & 7 == 0:
                        bits[j >> 3].zero_()
            if st.j1 - st.j0 > 1:
                self._group(job, st, bounds, bits)
            else:
                self._single(job, st, bounds, bits)
        if filled < L - 1:
            f0 = max(filled + 1, a)
            if f0 < b:
                row[f0 - a :].fill_(final)
        return row

    def _update(self, dst0: int, src0: int, count: int, v, plane=None, bit: int = 0, col0: int = 0) -> None:
        """ext[dst0 + i] = max(ext[dst0 + i], ext[src0 + i] + v) for i < count, top-down in chunks (src0 < dst0, so a
        chunk only reads cells no earlier chunk wrote); decisions OR-ed into plane[col0 + i] as bit ``bit``."""
        ext, K = self.ext, self.chunk
        top = count
        while top > 0:
            k = min(K, top)
            lo = top - k
            cand = self.cand[:k]
            torch.add(ext[src0 + lo : src0 + top], v, out=cand)
            cur = ext[dst0 + lo : dst0 + top]
            if plane is not None:
                d = self.dec[:k]
                torch.gt(cand, cur, out=d.view(torch.bool))
                if bit:
                    d.bitwise_left_shift_(bit)
                plane[col0 + lo : col0 + top].bitwise_or_(d)
            torch.maximum(cur, cand, out=cur)
            top = lo
        self.cells += count

    def _single(self, job: ShardJob, st: Step, bounds: list[int], bits) -> None:
        """One item: every rank that updates cells receives the part of its reads lower ranks own."""
        me, Hb = self.comm.rank, self.halo_cells
        j = st.j0
        w, v, lo, hi = job.weights[j], job.values[j], st.los[0], st.hi
        need = single_need(bounds, w, lo, hi)
        widest = max((r1 - (u0 - w) + 1 for _, u0, _, r1 in need), default=0)
        plane = None if bits is None else bits[j >> 3]
        a = bounds[me]
        if widest <= Hb:
            sends, recvs, mine = [], [], None
            for r, u0, u1, r1 in need:
                ar = bounds[r]
                r0 = u0 - w
                adjacent = r1 == ar - 1
                off = r0 - ar + Hb if adjacent else 0  # where r0 lands in rank r's buffer
                if r == me:
                    mine = (u0, u1, off if r1 >= r0 and not adjacent else u0 - w - a + Hb)
                for s, p0, p1 in pieces(r0, r1 + 1, bounds):
                    if r == me:
                        recvs.append((s, self.ext[off + p0 - r0 : off + p1 - r0]))
                    elif s == me:
                        sends.append((r, self.ext[Hb + p0 - a : Hb + p1 - a]))
            sent = sum(t.numel() for _, t in sends)
            if self.sendbuf is None or sent > self.sendbuf.numel():
                self.comm.exchange(sends, recvs)
                if mine is not None:
                    u0, u1, src0 = mine
                    self._update(u0 - a + Hb, src0, u1 - u0 + 1, v, plane, j & 7, u0 - a)
                return
            # Overlap: what others read leaves from a copy, so this rank may update its cells while it travels; the
            # cells whose reads are all local (c >= a + w) go first, the ones reading the halo after it arrived.
            staged, o = [], 0
            for r, t in sends:
                buf = self.sendbuf[o : o + t.numel()]
                buf.copy_(t)
                staged.append((r, buf))
                o += t.numel()
            pending = self.comm.start(staged, recvs)
            split = None
            if mine is not None:
                u0, u1, src0 = mine
                split = max(u0, a + w)
                if split <= u1:
                    self._update(split - a + Hb, split - w - a + Hb, u1 - split + 1, v, plane, j & 7, split - a)
            self.comm.finish(pending)
            if split is not None and u0 < split:
                self._update(u0 - a + Hb, src0, min(u1, split - 1) - u0 + 1, v, plane, j & 7, u0 - a)
            return
        # The halo does not fit: ranks update one after another from the top, each receiving its remote reads a
        # chunk at a time from lower ranks, which have not updated yet.
        self.serial_items += 1
        for r, u0, u1, _ in reversed(need):
            ar = bounds[r]
            y = u1
            while y >= u0:
                x = max(u0, y - max(Hb, 1) + 1)
                r0, r1 = x - w, min(y - w, ar - 1)
                adjacent = y - w >= ar - 1
                off = r0 - ar + Hb if adjacent else 0
                sends, recvs = [], []
                for s, p0, p1 in pieces(r0, r1 + 1, bounds):
                    if r == me:
                        recvs.append((s, self.ext[off + p0 - r0 : off + p1 - r0]))
                    elif s == me:
                        sends.append((r, self.ext[Hb + p0 - a : Hb + p1 - a]))
                self.comm.exchange(sends, recvs)
                if r == me:
                    src0 = off if r1 >= r0 else x - w - a + Hb
                    self._update(x - a + Hb, src0, y - x + 1, v, plane, j & 7, x - a)
                y = x - 1

    def _group(self, job: ShardJob, st: Step, bounds: list[int], bits) -> None:
        """Light items j0..j1-1: one halo of their total weight below each shard, then every item over halo + shard."""
        me, Hb = self.comm.rank, self.halo_cells
        starts = group_starts(bounds, st)
        sends, recvs = [], []
        a, b = bounds[me], bounds[me + 1]
        for r, e in starts.items():
            for s, p0, p1 in pieces(e, bounds[r], bounds):
                if r == me:
                    recvs.append((s, self.ext[Hb + p0 - a : Hb + p1 - a]))
                elif s == me:
                    sends.append((r, self.ext[Hb + p0 - a : Hb + p1 - a]))
        self.comm.exchange(sends, recvs)
        if me not in starts:
            return
        top = min(b - 1, st.hi)
        for j, start in group_ranges(job, st, starts[me], top):
            w, v = job.weights[j], job.values[j]
            s0 = max(start, a)
            if s0 <= top:
                plane = None if bits is None else bits[j >> 3]
                self._update(s0 - a + Hb, s0 - w - a + Hb, top - s0 + 1, v, plane, j & 7, s0 - a)
            if start < a:
                h1 = min(top, a - 1)
                self._update(start - a + Hb, start - w - a + Hb, h1 - start + 1, v)
                self.halo_recompute += h1 - start + 1

    # ---- recovery helpers -------------------------------------------------------------------------------------------

    def backtrack(self, job: ShardJob, start: int) -> list[int]:
        """Walk the bits of the last recorded run from (item m - 1, capacity ``start``), handing (item, capacity) from
        rank to rank downwards. Returns the items this rank decided to take (indices into ``job``)."""
        P, me = self.comm.world, self.comm.rank
        bounds = shard_bounds(job.length, P)
        a, b = bounds[me], bounds[me + 1]
        state = torch.tensor([job.m - 1, start], dtype=torch.int64, device=self.device)
        if me < P - 1:
            self.comm.exchange([], [(me + 1, state)])
        j, c = (int(x) for x in state.tolist())
        chosen: list[int] = []
        host = self.bits.numpy() if self.bits.device.type == "cpu" else None
        plane, window, base = -1, None, a
        while j >= 0 and a <= c < b:
            if c > self.hi_eff[j]:
                take = True  # above the step's hi every earlier item fits: no bit was written (taken)
            else:
                if j >> 3 != plane:
                    plane = j >> 3
                    if host is not None:
                        window, base = host[plane], a
                    else:  # CUDA: copy only the capacities this group of eight items can reach from c
                        base = max(a, c - sum(job.weights[plane << 3 : j + 1]))
                        window = self.bits[plane, base - a : c - a + 1].cpu().numpy()
                take = (int(window[c - base]) >> (j & 7)) & 1
            if take:
                chosen.append(j)
                c -= job.weights[j]
            j -= 1
        if me > 0:
            state = torch.tensor([j, c], dtype=torch.int64, device=self.device)
            self.comm.exchange([(me - 1, state)], [])
        return chosen

    def split(self, fa: torch.Tensor, fb: torch.Tensor, length: int):
        """(c, fa(c) + fb(cap - c)) maximal over c in [0, cap], cap = length - 1, ties to the smallest c; ``fa`` and
        ``fb`` are this rank's shards of two profiles of ``length``. Rank r gets fb over the mirror of its shard from
        its owners a chunk at a time, adds it into ``fa`` (overwritten), and one all-reduce of every rank's
        (value, capacity) picks the split; identical on all ranks."""
        P, me, K = self.comm.world, self.comm.rank, self.chunk
        cap = length - 1
        bounds = shard_bounds(length, P)
        a, b = bounds[me], bounds[me + 1]
        widest = max(bounds[r + 1] - bounds[r] for r in range(P))
        best_v, best_c = None, -1
        buf = self.cand
        for t in range(math.ceil(widest / K)):
            sends, recvs = [], []
            for r in range(P):
                c0, c1 = bounds[r] + t * K, min(bounds[r + 1], bounds[r] + (t + 1) * K)
                if c0 >= c1:
                    continue
                p_lo = cap - c1 + 1  # fb positions cap - c for c in [c0, c1)
                for s, q0, q1 in pieces(p_lo, cap - c0 + 1, bounds):
                    if r == me and s == me:
                        buf[q0 - p_lo : q1 - p_lo].copy_(fb[q0 - a : q1 - a])
                    elif r == me:
                        recvs.append((s, buf[q0 - p_lo : q1 - p_lo]))
                    elif s == me:
                        sends.append((r, fb[q0 - a : q1 - a]))
            self.comm.exchange(sends, recvs)
            c0, c1 = a + t * K, min(b, a + (t + 1) * K)
            if c0 < c1:
                k = c1 - c0
                part = fa[c0 - a : c1 - a]
                with self.buffers.temporary(k * ITEMSIZE[self.dtype]):  # torch.flip has no out=
                    part.add_(buf[:k].flip(0))
                value, i = torch.max(part, dim=0)  # first maximum: the smallest c in the chunk
                value = value.item()
                if best_v is None or value > best_v:
                    best_v, best_c = value, c0 + int(i.item())
        wide = torch.float64 if self.dtype.is_floating_point else torch.int64
        low = -math.inf if self.dtype.is_floating_point else -(2**63)
        mine = torch.tensor([low if best_v is None else best_v, best_c], dtype=wide, device=self.device)
        table = self.comm.gather_rows(mine).cpu().tolist()
        value, c = max(((val, -int(cc)) for val, cc in table if cc >= 0), key=lambda t: t)
        return -c, value


class Buffers:
    """This rank's working memory: named buffers against a byte limit, tracking the peak (``stats['peak_bytes']``)."""

    def __init__(self, limit: int, device: torch.device):
        self.limit = limit
        self.device = device
        self.current = 0
        self.peak = 0
        self._live: dict[str, torch.Tensor] = {}

    def _grow(self, nbytes: int) -> None:
        if self.current + nbytes > self.limit:
            raise MemoryError(
                f"distributed knapsack working memory would reach {self.current + nbytes} bytes on {self.device}, "
                f"over memory_limit={self.limit} per rank"
            )
        self.current += nbytes
        self.peak = max(self.peak, self.current)

    def alloc(self, name: str, numel: int, dtype: torch.dtype) -> torch.Tensor:
        self.release(name)
        numel = max(numel, 1)
        self._grow(numel * ITEMSIZE.get(dtype, 1))
        t = torch.empty(numel, dtype=dtype, device=self.device)
        if os.environ.get(ENV_POISON) == "1":
            if dtype.is_floating_point:
                t.fill_(math.nan)
            else:
                t.fill_(255 if dtype == torch.uint8 else torch.iinfo(dtype).max // 4)
        self._live[name] = t
        return t

    def release(self, name: str) -> None:
        t = self._live.pop(name, None)
        if t is not None:
            self.current -= t.numel() * t.element_size()

    def clear(self) -> None:
        for name in list(self._live):
            self.release(name)

    def temporary(self, nbytes: int):
        buffers = self

        class _Temp:
            def __enter__(self):
                buffers._grow(nbytes)

            def __exit__(self, *exc):
                buffers.current -= nbytes

        return _Temp()
