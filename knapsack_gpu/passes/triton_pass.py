"""The Triton pass: the kernels of kernels/ (knapsack_gpu.kernels) driven from the host.

A profile that fits one program runs all items in one launch (kernel 3); otherwise runs of light items go to the
multi-item tile kernel (kernel 2) and heavy items to the fused single-item kernel (kernel 1), on two ping-pong rows.
Per-item scalars travel as device arrays, not kernel arguments: Triton passes Python floats as fp32, which would
round float64 values.
"""

from __future__ import annotations

import numpy as np
import torch

from ..backends import kernels
from .base import ForwardPass, Job, round8
from .torch_pass import torch_split


class TritonPass(ForwardPass):
    name = "triton"
    record_buffers = ()  # the kernels write bits straight into the table

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.k = kernels()

    def _scratch_numel(self, length: int) -> int:
        if length <= self.k.small.MAX_LENGTH:
            return 2 * self.k.small.block_for(length)
        return self.k.tile.scratch_numel(round8(length))

    def workspace_bytes(self, length: int, record: bool) -> int:
        return (2 * length + self._scratch_numel(length)) * self.itemsize

    def items_bytes(self, m: int) -> int:
        return m * (3 * 8 + 2 * self.itemsize)

    def record_extra_bytes(self, length: int) -> int:
        return 0

    _ITEM_ARRAYS = (("w", torch.int64), ("lo", torch.int64), ("hi", torch.int64), ("v", None), ("tail", None))

    def reserve(self, m: int, length: int) -> None:
        for name in ("row", "row2"):
            self.ws.get(name, length, self.dtype)
        self.ws.get("scratch", self._scratch_numel(length), self.dtype)
        for name, dtype in self._ITEM_ARRAYS:
            self.ws.get("items_" + name, max(1, m), dtype or self.dtype)

    def _items(self, job: Job) -> dict[str, torch.Tensor]:
        s = job.schedule
        values = job.values
        if job.cover:
            tail = np.zeros_like(values)
        else:
            tail = np.cumsum(values, dtype=np.float64 if values.dtype.kind == "f" else np.int64).astype(values.dtype)
        host = {
            "w": np.asarray(s.weights, dtype=np.int64),
            "lo": np.asarray(s.lo, dtype=np.int64),
            "hi": np.asarray(s.hi, dtype=np.int64),
            "v": values,
            "tail": tail,
        }
        out = {}
        for name, dtype in self._ITEM_ARRAYS:
            buf = self.ws.get("items_" + name, max(1, job.m), dtype or self.dtype)[: job.m]
            buf.copy_(torch.from_numpy(np.ascontiguousarray(host[name])))
            out[name] = buf
        return out

    def run(self, job: Job, bits: torch.Tensor | None) -> torch.Tensor:
        L, k = job.length, self.k
        src = self.ws.get("row", L, self.dtype)
        dst = self.ws.get("row2", L, self.dtype)
        scratch = self.ws.get("scratch", self._scratch_numel(L), self.dtype)
        if job.cover:
            self.init_profile(job, src)
        else:
            src.zero_()  # ping-pong rows are read everywhere: no lazy tail here
        items = self._items(job)
        s = job.schedule
        if L <= k.small.MAX_LENGTH:
            k.small_pass(src, dst, bits, scratch, items, job.m, job.cover)
            self._report(s, 0, job.m)
            return dst
        for j0, count in k.plan_groups(s.weights, bits is not None):
            if count == 1:
                k.item_update(src, dst, bits, items, j0, job.cover)
            else:
                halo = sum(s.weights[j0 : j0 + count])
                k.tile_update(src, dst, bits, scratch, items, j0, count, halo, job.cover)
            src, dst = dst, src
            self._report(s, j0, j0 + count)
        return src

    def _report(self, s, first: int, stop: int) -> None:
        if self.progress is not None:
            for j in range(first, stop):
                self.progress.update(max(s.hi[j] - s.lo[j] + 1, 0))

    def split(self, fa: torch.Tensor, fb: torch.Tensor, cap: int) -> tuple[int, float | int]:
        return torch_split(self.meter, fa, fb, cap)
