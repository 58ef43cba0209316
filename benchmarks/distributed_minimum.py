"""The sharded solve at its stated minimum memory and above it (issue 24): gloo ranks here, the issue's 25 items.

    python benchmarks/distributed_minimum.py [--scales 1,10] [--factors 1,1.2,2] [--repeats 3] [--world 2]

Every rank asks the solver for its stated minimum (the MemoryError at memory_limit=1), runs one warm-up solve, then
solves at each factor of the minimum, the factors' order alternating by repeat. ``--scales k`` multiplies weights,
values and capacity by k and adds 1 to every weight (else the exact reductions divide k back out). Per limit: the
median of ``stats["seconds"]`` (the slowest rank's solve) and the plan's messages, serial items, halo area and chunk;
the single-process solver's median beside them. Writes benchmarks/results/distributed_minimum.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.multiprocessing as mp

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

# Issue 24: 2 gloo ranks at the stated minimum (429045 bytes then) ran for minutes; alone, 0.2 s.
WEIGHTS = [49951, 33319, 41550, 31805, 24100, 44145, 52389, 24006, 44729, 23910, 42241, 45142, 31481, 43047, 24357]
WEIGHTS += [16594, 17284, 31387, 49711, 18538, 31739, 41724, 21546, 42431, 25713]
VALUES = [49990, 33342, 41393, 31787, 24274, 43912, 52514, 24003, 44836, 23989, 42208, 45049, 31543, 42872, 24398]
VALUES += [16398, 17356, 31449, 49509, 18663, 31698, 41863, 21324, 42276, 25710]
CAPACITY = 107257


def instance(scale: int) -> tuple[list[int], list[int], int]:
    if scale == 1:
        return WEIGHTS, VALUES, CAPACITY
    return [w * scale + 1 for w in WEIGHTS], [v * scale for v in VALUES], CAPACITY * scale


def stated_minimum(message: str) -> int:
    """The bytes a distributed MemoryError states as the least it accepts."""
    match = re.search(r"needs at least (\d+) bytes", message)
    if not match:
        raise ValueError(f"no minimum stated in {message!r}")
    return int(match.group(1))


def _rank(rank: int, world: int, port: int, scales: list[int], factors: list[float], repeats: int, out: str) -> None:
    torch.set_num_threads(1)
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world, timeout=timedelta(seconds=900)
    )
    from knapsack_gpu.distributed import solve

    solve(*instance(1))  # warm-up: first torch ops and gloo connections
    runs = []
    for scale in scales:
        w, v, cap = instance(scale)
        try:
            solve(w, v, cap, memory_limit=1)
            raise AssertionError("memory_limit=1 was accepted")
        except MemoryError as exc:
            least = stated_minimum(str(exc))
        for rep in range(repeats):
            for factor in factors if rep % 2 == 0 else factors[::-1]:
                dist.barrier()
                sol = solve(w, v, cap, memory_limit=int(least * factor))
                keep = ("seconds", "messages", "serial_items", "halo_cells", "chunk_cells", "peak_bytes", "strategy")
                run = {"scale": scale, "minimum": least, "factor": factor, "repeat": rep, "value": sol.value}
                runs.append(run | {k: sol.stats[k] for k in keep})
    if rank == 0:
        Path(out).write_text(json.dumps(runs))
    dist.destroy_process_group()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="1,10")
    ap.add_argument("--factors", default="1,1.2,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--out", default=str(RESULTS / "distributed_minimum.json"))
    a = ap.parse_args()
    scales = [int(x) for x in a.scales.split(",")]
    factors = [float(x) for x in a.factors.split(",")]
    from provenance import machine

    import knapsack_gpu

    tmp = RESULTS / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp / "distributed_minimum.json"
    mp.spawn(_rank, args=(a.world, port, scales, factors, a.repeats, str(out)), nprocs=a.world, join=True)
    runs = json.loads(out.read_text())

    torch.set_num_threads(1)
    rows = []
    print(f"{a.world} gloo ranks, 1 thread each; the issue 24 instance")
    print(f"{'scale':>5} {'limit':>12} {'x min':>6} {'seconds':>8} {'messages':>10} {'serial':>6} {'halo':>7} "
          f"{'chunk':>7} {'single s':>8}")  # fmt: skip
    for scale in scales:
        w, v, cap = instance(scale)
        single = []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            value = knapsack_gpu.solve(w, v, cap, device="cpu").value
            single.append(time.perf_counter() - t0)
        for factor in factors:
            mine = [r for r in runs if r["scale"] == scale and r["factor"] == factor]
            if any(r["value"] != value for r in mine):
                raise SystemExit(f"scale {scale}, {factor}x the minimum: not the single-process optimum {value}")
            last = mine[-1]
            row = {
                "scale": scale,
                "factor": factor,
                "memory_limit": int(last["minimum"] * factor),
                "stated_minimum": last["minimum"],
                "seconds_median": statistics.median(r["seconds"] for r in mine),
                "seconds_all": [r["seconds"] for r in mine],
                "messages": last["messages"],
                "serial_items": last["serial_items"],
                "halo_cells": last["halo_cells"],
                "chunk_cells": last["chunk_cells"],
                "peak_bytes": last["peak_bytes"],
                "strategy": last["strategy"],
                "single_process_seconds_median": statistics.median(single),
                "optimum": value,
            }
            rows.append(row)
            print(f"{scale:>5} {row['memory_limit']:>12} {factor:>6} {row['seconds_median']:>8.3f} "
                  f"{'/'.join(map(str, row['messages'])):>10} {row['serial_items']:>6} {row['halo_cells']:>7} "
                  f"{row['chunk_cells']:>7} {row['single_process_seconds_median']:>8.3f}")  # fmt: skip
    doc = {"machine": machine(1), "world": a.world, "rows": rows, "runs": runs}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=1))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE))
    main()
