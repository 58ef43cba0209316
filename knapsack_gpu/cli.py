"""Command line: ``knapsack-gpu`` (also ``python -m knapsack_gpu``).

knapsack-gpu demo                          a demo solve on the best available device
knapsack-gpu solve FILE [--json] ...       solve a kplib / Jooken / Pisinger / JSON instance file
knapsack-gpu profile FILE --plot out.png   the best value for every capacity
knapsack-gpu bench [--quick]               the benchmark suite (needs a source checkout)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
import torch

from . import __version__
from .formats import FORMATS, read_instance

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_MAX_BYTES = 2**63  # far past any machine: a larger limit is a typo (1e400), not a plan


def parse_bytes(text: str) -> int:
    """'8GB' -> 8e9, '512MiB' -> 512 * 2**20, '1e9' -> 1e9 (decimal units for kB/MB/GB/TB, binary for KiB...)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    unit = m and m.group(2).lower()
    if not m or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"cannot read {text!r} as a size: use e.g. 8GB, 512MiB or a number of bytes")
    try:
        number = Decimal(m.group(1))  # exact, where float would give inf for 1e400
        value = int(number * _UNITS[unit]) if number < _MAX_BYTES else _MAX_BYTES
    except ArithmeticError:  # an exponent past what Decimal holds, e.g. 1e-99999999999999999999
        raise argparse.ArgumentTypeError(f"{text!r} is not a size any machine has: use e.g. 8GB or 512MiB") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a memory limit must be at least 1 byte")
    if value >= _MAX_BYTES:
        raise argparse.ArgumentTypeError(f"{text!r}: a memory limit must be below 2**63 bytes")
    return value


