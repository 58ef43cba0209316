"""One budgeted run on a lent GPU: kernel correctness, copy bandwidth, cell rates, end-to-end solves, the partitioner.

    python3 benchmarks/gpu_check.py                   # on a CUDA machine, within --budget-s (default 420 s)
    python3 benchmarks/gpu_check.py --smoke           # tiny sizes, CPU tensors in Triton's interpreter, no budget

Runs on the device image as it is (Python 3.12, torch 2.11, triton 3.6; the package need not be installed: the
checkout is put on the path). Sections run in order of what a reviewer needs first; one that would start past the
budget is skipped and named, and one that fails is recorded with its error while the rest go on. The smoke run has no
budget unless given one: it checks that every section runs and is right, however long a busy machine takes. Prints a
summary table and writes benchmarks/results/gpu_check.json (device, versions, commit, every number).

Sections: every kernel path (sweep, single item, tiles, all three in one pass) against the numpy pass on the CPU, bit
for bit, in every dtype and mode; the numba kernels compiled (or loaded); solve() on the device against the CPU; the
states engine on CUDA tensors; offsets past 2**31; copy bandwidth and each kernel's cell rate against it; end-to-end
solves (the seeds' n = 2000 at C = 1e4 and W ~ 3.8e8, kplib n = 10,000, Jooken's hardest c = 1e8, and a Jooken c =
1e10 instance where the dry run's estimate fits the budget left) with their launch counts; one torch.compile partitioner
solve with device="auto"; solve_batch's dense DP (its kernel against the torch pass, then B = 100,000 rows of n = 100
end to end, cells per second against the copy bandwidth). Targets (reported, not asserted): single-item kernel >=
70% of the copy bandwidth at C >= 1e8; tiles >= 2x the single-item cell rate for light items; n = 2000, C = 1e4 end
to end <= 2 ms; W ~ 3.8e8 <= 5 s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's package: the device image does not have it installed


SECTIONS = (
    "kernels",
    "numba",
    "solves",
    "offsets",
    "states",
    "partitioner",
    "end to end",
    "profile",
    "bandwidth",
    "batch",
    "throughput",
)
NOT_ASKED = "not run (--only)"


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes on CPU tensors (Triton interpreter)")
    ap.add_argument(
        "--budget-s",
        type=float,
        default=None,
        help="no section starts after this many seconds (default 420; none with --smoke: every section runs)",
    )
    ap.add_argument("--instances", default=None, help="folder of jooken/ and kplib/ (default: ../shared/instances)")
    ap.add_argument("--out", default=str(HERE / "results" / "gpu_check.json"))
    ap.add_argument(
        "--only",
        type=lambda s: {name.replace("-", " ") for name in s.split(",")},
        default=None,
        help="comma-separated sections to run, the rest not run (a rerun inside a short lease): "
        + ",".join(SECTIONS).replace(" ", "-"),
    )
    ap.add_argument(
        "--sections", action="store_true", help="print the sections' names, in the order they run, and exit"
    )
    ap.add_argument(
        "--instance-files",
        action="store_true",
        help="print the instance files the run reads (relative to --instances: copy them beside the checkout for a "
        "device that cannot reach ../shared), and exit",
    )
    args = ap.parse_args()
    if args.sections:
        print("\n".join(name.replace(" ", "-") for name in SECTIONS))
        sys.exit(0)
    if args.only and args.only - set(SECTIONS):
        ap.error(f"--only: no section {sorted(args.only - set(SECTIONS))}; the sections are {', '.join(SECTIONS)}")
    if args.budget_s is None and not args.smoke:
        args.budget_s = 420.0
    return args


ARGS = parse()
if ARGS.smoke:
    os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from provenance import machine  # noqa: E402  (benchmarks/ is on the path: this file runs as a script)

import knapsack_gpu  # noqa: E402
from knapsack_gpu.backends import make_pass  # noqa: E402
from knapsack_gpu.dense.passes.base import BitLayout, Job  # noqa: E402
from knapsack_gpu.dense.passes.triton_pass import kernels  # noqa: E402
from knapsack_gpu.dtypes import numpy_dtype  # noqa: E402
from knapsack_gpu.memory import Meter, Workspace  # noqa: E402
from knapsack_gpu.testing import MODES, pairwise, random_job, run_pass  # noqa: E402

DEV = torch.device("cpu" if ARGS.smoke else "cuda")
K = kernels()
SIZE = {torch.int16: 2, torch.int32: 4, torch.int64: 8, torch.float32: 4, torch.float64: 8}
T0 = time.perf_counter()


def left() -> float:
    """Seconds of the budget left (infinite without one)."""
    return math.inf if ARGS.budget_s is None else ARGS.budget_s - (time.perf_counter() - T0)


def sync() -> None:
    if DEV.type == "cuda":
        torch.cuda.synchronize()


def timed(fn, reps: int = 5) -> float:
    """Median seconds of fn() over ``reps`` synchronised runs after one warm-up."""
    fn()
    times = []
    for _ in range(reps):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


class Paths:
    """Force one kernel path by setting the launch constants, as tests/test_kernels.py does (restored on exit)."""

    SETTINGS = {
        "sweep": {},
        "item": {(K.sweep, "MAX_CELLS"): -1, (K.tile, "HALO_MAX"): -1},
        "tile": {(K.sweep, "MAX_CELLS"): -1},
        "mixed": {(K.sweep, "MAX_CELLS"): 600},
    }

    def __init__(self, name: str):
        self.changes = self.SETTINGS[name]

    def __enter__(self):
        self.saved = {key: getattr(*key) for key in self.changes}
        for (mod, attr), value in self.changes.items():
            setattr(mod, attr, value)

    def __exit__(self, *exc):
        for (mod, attr), value in self.saved.items():
            setattr(mod, attr, value)


def compare(path: str, job: Job, **about) -> dict:
    """One job on one kernel path against the numpy pass on the CPU: profile and decision bits, bit for bit."""
    with Paths(path):
        f1, b1 = run_pass("triton", job, DEV)
    f2, b2 = run_pass("numpy", job, "cpu")
    same = torch.equal(f1.cpu(), f2) and np.array_equal(b1, b2)
    return {"check": "kernel==numpy", "path": path, "m": job.m, "length": job.length, **about, "ok": bool(same)}


def check_kernels(rng) -> list[dict]:
    """Every kernel path against the numpy pass on the CPU, profiles and decision bits, bit for bit: all dtypes, both
    modes, with and without windows, light and heavy weights, and reduced-value jobs (negative values, a ramp cut by
    a floor) in int16 and int32."""
    rows = []
    # smoke: 12 items over 1,500 cells still cross the single-item kernel's blocks and launch every kernel each path
    # can (sweeps, tiles and single items side by side on "mixed"); 40 items tripled the section's time, nothing more.
    sizes = [(9, 65), (12, 1500)] if ARGS.smoke else [(9, 65), (200, 20_000), (64, 3_000_001), (300, 16_000)]
    dtypes = (torch.int32, torch.int64, torch.float32, torch.float64)
    # smoke: every pair of factors rather than every combination, a quarter of the jobs (tests/test_kernels.py runs
    # the full product on the CPU); on the GPU, every combination
    every = [(p, d, c, w) for p, d, (c, w) in itertools.product(Paths.SETTINGS, dtypes, MODES)]
    for path, dtype, cover, windows in pairwise(Paths.SETTINGS, dtypes) if ARGS.smoke else every:
        for m, length in sizes:
            if path == "sweep" and length > 20_000 and not windows:
                continue  # a whole 3e6-cell row per item on one SM: seconds, and no new path
            for max_w in (length // 3, K.tile.HALO_MAX // 4):
                j = random_job(rng, m, length, dtype, cover, max(1, max_w), windows=windows)
                rows.append(compare(path, j, dtype=str(dtype), cover=cover, windows=windows, max_w=max_w))
    for path in Paths.SETTINGS:
        for dtype in (torch.int16, torch.int32):
            for windows in (False, True):
                for m, length in sizes[:2]:
                    j = random_job(rng, m, length, dtype, False, windows=windows, ramp=True)
                    rows.append(compare(path, j, dtype=str(dtype), reduced=True, windows=windows))
    return rows


def warm_jit(rng) -> list[dict]:
    """The states engine's and the grouped solver's numba kernels, compiled or loaded from the cache before any timed
    section: the run's command starts `knapsack-gpu compile` in a second process beside the kernel checks, so this
    mostly waits for it."""
    from knapsack_gpu import grouped, jit

    t = time.perf_counter()
    jit.warm()
    if jit.enabled():
        grouped.warm()
    numba = sys.modules.get("numba")
    return [
        {
            "check": "numba kernels",
            # compiled wherever numba imports (a side environment without it runs the kernels interpreted)
            "ok": jit.enabled() or numba is None,
            "compiled": jit.enabled(),
            "numba": getattr(numba, "__version__", None),
            "seconds": time.perf_counter() - t,
        }
    ]


def check_solves(rng) -> list[dict]:
    """solve(backend="triton") on the device against the CPU numpy solve: value, feasibility, canonical selection."""
    from knapsack_gpu.generate import FAMILIES

    rows = []
    for family in ("uncorrelated", "strongly", "float-values", "flop-values", "subset-sum"):
        for n, R in ((30, 100), (400, 2000)) if not ARGS.smoke else ((12, 30),):
            w, v, cap = FAMILIES[family](rng, n, R=R)
            a = knapsack_gpu.solve(w, v, cap, device=DEV, backend="triton", canonical=True)
            b = knapsack_gpu.solve(w, v, cap, device="cpu", backend="numpy", canonical=True)
            limit = 4 * (cap + 1) * 8 + (1 << 20)
            c = knapsack_gpu.solve(w, v, cap, device=DEV, backend="triton", memory_limit=limit * 3)
            ok = (
                a.value == b.value == c.value
                and a.weight <= cap
                and c.weight <= cap
                and (a.selected == b.selected or v.dtype.kind == "f")
            )
            rows.append(
                {
                    "check": "solve",
                    "family": family,
                    "n": n,
                    "capacity": cap,
                    "ok": bool(ok),
                    "strategies": [a.stats["strategy"], c.stats["strategy"]],
                }
            )
    return rows


def check_states(rng) -> list[dict]:
    """The states engine with device=CUDA as placed by default (on the host with the compiled engine, else torch ops
    from DEVICE_STATES) and on CUDA tensors from the first state, against the CPU run: same optimum, feasible, and
    the time of each, to place the crossover."""
    import knapsack_gpu.states as states
    from knapsack_gpu.generate import FAMILIES

    cases = [("strongly", 300, 1000), ("circle", 1000, 2000)]
    if not ARGS.smoke:
        cases = [
            ("circle", 10000, 10**4),
            ("circle", 10000, 10**5),
            ("spanner-strongly", 10000, 10**4),
            ("almost-strongly", 10000, 10**6),
        ]
    backend = "torch" if ARGS.smoke else "auto"  # the smoke run's torch ops run on CPU tensors
    rows = []
    for family, n, R in cases:
        w, v, cap = FAMILIES[family](rng, n, R, 0.5)
        runs = {}
        for name, device, threshold in (("cpu", "cpu", None), ("device", DEV, None), ("device-all", DEV, 0)):
            saved = states.DEVICE_STATES, states.DEVICE_STATES_COMPILED
            if threshold is not None:
                states.DEVICE_STATES = states.DEVICE_STATES_COMPILED = threshold
            try:
                t = time.perf_counter()
                sol = knapsack_gpu.solve(
                    w, v, cap, device=device, backend="numpy" if name == "cpu" else backend, strategy="states"
                )
                runs[name] = (time.perf_counter() - t, sol)
            finally:
                states.DEVICE_STATES, states.DEVICE_STATES_COMPILED = saved
        values = {k: s.value for k, (_, s) in runs.items()}
        ok = len(set(values.values())) == 1 and all(s.weight <= cap for _, s in runs.values())
        rows.append(
            {
                "check": "states",
                "family": family,
                "n": n,
                "R": R,
                "ok": bool(ok),
                "peak_states": runs["cpu"][1].stats["peak_states"],
                "seconds": {k: t for k, (t, _) in runs.items()},
            }
        )
    return rows


def check_int64_offsets(rng) -> list[dict]:
    """A single-item pass over a profile longer than 2**31: positions past it must be computed in int64."""
    length = (1 << 31) + 4097 if not ARGS.smoke else 5000
    w = length - 3000
    j = Job(np.array([w], dtype=np.int64), np.array([7], dtype=np.int32), length, False, torch.int32)
    f, _ = run_pass("triton", j, DEV, record=False)
    expect_hi = f[w:].min().item() == 7 and f[w:].max().item() == 7
    expect_lo = f[:w].max().item() == 0
    return [{"check": "offsets past 2**31", "length": length, "ok": bool(expect_hi and expect_lo)}]


def copy_bandwidth() -> float:
    n = (1 << 28) if not ARGS.smoke else (1 << 20)
    a = torch.ones(n, dtype=torch.float32, device=DEV)
    b = torch.empty_like(a)
    return 2 * a.numel() * 4 / timed(lambda: b.copy_(a), reps=10)


def throughput(rng, bandwidth: float) -> list[dict]:
    """Cells/s of a pass of 32 items over a whole row (the first weighs C) for C = 1e6..1e9: single-item launches,
    tiles of k = 2..16 light items, and the sweep over narrow windows; four dtypes (int16: reduced values), with and
    without bits."""
    rows = []
    # smoke: 10,000 cells still span two of a tile's blocks (8,192) and ten of the single-item kernel's (1,024)
    caps = [10**6, 10**7, 10**8, 10**9] if not ARGS.smoke else [10_000]
    m = 32 if not ARGS.smoke else 4
    for dtype in (torch.int32, torch.int16, torch.int64, torch.float32):  # int16: reduced values
        for cap in caps:
            if cap == 10**9 and dtype == torch.int64:
                continue  # 8 GB rows: int32 shows the offsets, int64 the bandwidth at 1e8
            for k in (1, 4) if ARGS.smoke else (1, 2, 4, 8, 16):  # smoke: single items and one tile width
                if left() < 0:
                    return rows
                saved = (K.tile.K_MAX, K.sweep.MAX_CELLS)
                K.tile.K_MAX, K.sweep.MAX_CELLS = k, -1
                try:
                    for weights in ("light", "1% of C"):
                        max_w = max(1, K.tile.HALO_MAX // k) if weights == "light" else max(1, cap // 100)
                        if weights == "1% of C" and k > 1:
                            continue  # heavy for tiles: the planner sends them to kernel 1 whatever k is
                        j = random_job(rng, m, cap + 1, dtype, False, max_w, extremes=False)
                        # A first item of weight C: the rest update the whole row, as past the first items of a
                        # solve (light items alone reach only their prefix weight, and time launches, not cells).
                        j.weights[0] = cap
                        for record in (False, True):
                            rows.append(rate(j, dtype, record, f"k={k}", weights, 3 * SIZE[dtype] / k, bandwidth))
                finally:
                    K.tile.K_MAX, K.sweep.MAX_CELLS = saved
        # The sweep: items whose windows (3,000 cells) end at their prefix weight, as a capacity target's windows
        # do, so the cells each item adds to the prefix lie inside its window: one launch. (Windows around half the
        # prefix weight, the first run's, leave those cells far above the window, and an item's launch spans both:
        # 1,650 tile and single-item launches a pass, 1.5-2.4e8 cells/s on the H200.)
        n, width = (4000, 3000) if not ARGS.smoke else (40, 300)
        w = rng.integers(1, width, n)
        v = w + rng.integers(0, 100, n) if dtype != torch.int16 else rng.integers(0, 8, n)  # int16: sums in range
        v = v.astype(numpy_dtype(dtype))
        top = np.cumsum(w)
        j = Job(w, v, int(top[-1]) + 1, False, dtype, window=(top - width, top))
        rows.append(rate(j, dtype, True, "sweep", f"w<{width}", 3 * SIZE[dtype], bandwidth))
    return rows


def rate(j: Job, dtype, record: bool, kernel: str, weights: str, bytes_per_cell: float, bandwidth: float) -> dict:
    ws = Workspace(Meter(1 << 40, DEV))
    p = make_pass("triton", DEV, dtype, ws)
    p.reserve(j.m, j.length)
    bits = p.new_bits(BitLayout.of(j.schedule, j.length)) if record else None
    reps = 1 if ARGS.smoke else 3  # the interpreter's rates mean nothing: the smoke run checks that they are taken
    s = timed(lambda: p.run(j, bits), reps=reps)
    cells = j.schedule.cells
    return {
        "dtype": str(dtype),
        "C": j.length - 1,
        "kernel": kernel,
        "weights": weights,
        "record": record,
        "seconds": s,
        "cells_per_s": cells / s,
        "GB_per_s": cells / s * (bytes_per_cell + (0.125 if record else 0)) / 1e9,
        "of_copy_bandwidth": cells / s * 3 * SIZE[dtype] / bandwidth,
        "launches_per_pass": p.launches // (reps + 1),  # timed() ran it once more, to warm up
    }


def batch_section(rng, bandwidth: float) -> list[dict]:
    """solve_batch's dense DP on the device (kernels/batch.py): one item step of every row against the torch pass,
    bit for bit; solve_batch on the device against the CPU path; then the issue's batch, B = 100,000 rows of
    n = 100 whole-number items (weights up to 1,000, each row's capacity half its weight), end to end, its cells per
    second against the copy bandwidth (a cell moves two reads and a write of its dtype and 1/8 byte of bits)."""
    from knapsack_gpu.dense import batch as dense_batch

    rows = []
    B, n, top = (200, 12, 30) if ARGS.smoke else (2000, 100, 1000)
    W = rng.integers(1, top + 1, (B, n))
    V = rng.integers(1, top + 1, (B, n))
    C = W.sum(axis=1) // 2
    L = int(C.max()) + 1
    src = torch.from_numpy(rng.integers(0, 50, (B, L)).astype(np.int32)).cummax(dim=1).values.to(DEV)
    w, v = torch.from_numpy(W).to(DEV), torch.from_numpy(V.astype(np.int32)).to(DEV)
    bits = [torch.zeros(n, B, -(-L // 32), dtype=torch.int32, device=DEV) for _ in range(2)]
    out = [torch.empty_like(src), torch.empty_like(src)]
    dense_batch.torch_item(src, out[0], bits[0], w, v, 3)
    K.batch_item_update(src, out[1], bits[1], w, v, 3)
    same = torch.equal(out[0], out[1]) and torch.equal(bits[0][3], bits[1][3])
    rows.append({"check": "batch kernel==torch pass", "rows": B, "length": L, "ok": bool(same)})
    got = knapsack_gpu.solve_batch(W, V, C, device=DEV, strategy="dense")
    want = knapsack_gpu.solve_batch(W[:200], V[:200], C[:200], device="cpu", strategy="states")
    ok = np.array_equal(np.asarray(got.value)[:200], np.asarray(want.value))
    rows.append({"check": "dense batch==cpu", "rows": 200, "dense_rows": got.stats["engines"]["dense"], "ok": ok})
    if ARGS.smoke:
        return rows
    del src, out, bits
    B = 100_000
    W = rng.integers(1, 1001, (B, 100))
    V = rng.integers(1, 1001, (B, 100))
    C = W.sum(axis=1) // 2
    knapsack_gpu.solve_batch(W[:1000], V[:1000], C[:1000], device=DEV)  # (warm: the kernel compiled)
    sync()
    t = time.perf_counter()
    res = knapsack_gpu.solve_batch(W, V, C, device=DEV)
    sync()
    s = time.perf_counter() - t
    L = int(C.max()) + 1  # (one chunk's rows are as long as its longest; the stats count the chunks' launches)
    cells = float((C + 1).sum()) * 100
    rows.append(
        {
            "batch": "B=100000 n=100 w<=1000 C=W/2",
            "seconds": s,
            "rows_per_s": B / s,
            "cells_per_s": cells / s,
            "of_copy_bandwidth": cells / s * 3 * 4 / bandwidth,
            "engines": res.stats["engines"],
            "launches": res.stats.get("launches"),
            "max_length": L,
        }
    )
    return rows


NAMED: list[str] = []  # the instance files loaders were made for (--instance-files)
# Jooken n = 1200, c = 1e8, g = 10 whose grouped solve runs a noise DP: timed end to end and profiled
NOISE_DP_CASE = "jooken/n_1200_c_100000000_g_10_f_0.2_eps_1e-05_s_100.in"


def instance_file(rel: str):
    """A loader of (weights, values, capacity) from --instances/``rel``."""
    NAMED.append(rel)

    def load():
        from knapsack_gpu.formats import read_instance

        root = Path(ARGS.instances) if ARGS.instances else HERE.parents[1] / "shared" / "instances"
        inst = read_instance(str(root / rel))
        return np.asarray(inst.weights), np.asarray(inst.values), int(inst.capacity)

    return load


def e2e_cases() -> list[tuple[str, object, str | None]]:
    """(name, loader, strategy) of the end-to-end solves (None: the planner's); instance files come from --instances
    (skipped, named, if absent)."""
    from knapsack_gpu.generate import partitioner

    def generated(n, cap):
        return lambda: partitioner(np.random.default_rng(0), n, cap)

    if ARGS.smoke:
        return [
            ("seeds n=50, C=2e3", generated(50, 2_000), None),
            ("kplib n=1000", instance_file("kplib/" + _kplib_file(1000)), None),
            ("seeds n=50, C=2e3, dense plan", generated(50, 2_000), "dense"),
        ]
    hardest = instance_file("jooken/n_1000_c_100000000_g_10_f_0.1_eps_0.01_s_100.in")
    # the other two of issue 23's three hardest c = 1e8, g = 10, and the one other whose grouped solve runs a noise DP:
    # planned against the forced dense plan
    others = [("n=1200 f=0.2 eps=1e-05", NOISE_DP_CASE),
              ("n=1000 f=0.2 eps=0", "jooken/n_1000_c_100000000_g_10_f_0.2_eps_0_s_300.in"),
              ("n=1200 f=0.3 eps=1e-05", "jooken/n_1200_c_100000000_g_10_f_0.3_eps_1e-05_s_100.in")]  # fmt: skip
    # issue 18: planned for one H200 (int32 reduced values, 80 GB Hirschberg, about 22 s by the dry run)
    c1e10 = instance_file("jooken/n_800_c_10000000000_g_14_f_0.3_eps_1e-05_s_100.in")
    return [
        ("seeds n=2000, C=1e4", generated(2000, 10_000), None),
        ("seeds n=2000, W~3.8e8", generated(2000, 380_000_000), None),
        ("kplib n=10000 " + _kplib_file(10_000).split("_")[0], instance_file("kplib/" + _kplib_file(10_000)), None),
        ("Jooken c=1e8 hardest", hardest, None),
        ("Jooken c=1e10 g=14", c1e10, None),
        # the GPU's own engine on the same two: the planner gives both to the grouped DP on the CPU
        ("Jooken c=1e8 hardest, dense plan", hardest, "dense"),
        *[
            (f"Jooken c=1e8 g=10 {name}{plan}", instance_file(rel), strategy)
            for name, rel in others
            for plan, strategy in (("", None), (", dense plan", "dense"))
        ],  # fmt: skip
        ("Jooken c=1e10 g=14, dense plan", c1e10, "dense"),
    ]


def _kplib_file(n: int) -> str:
    return f"02StronglyCorrelated_n{n:05d}_R10000_s000.kp" if n >= 10_000 else f"00Uncorrelated_n{n:05d}_R10000_s000.kp"


def end_to_end(rng) -> list[dict]:
    rows = []
    for name, load, strategy in e2e_cases():
        if left() < 0:
            rows.append({"case": name, "skipped": "past the budget"})
            continue
        try:
            w, v, cap = load()
        except FileNotFoundError as exc:
            rows.append({"case": name, "skipped": f"instance not found: {exc}"})
            continue
        if cap >= 10**9:  # the largest solves: only where the dry run's estimate leaves room in the budget
            plan = knapsack_gpu.plan_for(w, v, cap, device=DEV, strategy=strategy)
            if not plan.fits or 3 * plan.seconds > left():
                rows.append({"case": name, "skipped": f"the dry run: {plan.as_dict()} against {left():.0f} s left"})
                continue
        # untimed: the CUDA context, this case's kernel variants and numba kernels (a first grouped solve loads its
        # cache, ~1 s, which the H200 run at ba61378 timed as the planned Jooken solve: 1.2 s against 0.06 s warm)
        knapsack_gpu.solve(w, v, cap, device=DEV, strategy=strategy)
        reps = 5 if cap <= 10**7 and len(w) <= 10_000 else 1
        times = []
        for _ in range(reps):
            sync()
            t = time.perf_counter()
            sol = knapsack_gpu.solve(w, v, cap, device=DEV, strategy=strategy)
            sync()
            times.append(time.perf_counter() - t)
        rows.append(
            {
                "case": name,
                "median_s": statistics.median(times),
                "repeats": reps,
                "value": sol.value,
                "stats": sol.stats,
            }
        )
    return rows


def profile_plans(rng) -> list[dict]:
    """Where a plan's time goes: torch.profiler over one solve of the pruned plan (reduced values down to the device's
    narrowest dtype, then down to int16), and one of the forced dense plan (each after an untimed one), with their
    top operations by device and by host self time. The H200 run at e236882 ran the planner's pruned plan of Jooken
    n = 1200, c = 1e8, g = 10 in int16 reduced values at 1.7e10 cells/s where the forced dense int32 plan ran as many
    cells over as many launches at 2.3e11; the item kernel's PTX differs between the two dtypes only in its load and
    store widths, so the time is looked for here rather than guessed."""
    from torch.profiler import ProfilerActivity, profile

    from knapsack_gpu import reduced

    if ARGS.smoke:  # reduced values start at a capacity of 2**20
        from knapsack_gpu.generate import jooken

        w, v, cap = jooken(rng, 30, 2**20 + 5000, 10, 0.2, 1e-5)
    else:
        try:
            w, v, cap = instance_file(NOISE_DP_CASE)()
        except FileNotFoundError as exc:
            return [{"skipped": f"instance not found: {exc}"}]
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEV.type == "cuda" else [])
    backend = "torch" if ARGS.smoke else "auto"
    rows = []
    narrowest = reduced.NARROWEST[DEV.type]
    # the pruned plan as planned (CUDA: int32 since 775d7b1), as it ran at e236882 (int16), the forced dense plan
    for strategy, dtype in (("pruned", narrowest), ("pruned", "int16"), ("dense", narrowest)):
        if left() < 0:
            rows.append({"strategy": strategy, "skipped": "past the budget"})
            continue
        reduced.NARROWEST[DEV.type] = dtype
        try:
            knapsack_gpu.solve(w, v, cap, device=DEV, backend=backend, strategy=strategy)
            with profile(activities=activities) as prof:
                sync()
                t = time.perf_counter()
                sol = knapsack_gpu.solve(w, v, cap, device=DEV, backend=backend, strategy=strategy)
                sync()
                seconds = time.perf_counter() - t
        finally:
            reduced.NARROWEST[DEV.type] = narrowest
        events = prof.key_averages()

        def top(attr: str, events=events) -> list[dict]:
            ranked = sorted(events, key=lambda e: getattr(e, attr, 0), reverse=True)[:12]
            return [
                {
                    "name": e.key,
                    "calls": e.count,
                    "self_device_us": getattr(e, "self_device_time_total", 0),
                    "self_cpu_us": e.self_cpu_time_total,
                }
                for e in ranked
            ]

        st = sol.stats
        rows.append(
            {
                "strategy": st["strategy"],
                "seconds": seconds,
                "dp_seconds": st["dp_seconds"],
                "dtype": st["dtype"],
                "reduced_values": st["reduced_values"],
                "cell_updates": st["cell_updates"],
                "launches": st["launches"],
                "top_device": top("self_device_time_total"),
                "top_cpu": top("self_cpu_time_total"),
            }
        )
    return rows


def partitioner_compile(rng) -> list[dict]:
    """torch.compile of a 4-layer MLP, forward and backward, with knapsack_gpu as the activation-memory solver."""
    import knapsack_gpu.partitioner as kp

    torch.manual_seed(0)
    width = 64 if ARGS.smoke else 1024
    model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(width, width), torch.nn.GELU())]).to(
        DEV
    )
    x = torch.randn(32, width, device=DEV, requires_grad=True)
    t = time.perf_counter()
    with kp.enable(memory_budget=0.5, device="auto") as solver:
        out = torch.compile(model, backend="aot_eager")(x)
        out.sum().backward()
    seconds = time.perf_counter() - t
    call = solver.last_call or {}
    ref = model(x.detach())
    return [
        {
            "check": "partitioner",
            "ok": bool(solver.calls >= 1 and torch.allclose(out, ref, atol=1e-5)),
            "calls": solver.calls,
            "compile_s": seconds,
            "items": len(call.get("memory", [])),
            "solver_device": (call.get("stats") or {}).get("device"),
            "solver_ms": 1e3 * (call.get("stats") or {}).get("seconds", 0.0),
        }
    ]


def run_section(name: str, fn, *args) -> tuple[list[dict], dict]:
    """(rows, status): a section past the budget is skipped, one that raises is recorded, the run goes on."""
    if ARGS.only and name not in ARGS.only:
        return [], {"section": name, "status": NOT_ASKED}
    if left() < 0:
        return [], {"section": name, "status": "skipped: past the budget"}
    t = time.perf_counter()
    try:
        rows = fn(*args)
        status = "ok"
    except Exception as exc:  # one broken section must not cost the rest of a device run
        rows, status = [], f"error: {type(exc).__name__}: {exc}"
        traceback.print_exc()
    return rows, {"section": name, "status": status, "seconds": round(time.perf_counter() - t, 1)}


def main() -> int:
    if ARGS.instance_files:
        e2e_cases()  # the profile section reads one of these too
        print("\n".join(dict.fromkeys(NAMED)))
        return 0
    rng = np.random.default_rng(0)
    meta = {
        **machine(torch.get_num_threads()),  # commit with its dirty mark, versions, timestamp
        "device": torch.cuda.get_device_name(0) if DEV.type == "cuda" else "cpu (Triton interpreter)",
        "smoke": ARGS.smoke,
        "budget_s": ARGS.budget_s,
    }
    sections, checks = [], []
    for name, fn in (
        ("kernels", check_kernels),
        ("numba", warm_jit),
        ("solves", check_solves),
        ("offsets", check_int64_offsets),
        ("states", check_states),
        ("partitioner", partitioner_compile),
    ):
        rows, status = run_section(name, fn, rng)
        checks += rows
        sections.append(status)
    e2e, status = run_section("end to end", end_to_end, rng)  # before the rates: their sizes fill what is left
    sections.append(status)
    prof, status = run_section("profile", profile_plans, rng)
    sections.append(status)
    rows, status = run_section("bandwidth", lambda: [copy_bandwidth()])
    bw = rows[0] if rows else float("nan")
    sections.append(status)
    batch, status = run_section("batch", batch_section, rng, bw)
    checks += [r for r in batch if "check" in r]
    sections.append(status)
    tp, status = run_section("throughput", throughput, rng, bw)
    sections.append(status)
    out = {
        "meta": meta,
        "sections": sections,
        "checks": checks,
        "copy_bandwidth_bytes_per_s": bw,
        "throughput": tp,
        "end_to_end": e2e,
        "profile": prof,
        "batch": [r for r in batch if "check" not in r],
        "seconds": time.perf_counter() - T0,
    }
    Path(ARGS.out).parent.mkdir(parents=True, exist_ok=True)
    Path(ARGS.out).write_text(json.dumps(out, indent=1, default=str))
    bad = [c for c in checks if not c["ok"]]
    failed = [s for s in sections if s["status"] not in ("ok", NOT_ASKED)]
    summary(meta, sections, checks, bad, bw, tp, e2e, prof)
    for r in out["batch"]:
        print(f"batch {r['batch']}: {r['seconds']:.2f} s, {r['cells_per_s']:.3g} cells/s, "
              f"{r['of_copy_bandwidth']:.0%} of the copy bandwidth, {r['engines']}")  # fmt: skip
    print(f"wrote {ARGS.out} in {time.perf_counter() - T0:.0f} s")
    return 1 if bad or failed else 0


def summary(meta, sections, checks, bad, bw, tp, e2e, prof) -> None:
    v = meta["versions"]
    print(
        f"\n== {meta['device']} | python {v['python']}, torch {v['torch']}, triton {v['triton']} | "
        f"commit {meta['git_commit']} =="
    )
    print(f"correctness: {len(checks) - len(bad)}/{len(checks)} checks passed")
    for c in bad:
        print("  FAILED", c)
    for s in sections:
        if s["status"] != "ok":
            print(f"  section {s['section']}: {s['status']}")
    print(f"device copy bandwidth: {bw / 1e9:.0f} GB/s")
    best = {}
    for r in tp:
        key = (r["dtype"], r["kernel"] if r["kernel"] in ("k=1", "sweep") else "tiles", r["record"])
        if r["cells_per_s"] > best.get(key, {"cells_per_s": 0})["cells_per_s"]:
            best[key] = r
    print(f"{'dtype':<14}{'kernel':<8}{'bits':>5}{'best cells/s':>14}{'at C':>8}{'of copy':>9}{'launches':>9}")
    for (dtype, kernel, record), r in sorted(best.items()):
        print(
            f"{dtype:<14}{kernel:<8}{record!s:>5}{r['cells_per_s']:>14.3g}{r['C']:>8.0e}"
            f"{r['of_copy_bandwidth']:>9.0%}{r['launches_per_pass']:>9}"
        )
    for r in e2e:
        if "skipped" in r:
            print(f"end to end {r['case']}: skipped ({r['skipped']})")
            continue
        st = r["stats"]
        print(
            f"end to end {r['case']}: {r['median_s'] * 1e3:.2f} ms median of {r['repeats']} "
            f"({st.get('backend')}, {st.get('strategy')}, {st.get('launches', '-')} launches)"
        )
    for r in prof:
        if "top_device" in r:
            lead = ", ".join(f"{e['name'][:40]} {e['self_device_us'] / 1e3:.0f} ms" for e in r["top_device"][:3])
            print(f"profile {r['strategy']} ({r['dtype']}): {r['seconds']:.3f} s, dp {r['dp_seconds']:.3f} s; {lead}")


if __name__ == "__main__":
    sys.exit(main())
