"""The solvers the suite compares, each behind one signature: (weights, values, capacity) -> (value, selected).

PyTorch's partitioner solvers take (memory floats, runtimes, max_memory) and quantize memory with S = 10000, so an
integer instance is handed to them as memory = w / 10000, which they round back to w exactly.

Branch-and-bound contenders take a `time_limit` in seconds as well and stop themselves there; an answer they have
not proven optimal raises :class:`TimeLimitReached`, which the suite reports as a timeout, not as an answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


class TimeLimitReached(Exception):
    """A solver stopped at its own time limit holding an answer it has not proven optimal."""


@dataclass(frozen=True)
class Contender:
    name: str
    run: Callable  # (weights int64 array, values array, capacity int[, time_limit]) -> (value, selected[, extra])
    available: Callable[[], str | None]  # None when it can run here, else why not
    memory: Callable[[int, int], int] | None = None  # predicted bytes for (n, C), to skip what cannot fit
    integer_values_only: bool = False
    # Seconds a solve may take, handed to the solver's own limit (the suite takes the smaller of this and --timeout).
    # None: the solver has no usable limit and the suite's subprocess timeout stops it.
    time_limit: float | None = None


def _torch_solver(name: str):
    def run(w, v, cap):
        from torch._functorch._activation_checkpointing import knapsack as tk

        fn = getattr(tk, name)
        _, saved, _ = fn((np.asarray(w) / 10000).tolist(), np.asarray(v, dtype=float).tolist(), cap / 10000)
        return None, sorted(saved)

    return run


def _ours(device: str, backend: str, low_memory: bool = False, dtype: str | None = None, strategy: str | None = None):
    def run(w, v, cap):
        import torch

        import knapsack_gpu

        # low_memory: the working set torch's sliding Hirschberg uses (four float32 rows) plus 8 MiB.
        limit = 16 * (cap + 1) + (8 << 20) if low_memory else None
        sol = knapsack_gpu.solve(
            w,
            v,
            cap,
            device=device,
            backend=backend,
            memory_limit=limit,
            dtype=dtype and getattr(torch, dtype),
            strategy=strategy,
        )
        run.last_stats = sol.stats
        return sol.value, sol.selected

    return run


def _ours_dropin(w, v, cap):
    """The torch.compile drop-in, knapsack_gpu.partitioner.knapsack: dp_knapsack's signature and selection."""
    import knapsack_gpu.partitioner as kp

    _, saved, _ = kp.knapsack((np.asarray(w) / 10000).tolist(), np.asarray(v, dtype=float).tolist(), cap / 10000)
    return None, saved


def _knee_budgets(cap: int) -> list[float]:
    """The knee search's budgets: KnapsackEvaluator's 100 evenly spaced ones, up to the instance's budget."""
    lo, hi = 0.001, cap / 10000
    return [lo + i * (hi - lo) / 99 for i in range(100)]


def _ours_pareto(w, v, cap):
    from knapsack_gpu.pareto import pareto

    front = pareto((np.asarray(w) / 10000).tolist(), np.asarray(v).tolist(), max_memory=cap / 10000)
    knee = front.knee(max_budget=cap / 10000)
    return None, front.selection(knee), {"knee": knee}


def _torch_dp_knee(w, v, cap):
    """PyTorch's knee search, KnapsackEvaluator.get_knee_point_memory_budget: one dp_knapsack per budget."""
    from torch._functorch._activation_checkpointing.knapsack import dp_knapsack

    memory, runtimes = (np.asarray(w) / 10000).tolist(), np.asarray(v, dtype=float).tolist()
    budgets = _knee_budgets(cap)
    mem, rec, picks = [], [], []
    for b in budgets:
        _, saved, recomputable = dp_knapsack(memory, runtimes, b)
        mem.append(sum(memory[i] for i in saved))
        rec.append(sum(runtimes[i] for i in recomputable))
        picks.append(saved)
    rn = [(r - min(rec)) / ((max(rec) - min(rec)) or 1) for r in rec]
    mn = [(m - min(mem)) / ((max(mem) - min(mem)) or 1) for m in mem]
    dist = [(a * a + b * b) ** 0.5 for a, b in zip(rn, mn, strict=True)]
    k = dist.index(min(dist))
    return None, picks[k], {"knee": budgets[k]}


