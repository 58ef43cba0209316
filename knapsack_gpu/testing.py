"""Helpers that run passes side by side, for the tests and benchmarks/gpu_check.py: random jobs, poisoned buffers."""

from __future__ import annotations

import numpy as np
import torch

from .backends import make_pass
from .dense.backtrack import bit_array
from .dense.passes.base import BitLayout, Job
from .dtypes import numpy_dtype
from .memory import Meter, Workspace


def random_job(
    rng: np.random.Generator,
    m: int,
    length: int,
    dtype: torch.dtype,
    cover: bool,
    max_w: int | None = None,
    extremes: bool = True,
    windows: bool = False,
) -> Job:
    """m items over a profile of ``length``: weights up to ``max_w`` (default length / 3), with ``extremes`` some
    w = C and w > C; values exact in every dtype (halves in floating point), negated with a sentinel in cover mode.
    ``windows``: random update windows (standard mode), some empty, some unbounded."""
    max_w = max_w if max_w is not None else max(2, length // 3)
    w = rng.integers(0, max_w + 1, m)
    if extremes:
        w[rng.random(m) < 0.15] = length - 1  # w = C
        w[rng.random(m) < 0.1] = length + 3  # w > C
    v = rng.integers(1, 60, m).astype(np.float64) + (0.5 if dtype.is_floating_point else 0)
    values = v.astype(numpy_dtype(dtype))
    sentinel = None
    if cover:
        values = -values
        sentinel = values.dtype.type(-np.inf if dtype.is_floating_point else -(int(v.sum()) + 1))
    window = None
    if windows:
        a = rng.integers(-3, length + 3, m).astype(np.float64)
        b = a + rng.integers(-2, max(2, length // 2), m)
        a[rng.random(m) < 0.2] = -np.inf
        b[rng.random(m) < 0.2] = np.inf
        window = (a, b)
    return Job(w.astype(np.int64), values, length, cover, dtype, sentinel, window=window)


def run_pass(
    backend: str, job: Job, device: str | torch.device = "cpu", record: bool = True
) -> tuple[torch.Tensor, np.ndarray | None]:
    """Run one pass on poisoned buffers (the dtype's minimum in the rows and the scratch), so a cell a pass reads
    before writing shows up as a wrong value.

    Returns:
        (the profile on the CPU, the decisions as a bool array (m, length) or None).
    """
    dev = torch.device(device)
    ws = Workspace(Meter(1 << 40, dev))
    p = make_pass(backend, dev, job.dtype, ws)
    p.reserve(job.m, job.length)
    low = torch.finfo(job.dtype).min if job.dtype.is_floating_point else torch.iinfo(job.dtype).min
    for buf in ws.buffers().values():
        if buf.dtype == job.dtype:  # rows, candidates, scratch
            buf.fill_(low)
    bits = p.new_bits(BitLayout.of(job.schedule, job.length)) if record else None
    profile = p.run(job, bits).clone().cpu()
    return profile, (bit_array(bits, job.m, job.length) if record else None)
