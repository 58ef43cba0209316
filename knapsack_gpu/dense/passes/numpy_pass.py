"""The CPU pass: numpy ufuncs with out= on zero-copy views of torch CPU tensors.

Why numpy on the CPU: one numpy ufunc call costs a fraction of a torch op's dispatch, and its int32 max/add/compare
loops are faster (benchmarks/results/SUITE.md compares the two backends), so the per-item overhead that dominates at
partitioner scale (C ~ 1e4) is several times smaller.

The single row is updated in place in descending capacity chunks: chunk [a, b) reads f[a - w, b - w), which lies
below it and is not yet updated. Chunks of 1 MiB keep the candidate and the decision slice in L2 between the ufuncs.

Decisions (bit layout in passes/base.py) are recorded one of two ways:
- short profiles (8 staging rows fit in 1 MiB): each item writes a boolean staging row; every eight items two ufuncs
  on uint64 views pack them into the plane (shift row j by j, sum the rows);
- long profiles: each chunk's decisions are shifted and OR-ed into the item's plane right away, while they are in
  cache; staging rows would stream 8 bytes per capacity through DRAM.
"""

from __future__ import annotations

import numpy as np
import torch

from .base import BitLayout, ForwardPass, Job, round8, split_chunk, split_range, wide_split

CHUNK_BYTES = 1 << 20
STAGE_BYTES = 1 << 20
# An item is split over threads only when its range spans this many chunks: below it a barrier per block costs more
# than the second core saves.
THREAD_BLOCKS = 4
_SHIFT = [np.uint64(k) for k in range(8)]
_SHIFTS = np.arange(8, dtype=np.uint64)[:, None]


def _staged(length: int) -> bool:
    return 8 * round8(length) <= STAGE_BYTES


class _Recorder:
    def __init__(self, table: np.ndarray, layout: BitLayout):
        self.table, self.layout = table, layout

    def plane64(self, g: int) -> tuple[np.ndarray, int]:
        """Plane g as uint64 words (eight capacities each) and its first capacity."""
        start = int(self.layout.offset[g])
        return self.table[start : start + int(self.layout.length[g])].view(np.uint64), int(self.layout.base[g])


class _Staged(_Recorder):
    """Decisions of up to eight items in boolean rows (all False between groups), packed into their plane."""

    def __init__(self, ws, length: int, table: np.ndarray, layout: BitLayout):
        super().__init__(table, layout)
        L8 = round8(length)
        self.stage = ws.get("stage", 8 * L8, torch.bool).numpy().reshape(8, L8)
        self.stage.fill(False)

    def begin(self, j: int) -> None:
        self.row = self.stage[j & 7]

    def record(self, decide, cand, cur, a: int, b: int) -> None:
        decide(cand, cur, out=self.row[a:b])

    def end(self, j: int, last: bool) -> None:
        if (j & 7) == 7 or last:
            k = (j & 7) + 1
            plane, base = self.plane64(j >> 3)
            if plane.size:
                group = self.stage[:k, base : base + 8 * plane.size].view(np.uint64)
                np.left_shift(group, _SHIFTS[:k], out=group)  # bytes 0/1 -> bit j of each byte
                np.add.reduce(group, axis=0, out=plane)
                group.fill(0)


class _Chunked(_Recorder):
    """Each chunk's decisions OR-ed into the item's (zeroed) plane, eight capacities per uint64."""

    def __init__(self, ws, chunk: int, table: np.ndarray, layout: BitLayout):
        super().__init__(table, layout)
        self.mask = ws.get("mask", chunk + 16, torch.bool).numpy()

    def begin(self, j: int) -> None:
        (self.plane, self.base), self.shift = self.plane64(j >> 3), _SHIFT[j & 7]

    def record(self, decide, cand, cur, a: int, b: int, mask: np.ndarray | None = None) -> None:
        """Decisions of capacities [a, b) OR-ed into the plane; ``mask``: a thread's own scratch (words of
        different threads' ranges never overlap: their inner edges are multiples of 8)."""
        a8, b8 = a & ~7, (b + 7) & ~7
        mk = (self.mask if mask is None else mask)[: b8 - a8]
        if a > a8:
            mk[: a - a8] = False
        decide(cand, cur, out=mk[a - a8 : b - a8])
        if b8 > b:
            mk[b - a8 :] = False
        m64 = mk.view(np.uint64)
        np.left_shift(m64, self.shift, out=m64)
        dst = self.plane[(a8 - self.base) >> 3 : (b8 - self.base) >> 3]
        np.bitwise_or(dst, m64, out=dst)

    def end(self, j: int, last: bool) -> None:
        pass


