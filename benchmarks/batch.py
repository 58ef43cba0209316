"""Many small instances at once: solve_batch against OR-Tools' branch and bound in a loop and a loop of our own solve.

    python benchmarks/batch.py                       # table + benchmarks/results/batch.json (a few minutes)
    python benchmarks/batch.py --rows 2000 --repeats 2 --workloads pomo-n100

Workloads, B = 10,000 rows each (``--rows``):
- ``pomo-n50`` / ``pomo-n100`` / ``pomo-n200``: as POMO's ``POMO_KP`` (and RL4CO's, Jumanji's) draws them, weights
  and values ``torch.rand(B, n)`` (float32 in [0, 1)), capacity 12.5 / 25 / 25;
- ``pto-n100``: predict-then-optimise, one weight vector (PyEPO-style hundredths 3.00-7.99, scaled by 100 as the
  docs tell a user with decimal data) and B value vectors from a model (float32 in [0, 1)), capacity half the weight.

Contenders, side by side in one process, in turns, medians of ``--repeats`` passes over the whole batch:
- ``ours-1t`` / ``ours-2t``: ``solve_batch`` on the float tensors as given, one thread and two;
- ``ortools-bb``: OR-Tools' KnapsackSolver (multidimension branch and bound) in a Python loop over the same
  instances made whole exactly (weights and values times 2**24: float32 in [0, 1) are multiples of 2**-24), the way
  its users scale floats (a power of ten would change the instance);
- ``solve-loop``: a loop of ``knapsack_gpu.solve`` over those integer rows.
Every row's optimum is compared across contenders (the integers exactly). Thread pools held to one (OMP, MKL,
numba), torch.set_num_threads(1); ``ours-2t`` uses two of solve_batch's own threads.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"  # (before numpy and torch load: every contender on one core unless it says otherwise)

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import provenance  # noqa: E402

WORKLOADS = {  # name: (n, capacity or None for half the weight, shared weights)
    "pomo-n50": (50, 12.5, False),
    "pomo-n100": (100, 25.0, False),
    "pomo-n200": (200, 25.0, False),
    "pto-n100": (100, None, True),
}
SCALE = 2**24  # float32 in [0, 1) times this are whole numbers


def instances(name: str, rows: int, seed: int):
    """(weights, values, capacity) as the workload's users hold them: float32 tensors, weights (n,) where shared."""
    import torch

    n, cap, shared = WORKLOADS[name]
    gen = torch.Generator().manual_seed(seed)
    if shared:
        w = torch.randint(300, 800, (n,), generator=gen).to(torch.float32)  # hundredths, scaled by 100
        return w, torch.rand(rows, n, generator=gen), float(w.sum()) / 2
    return torch.rand(rows, n, generator=gen), torch.rand(rows, n, generator=gen), cap


def whole(w, v, cap, rows: int):
    """The same instances in integers (exactly): int64 arrays (rows x n) and an int capacity."""
    import torch

    W = w.double() * (1 if w.dim() == 1 else SCALE)  # (shared weights are whole already)
    W = np.broadcast_to(W.long().numpy(), (rows, v.shape[-1]))
    cap_i = int(cap) if w.dim() == 1 else int(cap * SCALE)
    return W, (v.double() * SCALE).to(torch.int64).numpy(), cap_i


def ortools_loop(W, V, cap):
    from ortools.algorithms.python import knapsack_solver

    st = knapsack_solver.SolverType.KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER
    out = np.empty(W.shape[0], dtype=np.int64)
    for b in range(W.shape[0]):
        s = knapsack_solver.KnapsackSolver(st, "bench")
        s.init(V[b].tolist(), [W[b].tolist()], [cap])
        out[b] = s.solve()
    return out


def solve_loop(W, V, cap):
    from knapsack_gpu import solve

    return np.array([solve(W[b], V[b], cap, device="cpu").value for b in range(W.shape[0])], dtype=np.int64)


def ours(w, v, cap, threads: int):
    from knapsack_gpu import solve_batch

    return solve_batch(w, v, cap, device="cpu", threads=threads)


def run(name: str, rows: int, repeats: int, contenders: list[str], seed: int = 0) -> dict:
    """One workload: every contender's median seconds a row, the answers compared."""
    w, v, cap = instances(name, rows, seed)
    W, V, cap_i = whole(w, v, cap, rows)
    calls = {
        "ours-1t": lambda: ours(w, v, cap, 1),
        "ours-2t": lambda: ours(w, v, cap, 2),
        "ortools-bb": lambda: ortools_loop(W, V, cap_i),
        "solve-loop": lambda: solve_loop(W, V, cap_i),
    }
    times = {c: [] for c in contenders}
    answers = {}
    for r in range(repeats):
        for c in contenders if r % 2 == 0 else contenders[::-1]:  # (in turns: a slow spell hits every contender)
            t0 = time.perf_counter()
            got = calls[c]()
            times[c].append(time.perf_counter() - t0)
            answers[c] = got
    stats = None
    for c, got in answers.items():  # every optimum the same, in integers
        if c.startswith("ours"):
            stats = got.stats
            got = (got.value.double() * SCALE).to(dtype=__import__("torch").int64).numpy()
        answers[c] = got
    ref = next(iter(answers.values()))
    for c, got in answers.items():
        if not np.array_equal(got, ref):
            bad = int(np.flatnonzero(got != ref)[0])
            raise SystemExit(f"{name}: {c} row {bad} = {got[bad]}, {next(iter(answers))} = {ref[bad]}")
    per_row = {c: float(np.median(t)) / rows for c, t in times.items()}
    return {
        "workload": name,
        "rows": rows,
        "n": WORKLOADS[name][0],
        "repeats": repeats,
        "us_per_row": {c: s * 1e6 for c, s in per_row.items()},
        "engines": stats["engines"] if stats else None,
        "strategies": stats["strategies"] if stats else None,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated, of: " + ", ".join(WORKLOADS))
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--contenders", default="ours-1t,ours-2t,ortools-bb,solve-loop")
    ap.add_argument("--out", default=str(HERE / "results" / "batch.json"), help="'' to write nothing")
    args = ap.parse_args(argv)
    import torch

    from knapsack_gpu import jit, solve_batch

    torch.set_num_threads(1)
    jit.warm("i")  # (the compiled kernels loaded, as in a process that has solved before)
    contenders = args.contenders.split(",")
    for name in args.workloads.split(","):  # (warm: the batch kernels and each workload's shapes)
        solve_batch(*instances(name, 8, 99), device="cpu", threads=1)
    print(f"{'workload':>10s} {'rows':>6s} " + " ".join(f"{c + ' (us)':>16s}" for c in contenders)
          + f" {'ortools/ours-1t':>15s} {'1t/2t':>6s}  engines")  # fmt: skip
    rows = []
    for name in args.workloads.split(","):
        r = run(name, args.rows, args.repeats, contenders)
        us = r["us_per_row"]
        ratio = us["ortools-bb"] / us["ours-1t"] if {"ortools-bb", "ours-1t"} <= us.keys() else float("nan")
        speedup = us["ours-1t"] / us["ours-2t"] if {"ours-1t", "ours-2t"} <= us.keys() else float("nan")
        print(f"{name:>10s} {args.rows:6d} " + " ".join(f"{us[c]:16.2f}" for c in contenders)
              + f" {ratio:15.1f} {speedup:6.2f}  {r['engines']}")  # fmt: skip
        rows.append(r)
    if args.out:
        provenance.write_rows(args.out, rows, repeats=args.repeats, threads_note="ours-2t: two threads")
    return rows


if __name__ == "__main__":
    main()
