"""Kernel launches of a dense or pruned plan's first pass, with the one-program sweep and without it (the rule before
it: a launch per item or tile group, and two host fills wherever a group extended the prefix range).

    python benchmarks/launch_counts.py     # table + benchmarks/results/launch_counts.json

Host-side only (knapsack_gpu.dense.passes.triton_pass.launch_plan): no GPU and no kernel runs. At ~5-10 us a launch
(Python launcher plus the device's own latency), a count times that is a floor under the pass's time on a GPU.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from workloads import instances, load  # noqa: E402

from knapsack_gpu.dense.passes.triton_pass import kernels, launch_plan  # noqa: E402
from knapsack_gpu.plan import dense, pruned  # noqa: E402
from knapsack_gpu.problem import make_instance  # noqa: E402
from knapsack_gpu.reduce import reduce  # noqa: E402

LAUNCH_US = 7.5  # per launch, for the floor column: between a bare CUDA launch and Triton's Python launcher


def cases(root: Path) -> list[tuple[str, dict]]:
    kp = root / "kplib"
    return [
        ("seeds n=2000 C=1e4", {"generator": "partitioner", "n": 2000, "capacity": 10_000, "seed": 0}),
        ("seeds n=2000 W~3.8e8", {"generator": "partitioner", "n": 2000, "capacity": 380_000_000, "seed": 0}),
        *[
            (f"kplib {name.split('_')[0]} n=10000", {"file": str(kp / name)})
            for name in (
                "00Uncorrelated_n10000_R10000_s000.kp",
                "02StronglyCorrelated_n10000_R10000_s000.kp",
                "11ProfitCeiling_n10000_R10000_s000.kp",
            )
        ],
        ("Jooken c=1e8 g=10 (hardest)", {"file": str(root / "jooken/n_1000_c_100000000_g_10_f_0.1_eps_0.01_s_100.in")}),
    ]


def count(job, record: bool) -> dict:
    k = kernels()
    now = launch_plan(job, record, k.sweep.MAX_CELLS, k.plan_groups)
    before = launch_plan(job, record, -1, k.plan_groups)
    s = job.schedule
    fills = 0
    if not job.cover:  # the old launcher filled both rows wherever a launch's last top passed the prefix filled
        filled = 0
        for _, _, stop, _, _ in before.launches:
            top = int(s.top[stop - 1])
            if top > filled:
                fills, filled = fills + 2, top
    return {
        "items": job.m,
        "cells": s.cells,
        "launches": now.ops,
        "sweeps": sum(kind == "sweep" for kind, *_ in now.launches),
        "launches_before": before.ops + fills,
    }


def main() -> int:
    root = instances()
    rows = []
    for name, source in cases(root):
        w, v, cap = load(source)
        red = reduce(make_instance(np.asarray(w), np.asarray(v), int(cap)))  # the solver's reductions and fixing
        for plan_name, plan in (("pruned", pruned(red, canonical=False)), ("dense", dense(red))):
            rows.append({"case": name, "plan": plan_name, **count(plan.job, record=True)})
    print(
        f"{'case':<36}{'plan':<8}{'items':>7}{'cells':>11}{'before':>8}{'now':>6}{'sweeps':>7}{'floor before':>14}"
        f"{'now':>8}"
    )
    for r in rows:
        print(
            f"{r['case']:<36}{r['plan']:<8}{r['items']:>7}{r['cells']:>11.3g}{r['launches_before']:>8}"
            f"{r['launches']:>6}{r['sweeps']:>7}{r['launches_before'] * LAUNCH_US / 1e3:>12.1f}ms"
            f"{r['launches'] * LAUNCH_US / 1e3:>6.2f}ms"
        )
    out = HERE / "results" / "launch_counts.json"
    out.write_text(json.dumps({"launch_us": LAUNCH_US, "rows": rows}, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
