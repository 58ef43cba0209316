"""One script for a lent GPU: kernel correctness, device copy bandwidth, kernel throughput, end-to-end solves.

    python benchmarks/gpu_check.py            # on a CUDA machine (H200: about 3-5 minutes)
    python benchmarks/gpu_check.py --smoke    # tiny sizes, CPU tensors in Triton's interpreter (tests run this)

Prints a table and writes benchmarks/results/gpu_check.json (device, versions, commit, every number). Targets from
the kernels issue, reported against the measurement, not asserted: single-item kernel >= 70% of the copy bandwidth at
C >= 1e8; multi-item >= 2x the single-item cell rate for light items; n=2000, C=1e4 end to end <= 2 ms; n=2000,
C~3.8e8 <= 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes on CPU tensors (Triton interpreter)")
    ap.add_argument("--out", default=str(HERE / "results" / "gpu_check.json"))
    return ap.parse_args()


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
from knapsack_gpu.memory import Meter, Workspace  # noqa: E402
from knapsack_gpu.testing import random_job, run_pass  # noqa: E402

DEV = torch.device("cpu" if ARGS.smoke else "cuda")
K = kernels()
SIZE = {torch.int32: 4, torch.int64: 8, torch.float32: 4, torch.float64: 8}


def timed(fn, reps: int = 5) -> float:
    """Median seconds of fn() (do_bench on CUDA: warm-up, synchronised, median)."""
    if DEV.type == "cuda":
        import triton.testing

        return triton.testing.do_bench(fn, warmup=2, rep=max(1, reps) * 10, return_mode="median") / 1e3
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def check_kernels(rng) -> list[dict]:
    """Every kernel path against the torch pass, bit for bit, on random jobs, both modes, all dtypes, with and
    without windows."""
    rows = []
    sizes = [(9, 65), (40, 3000)] if ARGS.smoke else [(9, 65), (200, 20_000), (64, 3_000_001), (300, 16_000)]
    for dtype in (torch.int32, torch.int64, torch.float32, torch.float64):
        for cover in (False, True):
            for windows in (False, True):
                for m, length in sizes:
                    for max_w in (length // 3, K.tile.HALO_MAX // 4):
                        j = random_job(rng, m, length, dtype, cover, max(1, max_w), windows=windows)
                        f1, b1 = run_pass("triton", j, DEV)
                        f2, b2 = run_pass("torch", j, DEV)
                        same = torch.equal(f1, f2) and np.array_equal(b1, b2)
                        rows.append(
                            {
                                "check": "kernel==torch",
                                "dtype": str(dtype),
                                "cover": cover,
                                "windows": windows,
                                "m": m,
                                "length": length,
                                "max_w": max_w,
                                "ok": bool(same),
                            }
                        )
    return rows


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
    """The states engine on the device (torch ops once the list reaches DEVICE_STATES, and from the first state)
    against the CPU's numpy run: same optimum, feasible, and the time of each, to place the crossover."""
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
            saved = states.DEVICE_STATES
            if threshold is not None:
                states.DEVICE_STATES = threshold
            try:
                t = time.perf_counter()
                sol = knapsack_gpu.solve(
                    w, v, cap, device=device, backend="numpy" if name == "cpu" else backend, strategy="states"
                )
                runs[name] = (time.perf_counter() - t, sol)
            finally:
                states.DEVICE_STATES = saved
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


def check_int64_offsets() -> dict:
    """A single-item pass over a profile longer than 2**31: positions past it must be computed in int64."""
    length = (1 << 31) + 4097 if not ARGS.smoke else 5000
    w = length - 3000
    j = Job(np.array([w], dtype=np.int64), np.array([7], dtype=np.int32), length, False, torch.int32)
    f, _ = run_pass("triton", j, DEV, record=False)
    expect_hi = f[w:].min().item() == 7 and f[w:].max().item() == 7
    expect_lo = f[:w].max().item() == 0
    return {"check": "offsets past 2**31", "length": length, "ok": bool(expect_hi and expect_lo)}


def copy_bandwidth() -> float:
    n = (1 << 28) if not ARGS.smoke else (1 << 20)
    a = torch.ones(n, dtype=torch.float32, device=DEV)
    b = torch.empty_like(a)
    return 2 * a.numel() * 4 / timed(lambda: b.copy_(a), reps=10)


