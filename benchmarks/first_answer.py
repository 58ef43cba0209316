"""What a new user waits for: the first answer of a fresh process, with an empty numba cache and with a warm one
(issue 51).

    python benchmarks/first_answer.py                   # table + benchmarks/results/first_answer.json
    python benchmarks/first_answer.py --repeats 1 --out ''

Each row runs a command in a process of its own, timed from outside (wall clock, imports included), one thread for
the solves (OMP/MKL/OPENBLAS/NUMBA_NUM_THREADS=1; ``knapsack-gpu compile`` uses its own worker processes, one a
core). The numba cache is a temporary folder (``NUMBA_CACHE_DIR``): "empty" rows get a new empty one each run, so
nothing a checkout compiled before counts; "warm" rows share one that ``knapsack-gpu compile`` filled in the same
run (that compile is a row too). The README's 5-item example is the first ``python`` block of README.md, run as
it stands; its profile and dry run, the second. The solves are CPU solves (``KNAPSACK_GPU_DEVICE`` is not set; on a
machine with CUDA the demo uses it). The package's modules are byte-compiled first, as an install compiles them.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import provenance  # noqa: E402  (benchmarks/ on the path first)

# kplib's uncorrelated class at n = 1,000 (a search long enough to go past the interpreted trial and compile).
KPLIB_LIKE = (
    "import numpy as np, knapsack_gpu\n"
    "from knapsack_gpu import generate\n"
    "w, v, c = generate.uncorrelated(np.random.default_rng(0), 1000, 10**4)\n"
    "s = knapsack_gpu.solve(w, v, c, device='cpu')\n"
    "print(s.value, s.stats['binding'], round(s.stats['seconds'], 3))\n"
)

# A long search (circle(2/3), n = 10,000, R = 1e5: ~780 million state updates, ~2 s compiled and warm): it runs
# past the interpreted trial (numba_jit.TRIAL_UPDATES); with an empty cache it goes on interpreted while a process of
# its own compiles the kernels, then loads them.
LONG_SEARCH = KPLIB_LIKE.replace("generate.uncorrelated(np.random.default_rng(0), 1000, 10**4)",
                                 'generate.FAMILIES["circle"](np.random.default_rng(0), 10000, 10**5)')  # fmt: skip


def readme_example(i: int = 0) -> str:
    """The README's Python block ``i`` as a user would paste it: 0 the 5-item solve, 1 its profile and dry run."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    if len(blocks) <= i:
        raise SystemExit(f"README.md has no python block {i}")
    return blocks[i]


# OR-Tools' whole fresh process on the same 5 items (its branch and bound): the rival a newcomer compares with.
ORTOOLS_FIVE = (
    "from ortools.algorithms.python import knapsack_solver as ks\n"
    "s = ks.KnapsackSolver(ks.SolverType.KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER, 'five')\n"
    "s.init([24, 13, 23, 15, 16], [[12, 7, 11, 8, 9]], [26])\n"
    "print(s.solve())\n"
)


def commands(py: str) -> dict[str, list[str]]:
    return {
        "compile": [py, "-m", "knapsack_gpu", "compile"],  # first: the warm rows load what it wrote
        "readme 5 items": [py, "-c", readme_example()],
        "readme profile+plan": [py, "-c", readme_example(1)],  # (a tensor and the dense plan's dtypes: torch)
        "cli solve five.json": [py, "-m", "knapsack_gpu", "solve", str(ROOT / "examples" / "five.json")],
        "ortools 5 items": [py, "-c", ORTOOLS_FIVE],
        "kplib-like n=1,000": [py, "-c", KPLIB_LIKE],
        "circle n=10,000": [py, "-c", LONG_SEARCH],
        "demo": [py, "-m", "knapsack_gpu", "demo"],
    }


def background_compiles() -> list[int]:
    """The pids of compiles a search started in a process of its own (``knapsack-gpu compile --background``)."""
    pids = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"compile" in args and b"--background" in args:
            pids.append(int(entry))
    return pids


def run(cmd: list[str], cache: str) -> tuple[float, str]:
    """One fresh process: its wall time from outside, and its output (stderr's notices included). A compile it left
    running in the background (an empty cache's long search) is waited for before the next row, which it would slow
    (not counted in the row: the answer came before it ended)."""
    env = {**os.environ, **provenance.ONE_THREAD, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (see main: Python's bytecode cache as an install has it)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    while background_compiles():
        time.sleep(0.5)
    return seconds, (p.stdout + p.stderr).strip()


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="fresh processes a row (default 3)")
    ap.add_argument("--out", default=str(HERE / "results" / "first_answer.json"), help="'' to write nothing")
    args = ap.parse_args(argv)
    cmds = commands(sys.executable)
    # the package's bytecode compiled as `pip install` compiles it: without it (PYTHONDONTWRITEBYTECODE, set in this
    # project's sandbox) every fresh process compiles ~50 modules from source first, 75 ms of a 0.23 s answer
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "knapsack_gpu")], check=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="numba-") as top:
        fresh = iter(range(10**6))
        warm = ""
        for cache in ("empty", "warm"):
            for name in cmds:
                times, out = [], ""
                for _ in range(args.repeats):
                    folder = warm if cache == "warm" else os.path.join(top, f"empty-{next(fresh)}")
                    seconds, out = run(cmds[name], folder)
                    times.append(seconds)
                    if name == "compile" and cache == "empty":
                        warm = folder  # the warm rows load what the last compile into an empty cache wrote
                row = {"what": name, "cache": cache, "seconds": times, "median_s": statistics.median(times),
                       "last_output": out[-2000:]}  # fmt: skip
                said = re.search(r"about (\d+) s", out)
                if name == "compile" and said:  # what its notice estimated, against what it took
                    row["estimated_s"] = float(said.group(1))
                rows.append(row)
                shown = "/".join(f"{t:.2f}" for t in times)
                extra = f", estimated {row['estimated_s']:.0f} s" if "estimated_s" in row else ""
                print(f"{name:20s} {cache:5s} cache: median {row['median_s']:6.2f} s ({shown}){extra}", flush=True)
    if args.out:
        provenance.write_rows(args.out, rows, repeats=args.repeats)
    return rows


if __name__ == "__main__":
    main()