class BarProgress:
    """A tqdm bar on stderr (shown only for solves longer than about a second): item passes, cell updates/s."""

    def __init__(self, enabled: bool):
        self.bar = None
        self.enabled = enabled
        self.cells = 0
        self.t0 = time.perf_counter()

    def start(self, item_passes: int) -> None:
        if not self.enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            return
        self.bar = tqdm(total=item_passes, unit="item", delay=1.0, file=sys.stderr, dynamic_ncols=True, leave=False)

    def update(self, cells: int) -> None:
        self.cells += cells
        if self.bar is None:
            return
        if self.bar.n >= self.bar.total:  # Hirschberg ran more passes than estimated
            self.bar.total = self.bar.n + 1
        self.bar.update(1)
        elapsed = time.perf_counter() - self.t0
        if self.bar.n % 16 == 0 and elapsed > 0:
            self.bar.set_postfix_str(f"{self.cells / elapsed:.3g} cells/s", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _solve(weights, values, capacity, args) -> tuple:
    from .solver import solve

    bar = BarProgress(enabled=not args.no_progress)
    try:
        sol = solve(
            weights,
            values,
            capacity,
            device=args.device,
            backend=args.backend,
            memory_limit=args.memory_limit,
            dtype=getattr(torch, args.dtype) if args.dtype else None,
            progress=bar,
        )
    finally:
        bar.close()
    return sol


def _summary(name: str, n: int, capacity: int, sol) -> str:
    s = sol.stats
    rate = s["cell_updates"] / s["seconds"] if s["seconds"] > 0 else float("nan")
    return "\n".join(
        [
            f"instance   {name}: {n} items, capacity {capacity}",
            f"optimum    {sol.value}",
            f"selected   {len(sol.selected)} items, weight {sol.weight} of {capacity}",
            f"solved in  {s['seconds']:.3f} s on {s['device']} ({s['backend']}, {s['strategy']}, {s['dtype']})",
            f"work       {s['cell_updates']:.3g} cell updates ({rate:.3g}/s), peak {s['peak_bytes'] / 2**20:.1f} MiB",
            f"reductions {', '.join(s['reductions']) or 'none'}",
        ]
    )


def solution_json(inst, sol) -> str:
    """``solve --json``'s line: the instance's name and size, the answer, and the stats."""
    out = {
        "name": inst.name,
        "format": inst.format,
        "n": int(len(inst.weights)),
        "capacity": int(inst.capacity),
        "value": sol.value,
        "selected": sol.selected,
        "weight": sol.weight,
        "stats": sol.stats,
    }
    return json.dumps(out)


def cmd_solve(args) -> int:
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # under torchrun: sharded over the ranks
        from .distributed.cli import solve_from_env

        return solve_from_env(args)
    inst = read_instance(args.file, args.format)
    sol = _solve(inst.weights, inst.values, inst.capacity, args)
    print(solution_json(inst, sol) if args.json else _summary(inst.name, len(inst.weights), inst.capacity, sol))
    if args.expect is not None and sol.value != args.expect:
        print(f"knapsack-gpu: optimum {sol.value} differs from the expected {args.expect}", file=sys.stderr)
        return 1
    return 0


def cmd_profile(args) -> int:
    from .solver import profile

    inst = read_instance(args.file, args.format)
    f = profile(inst.weights, inst.values, inst.capacity, device=args.device, backend=args.backend).cpu().numpy()
    caps = np.unique(np.linspace(0, inst.capacity, num=min(inst.capacity + 1, 11)).astype(np.int64))
    print(f"instance {inst.name}: {len(inst.weights)} items, capacity {inst.capacity}")
    for c in caps:
        print(f"  f({c}) = {f[c]}")
    if args.csv:
        np.savetxt(args.csv, np.column_stack([np.arange(f.size), f]), fmt="%s", delimiter=",", header="capacity,value")
        print(f"wrote {args.csv}")
    if args.plot:
        plot_profile(f, inst.name, args.plot)
        print(f"wrote {args.plot}")
    return 0


def plot_profile(f: np.ndarray, name: str, out: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("knapsack-gpu: --plot needs matplotlib: pip install 'knapsack-gpu[plot]'") from None
    # Non-decreasing: sampling at up to 4096 capacities draws it faithfully as a step line.
    idx = np.unique(np.linspace(0, f.size - 1, num=min(f.size, 4096)).astype(np.int64))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.step(idx, f[idx], where="post")
    ax.set_xlabel("capacity")
    ax.set_ylabel("best value")
    ax.set_title(f"{name}: best value for every capacity")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def cmd_demo(args) -> int:
    from .generate import FAMILIES, partitioner

    rng = np.random.default_rng(args.seed)
    cases = [("partitioner-scale, float runtimes", *partitioner(rng, 2000, 10_000))]
    w, v, cap = FAMILIES["strongly"](rng, args.n, R=args.range, fraction=0.5)
    cases.append((f"strongly correlated, R={args.range}", w, v, cap))
    for name, w, v, cap in cases:
        sol = _solve(w, v, cap, args)
        assert sol.weight <= cap
        print(_summary(name, len(w), cap, sol))
        print()
    return 0


def cmd_bench(args, rest: list[str]) -> int:
    import runpy

    suite = Path(__file__).resolve().parent.parent / "benchmarks" / "suite.py"
    if not suite.exists():
        raise SystemExit("knapsack-gpu bench runs benchmarks/suite.py from a source checkout of knapsack_gpu")
    sys.argv = [str(suite), *(["--quick"] if args.quick else []), *rest]
    runpy.run_path(str(suite), run_name="__main__")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="knapsack-gpu", description="Exact 0/1 knapsack on CUDA or the CPU.")
    parser.add_argument("--version", action="version", version=f"knapsack-gpu {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def solver_options(p):
        p.add_argument("--device", default="auto", help="auto (CUDA if available), cpu, cuda, cuda:N")
        p.add_argument("--backend", default="auto", choices=["auto", "numpy", "torch", "triton"])
        p.add_argument("--memory-limit", type=parse_bytes, default=None, help="working memory, e.g. 8GB, 512MiB")
        p.add_argument("--dtype", choices=["int32", "int64", "float32", "float64"], default=None)
        p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    p = sub.add_parser("solve", help="solve an instance file")
    p.add_argument("file")
    p.add_argument("--format", choices=FORMATS, default="auto")
    p.add_argument("--json", action="store_true", help="print value, selected, weight and stats as JSON")
    p.add_argument("--expect", type=int, default=None, help="exit 1 if the optimum differs from this value")
    solver_options(p)

    p = sub.add_parser("profile", help="best value for every capacity")
    p.add_argument("file")
    p.add_argument("--format", choices=FORMATS, default="auto")
    p.add_argument("--plot", help="write a PNG/SVG plot here")
    p.add_argument("--csv", help="write capacity,value rows here")
    p.add_argument("--device", default="auto")
    p.add_argument("--backend", default="auto", choices=["auto", "numpy", "torch", "triton"])

    p = sub.add_parser("demo", help="solve generated instances on the best available device")
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--range", type=int, default=2000, help="weights up to this (capacity about n * range / 4)")
    p.add_argument("--seed", type=int, default=0)
    solver_options(p)

    p = sub.add_parser("bench", help="run the benchmark suite (benchmarks/suite.py)")
    p.add_argument("--quick", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "bench":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        if args.command == "solve":
            return cmd_solve(args)
        if args.command == "profile":
            return cmd_profile(args)
        if args.command == "demo":
            return cmd_demo(args)
        return cmd_bench(args, rest)
    except KeyboardInterrupt:
        print("\nknapsack-gpu: interrupted", file=sys.stderr)
        return 130
    # User errors: bad files (FormatError, UnicodeDecodeError are ValueErrors), bad arguments, memory the machine
    # lacks, unreadable files. RuntimeError keeps its traceback: "internal error ..." is a bug to see and report.
    except (ValueError, TypeError, MemoryError, OverflowError, OSError) as exc:
        print(f"knapsack-gpu: error: {str(exc) or type(exc).__name__}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
