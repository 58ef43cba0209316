"""Command line: ``knapsack-gpu`` (also ``python -m knapsack_gpu``).

knapsack-gpu demo                          a demo solve on the best available device
knapsack-gpu solve FILE [--json] ...       solve a kplib / Jooken / Pisinger / JSON instance file (- reads stdin);
                                           every instance of a file that holds several, one line each
knapsack-gpu profile FILE --plot out.png   the best value for every capacity
knapsack-gpu plan FILE [--memory-limit 8GB]  what a solve would do, stage by stage, without running it
                                           (--device cuda --device-memory 141GB: for a device not present)
knapsack-gpu compile                       compile the numba kernels ahead of time (once per environment)
knapsack-gpu bench [--quick]               the benchmark suite (needs a source checkout)

``--help`` and ``--version`` answer without importing torch (numpy and the solver load with the first command that
needs them). Exit codes: see :mod:`knapsack_gpu.output`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from . import __version__
from .formats import FORMATS
from .output import (
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_MEMORY,
    EXIT_MISMATCH,
    EXIT_OK,
    check,
    exit_code,
    known_solution_warning,
    report,
    solution_json,
    summary,
    table_header,
    table_row,
)
from .sizes import parse_bytes

JSON_SCHEMA = """instance files, the layout detected by content (--format names it); "/" below is a line break:
  kp            kplib .kp: n, the capacity, n lines "profit weight"
                  e.g. 2 / 10 / 6 4 / 7 5
  jooken        Jooken .in: n, n lines "id profit weight", the capacity
                  e.g. 2 / 0 6 4 / 1 7 5 / 10
  pisinger      knapPI copies without a header (ChuanyuXue's): n, n lines "profit weight", the capacity
                  e.g. 2 / 6 4 / 7 5 / 10
  pisinger-csv  Pisinger's own knapPI files, one or many instances each: a name, "n N", "c C", "z OPTIMUM",
                "time T" (optional), N rows "i,p,w,x" (x: his solution, 0/1), "-----" (optional after the last)
                  e.g. knapPI_1_2_1000_1 / n 2 / c 10 / z 13 / time 0.00 / 1,6,4,1 / 2,7,5,1 / -----
  json          {"weights": [...], "values": [...], "capacity": C, "name": optional}
                  e.g. {"weights": [4, 5], "values": [6, 7], "capacity": 10, "name": "tiny"}
weights and capacities are whole numbers in [0, 2**62), profits in [0, 2**63) (JSON values: any numbers >= 0);
a UTF-8 byte-order mark is accepted; FILE "-" reads stdin. A pisinger-csv file's z is the expected optimum (exit 1
if the solve differs) and its x is checked (a warning where it is over c or not worth z); solve without --instance
solves every instance of such a file, a line each."""


def _read(args):
    """The instance ``args.file`` names ("-": standard input); of a file holding several, the one --instance picks."""
    from .formats import read_instance

    return read_instance(args.file, args.format, instance=args.instance)


def _warn_known_solution(path, inst) -> None:
    warning = known_solution_warning(path, inst)
    if warning:
        print(warning, file=sys.stderr, flush=True)


class _Notices:
    """The package's notices (the "knapsack_gpu" logger's warnings: a compile about to start, see
    :mod:`knapsack_gpu.jit`) on stderr as the CLI's other messages, "knapsack-gpu: ..." (whatever sys.stderr is
    when they come)."""

    def __init__(self) -> None:
        import logging

        class Handler(logging.Handler):
            def emit(self, record):
                print(f"knapsack-gpu: {record.getMessage()}", file=sys.stderr, flush=True)

        self.log = logging.getLogger("knapsack_gpu")
        self.handler = Handler(logging.WARNING)

    def __enter__(self):
        self.log.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        self.log.removeHandler(self.handler)


def _solve(weights, values, capacity, args):
    from .lazy import torch  # (imported only where --dtype names one)
    from .progress import TqdmProgress
    from .solver import solve

    bar = None if args.no_progress else TqdmProgress()
    try:
        return solve(
            weights,
            values,
            capacity,
            device=args.device,
            backend=args.backend,
            memory_limit=args.memory_limit,
            dtype=getattr(torch, args.dtype) if args.dtype else None,
            progress=bar,
            threads=args.threads,
        )
    finally:
        if bar is not None:
            bar.close()


def cmd_solve(args) -> int:
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # under torchrun: sharded over the ranks
        from .distributed.cli import solve_from_env

        return solve_from_env(args)
    from .formats import read_instances, select

    instances = read_instances(args.file, args.format)
    if args.instance is None and len(instances) > 1:
        return _solve_all(instances, args)
    inst = select(instances, args.instance, args.file)
    _warn_known_solution(args.file, inst)
    sol = _solve(inst.weights, inst.values, inst.capacity, args)
    text, why = report(inst, sol, args.expect, args.json)
    print(text)
    if why:
        print(why, file=sys.stderr)
        return EXIT_MISMATCH
    return EXIT_OK


def _solve_all(instances, args) -> int:
    """Solve every instance of a file in order, a line each as it is solved (a JSON object with --json), each
    checked against the file's own optimum. Exits 1 if any optimum differs; an error stops the run."""
    if args.expect is not None:
        raise ValueError(
            f"--expect checks one optimum, but {args.file} holds {len(instances)} instances: each is checked against "
            "its own z; to check one against --expect, pick it with --instance NAME or INDEX"
        )
    width = max(len("instance"), *(len(inst.name) for inst in instances))
    if not args.json:
        print(table_header(width), flush=True)
    differ = []
    for inst in instances:
        _warn_known_solution(args.file, inst)
        sol = _solve(inst.weights, inst.values, inst.capacity, args)
        c = check(inst, sol)
        print(solution_json(inst, sol, c) if args.json else table_row(inst, sol, c, width), flush=True)
        if c.why:
            differ.append(inst.name)
    if differ:
        print(
            f"knapsack-gpu: {len(differ)} of {len(instances)} optima differ from the file's z: {', '.join(differ)}",
            file=sys.stderr,
        )
        return EXIT_MISMATCH
    return EXIT_OK


