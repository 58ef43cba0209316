"""``knapsack_gpu.distributed.solve``: one exact solve spread over the ranks of a torch.distributed process group.

Flow, identical on every rank (SPMD): validate and reduce the instance (knapsack_gpu.problem / reduce, as the
single-process solver does), agree on it and on the memory limit (one all-reduce), plan the per-rank memory
(recover.plan_memory), run the sharded passes and the recovery (shard.py, recover.py), then one all-reduce merges the
chosen items and every rank's counters, so all ranks return the same Solution.
"""

from __future__ import annotations

import hashlib
import os
import time

import numpy as np
import torch
import torch.distributed as dist

from ..arith import exact_sum
from ..problem import Instance, make_instance
from ..reduce import reduce
from ..solver import Solution, check_limit, solution
from .comm import Comm, DistributedError
from .recover import Recovery, plan_memory
from .shard import Buffers, ShardedPass

# Share of free memory a rank plans with when memory_limit is None: on the CPU, half of MemAvailable split between
# the ranks of the node (LOCAL_WORLD_SIZE); on CUDA, 80% of what is free on the rank's GPU (caching-allocator slack).
CPU_SHARE = 0.5
CUDA_SHARE = 0.8
# Per-rank counters merged at the end, in this order (one int64 row per rank).
_FIELDS = (
    "bytes_sent",
    "bytes_received",
    "messages",
    "wait_ns",
    "peak_bytes",
    "elapsed_ns",
    "cells",
    "halo_recompute",
    "serial_items",
    "local_subproblems",
    "local_cells",
    "dp_value",
    "has_dp_value",
    "failed",
)


def _device(comm: Comm, device) -> torch.device:
    nccl = comm.backend == "nccl"
    if device is None or (isinstance(device, str) and device == "auto"):
        return torch.device("cuda", torch.cuda.current_device()) if nccl else torch.device("cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    if nccl and dev.type != "cuda":
        raise ValueError(f"device={device!r}: NCCL moves CUDA tensors only; pass device=None (this rank's GPU)")
    if not nccl and dev.type != "cpu":
        raise ValueError(
            f"device={device!r} with the {comm.backend} backend: use gloo with CPU tensors, or nccl with one GPU "
            "per rank"
        )
    return dev


def _default_limit(dev: torch.device, world: int) -> int:
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return int(free * CUDA_SHARE)
    avail = 4 << 30
    try:
        with open("/proc/meminfo") as f:
            avail = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration):
        pass
    ranks_here = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    return int(avail * CPU_SHARE / max(1, ranks_here))


def _digest(inst: Instance, dtype) -> int:
    h = hashlib.blake2b(digest_size=8)
    h.update(inst.weights.tobytes())
    h.update(inst.values.tobytes())
    h.update(f"{inst.capacity}|{inst.integral}|{dtype}".encode())
    return int.from_bytes(h.digest(), "little") & ((1 << 62) - 1)


