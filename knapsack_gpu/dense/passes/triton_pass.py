"""The Triton pass: the kernels of kernels/ (knapsack_gpu.kernels) driven from the host.

Two ping-pong rows; :func:`launch_plan` decides the launches. A launch covers only the cells where its output row may
differ from its input: its items' update ranges, the previous launch's (the output row is two launches old there),
and the cells that just entered the prefix range (the kernels read V_{j-1} above item j - 1's top, so nothing is
filled on the host). Runs of items whose launch ranges are narrow (a profile that fits one program, or narrow
windows) go to the one-program sweep (kernel 3), one launch for the run; the others go in runs of light items to the
multi-item tile kernel (kernel 2) and alone to the fused single-item kernel (kernel 1).

Per-item scalars travel as device arrays, not kernel arguments: Triton passes Python floats as fp32, which would
round float64 values.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

import numpy as np
import torch

from .base import BitLayout, ForwardPass, Job
from .torch_pass import torch_split


@lru_cache(maxsize=1)
def kernels() -> ModuleType | None:
    """knapsack_gpu.kernels (the top-level kernels/ folder: installed there by setuptools, reached through the
    knapsack_gpu/kernels link in a source checkout), or None when triton is not installed."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return None
    return importlib.import_module("knapsack_gpu.kernels")