def _scipy_milp(w, v, cap, time_limit=None):
    from scipy.optimize import Bounds, LinearConstraint, milp

    w = np.asarray(w, dtype=float)
    res = milp(
        c=-np.asarray(v, dtype=float),
        constraints=[LinearConstraint(w[None, :], ub=[cap])],
        integrality=np.ones_like(w),
        bounds=Bounds(0, 1),
        options={"mip_rel_gap": 0} | ({"time_limit": time_limit} if time_limit else {}),
    )
    if res.status == 1:  # HiGHS stopped at the time (or iteration) limit, maybe holding a feasible answer
        raise TimeLimitReached(f"HiGHS stopped at its {time_limit:g} s limit: {res.message}")
    if res.x is None:
        raise RuntimeError(f"milp: {res.message}")
    return None, np.flatnonzero(res.x > 0.5).tolist()


def _ortools(solver: str):
    def run(w, v, cap, time_limit=None):
        from ortools.algorithms.python import knapsack_solver

        s = knapsack_solver.KnapsackSolver(getattr(knapsack_solver.SolverType, solver), "knapsack_gpu-bench")
        s.init([int(x) for x in v], [[int(x) for x in w]], [int(cap)])
        if time_limit:
            s.set_time_limit(time_limit)  # its clock starts here, not at solve(): set last
        best = s.solve()
        if not s.is_solution_optimal():
            raise TimeLimitReached(f"OR-Tools stopped at its {time_limit:g} s limit at {best}, not proven optimal")
        return None, [i for i in range(len(w)) if s.best_solution_contains(i)]

    return run


def _importable(module: str) -> Callable[[], str | None]:
    def check():
        import importlib.util

        return None if importlib.util.find_spec(module) is not None else f"{module} not installed"

    return check


def _cuda() -> str | None:
    import torch

    return None if torch.cuda.is_available() else "no CUDA device"


def _cuda_triton() -> str | None:
    import knapsack_gpu.backends

    return _cuda() or (None if knapsack_gpu.backends.have_triton() else "triton not installed")


def _always() -> None:
    return None


CONTENDERS = {
    c.name: c
    for c in [
        Contender("ours-numpy", _ours("cpu", "numpy"), _always),
        Contender("ours-numpy-lowmem", _ours("cpu", "numpy", low_memory=True), _always),
        # float32 arithmetic, as torch's solvers use (honoured, possibly inexact): the like-for-like speed
        Contender("ours-numpy-f32", _ours("cpu", "numpy", dtype="float32"), _always),
        # every cell, no bounds: beside ours-numpy, what the planner's pruning saves, or costs where it keeps most cells
        Contender("ours-numpy-dense", _ours("cpu", "numpy", strategy="dense"), _always),
        Contender("ours-torch-cpu", _ours("cpu", "torch"), _always),
        Contender("ours-cuda-torch", _ours("cuda", "torch"), _cuda),
        Contender("ours-cuda-triton", _ours("cuda", "triton"), _cuda_triton),
        # dp_knapsack allocates an (n + 1) x (W + 1) float32 table, and torch.zeros touches all of it.
        Contender("torch-dp", _torch_solver("dp_knapsack"), _always, memory=lambda n, c: 4 * (n + 1) * (c + 1)),
        Contender(
            "torch-sliding-hirschberg",
            _torch_solver("dp_knapsack_sliding_hirschberg"),
            _always,
            memory=lambda n, c: 16 * (c + 2),
        ),
        Contender("torch-greedy", _torch_solver("greedy_knapsack"), _always),
        # Branch and bound on instances built to defeat it can run for hours: a shorter leash than a DP's.
        Contender("scipy-milp", _scipy_milp, _importable("scipy"), time_limit=60),
        Contender("ours-pareto-knee", _ours_pareto, _always),
        Contender("ours-dropin", _ours_dropin, _always),
        Contender("torch-dp-knee", _torch_dp_knee, _always, memory=lambda n, c: 4 * (n + 1) * (c + 1)),
        # OR-Tools' divide and conquer keeps O(C) int64 profiles. It ignores set_time_limit (measured: 4.1 s under
        # a 0.01 s limit, reported optimal), so it runs without one and the suite's timeout stops it.
        Contender(
            "ortools-dc",
            _ortools("KNAPSACK_DIVIDE_AND_CONQUER_SOLVER"),
            _importable("ortools"),
            memory=lambda n, c: 32 * (c + 1),
            integer_values_only=True,
        ),
        Contender(
            "ortools-bb",
            _ortools("KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER"),
            _importable("ortools"),
            integer_values_only=True,
            time_limit=60,
        ),
    ]
}