def solve(
    weights,
    values,
    capacity,
    *,
    group=None,
    device: str | torch.device | None = None,
    memory_limit: int | None = None,
    dtype: torch.dtype | None = None,
) -> Solution:
    """Solve a 0/1 knapsack exactly, sharded over the ranks of a process group. Call it on every rank (collective).

    Args:
        weights, values, capacity: as for :func:`knapsack_gpu.solve`; every rank must pass the same problem.
        group: a ``torch.distributed`` process group (None: the default group). gloo: CPU tensors; NCCL: one GPU per
            rank, the one ``torch.cuda.set_device`` selected.
        device: None for the backend's natural device (this rank's GPU under NCCL, else the CPU), or a device.
        memory_limit: working bytes per rank; the ranks plan with the smallest one passed. None: a share of what is
            free on each rank's device.
        dtype: DP arithmetic, as for :func:`knapsack_gpu.solve` (None: exact int32/int64/float64).

    Returns:
        The same :class:`knapsack_gpu.Solution` on every rank. ``stats`` adds ``world_size``, ``backend`` (the
        process-group backend), per-rank lists ``bytes_sent``, ``bytes_received``, ``messages``,
        ``comm_wait_seconds``, ``rank_seconds``, ``rank_peak_bytes``, ``local_subproblems`` (counted up to the final
        merge), and ``shard_length``, ``halo_cells``, ``chunk_cells``, ``serial_items``, ``halo_recompute_cells``;
        ``peak_bytes`` (the largest rank's) <= memory_limit.

    Raises:
        DistributedError: no initialised process group; the ranks passed different problems; a rank died or timed out.
        TypeError, ValueError: bad input (as the single-process solver), or a device the backend cannot move.
        MemoryError: the per-rank limit is below what the sharded plan needs (the message gives the bytes).
    """
    t0 = time.perf_counter()
    comm = Comm(group)
    dev = _device(comm, device)
    comm.set_device(dev)
    inst = make_instance(weights, values, capacity)
    limit = check_limit(memory_limit)
    P = comm.world

    comm.phase = "agreeing on the problem"
    own_limit = limit if limit is not None else _default_limit(dev, P)
    digest = _digest(inst, dtype)
    agree = comm.all_reduce(
        torch.tensor([digest, -digest, -own_limit], dtype=torch.int64, device=dev), dist.ReduceOp.MAX
    )
    hi_digest, neg_lo_digest, neg_limit = agree.tolist()
    if hi_digest != -neg_lo_digest:
        raise DistributedError(
            f"rank {comm.rank}: the ranks passed different problems to knapsack_gpu.distributed.solve (weights, "
            "values, capacity and dtype must be the same on every rank)"
        )
    agreed_limit = -neg_limit

    red = reduce(inst, dtype, whole_profile=True)
    applied = list(red.applied)
    m = red.n
    total_w = exact_sum(red.weights)
    strategy, plan, sp, rec = "reduced", None, None, None
    chosen: list[int] = []
    dp_value = None
    if m and total_w <= red.capacity:
        applied.append("take-all")
        chosen = list(range(m))
        m_dp = 0
    else:
        m_dp = m
    if m_dp:
        plan = plan_memory(agreed_limit, red.capacity + 1, P, m, int(red.weights.max()), red.dtype)
        strategy = plan.strategy
        buffers = Buffers(agreed_limit, dev)
        sp = ShardedPass(comm, red.dtype, buffers)
        sp.allocate(plan.shard, plan.halo, plan.chunk, plan.bit_bytes, plan.send)
        np_dtype = {torch.int32: np.int64, torch.int64: np.int64, torch.float32: np.float32, torch.float64: np.float64}
        dp_values = red.values.astype(np_dtype[red.dtype]).tolist()
        rec = Recovery(sp, red.weights.tolist(), dp_values, red.values, red.capacity, plan, agreed_limit)
        chosen, dp_value = rec.run()
        buffers.clear()

    comm.phase = "merging the result"
    elapsed = time.perf_counter() - t0
    integral_dp = dp_value is not None and not red.dtype.is_floating_point
    local_error = rec.stats.local_error if rec is not None else None
    row = [
        comm.bytes_sent,
        comm.bytes_received,
        comm.messages,
        int(comm.wait_s * 1e9),
        max(sp.buffers.peak if sp else 0, rec.stats.local_peak if rec else 0),
        int(elapsed * 1e9),
        sp.cells if sp else 0,
        sp.halo_recompute if sp else 0,
        sp.serial_items if sp else 0,
        rec.stats.local_subproblems if rec else 0,
        rec.stats.local_cells if rec else 0,
        int(dp_value) if integral_dp else 0,
        int(integral_dp),
        int(local_error is not None),
    ]
    merged = torch.zeros(m + P * len(_FIELDS), dtype=torch.int64, device=dev)
    if chosen:
        merged[torch.tensor(chosen, dtype=torch.int64, device=dev)] = 1
    merged[m + comm.rank * len(_FIELDS) : m + (comm.rank + 1) * len(_FIELDS)] = torch.tensor(row, dtype=torch.int64)
    merged = comm.all_reduce(merged, dist.ReduceOp.MAX).cpu()
    table = merged[m:].view(P, len(_FIELDS)).tolist()
    col = {name: [r[i] for r in table] for i, name in enumerate(_FIELDS)}
    if any(col["failed"]):
        if local_error is not None:
            raise local_error
        bad = [r for r, f in enumerate(col["failed"]) if f]
        raise DistributedError(f"rank(s) {bad} failed on their local sub-problems (see their error)")

    chosen_mask = merged[:m].numpy().astype(bool)
    local_idx = np.flatnonzero(chosen_mask)
    if any(col["has_dp_value"]):
        expect = max(v for v, h in zip(col["dp_value"], col["has_dp_value"], strict=True) if h)
        got = exact_sum(red.values[local_idx])
        if got != expect:
            raise RuntimeError(f"internal error: recovered items are worth {got} but the DP optimum is {expect}")
    selected = red.selection(local_idx)
    rs = rec.stats if rec else None
    stats = {
        "device": dev.type,
        "backend": comm.backend,
        "world_size": P,
        "strategy": strategy,
        "dtype": str(red.dtype).replace("torch.", ""),
        "reductions": applied,
        "items": m,
        "profile_length": red.capacity + 1 if m_dp else 0,
        "shard_length": plan.shard if plan else 0,
        "halo_cells": plan.halo if plan else 0,
        "chunk_cells": plan.chunk if plan else 0,
        "overlap": bool(plan and plan.send),
        "cell_updates": sum(col["cells"]) + sum(col["local_cells"]),
        "halo_recompute_cells": sum(col["halo_recompute"]),
        "serial_items": max(col["serial_items"]),
        "passes": rs.passes if rs else 0,
        "item_passes": rs.item_passes if rs else 0,
        "splits": rs.splits if rs else 0,
        "leaves": rs.leaves if rs else 0,
        "depth": rs.depth if rs else 0,
        "local_subproblems": col["local_subproblems"],
        "peak_bytes": max(col["peak_bytes"]),
        "rank_peak_bytes": col["peak_bytes"],
        "memory_limit": agreed_limit,
        "bytes_sent": col["bytes_sent"],
        "bytes_received": col["bytes_received"],
        "messages": col["messages"],
        "comm_wait_seconds": [ns / 1e9 for ns in col["wait_ns"]],
        "rank_seconds": [ns / 1e9 for ns in col["elapsed_ns"]],
        "seconds": max(col["elapsed_ns"]) / 1e9,
    }
    return solution(inst, selected, stats)
