"""The Triton pass: the kernels of kernels/ (knapsack_gpu.kernels) driven from the host.

A profile that fits one program runs all items in one launch (kernel 3). Otherwise runs of light items go to the
multi-item tile kernel (kernel 2) and heavy items to the fused single-item kernel (kernel 1), on two ping-pong rows.
A launch covers only the cells where its output row may differ from its input: its items' update ranges, the
previous launch's (the output row is two launches old there), and the cells that just entered the prefix range
(both rows hold V_{j0 - 1} there, filled on the host; the kernels' tail rule carries them on). With narrow windows a
launch touches a few thousand cells instead of the whole row.

Per-item scalars travel as device arrays, not kernel arguments: Triton passes Python floats as fp32, which would
round float64 values.
"""

from __future__ import annotations

import importlib
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
        if length <= self.kern.small.MAX_LENGTH:
            return 2 * self.kern.small.block_for(length)
        return self.kern.tile.scratch_numel(length)

    def workspace_bytes(self, length: int, record: bool) -> int:
        return (2 * length + self._scratch_numel(length)) * self.itemsize

    def items_bytes(self, m: int) -> int:
        return m * (4 * 8 + 2 * self.itemsize) + 3 * 8 * ((m + 7) // 8)

    def record_extra_bytes(self, length: int) -> int:
        return 0

    _ITEM_DTYPES = {"w": torch.int64, "lo": torch.int64, "hi": torch.int64, "top": torch.int64}
    _PLANE_ARRAYS = ("pdelta", "pbase", "pend")

    def reserve(self, m: int, length: int) -> None:
        for name in ("row", "row2"):
            self.ws.get(name, length, self.dtype)
        self.ws.get("scratch", self._scratch_numel(length), self.dtype)
        for name in self.kern.common.ITEM_ARRAYS:
            self.ws.get("items_" + name, max(1, m), self._ITEM_DTYPES.get(name, self.dtype))
        for name in self._PLANE_ARRAYS:
            self.ws.get(name, max(1, (m + 7) // 8), torch.int64)

    def _device_arrays(self, host: dict[str, np.ndarray], count: int, dtypes: dict) -> dict[str, torch.Tensor]:
        out = {}
        for name, array in host.items():
            buf = self.ws.get(name, max(1, count), dtypes.get(name, self.dtype))[:count]
            buf.copy_(torch.from_numpy(np.ascontiguousarray(array)))
            out[name] = buf
        return out

    def _items(self, job: Job) -> dict[str, torch.Tensor]:
        s = job.schedule
        tail = np.append(s.before[1:], s.final) if not job.cover else np.zeros_like(job.values)
        host = {"w": s.w, "v": job.values, "lo": s.lo, "hi": s.hi, "top": s.top, "tail": tail}
        dev = self._device_arrays({"items_" + k: v for k, v in host.items()}, job.m, self._ITEM_DTYPES_PREFIXED)
        return {name[len("items_") :]: t for name, t in dev.items()}

    _ITEM_DTYPES_PREFIXED = {"items_" + k: v for k, v in _ITEM_DTYPES.items()}

    def _planes(self, layout: BitLayout) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        host = {
            "pdelta": layout.offset - layout.base,
            "pbase": layout.base,
            "pend": layout.base + layout.length,
        }
        dev = self._device_arrays(host, layout.base.size, dict.fromkeys(self._PLANE_ARRAYS, torch.int64))
        return dev["pdelta"], dev["pbase"], dev["pend"]

    def run(self, job: Job, bits: tuple[torch.Tensor, BitLayout] | None) -> torch.Tensor:
        L, kern = job.length, self.kern
        src = self.ws.get("row", L, self.dtype)
        dst = self.ws.get("row2", L, self.dtype)
        scratch = self.ws.get("scratch", self._scratch_numel(L), self.dtype)
        items = self._items(job)
        table, planes = (bits[0], self._planes(bits[1])) if bits is not None else (None, None)
        s = job.schedule
        if L <= kern.small.MAX_LENGTH:
            if job.cover:
                self.init_profile(job, src)
            else:
                src.zero_()  # kernel 3 reads the whole row: f = 0 everywhere before the first item
            kern.small_pass(src, dst, table, planes, scratch, items, job.m, job.cover)
            self.report(s, 0, job.m)
            return dst
        for row in (src, dst):
            self.init_profile(job, row)
        pdelta = planes[0] if planes is not None else None
        filled = 0
        prev_lo, prev_hi = L, -1  # the cells the previous launch changed: none yet, both rows agree
        for j0, count in kern.plan_groups(s.w.tolist(), bits is not None):
            stop = j0 + count
            lo, hi = s.lo[j0:stop], s.hi[j0:stop]
            live = lo <= hi
            need_lo = int(lo[live].min()) if live.any() else L
            need_hi = int(hi[live].max()) if live.any() else -1
            top = int(s.top[stop - 1])
            if not job.cover and top > filled:
                value = s.before[j0].item()
                for row in (src, dst):
                    row[filled + 1 : top + 1].fill_(value)
                need_lo, need_hi = min(need_lo, filled + 1), max(need_hi, top)
                filled = top
            start, end = min(need_lo, prev_lo), max(need_hi, prev_hi) + 1
            if count == 1:
                kern.item_update(src, dst, table, pdelta, items, j0, start, end, job.cover)
            else:
                halo = int(s.w[j0:stop].sum())
                kern.tile_update(src, dst, table, pdelta, scratch, items, j0, count, halo, start, end, job.cover)
            src, dst = dst, src
            prev_lo, prev_hi = need_lo, need_hi
            self.report(s, j0, stop)
        if not job.cover and filled < L - 1:
            src[filled + 1 :].fill_(s.final.item())
        return src

    def split(self, fa: torch.Tensor, fb: torch.Tensor, cap: int) -> tuple[int, float | int]:
        return torch_split(self.meter, fa, fb, cap)
