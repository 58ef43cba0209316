"""Triton kernels for the DP pass, each beside its launcher (installed as ``knapsack_gpu.kernels``).

- :mod:`.item`: one item over the whole profile, fused update and decision bit (any item, any capacity);
- :mod:`.tile`: k light items per launch over tiles with a halo (HBM traffic once per k items);
- :mod:`.sweep`: a run of items with narrow launch ranges in one launch of one program (the partitioner's regime,
  and narrow windows);
- :mod:`.batch`: one item of every row of a batch of profiles per launch (``solve_batch`` on CUDA).

The first three follow the pass contract in knapsack_gpu/dense/passes/base.py, bit for bit; :mod:`.batch` the
torch pass of knapsack_gpu/dense/batch.py.
"""

try:
    import triton  # noqa: F401  (the kernels need it; say how to get it before the first kernel fails to import)
except ImportError as exc:
    raise ImportError(
        "knapsack_gpu.kernels needs Triton: pip install 'knapsack-gpu[triton]' (solve() runs without it: "
        "backend='numpy' or 'torch')"
    ) from exc

from . import batch, item, sweep, tile  # noqa: E402
from .batch import batch_item_update  # noqa: E402
from .item import item_update  # noqa: E402
from .tile import plan_groups, tile_update  # noqa: E402

__all__ = ["batch", "item", "sweep", "tile", "batch_item_update", "item_update", "tile_update", "plan_groups"]
