"""Predict sharded solves of the Jooken c = 1e10, g = 10 instances on H200 GPUs from the cost model, and set the
model's byte counts beside what the gloo benchmark measured.

    python benchmarks/scaling_model.py [--instances ../shared/instances/jooken] [--bench results/distributed.json]

For each instance file and each GPU count it replays the planner (recover.plan_memory) and the recursion of
recover.Recovery without running it, costs every sharded pass with knapsack_gpu.distributed.model, and converts cells
and bytes to seconds with published bandwidths (docs/scaling.md explains the formula). Hirschberg split points are not
known before solving: the replay assumes c* = C * (weight of A) / (weight of A and B), which only moves work between
the two halves. Writes benchmarks/results/scaling_model.json and prints the tables docs/scaling.md quotes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from knapsack_gpu.distributed.model import pass_cost  # noqa: E402
from knapsack_gpu.distributed.recover import LOCAL_PROFILES, LOCAL_SLACK, plan_memory  # noqa: E402
from knapsack_gpu.distributed.shard import ITEMSIZE, ShardJob  # noqa: E402
from knapsack_gpu.problem import make_instance  # noqa: E402
from knapsack_gpu.reduce import reduce  # noqa: E402

# Published figures (ALGORITHMS.md, "Beyond one device"): H200 HBM3e 4.8 TB/s (4.3 TB/s measured copy); NVLink 4
# 450 GB/s per direction per GPU; one 400 Gb/s InfiniBand NIC per GPU, 50 GB/s. 20 us: a NCCL point-to-point launch.
HBM = 4.8e12
NVLINK = 450e9
IB = 50e9
LATENCY = 20e-6
GPUS_PER_NODE = 8
GPU_MEMORY = 141e9
CUDA_SHARE = 0.8  # api.CUDA_SHARE: the per-rank limit when memory_limit is None
WORLDS = (4, 8, 16, 32)


def bytes_per_cell(isz: int, bits: bool, fused: bool) -> float:
    """HBM bytes one cell update moves.

    As implemented (torch ops per chunk): add reads f(c - w) and writes the candidate (2 isz); gt reads both and
    writes a decision byte (2 isz + 1); shift and OR touch the byte and the bit plane (~5 bytes); maximum reads two and
    writes one (3 isz): 7 isz + 6 with bits, 5 isz without. A fused kernel reads f(c - w) and f(c) and writes f(c)
    once (3 isz), plus 1/8 byte of decision bit.
    """
    if fused:
        return 3 * isz + (0.125 if bits else 0.0)
    return 7 * isz + 6 if bits else 5 * isz


def read_jooken(path: Path):
    tokens = path.read_text().split()
    n = int(tokens[0])
    rows = np.array(tokens[1 : 1 + 3 * n], dtype=np.int64).reshape(n, 3)
    return rows[:, 2], rows[:, 1], int(tokens[-1])


def replay(weights: list[int], values: list[int], capacity: int, world: int, limit: int, isz: int):
    """The collective passes and local sub-problems Recovery.run would execute (with assumed split points)."""
    maxw = max(weights)
    import torch

    dtype = torch.int64 if isz == 8 else torch.int32
    plan = plan_memory(limit, capacity + 1, world, len(weights), maxw, dtype)
    bits_room = limit - plan.bytes(isz) + plan.bit_bytes
    prefix = np.concatenate([[0], np.cumsum(weights)]).tolist()
    local_cap = -(-(capacity + 1) // world)
    passes, local = [], []
    stack = [(0, len(weights), capacity, 0)]
    while stack:
        lo, hi, cap, depth = stack.pop()
        total = prefix[hi] - prefix[lo]
        if hi - lo < 2 or cap == 0 or cap >= total:
            continue
        length = cap + 1
        if depth and length <= local_cap and LOCAL_PROFILES * length * isz + LOCAL_SLACK <= limit:
            local.append((hi - lo) * length)
            continue
        shard = -(-length // world)
        if (hi - lo + 7) // 8 * shard <= bits_room:
            passes.append(("bits", ShardJob(weights[lo:hi], values[lo:hi], length, target=cap)))
            continue
        mid = (lo + hi) // 2
        passes.append(("split", ShardJob(weights[lo:mid], values[lo:mid], length)))
        passes.append(("split", ShardJob(weights[mid:hi], values[mid:hi], length)))
        wa = prefix[mid] - prefix[lo]
        c = min(cap, round(cap * wa / total))
        stack.append((mid, hi, cap - c, depth + 1))
        stack.append((lo, mid, c, depth + 1))
    return plan, passes, local


def predict(path: Path, world: int) -> dict:
    w, v, cap = read_jooken(path)
    red = reduce(make_instance(w, v, cap), None, whole_profile=True)
    isz = ITEMSIZE[red.dtype]
    limit = int(GPU_MEMORY * CUDA_SHARE)
    row = {"instance": path.stem, "n": len(w), "capacity": cap, "world": world, "dtype": str(red.dtype)[6:]}
    try:
        plan, passes, local = replay(red.weights.tolist(), red.values.tolist(), red.capacity, world, limit, isz)
    except MemoryError as exc:
        return {**row, "fits": False, "why": str(exc)}
    nodes = -(-world // GPUS_PER_NODE)
    t_impl = t_fused = t_compute = t_comm = 0.0
    cells = crit = 0
    recv = np.zeros(world)
    item_passes = 0
    for kind, job in passes:
        pc = pass_cost(job, world, isz, halo=plan.halo, ranks_per_node=GPUS_PER_NODE)
        bits = kind == "bits"
        overlap = bool(plan.send)
        t_impl += pc.seconds(bytes_per_cell(isz, bits, False), HBM, NVLINK, IB, LATENCY, overlap)
        t_fused += pc.seconds(bytes_per_cell(isz, bits, True), HBM, NVLINK, IB, LATENCY, overlap)
        t_compute += pc.seconds(bytes_per_cell(isz, bits, False), HBM, float("inf"), float("inf"), 0.0)
        t_comm += pc.seconds(0.0, HBM, NVLINK, IB, LATENCY)
        cells += pc.total_cells()
        crit += pc.critical_cells()
        recv += pc.recv.sum(axis=0)
        item_passes += job.m
    # Local sub-problems: the single-GPU solver (fused Triton kernels), dealt largest first to the least loaded GPU.
    loads = [0] * world
    for c in sorted(local, reverse=True):
        loads[loads.index(min(loads))] += c
    t_local = max(loads) * bytes_per_cell(isz, True, True) / HBM if local else 0.0
    return {
        **row,
        "fits": True,
        "nodes": nodes,
        "strategy": plan.strategy,
        "overlap": bool(plan.send),
        "shard": plan.shard,
        "passes": len(passes),
        "item_passes": item_passes,
        "local_subproblems": len(local),
        "cells": cells,
        "balance": cells / (world * crit) if crit else 1.0,
        "halo_bytes_per_rank_max": float(recv.max()),
        "halo_bytes_per_item_per_rank": float(recv.mean() / max(item_passes, 1)),
        "seconds_implemented": t_impl + t_local,
        "seconds_fused": t_fused + t_local,
        "seconds_compute_only": t_compute + t_local,
        "seconds_comm_only": t_comm,
        "seconds_local": t_local,
    }


def check_on_gloo(path: Path) -> list[dict]:
    """The model against the gloo benchmark: its halo bytes against the measured ones, and its time for 2 ranks fed
    with this machine's figures (a rank's cell rate while both cores are busy, the probed gloo link) against the
    measured time."""
    from knapsack_gpu.generate import strongly_correlated

    doc = json.loads(path.read_text())
    g = doc["generator"]
    w, v, cap = strongly_correlated(
        np.random.default_rng(g["seed"]), g["n"], R=int(4 * g["capacity"] / g["n"]), fraction=0.5
    )
    job = ShardJob([int(x) for x in w], [int(x) for x in v], cap + 1, target=cap)
    one = next(r for r in doc["rows"] if r["world"] == 1)
    contended = statistics.median(x for pair in doc["concurrent_single_rank_seconds"] for x in pair)
    rate = one["cell_updates"] / contended  # cells/s of one rank while another rank keeps the other core busy
    link = doc["gloo_link"]
    out = []
    for row in doc["rows"]:
        if row["world"] == 1:
            continue
        pc = pass_cost(job, row["world"], 4, halo=None)
        predicted = pc.seconds(1.0, rate, link["bandwidth_bytes_per_s"], None, link["latency_s"], overlap=True)
        out.append(
            {
                "world": row["world"],
                "model_recv": pc.recv.sum(axis=0).tolist(),
                "measured_recv": row["bytes_received"],
                "model_seconds": predicted,
                "measured_seconds": row["seconds_median"],
                "balance": pc.balance(),
            }
        )
        print(
            f"gloo benchmark, {row['world']} ranks: halo bytes received, model {out[-1]['model_recv']} vs measured "
            f"{row['bytes_received']} (the difference is control traffic); time, model {predicted:.2f} s (from "
            f"{rate:.3g} cells/s per busy core, {link['bandwidth_bytes_per_s'] / 1e9:.2f} GB/s, "
            f"{link['latency_s'] * 1e6:.0f} us) vs measured {row['seconds_median']:.2f} s"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", default=str(HERE.parent.parent / "shared" / "instances" / "jooken"))
    ap.add_argument("--bench", default=str(HERE / "results" / "distributed.json"))
    ap.add_argument("--out", default=str(HERE / "results" / "scaling_model.json"))
    a = ap.parse_args()
    files = sorted(Path(a.instances).glob("n_*_c_10000000000_g_10_*.in"))
    if not files:
        raise SystemExit(f"no Jooken c=1e10, g=10 instances under {a.instances}")
    rows = [predict(f, world) for f in files for world in WORLDS]

    print("| GPUs | nodes | strategy | passes (item passes) | balance | halo GB/item/rank | comm only s "
          "| compute only s | predicted s (as implemented) | predicted s (fused kernel) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    for world in WORLDS:
        mine = [r for r in rows if r["world"] == world]
        ok = [r for r in mine if r["fits"]]
        if not ok:
            print(f"| {world} | {-(-world // GPUS_PER_NODE)} | does not fit: {mine[0]['why'][:80]}... |")
            summary.append({"world": world, "fits": False})
            continue

        def med(key, ok=ok):
            return statistics.median(r[key] for r in ok)

        s = {k: med(k) for k in ("seconds_implemented", "seconds_fused", "seconds_compute_only", "seconds_comm_only")}
        s.update(world=world, fits=True, strategy=ok[0]["strategy"], balance=med("balance"))
        summary.append(s)
        print(
            f"| {world} | {ok[0]['nodes']} | {ok[0]['strategy']} | {med('passes'):.0f} ({med('item_passes'):.0f}) "
            f"| {med('balance'):.2f} | {med('halo_bytes_per_item_per_rank') / 1e9:.2f} | "
            f"{s['seconds_comm_only']:.0f} | {s['seconds_compute_only']:.0f} | {s['seconds_implemented']:.0f} "
            f"| {s['seconds_fused']:.0f} |"
        )
    sizes = ", ".join(str(n) for n in sorted({r["n"] for r in rows}))
    print(f"(medians over {len(files)} instances, n in {sizes})")

    bench = check_on_gloo(Path(a.bench)) if Path(a.bench).exists() else None
    Path(a.out).write_text(json.dumps({"rows": rows, "summary": summary, "bench_check": bench}, indent=1))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
