"""One dense solve sharded over 1 and 2 gloo ranks on this machine: wall time, bytes exchanged, time lost waiting.

    python benchmarks/distributed.py [--capacity 1e8] [--n 60] [--repeats 3] [--worlds 1,2] [--threads 1]

Every rank is a process started by torch.multiprocessing (spawn) with the same thread count, solving the same seeded
strongly correlated instance (no bound prunes it: a dense DP does all the work); worlds alternate run by run and the
medians are reported. ``seconds`` is the solve alone (the slowest rank's, from the call to the return), without process
start-up or process-group set-up. The single-process solver (numpy backend, same threads) runs once beside them as the
oracle and a reference time. The cost model (knapsack_gpu.distributed.model) predicts the halo bytes and the lockstep
load balance from the plan alone; the table shows its bytes next to the measured ones.

Writes benchmarks/results/distributed.json (machine, versions, git commit, every run) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import torch
import torch.multiprocessing as mp

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def machine(threads: int) -> dict:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_bytes": mem,
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__},
        "git_commit": commit,
        "threads": threads,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def instance(n: int, capacity: float, seed: int):
    from knapsack_gpu.generate import strongly_correlated

    # Strongly correlated, weights up to R, capacity half the total weight: R = 4 C / n gives C close to the target.
    return strongly_correlated(np.random.default_rng(seed), n, R=int(4 * capacity / n), fraction=0.5)


def _rank(rank: int, world: int, port: int, args: dict, out: str) -> None:
    torch.set_num_threads(args["threads"])
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world, timeout=timedelta(seconds=600)
    )
    from knapsack_gpu.distributed import solve

    w, v, cap = instance(args["n"], args["capacity"], args["seed"])
    dist.barrier()
    sol = solve(w, v, cap)
    if rank == 0:
        Path(out).write_text(json.dumps({"value": sol.value, "selected": sol.selected, "stats": sol.stats}))
    dist.destroy_process_group()


def run_world(world: int, args: dict, tmp: Path) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp / f"world{world}.json"
    out.unlink(missing_ok=True)
    mp.spawn(_rank, args=(world, port, args, str(out)), nprocs=world, join=True)
    return json.loads(out.read_text())


def _probe(rank: int, port: int, out: str) -> None:
    torch.set_num_threads(1)
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    peer = 1 - rank
    small = torch.zeros(2, dtype=torch.int64)
    big = torch.zeros(PROBE_BYTES // 4, dtype=torch.int32)
    times = {}
    for name, t, reps in (("latency_s", small, 200), ("bandwidth_bytes_per_s", big, 5)):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(reps):  # one way and back: rank 0 sends, rank 1 returns it
            ops = [dist.P2POp(dist.isend if rank == 0 else dist.irecv, t, peer)]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
            ops = [dist.P2POp(dist.irecv if rank == 0 else dist.isend, t, peer)]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
        one_way = (time.perf_counter() - t0) / (2 * reps)
        times[name] = one_way if name == "latency_s" else t.numel() * t.element_size() / one_way
    if rank == 0:
        Path(out).write_text(json.dumps(times))
    dist.destroy_process_group()


PROBE_BYTES = 64 << 20


def probe_link(tmp: Path) -> dict:
    """gloo on localhost between two ranks: one-way latency of a 16-byte message and bandwidth of 64 MiB ones."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp / "probe.json"
    mp.spawn(_probe, args=(port, str(out)), nprocs=2, join=True)
    return json.loads(out.read_text())


def run_concurrent_singles(args: dict, tmp: Path, copies: int = 2) -> list[float]:
    """``copies`` independent 1-rank solves at once: how much two busy cores slow each other down (memory bandwidth,
    shared caches) with no communication at all. Returns each solve's seconds."""
    ctx = mp.get_context("spawn")
    procs, outs = [], []
    for k in range(copies):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        out = tmp / f"concurrent{k}.json"
        out.unlink(missing_ok=True)
        procs.append(ctx.Process(target=_rank, args=(0, 1, port, args, str(out))))
        outs.append(out)
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    return [json.loads(o.read_text())["stats"]["seconds"] for o in outs]


def _single(args: dict, out: str) -> None:
    torch.set_num_threads(args["threads"])
    import knapsack_gpu

    w, v, cap = instance(args["n"], args["capacity"], args["seed"])
    t0 = time.perf_counter()
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", backend="numpy")
    Path(out).write_text(json.dumps({"value": sol.value, "seconds": time.perf_counter() - t0, "stats": sol.stats}))


def run_single(args: dict, tmp: Path) -> dict:
    out = tmp / "single.json"
    p = mp.get_context("spawn").Process(target=_single, args=(args, str(out)))
    p.start()
    p.join()
    return json.loads(out.read_text())