class NumpyPass(ForwardPass):
    threads = 1
    """Threads an item's update is split over (set by the solver): each takes its own chunk of a block of the
    descending sweep (see :class:`_Threads`)."""

    @property
    def record_buffers(self) -> tuple[str, ...]:
        return ("stage", "mask", *(f"mask{t}" for t in range(1, self.threads)))

    def _chunk(self, length: int) -> int:
        return max(1, min(length, CHUNK_BYTES // self.itemsize))

    def _threads(self, length: int) -> int:
        """Threads a pass over ``length`` capacities uses: one where no item can span THREAD_BLOCKS chunks."""
        chunk = self._chunk(length)
        return self.threads if chunk >= 64 and length >= THREAD_BLOCKS * chunk and not _staged(length) else 1

    def _record_bytes(self, length: int) -> tuple[str, int]:
        if _staged(length):
            return "stage", 8 * round8(length)
        return "mask", self._chunk(length) + 16

    def workspace_bytes(self, length: int, record: bool) -> int:
        t = self._threads(length)
        rows = (length + t * self._chunk(length)) * self.itemsize
        return rows + (t * self._record_bytes(length)[1] if record else 0)

    def record_extra_bytes(self, length: int) -> int:
        name, nbytes = self._record_bytes(length)
        extra = max(0, nbytes - self.ws.nbytes(name))
        if name == "mask":
            extra += sum(max(0, nbytes - self.ws.nbytes(f"mask{t}")) for t in range(1, self._threads(length)))
        return extra

    def reserve(self, m: int, length: int) -> None:
        self.ws.get("row", length, self.dtype)
        for t in range(self._threads(length)):
            self.ws.get("cand" if t == 0 else f"cand{t}", self._chunk(length), self.dtype)

    def run(self, job: Job, bits: tuple[torch.Tensor, BitLayout] | None) -> torch.Tensor:
        L = job.length
        row_t = self.ws.get("row", L, self.dtype)
        row = row_t.numpy()
        chunk = self._chunk(L)
        cand_all = self.ws.get("cand", chunk, self.dtype).numpy()
        self.init_profile(job, row_t)
        s = job.schedule
        rec = None
        if bits is not None:
            table, layout = bits[0].numpy(), bits[1]
            rec = _Staged(self.ws, L, table, layout) if _staged(L) else _Chunked(self.ws, chunk, table, layout)
        cover = job.cover
        decide = np.greater_equal if cover else np.greater
        rep = self.progress  # told per chunk (~1 MiB of profile): long items report while they run
        n_threads = self._threads(L)
        threads = _Threads(self, row, chunk, n_threads, decide, rec is not None) if n_threads > 1 else None
        filled = s.top0  # cells above it hold V_{j-1}, filled as the prefix weight grows
        last = job.m - 1
        for j0, (ws, vs, los, his, tops, befores) in s.lists():
            for i, w in enumerate(ws):
                j = j0 + i
                v, lo, hi = vs[i], los[i], his[i]
                if not cover and tops[i] > filled:
                    row[filled + 1 : tops[i] + 1] = befores[i]
                    filled = tops[i]
                if rec is not None:
                    rec.begin(j)
                # Shifted part, c in [max(lo, w), hi], in descending chunks whose inner edges are multiples of 8.
                b = hi + 1
                start = w if w > lo else lo
                if threads is not None and b - start >= THREAD_BLOCKS * chunk:
                    threads.item(w, v, start, b, rec)
                    if rep is not None:
                        rep.add(b - start)
                    b = start
                while b > start:
                    a = (b - chunk + 7) & ~7  # round up: at most `chunk` cells
                    if a < start:
                        a = start
                    cand = cand_all[: b - a]
                    np.add(row[a - w : b - w], v, out=cand)
                    cur = row[a:b]
                    if rec is not None:
                        rec.record(decide, cand, cur, a, b)
                    np.maximum(cur, cand, out=cur)
                    if rep is not None:
                        rep.add(b - a)
                    b = a
                if cover:
                    # Clamped part, d in [lo, min(w, hi + 1)): the source is u(0) = 0, so the candidate is -v itself.
                    b = w if w < hi + 1 else hi + 1
                    while b > lo:
                        a = (b - chunk + 7) & ~7
                        if a < lo:
                            a = lo
                        cur = row[a:b]
                        if rec is not None:
                            rec.record(np.greater_equal, v, cur, a, b)
                        np.maximum(cur, v, out=cur)
                        if rep is not None:
                            rep.add(b - a)
                        b = a
                if rec is not None:
                    rec.end(j, j == last)
        if threads is not None:
            threads.close()
        if not cover and filled < L - 1:
            row[filled + 1 :] = s.final
        return row_t

    def split(self, fa: torch.Tensor, fb: torch.Tensor, cap: int) -> tuple[int, float | int]:
        c_lo, c_hi = split_range(fa.shape[0], fb.shape[0], cap)
        a, b = fa.numpy(), fb.numpy()
        if not self.wide_split:
            a = a[c_lo : c_hi + 1]
            np.add(a, b[cap - c_hi : cap - c_lo + 1][::-1], out=a)  # reversed view: no temporary
            i = int(np.argmax(a))
            return c_lo + i, a[i].item()

        def chunk_best(s0: int, s1: int) -> tuple[int, int]:
            t = a[s0:s1].astype(np.int64)
            t += b[cap - s1 + 1 : cap - s0 + 1][::-1]
            i = int(np.argmax(t))
            return int(t[i]), i

        return wide_split(c_lo, c_hi, chunk_best, self.meter, 8)[:2]

    def split_bytes(self, length: int) -> int:
        return 8 * split_chunk(length) if self.wide_split else 0


class _Threads:
    """One item's shifted update over ``n`` threads, exact with one row updated in place.

    The sweep runs in descending blocks of n chunks (inner edges multiples of 8, so decision words never straddle two
    threads). In a block each thread first forms its chunk's candidates f(c - w) + v and decisions, reading only old
    values: everything below the block, and the block itself, which nobody has written yet; after a barrier each
    writes max(f, candidate) over its own chunk. The next block reads only below this one, so no second barrier is
    needed; the item's end waits for every thread, so the next item reads finished values. numpy's ufuncs release
    the GIL, so the chunks run on separate cores.
    """

    def __init__(self, p: NumpyPass, row: np.ndarray, chunk: int, n: int, decide, record: bool):
        from concurrent.futures import ThreadPoolExecutor
        from threading import Barrier

        self.row, self.chunk, self.n, self.decide = row, chunk, n, decide
        self.cands = [p.ws.get("cand" if t == 0 else f"cand{t}", chunk, p.dtype).numpy() for t in range(n)]
        self.masks = [p.ws.get("mask" if t == 0 else f"mask{t}", chunk + 16, torch.bool).numpy() for t in range(n)]
        self.masks = self.masks if record else [None] * n
        self.barrier = Barrier(n)
        self.pool = ThreadPoolExecutor(n - 1, thread_name_prefix="knapsack-pass")

    def item(self, w: int, v, start: int, stop: int, rec) -> None:
        futures = [self.pool.submit(self._work, t, w, v, start, stop, rec) for t in range(1, self.n)]
        try:
            self._work(0, w, v, start, stop, rec)
        finally:
            for f in futures:
                f.result()  # re-raises a worker's error (the barrier was aborted, so nobody waits forever)

    def _work(self, t: int, w: int, v, start: int, stop: int, rec) -> None:
        row, n, chunk = self.row, self.n, self.chunk
        cand_all, mask = self.cands[t], self.masks[t]
        try:
            b_block = stop
            while b_block > start:
                a_block = max(start, (b_block - n * (chunk - 8) + 7) & ~7)  # pieces of at most `chunk`
                span = b_block - a_block
                a = a_block if t == 0 else max(a_block, (a_block + span * t // n + 7) & ~7)
                b = b_block if t == n - 1 else max(a_block, (a_block + span * (t + 1) // n + 7) & ~7)
                b = min(b, b_block)
                if b > a:
                    cand = cand_all[: b - a]
                    np.add(row[a - w : b - w], v, out=cand)
                    if rec is not None:
                        rec.record(self.decide, cand, row[a:b], a, b, mask)
                self.barrier.wait()
                if b > a:
                    np.maximum(row[a:b], cand, out=row[a:b])
                b_block = a_block
        except BaseException:
            self.barrier.abort()
            raise

    def close(self) -> None:
        self.pool.shutdown(wait=True)
