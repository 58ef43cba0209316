"""The solvers the suite compares, each behind one signature: (weights, values, capacity) -> (value, selected).

PyTorch's partitioner solvers take (memory floats, runtimes, max_memory) and quantize memory with S = 10000, so an
integer instance is handed to them as memory = w / 10000, which they round back to w exactly.

Branch-and-bound contenders take a `time_limit` in seconds as well and stop themselves there; an answer they have
not proven optimal raises :class:`TimeLimitReached`, which the suite reports as a timeout, not as an answer.

A contender that returns a value and no selection (None: combo) is value only: the suite checks its value against
the optimum but cannot check its feasibility. One that measures its own time returns {"internal_ms": ...} as its
extra; the suite reports that beside its own wall time and uses it for the time ratios.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
    # Why it cannot take this instance, from its arrays (weights int64, values, capacity), or None: input limits
    # that n and C alone do not show (combo's int32 arrays).
    refuses: Callable[[np.ndarray, np.ndarray, int], str | None] | None = None
    # Run once before anything is timed, as imports are: loading compiled code from disk (combo's shared library
    # loads at import; our numba kernels, the states engine's and the grouped solver's, load from numba's cache on
    # first call, ~1 s, not the solver's time).
    prepare: Callable[[], None] | None = None


def _torch_solver(name: str):
    def run(w, v, cap):
        from torch._functorch._activation_checkpointing import knapsack as tk

        fn = getattr(tk, name)
        _, saved, _ = fn((np.asarray(w) / 10000).tolist(), np.asarray(v, dtype=float).tolist(), cap / 10000)
        return None, sorted(saved)

    return run


def _ours(
    device: str,
    backend: str,
    low_memory: bool = False,
    dtype: str | None = None,
    strategy: str | None = None,
    plain_values: bool = False,
):
    def run(w, v, cap):
        import torch

        import knapsack_gpu
        import knapsack_gpu.reduced

        if plain_values:  # the child process runs one contender: no need to restore it
            knapsack_gpu.reduced.MIN_CAPACITY = float("inf")
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
        return sol.value, sol.indices  # the child lists them after its clock stops

    return run


def _load_ours() -> None:
    import knapsack_gpu.grouped
    import knapsack_gpu.jit

    knapsack_gpu.jit.warm()
    knapsack_gpu.grouped.warm()


def _ours_contender(name: str, run: Callable, available: Callable[[], str | None] | None = None) -> Contender:
    return Contender(name, run, available or _always, prepare=_load_ours)


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


# Pisinger's combo and minknap (C), as the digneapy 0.2.5 wheel builds them: a benchmark-only dependency, never
# imported by knapsack_gpu. The wheel is fetched once with pip into the cache folder and only the extension module
# is unzipped from it (it links libstdc++ and libc only: the wheel's digneapy.libs/ holds libgomp for its other
# module, parallel_ea).
DIGNEAPY = "digneapy==0.2.5"
DIGNEAPY_WHEEL = "digneapy-0.2.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
DIGNEAPY_SHA256 = "6d00a2a2c6c322e92610bd58f6e584a985c01f47bc2ad031db43ddaf1058ff4c"  # PyPI's file, as pip fetched it
PISINGER_SO = "pisinger_cpp.cpython-311-x86_64-linux-gnu.so"
CACHE_VAR = "KNAPSACK_BENCH_CACHE"
INT32_LIMIT = 2**31


def bench_cache() -> Path:
    """Where benchmark-only downloads live: $KNAPSACK_BENCH_CACHE, else benchmarks/.cache (git-ignored)."""
    return Path(os.environ.get(CACHE_VAR) or Path(__file__).resolve().parent / ".cache")


@functools.cache
def _pisinger_so() -> tuple[Path | None, str | None]:
    """(path of pisinger_cpp's extension, None), downloading and unzipping it on first use, or (None, why not)."""
    if sys.version_info[:2] != (3, 11):
        return None, f"the digneapy 0.2.5 wheel is built for CPython 3.11 only (this is {platform.python_version()})"
    if sys.platform != "linux" or platform.machine() != "x86_64":
        here = f"{sys.platform} {platform.machine()}"
        return None, f"the digneapy 0.2.5 wheel is built for x86_64 Linux only (this is {here})"
    cache = bench_cache()
    so = cache / "digneapy-0.2.5" / PISINGER_SO
    if so.is_file():
        return so, None
    wheel = cache / DIGNEAPY_WHEEL
    if not wheel.is_file():
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", DIGNEAPY, "-d", str(cache)]
        cmd += ["--timeout", "30", "--retries", "1"]  # offline (CI): give up in a minute, not after pip's defaults
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return None, f"pip download {DIGNEAPY} took over 600 s; put {DIGNEAPY_WHEEL} in {cache} by hand"
        if p.returncode != 0 or not wheel.is_file():
            last = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1][-200:]
            return None, f"pip download {DIGNEAPY} into {cache} failed ({last}); put {DIGNEAPY_WHEEL} there by hand"
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != DIGNEAPY_SHA256:
        return None, f"{wheel} has sha256 {digest}, not PyPI's {DIGNEAPY_SHA256}: delete it and run again"
    so.parent.mkdir(parents=True, exist_ok=True)
    part = so.with_name(f"{so.name}.{os.getpid()}.part")  # children may race: unzip beside it, then rename
    with zipfile.ZipFile(wheel) as z:
        part.write_bytes(z.read(PISINGER_SO))
    part.replace(so)
    return so, None


