"""``torchrun --nproc-per-node N -m knapsack_gpu solve FILE``: the CLI's solve, sharded over the ranks.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK and MASTER_ADDR/PORT; ``knapsack_gpu.cli.cmd_solve`` hands over here when
WORLD_SIZE > 1. Each rank reads the file, initialises the process group (NCCL with GPU LOCAL_RANK when CUDA is there
and --device is not cpu, else gloo), solves, and rank 0 alone prints. Every rank exits with the same code.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist

from .. import output
from ..formats import FormatError, read_instance
from ..sizes import format_bytes
from .api import solve
from .comm import DistributedError, timeout_from_env


def init_from_env(device: str = "auto") -> torch.device:
    """Initialise the default process group from torchrun's environment (unless already done) and return this
    rank's device: CUDA LOCAL_RANK with NCCL, or the CPU with gloo.

    Raises:
        ValueError: --device asks for CUDA where there is none.
    """
    wants_cuda = device != "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {device} but CUDA is not available here; use --device cpu (gloo)")
    if wants_cuda and torch.cuda.is_available():
        dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(dev)
        backend = "nccl"
    else:
        dev, backend = torch.device("cpu"), "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend, timeout=timeout_from_env(), device_id=dev if dev.type == "cuda" else None)
    return dev


def summary(name: str, n: int, capacity: int, sol, extra: tuple[str, ...] = ()) -> str:
    """The single-process summary with the sharded solve's ranks, shards and traffic (and ``extra`` lines)."""
    s = sol.stats

    def per_rank(xs, fmt) -> str:
        return " / ".join(fmt(x) for x in xs)

    s.setdefault("ranks_note", f"on {s['world_size']} {s['device']} ranks")
    return output.summary(
        name,
        n,
        capacity,
        sol,
        extra=(
            f"shards     {s['shard_length']} capacities; peak memory per rank",
            f"sent       {per_rank(s['bytes_sent'], format_bytes)} (per rank)",
            f"received   {per_rank(s['bytes_received'], format_bytes)}",
            f"waiting    {per_rank(s['comm_wait_seconds'], lambda x: f'{x:.3f} s')}",
            *extra,
        ),
    )


def solve_from_env(args) -> int:
    """Run ``knapsack-gpu solve`` (parsed ``args``) as one rank of a torchrun job; rank 0 prints. Returns the exit
    code, the same on every rank."""
    created = not dist.is_initialized()
    dev = init_from_env(args.device)
    rank = dist.get_rank()
    code = 0
    try:
        if args.backend not in ("auto", "torch"):
            raise ValueError(f"--backend {args.backend} is single-process only; the sharded solve runs torch ops")
        inst = read_instance(args.file, args.format, instance=args.instance)  # one instance: a job solves one
        warning = output.known_solution_warning(args.file, inst)
        if warning and rank == 0:
            print(warning, file=sys.stderr, flush=True)
        sol = solve(
            inst.weights,
            inst.values,
            inst.capacity,
            device=dev,
            memory_limit=args.memory_limit,
            dtype=getattr(torch, args.dtype) if args.dtype else None,
        )
        text, why = output.report(inst, sol, args.expect, args.json, summary)
        if rank == 0:
            print(text, flush=True)
        if why:
            if rank == 0:
                print(why, file=sys.stderr)
            code = output.EXIT_MISMATCH
    except DistributedError as exc:
        print(f"knapsack-gpu: rank {rank}: error: {exc}", file=sys.stderr)
        code = output.EXIT_INPUT
    except (FormatError, ValueError, TypeError, MemoryError, OSError) as exc:
        if rank == 0:  # every rank read the same file and planned the same: one message is enough
            print(f"knapsack-gpu: error: {exc}", file=sys.stderr)
        code = output.exit_code(exc)
    finally:
        if created:
            dist.destroy_process_group()
    return code
