"""solve_batch over the ranks of an initialised torch.distributed process group: every rank passes the same batch,
solves every world-th row (rows r, r + W, ...: hard rows that sit together are spread over the ranks), and gets
every row's answer (all_gather_object: gloo on CPUs, NCCL with one GPU a rank). A batch that differs between ranks is
refused on every rank, by name, before any row is solved.
"""

from __future__ import annotations

import hashlib
import sys

import numpy as np

from .comm import DistributedError


def active() -> bool:
    """Whether this process is one rank of several in an initialised process group (torch not imported: no)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.distributed.is_available() or not torch.distributed.is_initialized():
        return False
    return torch.distributed.get_world_size() > 1


def fingerprint(batch) -> str:
    """A digest of the batch as solved (every row's whole numbers and scales): the same on every rank or none."""
    h = hashlib.sha256()
    for a in (batch.W, batch.C, batch.P, batch.kw, batch.kv, batch.whole):
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(str(a.shape).encode())
    if batch.V is not None:
        h.update(np.ascontiguousarray(batch.V).tobytes())
    return h.hexdigest()


def solve_shared(batch, out, stats: dict, solve_rows) -> None:
    """This rank's rows through ``solve_rows(rows)`` (the single-process path), then every rank's answers gathered
    into ``out`` and every rank's counts summed into ``stats`` (``ranks``: the world size).

    Raises:
        DistributedError: the ranks were given different batches.
    """
    import torch.distributed as dist

    rank, world = dist.get_rank(), dist.get_world_size()
    prints = [None] * world
    dist.all_gather_object(prints, fingerprint(batch))
    if len(set(prints)) > 1:
        differ = [r for r, p in enumerate(prints) if p != prints[0]]
        raise DistributedError(
            f"solve_batch: ranks {differ} were given a batch that differs from rank 0's; every rank must pass the "
            "same weights, values and capacities"
        )
    mine = np.arange(rank, batch.rows, world, dtype=np.int64)
    solve_rows(mine)
    sent = (mine, out.value[mine], out.float_value[mine], out.weight[mine], np.packbits(out.chosen[mine], axis=1),
            stats["engines"], stats["strategies"], stats["planner_seconds"])  # fmt: skip
    parts = [None] * world
    dist.all_gather_object(parts, sent)
    engines = dict.fromkeys(stats["engines"], 0)
    strategies: dict = {}
    planner = 0.0
    for rows, value, float_value, weight, packed, eng, strat, seconds in parts:
        out.value[rows], out.float_value[rows], out.weight[rows] = value, float_value, weight
        out.chosen[rows] = np.unpackbits(packed, axis=1, count=batch.n).astype(bool)
        out.went[rows] = 2
        for k, x in eng.items():
            engines[k] = engines.get(k, 0) + x
        for k, x in strat.items():
            strategies[k] = strategies.get(k, 0) + x
        planner += seconds
    stats.update(engines=engines, strategies=strategies, planner_seconds=planner, ranks=world)