def model_row(args: dict, world: int) -> dict:
    from knapsack_gpu.distributed.model import pass_cost
    from knapsack_gpu.distributed.shard import ShardJob

    w, v, cap = instance(args["n"], args["capacity"], args["seed"])
    job = ShardJob([int(x) for x in w], [int(x) for x in v], cap + 1, target=cap)
    cost = pass_cost(job, world, 4)
    return {
        "world": world,
        "recv_bytes": cost.recv.sum(axis=0).tolist(),
        "sent_bytes": cost.sent.sum(axis=0).tolist(),
        "messages": cost.messages,
        "cells": cost.total_cells(),
        "critical_cells": cost.critical_cells(),
        "balance": cost.balance(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--capacity", type=float, default=1e8)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--worlds", default="1,2")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per rank (the same for every run)")
    ap.add_argument("--out", default=str(RESULTS / "distributed.json"))
    a = ap.parse_args()
    args = {"n": a.n, "capacity": a.capacity, "seed": a.seed, "threads": a.threads}
    worlds = [int(x) for x in a.worlds.split(",")]
    tmp = RESULTS / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    w, v, cap = instance(a.n, a.capacity, a.seed)
    print(f"instance: strongly correlated, n={a.n}, capacity={cap}, seed={a.seed}; {a.threads} thread(s) per rank")

    link = probe_link(tmp)
    print(f"gloo link: {link['latency_s'] * 1e6:.0f} us one way, {link['bandwidth_bytes_per_s'] / 1e9:.2f} GB/s")
    single = run_single(args, tmp)
    print(f"single-process solver (numpy backend): {single['seconds']:.2f} s, optimum {single['value']}")
    runs = []
    for rep in range(a.repeats):
        for world in worlds if rep % 2 == 0 else worlds[::-1]:
            res = run_world(world, args, tmp)
            st = res["stats"]
            if res["value"] != single["value"]:
                raise SystemExit(f"world {world}: optimum {res['value']} != single-process {single['value']}")
            runs.append({"world": world, "repeat": rep, "value": res["value"], "stats": st})
            print(f"  run {rep} world {world}: {st['seconds']:.2f} s, waiting {st['comm_wait_seconds']}")

    concurrent = [run_concurrent_singles(args, tmp) for _ in range(a.repeats)] if 1 in worlds else []
    for k, secs in enumerate(concurrent):
        print(f"  run {k}: two independent 1-rank solves at once: {secs[0]:.2f} s and {secs[1]:.2f} s")

    rows = []
    base = None
    for world in worlds:
        mine = [r["stats"] for r in runs if r["world"] == world]
        secs = statistics.median(s["seconds"] for s in mine)
        base = secs if world == worlds[0] else base
        last = mine[-1]
        rows.append(
            {
                "world": world,
                "seconds_median": secs,
                "seconds_all": [s["seconds"] for s in mine],
                "speedup": base / secs,
                "strategy": last["strategy"],
                "cell_updates": last["cell_updates"],
                "cells_per_s": last["cell_updates"] / secs,
                "bytes_sent": last["bytes_sent"],
                "bytes_received": last["bytes_received"],
                "messages": last["messages"],
                "comm_wait_seconds_median": [
                    statistics.median(s["comm_wait_seconds"][r] for s in mine) for r in range(world)
                ],
                "peak_bytes": last["peak_bytes"],
                "overlap": last.get("overlap"),
            }
        )
    models = [model_row(args, world) for world in worlds if world > 1]

    print()
    print(f"{'ranks':>5} {'seconds':>8} {'speedup':>8} {'cells/s':>9} {'sent MB/rank':>16} {'recv MB/rank':>16} "
          f"{'waiting s/rank':>16} {'peak MB/rank':>12}")  # fmt: skip
    for r in rows:
        sent = "/".join(f"{x / 1e6:.1f}" for x in r["bytes_sent"])
        recv = "/".join(f"{x / 1e6:.1f}" for x in r["bytes_received"])
        wait = "/".join(f"{x:.2f}" for x in r["comm_wait_seconds_median"])
        print(f"{r['world']:>5} {r['seconds_median']:>8.2f} {r['speedup']:>8.2f} {r['cells_per_s']:>9.3g} {sent:>16} "
              f"{recv:>16} {wait:>16} {r['peak_bytes'] / 1e6:>12.0f}")  # fmt: skip
    print(f"single-process solver (numpy backend): {single['seconds']:.2f} s")
    if concurrent:
        med = statistics.median(x for pair in concurrent for x in pair)
        one = next(r["seconds_median"] for r in rows if r["world"] == 1)
        print(f"two independent 1-rank solves at once, no communication: {med:.2f} s each (median), so two ranks "
              f"sharing this machine's cores can at best reach a speedup of 2 x {one:.2f} / {med:.2f} = "
              f"{2 * one / med:.2f}")  # fmt: skip
    for m in models:
        meas = next(r for r in rows if r["world"] == m["world"])
        print(
            f"model, {m['world']} ranks: halo bytes received per rank {m['recv_bytes']} (measured "
            f"{meas['bytes_received']}, the rest is control traffic), {m['messages']} halo messages, "
            f"lockstep load balance {m['balance']:.2f} (speedup bound {m['balance'] * m['world']:.2f})"
        )
    doc = {
        "machine": machine(a.threads),
        "instance": {"family": "strongly", "n": a.n, "capacity": int(cap), "seed": a.seed},
        "generator": {"n": a.n, "capacity": a.capacity, "seed": a.seed},
        "single_process": {"seconds": single["seconds"], "value": single["value"], "stats": single["stats"]},
        "rows": rows,
        "concurrent_single_rank_seconds": concurrent,
        "gloo_link": link,
        "model": models,
        "runs": runs,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=1, default=str))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    main()
