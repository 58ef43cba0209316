"""The public entry points: :func:`solve` and :func:`profile`."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from .backends import make_pass, resolve_backend, resolve_device
from .memory import DeviceOutOfMemory, Meter, Workspace, default_limit
from .passes.base import Job
from .problem import Instance, make_instance
from .progress import Progress
from .recover import Recovery
from .reduce import Reduced, reduce


@dataclass(frozen=True)
class Solution:
    """An optimal selection.

    Attributes:
        value: the optimum; an int when every value is a whole number, else a float.
        selected: ascending indices of the chosen items.
        weight: their total weight (<= capacity).
        stats: how it was solved: ``device``, ``backend``, ``strategy`` ("reduced", "bits" or "hirschberg"),
            ``cell_updates``, ``seconds``, ``peak_bytes`` (working buffers the solver allocated), ``memory_limit``,
            ``dtype``, ``reductions``, ``items`` and ``profile_length`` (what reached the DP), ``passes``,
            ``item_passes``, ``leaves``, ``depth``.
    """

    value: int | float
    selected: list[int]
    weight: int
    stats: dict = field(default_factory=dict, compare=False)


def _check_limit(memory_limit: object) -> int | None:
    if memory_limit is None:
        return None
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, np.integer)):
        raise TypeError(f"memory_limit must be an integer number of bytes or None, got {memory_limit!r}")
    if memory_limit <= 0:
        raise ValueError(f"memory_limit = {memory_limit}: it must be a positive number of bytes")
    return int(memory_limit)


def _job(red: Reduced) -> Job:
    values = red.dp_values()
    sentinel = None
    if red.cover:
        # "Cannot cover": below every reachable value, and twice it (a split sum) still fits the dtype.
        sentinel = values.dtype.type(-np.inf if values.dtype.kind == "f" else -(int(red.values.sum()) + 1))
    return Job(red.weights, values, red.target + 1, red.cover, red.dtype, sentinel)


def _total(inst: Instance, idx) -> int | float:
    v = inst.values[idx]
    return int(v.sum()) if inst.integral else math.fsum(v.tolist())


def _check_result(red: Reduced, chosen: list[int], dp_value: int | float) -> None:
    """Exact (integer) DP: the recovered items must reproduce the optimum, or we refuse to answer."""
    if red.dtype.is_floating_point:
        return
    got = int(red.values[chosen].sum())
    expect = int(dp_value) + (int(red.values.sum()) if red.cover else 0)
    if got != expect:
        raise RuntimeError(f"internal error: recovered items are worth {got} but the DP optimum is {expect}")


def solve(
    weights,
    values,
    capacity,
    *,
    device: str | torch.device = "auto",
    backend: str = "auto",
    memory_limit: int | None = None,
    dtype: torch.dtype | None = None,
    progress: Progress | None = None,
) -> Solution:
    """Solve a 0/1 knapsack exactly.

    Args:
        weights: 1-D whole numbers >= 0 (list, tuple, numpy array or torch tensor), shape (n,).
        values: 1-D finite numbers >= 0, shape (n,).
        capacity: whole number >= 0.
        device: "auto" (CUDA if available, else CPU), "cpu", "cuda", "cuda:N" or a torch.device.
        backend: "auto", "numpy" (CPU), "torch" (any device) or "triton" (CUDA); see :mod:`knapsack_gpu.backends`.
        memory_limit: bytes of working memory allowed on the device; None: a safe share of what is free there.
        dtype: DP arithmetic. None picks an exact one (int32/int64 for whole-number values, float64 otherwise);
            an explicit torch.float32 is honoured but may round.
        progress: a :class:`knapsack_gpu.progress.Progress` told the planned item passes, then of each one.

    Returns:
        A :class:`Solution`; ``stats["peak_bytes"] <= memory_limit``.

    Raises:
        TypeError, ValueError: bad input, naming the argument (and index).
        MemoryError: not even the minimum working set fits the memory limit (the message gives the bytes needed).
    """
    t0 = time.perf_counter()
    inst = make_instance(weights, values, capacity)
    dev = resolve_device(device)
    limit = _check_limit(memory_limit)
    red = reduce(inst, dtype)
    name = resolve_backend(backend, dev, red.dtype)
    stats = {
        "device": str(dev),
        "backend": name,
        "strategy": "reduced",
        "dtype": str(red.dtype).replace("torch.", ""),
        "reductions": list(red.applied),
        "items": red.n,
        "profile_length": red.target + 1 if red.n else 0,
        "cell_updates": 0,
        "passes": 0,
        "item_passes": 0,
        "leaves": 0,
        "depth": 0,
        "peak_bytes": 0,
        "memory_limit": limit,
    }
    chosen_items = red.items[:0]
    if red.n:
        chosen_local = _run(red, dev, name, limit, stats, progress)
        chosen_items = red.items[chosen_local]
    selected = np.union1d(red.forced, chosen_items).astype(np.int64)
    weight = int(inst.weights[selected].sum())
    if weight > inst.capacity:
        raise RuntimeError(f"internal error: selection weighs {weight} > capacity {inst.capacity}")
    stats["seconds"] = time.perf_counter() - t0
    return Solution(value=_total(inst, selected), selected=selected.tolist(), weight=weight, stats=stats)


def _run(red: Reduced, dev: torch.device, name: str, limit: int | None, stats: dict, progress) -> list[int]:
    job = _job(red)
    for attempt in range(2):
        cap = default_limit(dev) if limit is None else limit
        meter = Meter(cap, dev)
        ws = Workspace(meter)
        rec = Recovery(make_pass(name, dev, red.dtype, ws, progress), job, cap)
        try:
            chosen, dp_value = rec.run()
            break
        except DeviceOutOfMemory:
            # The device refused what the plan allowed (another process took memory): re-plan once against
            # what is free now, which picks a smaller plan; then give up with the MemoryError.
            if attempt or limit is not None or dev.type != "cuda":
                raise
            torch.cuda.empty_cache()
        finally:
            ws.clear()
    _check_result(red, chosen, dp_value)
    r = rec.stats
    stats.update(
        strategy=r.strategy,
        cell_updates=r.cell_updates,
        passes=r.passes,
        item_passes=r.item_passes,
        leaves=r.leaves,
        depth=r.depth,
        peak_bytes=meter.peak,
        memory_limit=cap,
    )
    return chosen


def profile(
    weights,
    values,
    capacity,
    *,
    device: str | torch.device = "auto",
    dtype: torch.dtype | None = None,
    backend: str = "auto",
) -> torch.Tensor:
    """The best value for every capacity 0..capacity, from one forward pass.

    Args:
        weights, values, capacity: as for :func:`solve`.
        device, dtype, backend: as for :func:`solve`.

    Returns:
        A 1-D tensor of length capacity + 1 on the device, non-decreasing; int32/int64 for whole-number values,
        float64 otherwise (or ``dtype``).
    """
    inst = make_instance(weights, values, capacity)
    dev = resolve_device(device)
    red = reduce(inst, dtype, whole_profile=True)
    name = resolve_backend(backend, dev, red.dtype)
    offset = _total(inst, red.forced)
    if red.n == 0:
        return torch.full((red.capacity + 1,), offset, dtype=red.dtype, device=dev).repeat_interleave(red.gcd)[
            : inst.capacity + 1
        ]
    meter = Meter(default_limit(dev), dev)
    ws = Workspace(meter)
    try:
        out = make_pass(name, dev, red.dtype, ws).run(_job(red), None).clone()
    finally:
        ws.clear()
    if offset:
        out += offset
    if red.gcd > 1:
        out = out.repeat_interleave(red.gcd)[: inst.capacity + 1]
    return out
