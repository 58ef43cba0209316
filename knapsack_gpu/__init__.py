"""knapsack_gpu: exact 0/1 knapsack in O(capacity) memory, on CUDA or the CPU.

    >>> import knapsack_gpu
    >>> sol = knapsack_gpu.solve([3, 4, 5], [30, 50, 60], 8)
    >>> sol.value, sol.selected
    (90, [0, 2])

Importing this package imports torch and numpy only; Triton, the torch.compile plug-in
(:mod:`knapsack_gpu.partitioner`) and the CLI load on first use.
"""

from .solver import Solution, profile, solve

__version__ = "0.1.0"
__all__ = ["Solution", "profile", "solve", "__version__"]
