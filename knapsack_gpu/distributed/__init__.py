"""The dense knapsack DP sharded over the ranks of a torch.distributed process group (gloo on CPUs, NCCL on GPUs).

    # every rank, after torch.distributed.init_process_group(...)
    from knapsack_gpu.distributed import solve
    sol = solve(weights, values, capacity)          # the same Solution on every rank

or from the shell: ``torchrun --nproc-per-node N -m knapsack_gpu solve FILE``. See docs/scaling.md for the design and
a performance model.

Modules: comm (the process group, counted), shard (the sharded pass and its halo exchange), recover (bit tables and
Hirschberg splits across ranks), api (solve), cli (torchrun entry).
"""

from .api import solve
from .comm import DistributedError

__all__ = ["DistributedError", "solve"]
