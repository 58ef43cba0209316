"""Which way a solve's calls go through the package's floors (issue 52): down, or back up.

    python benchmarks/walk.py                 # table + benchmarks/results/walk.json
    python benchmarks/walk.py --out ''

The floors come from the package's own imports (tests/test_imports.py's reader: every ``import`` at the top of a
module or inside a function): a module's floor is one above the highest module it imports, so a module can call down
into what it imports and never import upward (the test holds the graph free of cycles). Each row traces one solve
(``sys.setprofile``, after a warm-up solve of the same instance) and classes every call from a function of one
package module into a function of another:

- down: the callee's module is below the caller's (the caller imports it, directly or through others);
- up: the caller's module is below the callee's: a function of a higher floor handed down and called back;
- across: neither imports the other (a method of an object the caller was given, e.g. a memory meter).

It also counts each module's entries from another module (``entries``): how often the solve comes back to a room it
left. The compiled kernels (numba) make no Python frames: their calls are not counted. One row per kind of plan.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
from provenance import write_rows  # noqa: E402
from test_imports import import_graph  # noqa: E402  (the reader the import-cycle test uses)

import knapsack_gpu  # noqa: E402
from knapsack_gpu import generate  # noqa: E402

PACKAGE = "knapsack_gpu"


def below(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each module's transitive imports within the package."""
    out: dict[str, set[str]] = {}

    def visit(m: str) -> set[str]:
        if m not in out:
            out[m] = set()  # (a cycle, which the import test forbids, would stop here)
            for t in edges[m]:
                out[m] |= {t} | visit(t)
        return out[m]

    for m in edges:
        visit(m)
    return out


def floors(edges: dict[str, set[str]]) -> dict[str, int]:
    memo: dict[str, int] = {}

    def floor(m: str) -> int:
        if m not in memo:
            memo[m] = 0
            memo[m] = 1 + max((floor(t) for t in edges[m]), default=0)
        return memo[m]

    return {m: floor(m) for m in edges}


def cases() -> list[tuple[str, tuple, dict]]:
    """(name, (weights, values, capacity), solve's keyword arguments): one solve of each kind of plan."""
    rng = np.random.default_rng(1)
    return [
        ("README example (5 items)", ([3, 4, 5, 9, 4], [3, 4, 4, 10, 4], 11), {}),
        ("meet in the middle (30 items)", generate.subset_sum(rng, 30, R=2**40), {}),
        ("states (kplib-like, n=1,000)", generate.almost_strongly_correlated(rng, 1000, R=10**4), {}),
        ("states, a re-solve (Jooken c=1e6 g=6, n=400)", generate.jooken(rng, 400, c=10**6, g=6), {}),
        ("grouped (Jooken c=1e8 g=10, n=1,000)", generate.jooken(rng, 1000, c=10**8, g=10, eps=1e-3), {}),
        ("dense over capacity (n=200)", generate.uncorrelated(rng, 200, R=100), {"strategy": "dense"}),
        ("pruned dense (n=200)", generate.strongly_correlated(rng, 200, R=100), {"strategy": "pruned"}),
    ]


def trace(instance: tuple, kwargs: dict, down: dict[str, set[str]]) -> tuple[str, Counter, Counter, list]:
    """(the strategy, calls by direction, entries per module, the up and across calls) of one solve, traced after
    a warm-up solve of the same instance (a process's first solve also looks up numba's disk cache)."""
    calls, entries, odd = Counter(), Counter(), Counter()

    def profile(frame, event, arg):
        if event != "call" or frame.f_back is None:
            return
        b, a = frame.f_globals.get("__name__", ""), frame.f_back.f_globals.get("__name__", "")
        if a == b or a not in down or b not in down:
            return
        entries[b] += 1
        kind = "down" if b in down[a] else "up" if a in down[b] else "across"
        calls[kind] += 1
        if kind != "down":
            odd[(kind, a, b, frame.f_code.co_name)] += 1

    w, v, c = instance
    strategy = knapsack_gpu.solve(w, v, c, device="cpu", threads=1, **kwargs).stats["strategy"]
    sys.setprofile(profile)
    try:
        knapsack_gpu.solve(w, v, c, device="cpu", threads=1, **kwargs)
    finally:
        sys.setprofile(None)
    return strategy, calls, entries, [f"{k}: {a} -> {b}.{f} x{n}" for (k, a, b, f), n in odd.most_common()]


def short(m: str) -> str:
    return m.removeprefix(PACKAGE + ".") if m != PACKAGE else "knapsack_gpu (__init__)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "results" / "walk.json"), help="results file ('' for none)")
    args = ap.parse_args(argv)
    edges = import_graph()
    down, floor = below(edges), floors(edges)
    print(f"{len(edges)} modules on {max(floor.values())} floors")
    rows = []
    print("| solve | strategy | calls between modules | down | up | across | most entered |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, instance, kwargs in cases():
        strategy, calls, entries, odd = trace(instance, kwargs, down)
        top = ", ".join(f"{short(m)} {n}" for m, n in entries.most_common(3))
        print(f"| {name} | {strategy} | {sum(calls.values())} | {calls['down']} | {calls['up']} | "
              f"{calls['across']} | {top} |")  # fmt: skip
        rows.append({"solve": name, "strategy": strategy, "calls": dict(calls),
                     "entries": {short(m): n for m, n in entries.most_common()}, "not_down": odd})  # fmt: skip
    for r in rows:
        for line in r["not_down"]:
            print(f"  {r['solve']}: {line}")
    if args.out:
        write_rows(args.out, rows, modules=len(edges), floors=max(floor.values()))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
