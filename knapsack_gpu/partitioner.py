"""Plug knapsack_gpu into torch.compile's activation-memory-budget partitioner, through PyTorch's public API.

    import knapsack_gpu.partitioner as kp

    with kp.enable(memory_budget=0.5):
        compiled = torch.compile(model)
        compiled(x).sum().backward()

The partitioner calls a ``CustomKnapsackSolver`` without the runtimes it estimated, so :func:`enable` installs a
pair: a ``CustomRuntimeEstimator`` that delegates to the named built-in estimator (or the user's) and records each
node's runtime, and a solver that looks them up by node. Both return stable ``uuid()`` values, so AOTAutograd's cache
keeps working. No torch internals are patched beyond ``torch._functorch.config``, and only inside ``enable``.

:func:`knapsack` is a drop-in for torch's ``dp_knapsack``: same signature, quantization and return convention, exact,
never over the quantized budget, identical selections wherever dp_knapsack's float32 arithmetic is exact.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import torch

from . import __version__
from .quantize import check, quantize, values
from .solver import solve

log = logging.getLogger(__name__)

ENV_GPU_MIN_CELLS = "KNAPSACK_GPU_PARTITIONER_MIN_CELLS"
# Below this many DP cells (items x quantized budget) the CPU solves a partitioner instance in tens of milliseconds,
# less than a CUDA launch sequence plus a first Triton compile would cost; above it the GPU is worth it. An estimate
# from the CPU's cell rate (benchmarks/results/SUITE.md); no device has measured the crossover yet.
GPU_MIN_CELLS = 50_000_000


def choose_device(n: int, budget: int, device: str | torch.device = "auto") -> torch.device:
    """CUDA only when it is available, already initialised, not capturing a graph, has room, and the instance is big
    enough to win; everything else (the common tens-of-items case) stays on the CPU."""
    if device != "auto":
        return torch.device(device)
    cells = n * (budget + 1)
    threshold = int(os.environ.get(ENV_GPU_MIN_CELLS, GPU_MIN_CELLS))
    if cells < threshold or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return torch.device("cpu")
    try:
        if torch.cuda.is_current_stream_capturing():
            return torch.device("cpu")
        free, _ = torch.cuda.mem_get_info()
    except RuntimeError:
        return torch.device("cpu")
    if free < 4 * (budget + 1) * 8 + n * (budget + 1) // 8:
        return torch.device("cpu")
    return torch.device("cuda")


def knapsack(
    memory: Sequence[float],
    runtimes: Sequence[float],
    max_memory: float,
    *,
    scale: int = 10000,
    rounding: str = "nearest",
    device: str | torch.device = "auto",
) -> tuple[float, list[int], list[int]]:
    """torch's knapsack-solver signature, solved exactly.

    Args:
        memory: per-item memory (normalised floats, >= 0).
        runtimes: per-item runtime saved by keeping the item (>= 0; whole numbers are summed exactly).
        max_memory: the budget, in the units of ``memory``.
        scale: quantization: weight = round(m * scale), as dp_knapsack (S = 10000).
        rounding: "nearest" (dp_knapsack's) or "safe" (never over the float budget).
        device: "auto" (see :func:`choose_device`), "cpu", "cuda".

    Returns:
        (saved runtime, saved indices ascending, recomputable indices descending), as dp_knapsack returns them.

    Raises:
        ValueError, TypeError: mismatched lengths, NaN, negative memory or runtimes.
    """
    return _knapsack(memory, runtimes, max_memory, scale, rounding, device)[:3]


def _knapsack(memory, runtimes, max_memory, scale, rounding, device) -> tuple[float, list[int], list[int], dict]:
    """:func:`knapsack`, with the solve's stats (empty for an empty instance)."""
    check(memory, runtimes, max_memory)
    if len(memory) == 0:
        return 0.0, [], [], {}
    weights, budget = quantize(memory, max_memory, scale, rounding)
    runtime = values(runtimes)
    dev = choose_device(len(weights), budget, device)
    log.debug(
        "knapsack_gpu: %d items, budget %s (%d units of 1/%d), device %s", len(weights), max_memory, budget, scale, dev
    )
    try:
        sol = solve(weights, runtime, budget, device=dev, canonical=True)
    except Exception as exc:  # noqa: BLE001 - a compile must never fail because of the solver
        if dev.type == "cpu":
            raise
        log.warning("knapsack_gpu: %s on %s (%s); solving on the CPU instead", type(exc).__name__, dev, exc)
        sol = solve(weights, runtime, budget, device="cpu", canonical=True)
    saved = sol.selected
    chosen = set(saved)
    recomputable = [i for i in range(len(weights) - 1, -1, -1) if i not in chosen]
    return float(sol.value), saved, recomputable, sol.stats


def source_files() -> list[Path]:
    """Every module that decides a plan: the package and the Triton kernels (reached through a link in a checkout,
    a mapped folder when installed: rglob follows neither, so the kernels' own location is asked for)."""
    import importlib.util

    roots = [Path(__file__).resolve().parent]
    kernels = importlib.util.find_spec("knapsack_gpu.kernels")
    if kernels is not None and kernels.submodule_search_locations:
        roots += [Path(p).resolve() for p in kernels.submodule_search_locations]
    return sorted({p for root in roots for p in root.rglob("*.py")})


@lru_cache(maxsize=1)
def _source_hash() -> str:
    """The solver's code: a change to any of :func:`source_files` changes the uuid."""
    h = hashlib.sha256(__version__.encode())
    for path in source_files():
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _uuid(*parts: object) -> str:
    return hashlib.sha256("|".join([_source_hash(), *map(str, parts)]).encode()).hexdigest()


TORCH_WITH_CUSTOM_SOLVERS = "2.11"
"""The first torch whose partitioner takes a CustomKnapsackSolver (torch 2.10 and older have no such class)."""


def _custom_pass_classes():
    try:
        from torch._inductor.custom_graph_pass import CustomKnapsackSolver, CustomRuntimeEstimator
    except ImportError as exc:
        raise ImportError(
            f"knapsack_gpu.partitioner needs torch >= {TORCH_WITH_CUSTOM_SOLVERS}, whose partitioner takes a "
            f"CustomKnapsackSolver (torch._inductor.custom_graph_pass); this is torch {torch.__version__}. "
            "knapsack_gpu.solve() itself does not need it"
        ) from exc
    return CustomKnapsackSolver, CustomRuntimeEstimator


def _estimator_name(base: object) -> str:
    if isinstance(base, str):
        return base
    uuid = getattr(base, "uuid", None)
    if callable(uuid):
        return f"custom:{uuid()}"
    return f"callable:{getattr(base, '__module__', '?')}.{getattr(base, '__qualname__', type(base).__qualname__)}"


def _make_classes():
    base_solver, base_estimator = _custom_pass_classes()

    class RecordingRuntimeEstimator(base_estimator):
        """Delegates to a built-in estimator ("flops", "profile", "testing") or a callable, and records each node's
        runtime for :class:`KnapsackSolver`, which the partitioner does not hand the runtimes."""

        def __init__(self, base: str | Callable = "flops"):
            if isinstance(base, str) and base not in ("flops", "profile", "testing"):
                raise ValueError(f"runtime_estimator={base!r}; use 'flops', 'profile', 'testing' or a callable")
            self.base = base
            self.runtimes: dict = {}

        def __call__(self, node) -> float:
            if isinstance(self.base, str):
                from torch._functorch import config
                from torch._functorch.partitioners import estimate_runtime

                with config.patch(activation_memory_budget_runtime_estimator=self.base):
                    runtime = estimate_runtime(node)
            else:
                runtime = self.base(node)
            self.runtimes[node] = runtime
            return runtime

        def uuid(self) -> str:
            return _uuid("estimator", _estimator_name(self.base))

    class KnapsackSolver(base_solver):
        """An exact CustomKnapsackSolver; runtimes come from its paired :class:`RecordingRuntimeEstimator`."""

        def __init__(self, estimator, *, device="auto", scale: int = 10000, rounding: str = "nearest"):
            quantize([], 0.0, scale, rounding)  # validates rounding
            self.estimator = estimator
            self.device = device
            self.scale = scale
            self.rounding = rounding
            self.calls = 0
            self.last_call: dict | None = None  # the latest instance and plan, to inspect

        def __call__(self, memory, joint_graph, max_memory, node_info, all_recomputable_banned_nodes):
            self.calls += 1
            runtimes = []
            for node in all_recomputable_banned_nodes:
                if node not in self.estimator.runtimes:
                    log.warning("knapsack_gpu: no recorded runtime for %s; estimating it now", node)
                    self.estimator(node)
                runtimes.append(self.estimator.runtimes[node])
            log.debug(
                "knapsack_gpu: the partitioner asks: %d memories, %d candidate nodes, max_memory %s",
                len(memory),
                len(all_recomputable_banned_nodes),
                max_memory,
            )
            value, saved, recomputable, stats = _knapsack(
                memory, runtimes, max_memory, self.scale, self.rounding, self.device
            )
            total_memory, kept_memory = float(sum(memory)), float(sum(memory[i] for i in saved))
            self.last_call = {
                "memory": list(memory),
                "runtimes": runtimes,
                "max_memory": max_memory,
                "saved": saved,
                "runtime": value,
                "stats": stats,
            }
            log.info(
                "knapsack_gpu: %d candidates, budget %.4g: keeps %d (memory %.4g of %.4g, %.0f%% less than the "
                "runtime-optimal plan), runtime %.6g of %.6g saved; %s on %s, %.1f ms",
                len(memory),
                max_memory,
                len(saved),
                kept_memory,
                total_memory,
                100 * (1 - kept_memory / total_memory) if total_memory else 0.0,
                value,
                float(sum(runtimes)),
                stats.get("strategy", "empty"),
                stats.get("device", "cpu"),
                1e3 * stats.get("seconds", 0.0),
            )
            return saved, recomputable

        def uuid(self) -> str:
            return _uuid("solver", self.device, self.scale, self.rounding, self.estimator.uuid())

    return RecordingRuntimeEstimator, KnapsackSolver


def __getattr__(name: str):
    # The classes subclass torch._inductor's; build them on first use so that importing this module stays cheap.
    if name in ("RecordingRuntimeEstimator", "KnapsackSolver"):
        estimator_cls, solver_cls = _classes()
        return estimator_cls if name == "RecordingRuntimeEstimator" else solver_cls
    if name in ("pareto", "Pareto", "plot_pareto"):  # the trade-off lives in pareto.py, which imports this module
        from . import pareto

        return getattr(pareto, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@lru_cache(maxsize=1)
def _classes():
    return _make_classes()


@contextmanager
def enable(
    memory_budget: float | None = None,
    *,
    device: str | torch.device = "auto",
    runtime_estimator: str | Callable = "flops",
    rounding: str = "nearest",
) -> Iterator[object]:
    """Use knapsack_gpu as torch.compile's activation-memory-budget solver inside the ``with`` block.

    Args:
        memory_budget: sets ``torch._functorch.config.activation_memory_budget`` (0..1: the share of the
            runtime-optimal plan's activation memory to keep) when given; None leaves it as configured.
        device: "auto" (CUDA only for large instances when it is free, see :func:`choose_device`), "cpu", "cuda".
        runtime_estimator: the estimator whose runtimes the solver optimises: "flops", "profile", "testing", or a
            callable ``node -> runtime`` (e.g. a CustomRuntimeEstimator).
        rounding: "nearest" (dp_knapsack's quantization) or "safe" (never over the float budget).

    Yields:
        The installed :class:`KnapsackSolver` (its ``estimator``, ``calls`` and ``last_call`` are there to inspect).

    Every previous setting is restored on exit.
    """
    from torch._functorch import config

    if memory_budget is not None and not (0 <= memory_budget <= 1):
        raise ValueError(f"memory_budget = {memory_budget}: it must be between 0 and 1")
    estimator_cls, solver_cls = _classes()
    estimator = estimator_cls(runtime_estimator)
    solver = solver_cls(estimator, device=device, rounding=rounding)
    settings = {
        "activation_memory_budget_solver": solver,
        "activation_memory_budget_runtime_estimator": estimator,
    }
    if memory_budget is not None:
        settings["activation_memory_budget"] = memory_budget
    with config.patch(**settings), _unasked_compiles(solver):
        budget = config.activation_memory_budget
        if budget in (0.0, 1.0):  # the partitioner settles these without a knapsack: no solve, nothing logged
            log.info(
                "knapsack_gpu: activation_memory_budget=%s: PyTorch %s without asking a solver, so this one is not "
                "called (solver.calls stays 0)",
                budget,
                "keeps every activation" if budget == 1.0 else "recomputes every activation it can",
            )
        yield solver


@contextmanager
def _unasked_compiles(solver) -> Iterator[None]:
    """While the block runs: each torch.compile that ends without asking ``solver`` a knapsack logs once (INFO) that
    it did not, and why it may not have (the partitioner asks only where the activations it could keep exceed the
    budget, and only where AOTAutograd partitions a graph with a backward it has not cached)."""
    try:
        from torch._dynamo.callback import callback_handler
    except ImportError:  # (a torch without compile callbacks: nothing to say)
        yield
        return
    seen, asked, told = {}, set(), set()

    def start(args) -> None:
        seen[getattr(args, "compile_id", None)] = solver.calls

    def end(args) -> None:  # (a compile's backward may end under the same id again: once an id)
        key = getattr(args, "compile_id", None)
        before = seen.pop(key, None)
        if before is None or key in told:
            return
        if solver.calls != before:
            asked.add(key)
        elif key not in asked:
            told.add(key)
            log.info(
                "knapsack_gpu: compile %s ended without asking for a knapsack: every activation it could save fit the "
                "memory budget %s (or AOTAutograd's cache served the graph, or it has no backward to partition)",
                key,
                _budget(),
            )

    callback_handler.register_start_callback(start)
    callback_handler.register_end_callback(end)
    try:
        yield
    finally:
        callback_handler.remove_start_callback(start)
        callback_handler.remove_end_callback(end)


def _budget():
    from torch._functorch import config

    return config.activation_memory_budget
