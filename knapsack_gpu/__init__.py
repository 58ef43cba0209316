"""knapsack_gpu: exact 0/1 knapsack in O(capacity) memory, on CUDA or the CPU.

    >>> import knapsack_gpu
    >>> sol = knapsack_gpu.solve([3, 4, 5], [30, 50, 60], 8)
    >>> sol.value, sol.selected
    (90, [0, 2])

Importing this package imports nothing else: :func:`solve`, :func:`profile`, :class:`Solution` and the dry run
:func:`plan_for` and :func:`solve_batch` (many instances at once) load on first use, as do Triton, the torch.compile
plug-in (:mod:`knapsack_gpu.partitioner`) and the CLI, so ``knapsack-gpu --help`` answers at once.
"""

_LAZY = ("Solution", "profile", "solve")


def __getattr__(name: str):
    if name in _LAZY:
        from . import solver as module
    elif name in ("plan_for", "PlanReport"):
        from . import dryrun as module
    elif name in ("solve_batch", "BatchSolution"):
        from . import batch as module
    else:
        raise AttributeError(f"module 'knapsack_gpu' has no attribute {name!r}")
    value = globals()[name] = getattr(module, name)  # later lookups find it here (a call of solve() costs ~1.5 us less)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "plan_for", "PlanReport", "solve_batch", "BatchSolution"})


__version__ = "0.1.0"
__all__ = ["BatchSolution", "PlanReport", "Solution", "plan_for", "profile", "solve", "solve_batch", "__version__"]
