"""Helpers that run passes side by side, for the tests and benchmarks/gpu_check.py: random jobs, poisoned buffers."""

from __future__ import annotations

import numpy as np
import torch

from .backends import make_pass
from .dense.backtrack import bit_array
from .dense.passes.base import BitLayout, Job
from .dtypes import numpy_dtype
from .memory import Meter, Workspace

MODES = ((False, False), (False, True), (True, False), (True, True))  # (cover, windows)


def pairwise(paths, dtypes) -> list[tuple]:
    """(path, dtype, cover, windows) covering every pair of factors once over, instead of every combination: each
    (path, dtype) meets one of the four (cover, windows) modes, rotated so that every path and every dtype meets all
    four (with 4 paths and 4 dtypes: 16 jobs where the full product is 64)."""
    return [
        (path, dtype, *MODES[(i + j) % len(MODES)]) for i, path in enumerate(paths) for j, dtype in enumerate(dtypes)
    ]


def random_job(
    rng: np.random.Generator,
    m: int,
    length: int,
    dtype: torch.dtype,
    cover: bool,
    max_w: int | None = None,
    extremes: bool = True,
    windows: bool = False,
    ramp: bool = False,
) -> Job:
    """m items over a profile of ``length``: weights up to ``max_w`` (default length / 3), with ``extremes`` some
    w = C and w > C; values exact in every dtype (halves in floating point), negated with a sentinel in cover mode.
    ``windows``: random update windows (standard mode), some empty, some unbounded. ``ramp``: a reduced-value job
    (integer dtypes, standard mode): values of either sign, the empty profile max(-P*c, F) with a floor F that cuts
    the ramp inside the profile."""
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
    job_ramp = None
    if ramp:
        assert not cover and not dtype.is_floating_point
        values = rng.integers(-60, 61, m).astype(numpy_dtype(dtype))
        P = int(rng.integers(1, 4))
        h0 = int(rng.integers(-50, 51))  # an offset: the empty profile need not start at 0
        job_ramp = (P, h0, h0 - int(rng.integers(1, max(2, P * length // 2))) - 61)
    window = None
    if windows:
        a = rng.integers(-3, length + 3, m).astype(np.float64)
        b = a + rng.integers(-2, max(2, length // 2), m)
        a[rng.random(m) < 0.2] = -np.inf
        b[rng.random(m) < 0.2] = np.inf
        window = (a, b)
    return Job(w.astype(np.int64), values, length, cover, dtype, sentinel, window=window, ramp=job_ramp)


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
    p = make_pass(backend, dev, job.dtype, ws, reduced=job.ramp is not None)
    p.reserve(job.m, job.length)
    low = torch.finfo(job.dtype).min if job.dtype.is_floating_point else torch.iinfo(job.dtype).min
    for buf in ws.buffers().values():
        if buf.dtype == job.dtype:  # rows, candidates, scratch
            buf.fill_(low)
    bits = p.new_bits(BitLayout.of(job.schedule, job.length)) if record else None
    profile = p.run(job, bits).clone().cpu()
    return profile, (bit_array(bits, job.m, job.length) if record else None)
