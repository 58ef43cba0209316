"""Cell rates of the numpy pass: 1 thread against 2, and a pruned pass against a full one, on the same instances.

    python benchmarks/pass_rates.py            # table + benchmarks/results/pass_rates.json (a few minutes)
    python benchmarks/pass_rates.py --quick    # C = 1e7

One forward pass each (the first items of a plan, with and without its bit table), medians of --repeats, numpy's own
threads pinned to one (the pass's threads are its own). Cells/s counts the cells the pass updates, so a pruned pass
and a full one are compared per cell: the planner's cost model charges them the same.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from provenance import machine  # noqa: E402
from workloads import instances, load  # noqa: E402

from knapsack_gpu.backends import make_pass  # noqa: E402
from knapsack_gpu.dense.passes.base import BitLayout, Job  # noqa: E402
from knapsack_gpu.memory import Meter, Workspace  # noqa: E402
from knapsack_gpu.plan import dense, pruned  # noqa: E402
from knapsack_gpu.problem import make_instance  # noqa: E402
from knapsack_gpu.reduce import reduce  # noqa: E402

JOOKEN = "jooken/n_1000_c_100000000_g_10_f_0.1_eps_0.01_s_100.in"


def timed_pass(job: Job, threads: int, record: bool, repeats: int) -> tuple[float, int]:
    dev = torch.device("cpu")
    p = make_pass("numpy", dev, job.dtype, Workspace(Meter(1 << 40, dev)), reduced=job.ramp is not None)
    p.threads = threads
    p.reserve(job.m, job.length)
    layout = BitLayout.of(job.schedule, job.length) if record else None
    times = []
    for _ in range(repeats + 1):  # the first run faults the rows in
        bits = p.new_bits(layout) if record else None
        t = time.perf_counter()
        p.run(job, bits)
        times.append(time.perf_counter() - t)
    return statistics.median(times[1:]), job.schedule.cells


def synthetic(cap: int, m: int) -> Job:
    """m items of weights C/50..C/10 over a full profile of C + 1 (int32)."""
    rng = np.random.default_rng(0)
    w = rng.integers(cap // 50, cap // 10, m)
    return Job(w, rng.integers(1, 1000, m).astype(np.int32), cap + 1, False, torch.int32)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results" / "pass_rates.json"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    cap = 10**7 if args.quick else 10**8
    rows = []
    job = synthetic(cap, 40)
    for threads in (1, 2):
        s, cells = timed_pass(job, threads, False, args.repeats)
        rows.append(
            {"case": f"synthetic C={cap:.0e}, 40 items, full", "threads": threads, "seconds": s, "cells": cells}
        )
    try:
        w, v, c = load({"file": str(instances() / JOOKEN)})
        red = reduce(make_instance(w, v, c))
        items = slice(0, 40 if args.quick else 120)  # the first items of each plan's order: a minute, not an hour
        for name, plan in (("pruned", pruned(red, False)), ("dense", dense(red))):
            j = plan.job
            sub = Job(
                j.weights[items],
                j.values[items],
                j.length,
                False,
                j.dtype,
                window=None if j.window is None else (j.window[0][items], j.window[1][items]),
                ramp=j.ramp,
            )
            for threads, record in ((1, False), (2, False), (1, True), (2, True)):
                s, cells = timed_pass(sub, threads, record, args.repeats)
                rows.append(
                    {
                        "case": f"Jooken c=1e8 hardest, {name} plan, first {sub.m} items"
                        + (", bits" if record else ""),
                        "dtype": str(j.dtype),
                        "threads": threads,
                        "seconds": s,
                        "cells": cells,
                    }
                )
    except FileNotFoundError as exc:
        print(f"Jooken rows skipped: {exc}")
    print(f"{'case':<58}{'dtype':>8}{'threads':>8}{'cells':>10}{'s':>8}{'cells/s':>10}")
    for r in rows:
        r["cells_per_s"] = r["cells"] / r["seconds"]
        print(
            f"{r['case']:<58}{r.get('dtype', 'int32').replace('torch.', ''):>8}{r['threads']:>8}{r['cells']:>10.3g}"
            f"{r['seconds']:>8.2f}{r['cells_per_s']:>10.3g}"
        )
    Path(args.out).write_text(json.dumps({"meta": machine(1), "rows": rows}, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
