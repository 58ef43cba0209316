"""Few items with huge weights: ours against a plain numpy meet in the middle, n = 1..40 items near 2**50.

    python benchmarks/few_items.py                     # table + benchmarks/results/few_items.json
    python benchmarks/few_items.py --sizes 20,30 --repeats 3

Where weights are huge and every efficiency nearly equal, bounds fix nothing and a states list would hold every
subset sum (2**n of them); Horowitz and Sahni's meet in the middle builds two lists of 2**(n/2). Issue 23 asks that
up to about 40 items no instance takes us longer than such a method, and that none ends in a MemoryError it would not
need. The contender here is the textbook method in numpy, written in this file (every subset sum of each half by
doubling, the second half's sorted by weight with a running maximum of value, one searchsorted for every state of
the first): exact in int64 (40 items near 2**50 sum below 2**56). Three kinds of values, capacity half the weight:
subset sums (values equal to weights: every efficiency ties), near ties (values = weights + up to 2**20: bounds
still fathom nothing until a state nearly fills the capacity, but the efficiencies differ, so no test sees a tie) and
random values. The answers must agree. Each contender's time is the median of ``--repeats`` batches (a batch repeats
the call until it has run 20 ms: single sub-ms calls on a shared VM are noise), in one process, one thread.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import provenance  # noqa: E402  (benchmarks/ on the path first)

from knapsack_gpu import jit, solve  # noqa: E402


def subset_sums(w: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(weights, values) of every subset of the items, 2**len(w) of them."""
    W, P = np.zeros(1, np.int64), np.zeros(1, np.int64)
    for wi, pi in zip(w.tolist(), p.tolist(), strict=True):
        W, P = np.concatenate([W, W + wi]), np.concatenate([P, P + pi])
    return W, P


def meet_in_the_middle(w: np.ndarray, p: np.ndarray, c: int) -> int:
    """The optimum by Horowitz-Sahni in numpy: O(2**(n/2)) time and memory."""
    h = w.size // 2
    WA, PA = subset_sums(w[:h], p[:h])
    WB, PB = subset_sums(w[h:], p[h:])
    order = np.argsort(WB, kind="stable")
    WB, best = WB[order], np.maximum.accumulate(PB[order])  # best[i]: the most a subset as light as WB[i] is worth
    fit = WA <= c
    j = np.searchsorted(WB, c - WA[fit], side="right") - 1  # >= 0: the empty subset weighs 0
    return int((PA[fit] + best[j]).max())


KINDS = ("subset-sum", "near-ties", "random")


def instance(n: int, values: str, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(1000 * n + seed)
    w = rng.integers(2**49, 2**50, n)
    if values == "subset-sum":
        p = w.copy()
    elif values == "near-ties":
        p = w + rng.integers(0, 2**20, n)
    else:
        p = rng.integers(2**49, 2**50, n)
    return w, p, int(w.sum() // 2)


def _medians_s(fns, repeats: int, batch_s: float = 0.02) -> list[float]:
    """Each function's time a call: the median over ``repeats`` batches (a batch: as many calls as take
    ``batch_s``), the functions' batches in turns, so that a slower spell of the machine hits both alike."""
    calls = []
    for fn in fns:
        t0 = time.perf_counter()
        fn()
        calls.append(max(1, int(batch_s / max(time.perf_counter() - t0, 1e-7))))
    ts = [[] for _ in fns]
    for _ in range(repeats):
        for fn, k, t in zip(fns, calls, ts, strict=True):
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            t.append((time.perf_counter() - t0) / k)
    return [float(np.median(t)) for t in ts]


def _row(n: int, values: str, seed: int, repeats: int) -> dict:
    """One instance: both answers checked, both timed."""
    w, p, c = instance(n, values, seed)
    sol = solve(w, p, c, device="cpu")
    want = meet_in_the_middle(w, p, c)
    if sol.value != want or int(w[sol.indices].sum()) > c or int(p[sol.indices].sum()) != sol.value:
        raise SystemExit(f"n = {n}, {values}, seed {seed}: ours {sol.value} (weight {sol.weight}), the MITM's {want}")
    ours, theirs = _medians_s([lambda: solve(w, p, c, device="cpu"), lambda: meet_in_the_middle(w, p, c)], repeats)
    how = f"{sol.stats['strategy']}, extras {sol.stats.get('extras')}, peak {sol.stats.get('peak_states')}"
    return {"n": n, "values": values, "seed": seed, "ours_s": ours, "mitm_s": theirs, "value": sol.value, "how": how}


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,2,4,6,8,12,16,20,24,26,28,30,32,36,40", help="item counts, comma-separated")
    ap.add_argument("--seeds", default="0,1,2", help="instances of each size and kind, comma-separated")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results" / "few_items.json"), help="'' to write nothing")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    # warm: imports, and every compiled kernel loaded (as in a process the states engine has run in: a process that
    # only ever meets in the middle checks its input and sums its answer in numpy, ~20 us more a solve)
    jit.warm("i")
    solve(*instance(12, "random", 0), device="cpu")
    rows = []
    print(
        f"{'items':>5s} {'values':>10s} {'seed':>4s} {'ours (ms)':>10s} {'numpy MITM (ms)':>16s} {'ours/MITM':>9s}"
        "  ours' plan"
    )
    for n in (int(x) for x in args.sizes.split(",")):
        for values in KINDS:
            for seed in (int(x) for x in args.seeds.split(",")):
                r = _row(n, values, seed, args.repeats)
                ratio = r["ours_s"] / r["mitm_s"]
                print(
                    f"{n:5d} {values:>10s} {seed:4d} {r['ours_s'] * 1e3:10.2f} {r['mitm_s'] * 1e3:16.2f} "
                    f"{ratio:9.2f}  {r['how']}"
                )
                rows.append(r)
    if args.out:
        provenance.write_rows(args.out, rows, repeats=args.repeats)
    return rows


if __name__ == "__main__":
    main()