def cmd_plan(args) -> int:
    from .dryrun import plan_for
    from .lazy import torch

    unknown = args.device_memory is None and args.memory_limit is None
    if args.device.startswith("cuda") and unknown and not torch.cuda.is_available():
        raise ValueError(
            f"--device {args.device}: no CUDA device here to read the free memory of; pass --memory-limit (as for "
            "solve) or --device-memory (e.g. 141GB for an H200) to plan for one, or leave --device at auto (the CPU "
            "here)"
        )
    inst = _read(args)
    report = plan_for(
        inst.weights,
        inst.values,
        inst.capacity,
        device=args.device,
        memory_limit=args.memory_limit,
        device_memory=args.device_memory,
        backend=args.backend,
        cell_rate=args.cell_rate,
    )
    if args.json:
        import json

        print(json.dumps(report.as_dict()))
    else:
        print(report)
    return EXIT_OK if report.fits else EXIT_MEMORY


def cmd_profile(args) -> int:
    import numpy as np

    from .solver import profile

    inst = _read(args)
    f = profile(inst.weights, inst.values, inst.capacity, device=args.device, backend=args.backend).cpu().numpy()
    caps = np.unique(np.linspace(0, inst.capacity, num=min(inst.capacity + 1, 11)).astype(np.int64))
    print(f"instance {inst.name}: {len(inst.weights)} items, capacity {inst.capacity}")
    for c in caps:
        print(f"  f({c}) = {f[c]}")
    if args.csv:
        with open(args.csv, "w") as out:
            out.write("capacity,value\n")
            for c, value in enumerate(f.tolist()):  # capacities as integers, values as the profile holds them
                out.write(f"{c},{value}\n")
        print(f"wrote {args.csv}")
    if args.plot:
        plot_profile(f, inst.name, args.plot)
        print(f"wrote {args.plot}")
    return EXIT_OK


def plot_profile(f, name: str, out: str) -> None:
    import numpy as np

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
    import numpy as np

    from .generate import FAMILIES, partitioner

    rng = np.random.default_rng(args.seed)
    cases = [("partitioner-scale, float runtimes", *partitioner(rng, 2000, 10_000))]
    w, v, cap = FAMILIES["strongly"](rng, args.n, R=args.range, fraction=0.5)
    cases.append((f"strongly correlated, R={args.range}", w, v, cap))
    for name, w, v, cap in cases:
        sol = _solve(w, v, cap, args)
        assert sol.weight <= cap
        print(summary(name, len(w), cap, sol, json_hint=False))
        print()
    return EXIT_OK


