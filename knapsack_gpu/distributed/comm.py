"""The one place that talks to torch.distributed: rank and world of a group, point-to-point batches and all-reduces,
each counted (bytes sent and received, seconds blocked) and each failure turned into a :class:`DistributedError`.

Every exchange is a ``dist.batch_isend_irecv`` of ``P2POp`` s that all ranks derive from the same plan, so matching is
by construction: at most one message per (sender, receiver) pair per batch, in the same order on both sides.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import timedelta

import torch
import torch.distributed as dist

# How long a rank waits on a peer before the process group gives up, when this package initialises the group itself
# (the CLI under torchrun). A dead peer usually fails the pending send or receive at once (its sockets close); the
# timeout bounds the rest, such as a peer that hangs without exiting. Override with KNAPSACK_GPU_DIST_TIMEOUT (seconds).
DEFAULT_TIMEOUT_S = 600
ENV_TIMEOUT = "KNAPSACK_GPU_DIST_TIMEOUT"


class DistributedError(RuntimeError):
    """A collective solve could not complete: a rank died, timed out, or the ranks disagree on the problem."""


def timeout_from_env() -> timedelta:
    return timedelta(seconds=float(os.environ.get(ENV_TIMEOUT, DEFAULT_TIMEOUT_S)))


class Comm:
    """A process group seen from one rank, with traffic counters.

    Args:
        group: a ``torch.distributed`` process group, or None for the default (world) group.

    Raises:
        DistributedError: torch.distributed is unavailable or no process group is initialised.
    """

    def __init__(self, group=None):
        if not dist.is_available():
            raise DistributedError("torch.distributed is not available in this PyTorch build")
        if not dist.is_initialized():
            raise DistributedError(
                "knapsack_gpu.distributed.solve needs an initialised process group: call "
                "torch.distributed.init_process_group('gloo') (CPU) or ('nccl') (one GPU per rank) on every rank "
                "first, or launch with `torchrun --nproc-per-node N -m knapsack_gpu solve FILE`"
            )
        self.group = group
        self.rank = dist.get_rank(group)
        self.world = dist.get_world_size(group)
        if self.rank < 0:
            raise DistributedError("this process is not a member of the process group passed as group=")
        self.backend = str(dist.get_backend(group))
        self.device = torch.device("cpu")
        self.sync_cuda = False
        self.bytes_sent = 0
        self.bytes_received = 0
        self.messages = 0
        self.wait_s = 0.0
        self.phase = "start"

    def set_device(self, device: torch.device) -> None:
        """Where this rank's tensors live: CUDA (one GPU per rank) for NCCL, the CPU for gloo."""
        self.device = device
        self.sync_cuda = device.type == "cuda"

    def _fail(self, what: str, exc: BaseException) -> DistributedError:
        return DistributedError(
            f"rank {self.rank} of {self.world} ({self.backend}): {what} failed during {self.phase}: {exc}. "
            "Another rank probably died, raised, or stopped calling knapsack_gpu.distributed.solve; every rank must "
            "call it with the same problem (the wait is bounded by the process group's timeout)"
        )

    def _begin(self) -> float:
        if self.sync_cuda:
            # NCCL work is asynchronous: finish the compute queued so far, so the wait below is communication only.
            torch.cuda.current_stream(self.device).synchronize()
        return time.perf_counter()

    def _end(self, t0: float) -> None:
        if self.sync_cuda:
            torch.cuda.current_stream(self.device).synchronize()
        self.wait_s += time.perf_counter() - t0

    def start(self, sends: Sequence[tuple[int, torch.Tensor]], recvs: Sequence[tuple[int, torch.Tensor]]):
        """Post one batch: send each (peer, tensor), receive into each (peer, tensor). Returns a handle for
        :meth:`finish` (None when there is nothing to do). Peers are ranks of this group; tensors are contiguous 1-D
        views on this rank's device, not to be touched until finished."""
        if not sends and not recvs:
            return None
        ops = [dist.P2POp(dist.isend, t, group=self.group, group_peer=p) for p, t in sends]
        ops += [dist.P2POp(dist.irecv, t, group=self.group, group_peer=p) for p, t in recvs]
        try:
            works = dist.batch_isend_irecv(ops)
        except Exception as exc:  # gloo raises RuntimeError, NCCL DistBackendError: both mean a peer is gone
            raise self._fail("a point-to-point exchange", exc) from exc
        self.messages += len(sends)
        self.bytes_sent += sum(t.numel() * t.element_size() for _, t in sends)
        self.bytes_received += sum(t.numel() * t.element_size() for _, t in recvs)
        return works

    def finish(self, works) -> None:
        """Block until a batch from :meth:`start` completed; the time blocked counts as waiting."""
        if not works:
            return
        t0 = self._begin()
        try:
            for work in works:
                work.wait()
        except Exception as exc:
            raise self._fail("a point-to-point exchange", exc) from exc
        self._end(t0)

    def exchange(self, sends: Sequence[tuple[int, torch.Tensor]], recvs: Sequence[tuple[int, torch.Tensor]]) -> None:
        """:meth:`start` then :meth:`finish`: one batch, returning when it completed."""
        self.finish(self.start(sends, recvs))

    def all_reduce(self, t: torch.Tensor, op=dist.ReduceOp.SUM) -> torch.Tensor:
        """In-place all-reduce of ``t`` (counted as sent and received once each)."""
        t0 = self._begin()
        try:
            dist.all_reduce(t, op=op, group=self.group)
        except Exception as exc:
            raise self._fail("an all-reduce", exc) from exc
        self._end(t0)
        nbytes = t.numel() * t.element_size()
        self.bytes_sent += nbytes
        self.bytes_received += nbytes
        return t

    def gather_rows(self, row: torch.Tensor) -> torch.Tensor:
        """Every rank's 1-D ``row`` stacked as (world, len), identical on all ranks: one SUM all-reduce of a table
        that is zero except for this rank's row (exact for integers and, adding zeros only, for floats)."""
        table = torch.zeros((self.world, row.numel()), dtype=row.dtype, device=self.device)
        table[self.rank] = row
        return self.all_reduce(table)
