"""Two revisions of the solver side by side, in turns: did a change make anything slower?

    python benchmarks/ab.py 18b2ddf                       # that commit against the working tree
    python benchmarks/ab.py 18b2ddf HEAD --groups kplib --rounds 7 --out tmp/ab

Each side is a git worktree of its revision (the working tree itself for "."), run by worker processes of its own
(--processes, taking the rounds in turn: this VM runs a process at one of a few speeds and a process keeps its speed,
so one process a side can tilt a whole run by a few percent). Each imports that tree's knapsack_gpu on one thread
(OMP/MKL/OPENBLAS/NUMBA_NUM_THREADS=1, torch.set_num_threads(1)) and compiles or loads its own numba kernels before
anything is timed. The instances are loaded once, here, and sent to
both, so both solve the same arrays. Then, round after round, every workload is solved by one side and at once by the
other, the side that goes first alternating; each turn repeats a solve until it has run for at least --turn-s (one
solve where a solve takes longer). A workload's time on a side is the median over all its solves; the two optima must
be equal. Groups are the suite's (benchmarks/workloads.py): kplib (26 instances), classes (--quick's 12), jooken
(the shipped C = 1e6 and 1e8), partitioner (--quick's float runtimes, the drop-in's instances).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402
from provenance import ONE_THREAD, commit, write_rows  # noqa: E402

GROUPS = ("kplib", "classes", "jooken", "partitioner")

# The worker: instances from a pickle, then one request a line ([workload, minimum seconds]) -> one JSON line.
WORKER = r"""
import json, pickle, sys, time
import torch
torch.set_num_threads(1)
import knapsack_gpu
from knapsack_gpu import jit
jit.warm()
try:
    from knapsack_gpu import grouped
    grouped.warm()
except (ImportError, AttributeError):
    pass
cases = pickle.load(open(sys.argv[1], "rb"))
def solve(k):
    w, v, c = cases[k]
    t = time.perf_counter()
    sol = knapsack_gpu.solve(w, v, c, device="cpu", threads=1)
    return time.perf_counter() - t, sol.value
for k in range(len(cases)):  # every workload once: kernels a solve compiles on first use, caches, pages
    solve(k)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    k, least = json.loads(line)
    times, spent = [], 0.0
    while not times or spent < least:
        s, value = solve(k)
        times.append(s)
        spent += s
    print(json.dumps({"times": times, "value": value if isinstance(value, int) else float(value)}), flush=True)
