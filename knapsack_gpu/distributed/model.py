"""A cost model of one sharded pass, computed from the plan the ranks execute (shard.plan_steps, single_need,
group_starts, group_ranges) without running it: per step, the cells each rank updates and the bytes each rank
receives. benchmarks/distributed.py compares its byte counts with what gloo runs measured; docs/scaling.md feeds it
device and link bandwidths to predict runs on GPUs (the halo area is assumed large enough: no serial items).

Time model, per step (an item, or a group of light items), ranks in lockstep because a rank cannot start item j before
the ranks below it sent f_{j-1}:
    t_step = max over ranks r of  max(compute_r, comm_r)   (exchange overlapped with the update)
    compute_r = cells_r * bytes_per_cell / memory_bandwidth
    comm_r = latency + max(received_r, sent_r) / link_bandwidth   (inter-node bytes at the network's bandwidth)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .shard import GROUP_DIVISOR, ShardJob, group_ranges, group_starts, pieces, plan_steps, shard_bounds, single_need


@dataclass
class PassCost:
    """Per step (rows) and rank (columns): ``cells`` updated (own shard and recomputed halo), bytes received and
    sent, and the part of them that crosses nodes (``ranks_per_node`` consecutive ranks share a node)."""

    world: int
    itemsize: int
    cells: np.ndarray
    recv: np.ndarray
    sent: np.ndarray
    recv_inter: np.ndarray
    sent_inter: np.ndarray
    messages: int

    @property
    def steps(self) -> int:
        return int(self.cells.shape[0])

    def total_cells(self) -> int:
        return int(self.cells.sum())

    def critical_cells(self) -> int:
        """Cells on the lockstep critical path: the busiest rank of every step."""
        return int(self.cells.max(axis=1).sum())

    def balance(self) -> float:
        """Mean work per rank over the critical path: 1.0 is perfect, 1/P is one rank doing everything."""
        crit = self.critical_cells()
        return self.total_cells() / (self.world * crit) if crit else 1.0

    def seconds(
        self,
        bytes_per_cell: float,
        memory_bw: float,
        link_bw: float,
        inter_bw: float | None = None,
        latency: float = 20e-6,
        overlap: bool = True,
    ) -> float:
        compute = self.cells * bytes_per_cell / memory_bw
        inter_bw = link_bw if inter_bw is None else inter_bw
        intra = np.maximum(self.recv - self.recv_inter, self.sent - self.sent_inter) / link_bw
        inter = np.maximum(self.recv_inter, self.sent_inter) / inter_bw
        moving = (self.recv + self.sent) > 0
        comm = np.where(moving, latency + intra + inter, 0.0)
        per_rank = np.maximum(compute, comm) if overlap else compute + comm
        return float(per_rank.max(axis=1).sum())


def pass_cost(
    job: ShardJob, world: int, itemsize: int, *, halo: int | None = None, ranks_per_node: int | None = None
) -> PassCost:
    """The cost of running ``job`` over ``world`` ranks with a halo area of ``halo`` cells (default: the widest item,
    as the planner allocates when memory allows)."""
    bounds = shard_bounds(job.length, world)
    shard = max(bounds[r + 1] - bounds[r] for r in range(world))
    if halo is None:
        halo = 0 if world == 1 else min(shard, max(job.weights, default=0))
    group_cap = min(halo, shard // GROUP_DIVISOR)
    steps, _ = plan_steps(job, group_cap)
    node = [r // (ranks_per_node or world) for r in range(world)]
    shape = (len(steps), world)
    cells = np.zeros(shape, dtype=np.int64)
    recv, sent = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    recv_inter, sent_inter = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    messages = 0
    for k, st in enumerate(steps):
        transfers = []
        if st.j1 - st.j0 > 1:
            starts = group_starts(bounds, st)
            for r, e in starts.items():
                transfers += [(s, r, p1 - p0) for s, p0, p1 in pieces(e, bounds[r], bounds)]
                top = min(bounds[r + 1] - 1, st.hi)
                cells[k, r] = sum(top - start + 1 for _, start in group_ranges(job, st, e, top))
        else:
            w = job.weights[st.j0]
            for r, u0, u1, r1 in single_need(bounds, w, st.los[0], st.hi):
                cells[k, r] = u1 - u0 + 1
                transfers += [(s, r, p1 - p0) for s, p0, p1 in pieces(u0 - w, r1 + 1, bounds)]
        for s, r, n in transfers:
            nbytes = n * itemsize
            recv[k, r] += nbytes
            sent[k, s] += nbytes
            if node[s] != node[r]:
                recv_inter[k, r] += nbytes
                sent_inter[k, s] += nbytes
        messages += len(transfers)
    return PassCost(world, itemsize, cells, recv, sent, recv_inter, sent_inter, messages)