class TritonPass(ForwardPass):
    record_buffers = ()  # the kernels write bits straight into the table

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kern = kernels()

    def _scratch_numel(self, length: int) -> int:
        if length <= self.kern.sweep.MAX_CELLS:
            return 0  # every launch range is narrow: the sweep kernel, which needs no scratch
        return self.kern.tile.scratch_numel(length)

    def workspace_bytes(self, length: int, record: bool) -> int:
        return (2 * length + self._scratch_numel(length)) * self.itemsize

    def items_bytes(self, m: int) -> int:
        return m * (6 * 8 + 2 * self.itemsize) + 8 * ((m + 7) // 8)

    def record_extra_bytes(self, length: int) -> int:
        return 0

    _ITEM_DTYPES = dict.fromkeys(("w", "lo", "hi", "top", "start", "end"), torch.int64)

    def reserve(self, m: int, length: int) -> None:
        for name in ("row", "row2"):
            self.ws.get(name, length, self.dtype)
        self.ws.get("scratch", self._scratch_numel(length), self.dtype)
        for name in (*self.kern.common.ITEM_ARRAYS, "start", "end"):
            self.ws.get("items_" + name, max(1, m), self._ITEM_DTYPES.get(name, self.dtype))
        self.ws.get("pdelta", max(1, (m + 7) // 8), torch.int64)

    def _device_arrays(self, host: dict[str, np.ndarray], count: int, dtypes: dict) -> dict[str, torch.Tensor]:
        out = {}
        for name, array in host.items():
            buf = self.ws.get(name, max(1, count), dtypes.get(name, self.dtype))[:count]
            buf.copy_(torch.from_numpy(np.ascontiguousarray(array)))
            out[name] = buf
        self.launches += len(host)
        return out

    def _items(self, job: Job, ranges: tuple[np.ndarray, np.ndarray]) -> dict[str, torch.Tensor]:
        s = job.schedule
        tail = np.append(s.before[1:], s.final) if not job.cover else np.zeros_like(job.values)
        host = {"w": s.w, "v": job.values, "lo": s.lo, "hi": s.hi, "top": s.top, "tail": tail}
        host.update(start=ranges[0], end=ranges[1])
        dev = self._device_arrays({"items_" + k: v for k, v in host.items()}, job.m, self._ITEM_DTYPES_PREFIXED)
        return {name[len("items_") :]: t for name, t in dev.items()}

    _ITEM_DTYPES_PREFIXED = {"items_" + k: v for k, v in _ITEM_DTYPES.items()}

    def _planes(self, layout: BitLayout) -> torch.Tensor:
        """Each plane's offset - base on the device: a kernel ORs item j's bit at pdelta[j // 8] + c."""
        host = {"pdelta": layout.offset - layout.base}
        return self._device_arrays(host, layout.base.size, {"pdelta": torch.int64})["pdelta"]

    def run(self, job: Job, bits: tuple[torch.Tensor, BitLayout] | None) -> torch.Tensor:
        L, kern, s = job.length, self.kern, job.schedule
        rows = (self.ws.get("row", L, self.dtype), self.ws.get("row2", L, self.dtype))
        for row in rows:
            self.init_profile(job, row)
        self.launches += 2 * self.init_ops(job)
        plan = launch_plan(job, bits is not None, kern.sweep.MAX_CELLS, kern.plan_groups)
        items = self._items(job, plan.ranges)
        table, pdelta = (bits[0], self._planes(bits[1])) if bits is not None else (None, None)
        scratch = self.ws.get("scratch", self._scratch_numel(L), self.dtype) if plan.tiles else None
        cur = 0  # which row holds the profile
        for kind, j0, stop, start, end in plan.launches:
            src, dst = rows[cur], rows[1 - cur]
            if kind == "sweep":
                ranges = (items["start"][j0:stop], items["end"][j0:stop])
                kern.sweep.sweep(src, dst, table, pdelta, ranges, items, j0, stop - j0, s.top0, job.cover)
                cur ^= (stop - j0) & 1
            elif kind == "item":
                kern.item_update(src, dst, table, pdelta, items, j0, start, end, s.top0, job.cover)
                cur ^= 1
            else:
                halo = int(s.w[j0:stop].sum())
                kern.tile_update(
                    src, dst, table, pdelta, scratch, items, j0, stop - j0, halo, start, end, s.top0, job.cover
                )
                cur ^= 1
            self.report(s, j0, stop)
        self.launches += plan.ops
        last_top = int(s.top[-1]) if job.m else s.top0
        if not job.cover and last_top < L - 1:
            rows[cur][last_top + 1 :].fill_(s.final.item())  # every item fits: V_m above the last top
            self.launches += 1
        return rows[cur]

    def split(self, fa: torch.Tensor, fb: torch.Tensor, cap: int) -> tuple[int, float | int]:
        c, best, ops = torch_split(self.meter, fa, fb, cap, self.wide_split)
        self.launches += ops
        return c, best


@dataclass
class LaunchPlan:
    """A pass's kernel launches, in order: (kind, first item, stop, start, end), kind "sweep" (items first..stop-1
    in one program, each over its own range in ``ranges``), "item" or "tile" (the items over [start, end))."""

    launches: list[tuple[str, int, int, int, int]]
    ranges: tuple[np.ndarray, np.ndarray]
    tiles: bool

    @property
    def ops(self) -> int:
        return len(self.launches)


def launch_plan(job: Job, record: bool, max_cells: int, plan_groups) -> LaunchPlan:
    """Which kernel runs which items over which cells.

    A launch must cover every cell where its output row may differ from its input: the cells its items change
    (their update ranges, and standard mode's cells entering the prefix range (top_{j-1}, top_j], which read V_{j-1})
    and those the previous launch changed (the output row is two launches old there). Items whose range is at
    most ``max_cells`` cells run in one sweep launch per run of them; the others in tile groups and single-item
    launches as :func:`plan_groups` splits them. Launches over no cell are left out: both rows agree there.
    """
    s, L, m = job.schedule, job.length, job.m
    live = s.lo <= s.hi
    ptop = np.concatenate([[s.top0], s.top[:-1]])
    grow = (s.top > ptop) & (not job.cover)
    need_lo = np.minimum(np.where(live, s.lo, L), np.where(grow, ptop + 1, L))
    need_hi = np.maximum(np.where(live, s.hi, -1), np.where(grow, s.top, -1))
    start = np.minimum(need_lo, np.concatenate([[L], need_lo[:-1]]))  # each item as its own launch
    end = np.maximum(need_hi, np.concatenate([[-1], need_hi[:-1]])) + 1
    empty = end <= start  # nothing to do: such an item joins the run before it, whichever kernel that is
    busy = np.maximum.accumulate(np.where(empty, -1, np.arange(m))) if m else np.zeros(0, np.int64)
    narrow = np.where(busy >= 0, end[busy] - start[busy] <= max_cells, False)
    launches, tiles = [], False
    prev_lo, prev_hi = L, -1
    cuts = [0, *(np.flatnonzero(narrow[1:] != narrow[:-1]) + 1).tolist(), m] if m else [0]
    for a, z in zip(cuts[:-1], cuts[1:], strict=True):
        if narrow[a]:
            start[a], end[a] = min(need_lo[a], prev_lo), max(need_hi[a], prev_hi) + 1
            launches.append(("sweep", a, z, 0, 0))
            prev_lo, prev_hi = int(need_lo[z - 1]), int(need_hi[z - 1])
            continue
        for j0, count in plan_groups(s.w[a:z].tolist(), record, first=a):
            stop = j0 + count
            lo, hi = int(need_lo[j0:stop].min()), int(need_hi[j0:stop].max())
            first, last = min(lo, prev_lo), max(hi, prev_hi) + 1
            if first < last:
                launches.append(("tile" if count > 1 else "item", j0, stop, first, last))
                tiles |= count > 1
            prev_lo, prev_hi = lo, hi
    return LaunchPlan(launches, (start, end), tiles)