def cmd_compile(args) -> int:
    import time

    from . import jit, numba_jit

    if not jit.enabled():
        print("knapsack-gpu: numba is not installed (or KNAPSACK_GPU_JIT=0): nothing to compile", file=sys.stderr)
        return EXIT_INPUT
    if args.background:  # the process a search starts (numba_jit.compiling_elsewhere): quiet, one worker, at the end
        if hasattr(os, "nice"):
            os.nice(19)
        args.jobs = 1
    with _compile_lock(numba_jit.compile_lock(), wait=not args.background) as held:
        if not held:
            return EXIT_OK  # another process compiles: it fills the same cache
        workers = max(1, min(args.jobs or jit.cores(), len(jit.JOBS)))
        if not args.background:
            print(
                f"knapsack-gpu: compiling {len(jit.JOBS)} kernels (numba) into the disk cache in {workers} "
                f"process{'es' if workers > 1 else ''}: about {jit.estimate_total(workers):.0f} s on this machine as "
                "it is now (its speed and load measured) in a fresh cache, seconds where they are cached",
                file=sys.stderr,
                flush=True,
            )
        t0 = time.perf_counter()

        def report(done: int, total: int, name: str, kind: str, seconds: float) -> None:
            if not args.background:
                print(f"[{done}/{total}] {jit.job_label(name, kind)} {seconds:.1f} s", file=sys.stderr, flush=True)

        jit.compile_all(workers, report, first=args.first)
    if not args.background:
        print(
            f"knapsack-gpu: the states engine and the grouped solver are compiled and cached "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    return EXIT_OK


@contextlib.contextmanager
def _compile_lock(path: str, wait: bool):
    """Hold the compile lock (knapsack_gpu.numba_jit.compile_lock) while compiling: yields False where another
    process holds it and ``wait`` is False (POSIX; elsewhere: always held)."""
    try:
        import fcntl
    except ImportError:
        yield True
        return
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cmd_bench(args, rest: list[str]) -> int:
    import runpy

    suite = Path(__file__).resolve().parent.parent / "benchmarks" / "suite.py"
    if not suite.exists():
        raise SystemExit("knapsack-gpu bench runs benchmarks/suite.py from a source checkout of knapsack_gpu")
    sys.argv = [str(suite), *(["--quick"] if args.quick else []), *rest]
    runpy.run_path(str(suite), run_name="__main__")
    return EXIT_OK


def _number(text: str) -> int | float:
    """--expect: a whole number (compared exactly) or a float (compared within output.EXPECT_TOLERANCE)."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _at_least(low: int):
    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: must be at least {low}")
        return value

    return check


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="knapsack-gpu",
        description="Exact 0/1 knapsack on CUDA or the CPU.",
        epilog="exit codes: 0 solved, 1 an optimum differs from --expect or from the file's own (of any instance "
        "solved), 2 usage error or bad input, 3 out of memory, 130 interrupted",
    )
    parser.add_argument("-V", "--version", action="version", version=f"knapsack-gpu {__version__}")
    sub = parser.add_subparsers(dest="command")

    def instance_command(name: str, help: str):
        """A subcommand that reads an instance file."""
        p = sub.add_parser(name, help=help, epilog=JSON_SCHEMA, formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("file", help="the instance file, or - for standard input")
        p.add_argument("--format", choices=FORMATS, default="auto")
        p.add_argument(
            "--instance",
            metavar="NAME|INDEX",
            default=None,
            help="of a file holding several instances (Pisinger's own files), the one to use: its name or 1-based "
            "index" + (" (default: solve them all, a line each)" if name == "solve" else " (required there)"),
        )
        return p

    def solver_options(p):
        p.add_argument("--device", default="auto", help="auto (CUDA if available), cpu, cuda, cuda:N")
        p.add_argument("--backend", default="auto", choices=["auto", "numpy", "torch", "triton"])
        p.add_argument("--memory-limit", type=parse_bytes, default=None, help="working memory, e.g. 8GB, 512MiB")
        p.add_argument("--dtype", choices=["int32", "int64", "float32", "float64"], default=None)
        p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        p.add_argument("--threads", type=_at_least(1), default=None, help="CPU threads of a dense pass (default: all)")

    p = instance_command("solve", "solve an instance file")
    p.add_argument(
        "--json",
        action="store_true",
        help="print value, selected, weight and stats as JSON (a line each for every instance of a file)",
    )
    p.add_argument(
        "--expect",
        type=_number,
        default=None,
        help="exit 1 unless the optimum is this (whole numbers exactly, floats within a relative 1e-9); default: "
        "the optimum the file states (Pisinger's z), if any",
    )
    solver_options(p)

    p = instance_command("profile", "best value for every capacity")
    p.add_argument("--plot", help="write a PNG/SVG plot here")
    p.add_argument("--csv", help="write capacity,value rows here")
    p.add_argument("--device", default="auto")
    p.add_argument("--backend", default="auto", choices=["auto", "numpy", "torch", "triton"])

    p = instance_command(
        "plan",
        "what a solve would do, stage by stage (no search runs): the states engine's budget and memory, what takes "
        "over, the dense plan's bytes and time",
    )
    p.add_argument(
        "--device",
        default="auto",
        help="the device to plan for: auto (the one solve uses: CUDA if present, else the CPU; the default), cpu, "
        "cuda, cuda:N (need not be present, with --device-memory)",
    )
    p.add_argument(
        "--device-memory",
        type=parse_bytes,
        default=None,
        help="its memory, e.g. 141GB (default: what it has free now, where it is present), for the default limit",
    )
    p.add_argument(
        "--memory-limit",
        type=parse_bytes,
        default=None,
        help="working memory, e.g. 8GB, 512MiB, as solve takes it (default: solve's, a share of the device's free "
        "memory or of --device-memory)",
    )
    p.add_argument("--backend", default="auto", choices=["auto", "numpy", "torch", "triton"])
    p.add_argument("--cell-rate", type=float, default=None, help="cells/s for the estimate (default: from bandwidth)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("demo", help="solve generated instances on the best available device")
    p.add_argument("--n", type=_at_least(1), default=1000, help="items of the second instance (>= 1)")
    p.add_argument("--range", type=_at_least(1), default=2000, help="weights up to this (>= 1)")
    p.add_argument("--seed", type=_at_least(0), default=0)
    solver_options(p)

    p = sub.add_parser(
        "compile",
        help="compile the states engine and the grouped solver now (numba, once per environment: under a minute "
        "on 2 cores) so that no solve waits",
    )
    p.add_argument(
        "--jobs", type=_at_least(1), default=None, help="worker processes (default: one per core; 1: this process)"
    )
    p.add_argument("--first", choices=("i", "f"), default=None, help="the kernels for this kind of values first")
    p.add_argument(
        "--background",
        action="store_true",
        help="as a search starts it: one worker at the lowest priority, quiet, and nothing if another compile runs",
    )

    p = sub.add_parser("bench", help="run the benchmark suite (benchmarks/suite.py)")
    p.add_argument("--quick", action="store_true")
    return parser


def _run(args, rest) -> int:
    if args.command == "solve":
        code = cmd_solve(args)
    elif args.command == "profile":
        code = cmd_profile(args)
    elif args.command == "plan":
        code = cmd_plan(args)
    elif args.command == "demo":
        code = cmd_demo(args)
    elif args.command == "compile":
        code = cmd_compile(args)
    else:
        code = cmd_bench(args, rest)
    sys.stdout.flush()  # a closed pipe shows here, inside main's handler
    return code


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    if rest and args.command != "bench":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        with _Notices():
            return _run(args, rest)
    except KeyboardInterrupt:
        print("\nknapsack-gpu: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `knapsack-gpu solve x | head -1`: the reader has what it wanted. Point stdout at /dev/null so the
        # interpreter's own flush at exit stays quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    # User errors: bad files (FormatError, UnicodeDecodeError are ValueErrors), bad arguments, memory the machine
    # lacks, unreadable files. RuntimeError keeps its traceback: "internal error ..." is a bug to see and report.
    except (ValueError, TypeError, MemoryError, OverflowError, OSError) as exc:
        print(f"knapsack-gpu: error: {str(exc) or type(exc).__name__}", file=sys.stderr)
        return exit_code(exc)


if __name__ == "__main__":
    sys.exit(main())