def throughput(rng, bandwidth: float) -> list[dict]:
    """Cell updates/s of a pass of 32 items for C = 1e6..1e9, k = 1..16 light items per launch, three dtypes."""
    rows = []
    caps = [10**6, 10**7, 10**8, 10**9] if not ARGS.smoke else [20_000]
    m = 32 if not ARGS.smoke else 4
    for dtype in (torch.int32, torch.int64, torch.float32):
        for cap in caps:
            if cap == 10**9 and dtype == torch.int64:
                continue  # 8 GB rows: int32 shows the offsets, int64 the bandwidth at 1e8
            for k in (1, 2, 4, 8, 16):
                saved = (K.tile.K_MAX, K.small.MAX_LENGTH)
                K.tile.K_MAX, K.small.MAX_LENGTH = k, 0
                try:
                    for weights in ("light", "1% of C"):
                        max_w = max(1, K.tile.HALO_MAX // k) if weights == "light" else max(1, cap // 100)
                        if weights == "1% of C" and k > 1:
                            continue  # heavy for tiles: the planner sends them to kernel 1 whatever k is
                        j = random_job(rng, m, cap + 1, dtype, False, max_w, extremes=False)
                        for record in (False, True):
                            ws = Workspace(Meter(1 << 40, DEV))
                            p = make_pass("triton", DEV, dtype, ws)
                            p.reserve(j.m, j.length)
                            bits = p.new_bits(BitLayout.of(j.schedule, j.length)) if record else None
                            s = timed(lambda j=j, p=p, bits=bits: p.run(j, bits), reps=3)
                            cells = j.schedule.cells
                            per_cell = 3 * SIZE[dtype] / (k if weights == "light" else 1) + (0.125 if record else 0)
                            rows.append(
                                {
                                    "dtype": str(dtype),
                                    "C": cap,
                                    "k": k,
                                    "weights": weights,
                                    "record": record,
                                    "seconds": s,
                                    "cells_per_s": cells / s,
                                    "GB_per_s": cells / s * per_cell / 1e9,
                                    "of_copy_bandwidth": cells / s * 3 * SIZE[dtype] / bandwidth,
                                }
                            )
                            del ws, p, bits
                finally:
                    K.tile.K_MAX, K.small.MAX_LENGTH = saved
    return rows


def end_to_end(rng) -> list[dict]:
    from knapsack_gpu.generate import partitioner

    rows = []
    cases = [("n=2000, C=1e4", 2000, 10_000, 20), ("n=2000, C~3.8e8", 2000, 380_000_000, 1)]
    if ARGS.smoke:
        cases = [("smoke", 50, 2_000, 2)]
    for name, n, cap, reps in cases:
        w, v, cap = partitioner(rng, n, cap)
        # Warm-up (CUDA context, Triton compiles) on a cut-down instance of the same kind: same kernels, cheap.
        small = min(cap, 2 * 10**6)
        knapsack_gpu.solve(w[: max(8, n * small // cap)], v[: max(8, n * small // cap)], small, device=DEV)
        times = []
        for _ in range(reps):
            if DEV.type == "cuda":
                torch.cuda.synchronize()
            t = time.perf_counter()
            sol = knapsack_gpu.solve(w, v, cap, device=DEV)
            if DEV.type == "cuda":
                torch.cuda.synchronize()
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


def main() -> int:
    rng = np.random.default_rng(0)
    t0 = time.time()
    meta = {
        **machine(torch.get_num_threads()),  # commit with its dirty mark, versions, timestamp
        "device": torch.cuda.get_device_name(0) if DEV.type == "cuda" else "cpu (Triton interpreter)",
        "smoke": ARGS.smoke,
    }
    checks = check_kernels(rng) + check_solves(rng) + check_states(rng) + [check_int64_offsets()]
    bad = [c for c in checks if not c["ok"]]
    print(f"correctness: {len(checks) - len(bad)}/{len(checks)} checks passed ({time.time() - t0:.0f} s)")
    for c in bad:
        print("  FAILED", c)
    bw = copy_bandwidth()
    print(f"device copy bandwidth: {bw / 1e9:.0f} GB/s")
    tp = throughput(rng, bw)
    print(f"{'dtype':<14}{'C':>12}{'k':>4} {'weights':<9}{'bits':>5}{'cells/s':>12}{'GB/s':>8}{'of copy':>9}")
    for r in tp:
        print(
            f"{r['dtype']:<14}{r['C']:>12.0e}{r['k']:>4} {r['weights']:<9}{r['record']!s:>5}"
            f"{r['cells_per_s']:>12.3g}{r['GB_per_s']:>8.0f}{r['of_copy_bandwidth']:>9.0%}"
        )
    e2e = end_to_end(rng)
    for r in e2e:
        print(
            f"end to end {r['case']}: {r['median_s'] * 1e3:.2f} ms median of {r['repeats']} "
            f"({r['stats']['backend']}, {r['stats']['strategy']})"
        )
    out = {
        "meta": meta,
        "checks": checks,
        "copy_bandwidth_bytes_per_s": bw,
        "throughput": tp,
        "end_to_end": e2e,
        "seconds": time.time() - t0,
    }
    Path(ARGS.out).parent.mkdir(parents=True, exist_ok=True)
    Path(ARGS.out).write_text(json.dumps(out, indent=1, default=str))
    print(f"wrote {ARGS.out} in {time.time() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
