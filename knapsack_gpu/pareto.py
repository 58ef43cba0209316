"""The whole memory/runtime trade-off of the partitioner's knapsack from one DP pass.

PyTorch's visualisation and its knee-point search solve one knapsack per budget. One forward pass over every
quantized budget 0..sum(weights), recording decision bits, gives the best saved runtime at every budget, the memory
the optimum really needs, and (by backtracking from any budget) the exact selection dp_knapsack would return there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .backends import make_pass, resolve_backend, resolve_device
from .dense.backtrack import backtrack
from .dense.passes.base import BitLayout, Job
from .memory import Meter, Workspace, default_limit
from .problem import make_instance
from .quantize import check, quantize, values
from .reduce import reduce


@dataclass
class Pareto:
    """Trade-off of a partitioner knapsack.

    Attributes:
        scale: quantization (memory units per 1.0).
        runtime: float64 array (B + 1,): best saved runtime with quantized budget b = 0..B.
        used: int64 array (B + 1,): least quantized memory that reaches runtime[b] (the frontier's memory).
        total_runtime: sum of all runtimes (recompute runtime = total_runtime - runtime).
        weights: the quantized memories.
    """

    scale: int
    runtime: np.ndarray
    used: np.ndarray
    total_runtime: float
    weights: list[int]
    _select: Callable[[int], list[int]]

    @property
    def budgets(self) -> np.ndarray:
        """Quantized budgets 0..B as memory (float units)."""
        return np.arange(self.runtime.size) / self.scale

    def frontier(self) -> tuple[np.ndarray, np.ndarray]:
        """The Pareto points: (memory used, saved runtime), each memory the least for its runtime."""
        keep = np.flatnonzero(np.diff(self.runtime, prepend=-np.inf) > 0)
        return self.used[keep] / self.scale, self.runtime[keep]

    def selection(self, max_memory: float) -> list[int]:
        """dp_knapsack's saved indices at this budget (nearest quantization), without solving again."""
        b = min(max(round(max_memory * self.scale), 0), self.runtime.size - 1)
        return self._select(b)

    def knee(self, max_budget: float = 0.1, min_budget: float = 0.001, iterations: int = 100) -> float:
        """The budget at the knee, as PyTorch's KnapsackEvaluator.get_knee_point_memory_budget finds it: over
        ``iterations`` budgets, normalise recompute runtime and saved memory of dp_knapsack's selection to [0, 1]
        and take the budget closest to the origin."""
        budgets = [min_budget + i * (max_budget - min_budget) / (iterations - 1) for i in range(iterations)]
        mem, rec = [], []
        for b in budgets:
            q = min(max(round(b * self.scale), 0), self.runtime.size - 1)
            mem.append(sum(self.weights[i] for i in self._select(q)) / self.scale)
            rec.append(self.total_runtime - float(self.runtime[q]))
        if max(rec) == min(rec) or max(mem) == min(mem):
            return max_budget
        rn = [(r - min(rec)) / (max(rec) - min(rec)) for r in rec]
        mn = [(m - min(mem)) / (max(mem) - min(mem)) for m in mem]
        dist = [(a * a + b * b) ** 0.5 for a, b in zip(rn, mn, strict=True)]
        return budgets[dist.index(min(dist))]


def pareto(
    memory: Sequence[float],
    runtimes: Sequence[float],
    *,
    scale: int = 10000,
    max_memory: float | None = None,
    device: str | torch.device = "cpu",
) -> Pareto:
    """Best saved runtime for every quantized budget up to ``max_memory`` (default: everything), in one pass.

    Args:
        memory, runtimes: the partitioner's knapsack inputs (see :func:`knapsack_gpu.partitioner.knapsack`).
        scale: quantization, as dp_knapsack (10000).
        max_memory: the largest budget of interest; None covers all of the memory.
        device: where the pass runs.

    Returns:
        A :class:`Pareto`.
    """
    check(memory, runtimes, 0.0 if max_memory is None else max_memory)
    if max_memory is None:  # every budget up to all of the memory: no item is clamped
        weights, _ = quantize(memory, math.fsum(memory), scale, "nearest")
        top = sum(weights)
    else:
        weights, top = quantize(memory, max_memory, scale, "nearest")
    runtime_values = values(runtimes)
    inst = make_instance(weights, runtime_values, top)
    red = reduce(inst, None, whole_profile=True)
    dev = resolve_device(device)
    forced = red.forced.tolist()
    free_runtime = float(sum(runtime_values[i] for i in forced))
    total_runtime = float(np.sum(runtime_values, dtype=np.float64))
    g = red.gcd
    if red.n == 0:
        runtime = np.full(top + 1, free_runtime)
        used = np.zeros(top + 1, dtype=np.int64)

        return Pareto(scale, runtime, used, total_runtime, weights, lambda b: sorted(forced))
    job = Job(red.weights, red.dp_values(), red.capacity + 1, False, red.dtype)
    meter = Meter(default_limit(dev), dev)
    ws = Workspace(meter)
    p = make_pass(resolve_backend("auto", dev, red.dtype), dev, red.dtype, ws)
    p.reserve(job.m, job.length)
    table, layout = p.new_bits(BitLayout.of(job.schedule, job.length))
    profile = p.run(job, (table, layout)).cpu().numpy().astype(np.float64)
    bits = (table.cpu().clone(), layout)  # kept: selections at any budget are backtracks over it
    ws.clear()
    dp_runtime = np.repeat(profile, g)[: top + 1]
    runtime = dp_runtime + free_runtime
    # Least memory reaching each value: the first index of each plateau of the non-decreasing profile.
    first = np.flatnonzero(np.diff(profile, prepend=-np.inf) > 0)
    plateau = np.searchsorted(first, np.arange(profile.size), side="right") - 1
    used = (first[plateau] * g)[np.arange(top + 1) // g]

    def select(b: int) -> list[int]:
        return red.selection(backtrack(bits, job, b // g)).tolist()

    return Pareto(scale, runtime, used.astype(np.int64), total_runtime, weights, select)


def plot_pareto(front: Pareto, path: str, *, knee: float | None = None, title: str | None = None) -> None:
    """Write the trade-off (memory kept vs runtime to recompute) as PNG or SVG (by the file name); needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plot_pareto needs matplotlib: pip install 'knapsack-gpu[plot]'") from None
    mem, run = front.frontier()
    recompute = front.total_runtime - run
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.step(mem, recompute, where="post", label="exact frontier (one DP pass)")
    if knee is not None:
        q = min(round(knee * front.scale), front.runtime.size - 1)
        ax.plot([front.used[q] / front.scale], [front.total_runtime - front.runtime[q]], "o", label=f"knee {knee:.3g}")
    ax.set_xlabel("activation memory kept (budget units)")
    ax.set_ylabel("runtime to recompute")
    ax.set_title(title or "memory / recompute trade-off")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
