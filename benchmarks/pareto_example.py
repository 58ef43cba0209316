"""A real partitioner knapsack, captured from torch.compile, and its whole trade-off in one pass.

    python benchmarks/pareto_example.py     # writes benchmarks/results/pareto-transformer.png and .json
                                            # (the .json with the commit, machine and versions it ran at)

Compiles a 3-layer transformer encoder with knapsack_gpu.partitioner.enable() (backend aot_eager, CPU), takes the
knapsack the partitioner handed the solver, and plots the exact frontier with the knee PyTorch's KnapsackEvaluator
would pick.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch
from provenance import machine, machine_id  # benchmarks/ is on the path: this file runs as a script

import knapsack_gpu.partitioner as kp
from knapsack_gpu.pareto import pareto, plot_pareto

OUT = Path(__file__).resolve().parent / "results"


def main() -> None:
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 3)
    x = torch.randn(8, 64, 128, requires_grad=True)
    with kp.enable(memory_budget=0.3) as solver:
        torch.compile(model, backend="aot_eager")(x).sum().backward()
    call = solver.last_call
    t = time.perf_counter()
    front = pareto(call["memory"], call["runtimes"])
    knee = front.knee(max_budget=max(call["max_memory"], 0.01))
    seconds = time.perf_counter() - t
    OUT.mkdir(exist_ok=True)
    title = "3-layer transformer under torch.compile: exact trade-off"
    plot_pareto(front, str(OUT / "pareto-transformer.png"), knee=knee, title=title)
    run = machine(torch.get_num_threads())  # commit with its dirty mark, machine, versions, timestamp
    summary = {
        "commit": run["git_commit"],
        "machine": machine_id(run),
        "run": run,
        "items": len(call["memory"]),
        "budget": call["max_memory"],
        "saved_at_budget": call["saved"],
        "knee": knee,
        "pareto_seconds": seconds,
        "frontier_points": len(front.frontier()[0]),
    }
    (OUT / "pareto-transformer.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