"""


def tree(rev: str, scratch: Path) -> Path:
    """A checkout of ``rev`` (the working tree for ".")."""
    if rev == ".":
        return ROOT
    path = scratch / rev.replace("/", "_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(path), rev], check=True,
                   capture_output=True)  # fmt: skip
    return path


def remove_tree(path: Path) -> None:
    if path != ROOT:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], capture_output=True)


class Worker:
    """A worker process over one tree (started here; :meth:`ready` waits for its warm-up)."""

    def __init__(self, name: str, path: Path, cases_file: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(path), **ONE_THREAD}
        self.name = name
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER, str(cases_file)], cwd=path, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip

    def ready(self) -> Worker:
        first = json.loads(self.proc.stdout.readline() or "{}")
        if not first.get("ready"):
            raise SystemExit(f"ab: a worker for {self.name} did not start (exit {self.proc.poll()})")
        return self

    def turn(self, k: int, least: float) -> dict:
        self.proc.stdin.write(json.dumps([k, least]) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def chosen(groups: list[str]) -> list[dict]:
    root = workloads.instances(None, generated_ok=True)
    out = []
    for g in groups:
        if g == "kplib":
            out += workloads.kplib(False, root)
        elif g == "classes":
            out += workloads.classes(True)
        elif g == "jooken":
            out += workloads.jooken(False, root)
        elif g == "partitioner":
            out += workloads.partitioner_scale(True)
        else:
            raise SystemExit(f"ab: --groups takes {', '.join(GROUPS)}; got {g!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="the revision to compare against (a commit, a tag)")
    ap.add_argument("b", nargs="?", default=".", help="the revision under test (default: the working tree)")
    ap.add_argument("--groups", default=",".join(GROUPS), help=f"comma-separated, of: {', '.join(GROUPS)}")
    ap.add_argument("--workloads", default="", help="comma-separated id substrings to keep")
    ap.add_argument("--rounds", type=int, default=5, help="turns each side gets on each workload (default 5)")
    ap.add_argument("--processes", type=int, default=3, help="workers a side, taking the rounds in turn (default 3)")
    ap.add_argument("--turn-s", type=float, default=0.05, help="a turn's least solving time (default 0.05 s)")
    ap.add_argument("--out", default="tmp/ab", help="results stem under benchmarks/results/ ('' for none)")
    args = ap.parse_args(argv)
    wls = chosen([g.strip() for g in args.groups.split(",") if g.strip()])
    keep = [s for s in args.workloads.split(",") if s]
    wls = [wl for wl in wls if not keep or any(s in wl["id"] for s in keep)]
    with tempfile.TemporaryDirectory(prefix="ab-") as scratch:
        cases_file = Path(scratch) / "cases.pkl"
        cases_file.write_bytes(pickle.dumps([workloads.load(wl["source"]) for wl in wls]))
        paths = [tree(rev, Path(scratch)) for rev in (args.a, args.b)]
        sides = []
        try:
            # one revision's workers at a time: the other's compile (a tree's first use) does not share the cores
            for rev, p in zip((args.a, args.b), paths, strict=True):
                sides.append([Worker(rev, p, cases_file) for _ in range(args.processes)])
                sides[-1] = [w.ready() for w in sides[-1]]
            times = {(i, k): [] for i in range(2) for k in range(len(wls))}
            values = {k: [None, None] for k in range(len(wls))}
            t0 = time.perf_counter()
            for r in range(args.rounds):
                for k in range(len(wls)):
                    for i in (0, 1) if (r + k) % 2 == 0 else (1, 0):
                        got = sides[i][r % args.processes].turn(k, args.turn_s)
                        times[i, k] += got["times"]
                        values[k][i] = got["value"]
            seconds = time.perf_counter() - t0
        finally:
            for workers in sides:
                for w in workers:
                    w.close()
            for p in paths:
                remove_tree(p)
    a, b = ((commit() or "working tree") if rev == "." else rev for rev in (args.a, args.b))
    rows = []
    print(f"| workload | {a} | {b} | b / a | solves each |\n|---|---:|---:|---:|---:|")
    for k, wl in enumerate(wls):
        ma, mb = statistics.median(times[0, k]), statistics.median(times[1, k])
        same = values[k][0] == values[k][1]
        rows.append({"workload": wl["id"], "group": wl["group"], "a_s": ma, "b_s": mb, "ratio": mb / ma,
                     "solves": [len(times[0, k]), len(times[1, k])], "same_optimum": same,
                     "value": values[k][1]})  # fmt: skip
        flag = "" if same else f" (optima differ: {values[k][0]} against {values[k][1]})"
        print(f"| {wl['id']} | {ma * 1e3:.3g} ms | {mb * 1e3:.3g} ms | {mb / ma:.2f} | {len(times[1, k])} |{flag}")
    ratios = sorted(r["ratio"] for r in rows)
    same = sum(r["same_optimum"] for r in rows)
    spread = f"median {statistics.median(ratios):.2f}, min {ratios[0]:.2f}, max {ratios[-1]:.2f}"
    print(f"\n{len(rows)} workloads, {args.rounds} rounds in {seconds:.0f} s: {b} / {a} {spread}; "
          f"optima equal on {same}")  # fmt: skip
    if args.out:
        path = HERE / "results" / f"{args.out}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"rounds": args.rounds, "processes": args.processes, "turn_s": args.turn_s, "groups": args.groups}
        write_rows(path, rows, a=a, b=b, **meta)
        print(f"wrote {path}")
    return 0 if all(r["same_optimum"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