def _pisinger_available() -> str | None:
    return _pisinger_so()[1]


@functools.cache
def _pisinger_module():
    import importlib.util

    so, why = _pisinger_so()
    if why:
        raise RuntimeError(why)
    spec = importlib.util.spec_from_file_location("pisinger_cpp", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dantzig_bound(w: np.ndarray, v: np.ndarray, cap: int) -> float:
    """The LP relaxation's value: items by efficiency, the break item taken in part."""
    order = np.argsort(-(v / np.maximum(w, 1e-300)), kind="stable")
    ws, vs = np.cumsum(w[order].astype(float)), np.cumsum(v[order].astype(float))
    b = int(np.searchsorted(ws, cap, side="right"))
    if b == len(w):
        return float(vs[-1])
    before_w, before_v = (ws[b - 1], vs[b - 1]) if b else (0.0, 0.0)
    return before_v + (cap - before_w) * v[order[b]] / w[order[b]]


def _pisinger_refuses(int_optimum: bool) -> Callable[[np.ndarray, np.ndarray, int], str | None]:
    """What Pisinger's codes, as wrapped in digneapy, cannot take. int_optimum: it returns the optimum as a C int
    (minknap; combo returns a long)."""

    def refuses(w, v, cap):
        w, v = np.asarray(w), np.asarray(v)
        if v.dtype.kind not in "iu":
            return "integer values only (its C code takes int32 arrays)"
        if cap >= INT32_LIMIT:
            return f"capacity {cap:.3g} >= 2^31: its C code takes an int32 capacity"
        if len(w) and max(int(w.max()), int(v.max())) >= INT32_LIMIT:
            return "a weight or value >= 2^31: its C code takes int32 arrays"
        if int(w.sum()) <= cap:
            # measured: combo dies of SIGSEGV, minknap returns a value no selection has (1712 for 15)
            return "every item fits (sum of weights <= C): Pisinger's codes assume some item does not"
        if int_optimum and _dantzig_bound(w, v, cap) >= INT32_LIMIT:
            return "its optimum may pass 2^31 (LP bound) and it returns the optimum as a C int"
        return None

    return refuses


def _pisinger(solver: str, selection: bool):
    """combo_cpp / minknap_cpp(n, profits int32, weights int32, x int32, capacity) -> (milliseconds, optimum).

    combo runs with its solution vector off (def = false in the wrapper) and leaves x untouched: value only.
    minknap writes the optimal x (checked: feasible and of the optimum's value on all 26 kplib instances)."""

    def run(w, v, cap):  # the suite has checked `refuses` before timing this
        module = _pisinger_module()
        p32, w32 = np.ascontiguousarray(v, dtype=np.int32), np.ascontiguousarray(w, dtype=np.int32)
        x = np.zeros(len(w32), dtype=np.int32)  # int32, contiguous: pybind11 would otherwise write into a copy
        ms, z = getattr(module, solver)(len(w32), p32, w32, x, int(cap))
        return int(z), np.flatnonzero(x).tolist() if selection else None, {"internal_ms": ms}

    return run


CONTENDERS = {
    c.name: c
    for c in [
        _ours_contender("ours-numpy", _ours("cpu", "numpy")),
        _ours_contender("ours-numpy-lowmem", _ours("cpu", "numpy", low_memory=True)),
        # float32 arithmetic, as torch's solvers use (honoured, possibly inexact): the like-for-like speed
        _ours_contender("ours-numpy-f32", _ours("cpu", "numpy", dtype="float32")),
        # every cell, no bounds: beside ours-numpy, what the planner's pruning saves, or costs where it keeps most cells
        _ours_contender("ours-numpy-dense", _ours("cpu", "numpy", strategy="dense")),
        # f's own dtype, no reduced values (knapsack_gpu/reduced.py): beside ours-numpy, what the narrower rows save
        _ours_contender("ours-numpy-plain", _ours("cpu", "numpy", plain_values=True)),
        _ours_contender("ours-numpy-dense-plain", _ours("cpu", "numpy", strategy="dense", plain_values=True)),
        _ours_contender("ours-torch-cpu", _ours("cpu", "torch")),
        _ours_contender("ours-cuda-torch", _ours("cuda", "torch"), _cuda),
        _ours_contender("ours-cuda-triton", _ours("cuda", "triton"), _cuda_triton),
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
        _ours_contender("ours-pareto-knee", _ours_pareto),
        _ours_contender("ours-dropin", _ours_dropin),
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
        # Pisinger's expanding-core codes: a fixed states array (combo 1.5e6, minknap 6e5) whose overflow exit()s the
        # process ("multiply, no space"): the suite reports that as failed, with what it printed. No time limit.
        Contender(
            "combo",
            _pisinger("combo_cpp", selection=False),
            _pisinger_available,
            integer_values_only=True,
            refuses=_pisinger_refuses(int_optimum=False),
        ),
        Contender(
            "minknap",
            _pisinger("minknap_cpp", selection=True),
            _pisinger_available,
            integer_values_only=True,
            refuses=_pisinger_refuses(int_optimum=True),
        ),
    ]
}
