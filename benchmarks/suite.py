"""The benchmark suite: every contender on every workload, side by side, each run in its own process.

    python benchmarks/suite.py [--quick] [--large] [--threads 1] [--groups partitioner,seeds,public,kplib10k]
    python benchmarks/suite.py --groups classes,kplib,jooken --contenders ours-numpy,combo --out tmp/combo
    python benchmarks/suite.py --groups public --workloads kplib/ --contenders ours-numpy,ortools-bb --list
    python benchmarks/suite.py --merge benchmarks/results/suite.json benchmarks/results/tmp/mine.json --out suite

Writes benchmarks/results/suite[-quick].json (the run's machine, versions, commit, threads, timestamp; every row),
benchmarks/results/SUITE[-quick].md (the tables) and PNG plots, and prints the tables. Medians of repeats; the same
thread count for every contender; peak memory is each child process's VmHWM. Contenders that cannot fit this
machine's memory (by their own formula), and torch's dense DPs beyond the cell budget, are listed as skipped with the
reason; every solve runs under --timeout (branch and bound under its own shorter limit) and a solve that hits it is
reported as a timeout. Public instances come from --instances, $KNAPSACK_INSTANCES or ../shared/instances; where
none of them is given or found, --quick runs generated stand-ins (workloads.generated) and says so.

The classes, kplib and jooken groups (issue 15) put ours beside Pisinger's combo and minknap (C, from the digneapy
0.2.5 wheel, fetched into $KNAPSACK_BENCH_CACHE or benchmarks/.cache on first use; CPython 3.11 only). Their solves
take milliseconds to minutes whatever n*C says, so each contender's first run is a warm-up when it took at most a
second, else the one timed run. combo reports a value only and times itself: its rows are judged on the value alone
(feasibility unchecked), and the time ratios use its own clock. A contender that exits or crashes is "failed", with
what it printed. A contender whose first median on a workload is under POOL_BELOW_S runs POOL_PROCESSES processes,
in turns with the workload's other contenders, and its repeats are pooled (the VM's slow spells last a process).
"""

from __future__ import annotations

import argparse
import functools
import json
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import provenance  # noqa: E402
import results  # noqa: E402
from child import AUTO_WARMUP_S  # noqa: E402
from contenders import CONTENDERS  # noqa: E402
from workloads import (  # noqa: E402
    GENERATED,
    INSTANCES_VAR,
    classes,
    instances,
    jooken,
    kplib,
    kplib10k,
    load,
    pareto_scale,
    partitioner_scale,
    public,
    seeds_scale,
)

RESULTS = HERE / "results"
EXACT = {
    "ours-numpy",
    "ours-numpy-dense",
    "ours-numpy-lowmem",
    "ours-torch-cpu",
    "ours-cuda-torch",
    "ours-cuda-triton",
    "ortools-dc",
}
EXACT |= {"ortools-bb"}  # its answers count only when it proved them optimal (else: timeout)
EXACT |= {"combo", "minknap"}  # combo's value, having no selection, never sets the optimum others are judged by
# Skipped beyond --cell-budget: their time and memory grow with n*C whatever the instance. Ours is not: its solver
# prunes cells and chooses a plan per instance (issue 10), so --timeout bounds it instead.
DENSE_ONLY = {"torch-dp", "torch-sliding-hirschberg"}
OURS = [
    "ours-numpy",
    "ours-cuda-triton",
    "ours-cuda-torch",
]
GROUP_CONTENDERS = {
    "partitioner": OURS
    + ["ours-dropin", "ours-torch-cpu", "torch-dp", "torch-sliding-hirschberg", "torch-greedy", "scipy-milp"],
    "seeds": OURS
    + ["ours-dropin", "ours-numpy-lowmem", "ours-numpy-f32"]
    + ["torch-dp", "torch-sliding-hirschberg", "torch-greedy", "ortools-dc"],
    "public": OURS + ["ortools-dc", "ortools-bb", "scipy-milp", "torch-sliding-hirschberg", "torch-dp", "torch-greedy"],
    "pareto": ["ours-pareto-knee", "torch-dp-knee"],
    # issue 10's benchmark: ours against the best of OR-Tools (branch and bound, DP) and scipy's MILP
    "kplib10k": ["ours-numpy", "ortools-bb", "ortools-dc", "scipy-milp"],
    # issue 15's: ours against Pisinger's expanding core (combo; minknap, its predecessor)
    "kplib": ["ours-numpy", "combo", "minknap"],
    "classes": ["ours-numpy", "combo", "minknap"],
    "jooken": ["ours-numpy", "combo", "minknap"],
}
# Groups whose solves n*C does not predict: a first run of at most child.AUTO_WARMUP_S is a warm-up, else timed.
AUTO_WARMUP = {"kplib", "classes", "jooken"}
GROUPS = {  # the workloads of each group, from the parsed arguments
    "partitioner": lambda args: partitioner_scale(args.quick),
    "pareto": lambda args: pareto_scale(args.quick),
    "seeds": lambda args: seeds_scale(args.quick, args.large),
    "public": lambda args: public(args.quick, instances(args.instances, generated_ok=args.quick)),
    "kplib10k": lambda args: kplib10k(args.quick, instances(args.instances, generated_ok=args.quick)),
    "kplib": lambda args: kplib(args.quick, instances(args.instances, generated_ok=args.quick)),
    "classes": lambda args: classes(args.quick),
    "jooken": lambda args: jooken(args.quick, instances(args.instances, generated_ok=args.quick)),
}


def copy_bandwidth() -> float:
    """Bytes/s of a 1 GiB numpy copy (read + write counted), best of three: the machine's memory ceiling."""
    import numpy as np

    a = np.ones(1 << 27, dtype=np.float64)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best


def repeats_for(name: str, cells: int, quick: bool, group: str = "") -> int:
    if group in AUTO_WARMUP:
        return 3 if quick else 5  # the child times one run only when the first took over a second
    if CONTENDERS[name].time_limit and cells > 10**8:
        return 1  # branch and bound's time does not follow n*C; one run under its time limit says enough
    if cells <= 10**8:
        return 3 if quick else 5
    if cells <= 10**10:
        return 1 if quick else 3
    return 1


@functools.cache
def _arrays(source: str) -> tuple:
    """A workload's (weights, values, capacity), loaded once for the contenders whose limits need them."""
    return load(json.loads(source))


def skip_reason(name: str, wl: dict, args) -> str | None:
    c = CONTENDERS[name]
    why = c.available()
    if why:
        return why
    cells = wl["n"] * wl["capacity"]
    if c.integer_values_only and wl["source"].get("values") == "float":
        return "integer values only"
    if c.refuses:
        why = c.refuses(*_arrays(json.dumps(wl["source"], sort_keys=True)))
        if why:
            return why
    if c.memory is not None and c.memory(wl["n"], wl["capacity"]) > args.memory_budget:
        return f"out of memory: needs {c.memory(wl['n'], wl['capacity']) / 1e9:.1f} GB by its own formula"
    if name in DENSE_ONLY and cells > args.cell_budget:
        return f"n*C = {cells:.2g} beyond the suite's budget of {args.cell_budget:.2g} cells"
    if name == "torch-sliding-hirschberg" and cells > args.cell_budget / 10:
        return f"n*C = {cells:.2g}: its ~2nC float32 cells exceed a tenth of the budget"
    return None


WARMUP_CELLS = 10**9  # up to here every contender gets one untimed run first; beyond, a warm-up would double hours
SLACK_S = 30  # imports and loading the instance, so that a solver's own time limit fires before the suite's kill
# This VM runs a process at one of two speeds, about 1.8x apart, for tens of milliseconds to a whole process (one
# child's median solve of strongly correlated n = 1,000, R = 1e5: 85 us in one process, 155 us in the next, 87 us
# with its last hundred at 131 us; combo's own clock 28 us, then 42 us): one process's spell decided a
# sub-millisecond row's ratio. Each contender whose first median is under POOL_BELOW_S runs POOL_PROCESSES
# processes, the workload's contenders in turns, and the median is over all their repeats.
POOL_BELOW_S = 0.002
POOL_PROCESSES = 3


def time_limit(name: str, args) -> float:
    """Seconds one solve may take: --timeout, or the contender's own shorter leash (branch and bound)."""
    return min(args.timeout, CONTENDERS[name].time_limit or args.timeout)


def failure(returncode: int, stdout: str, stderr: str) -> dict:
    """A child that exited non-zero or was killed: "out of memory" where it says so, else "failed", with how it
    ended and the last of what it printed (a C solver's exit() message goes to stdout, a traceback to stderr)."""
    if returncode < 0:
        try:
            how = f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"killed by signal {-returncode}"
    else:
        how = f"exit {returncode}"
    printed = [line.strip() for line in (stdout + "\n" + stderr).splitlines() if line.strip()]
    last = printed[-1] if printed else ""
    status = "out of memory" if ("MemoryError" in last or "out of memory" in last.lower()) else "failed"
    tail = " / ".join(printed[-3:])
    tail = tail if len(tail) <= 280 else last[:280]  # a traceback's last line says most: keep it whole, or its start
    return {"status": status, "error": f"{how}: {tail}" if printed else how}


def run_child(name: str, wl: dict, repeats: int, args) -> dict:
    auto = wl["group"] in AUTO_WARMUP
    warmup = auto or wl["n"] * wl["capacity"] <= WARMUP_CELLS
    limit = time_limit(name, args)
    cmd = [sys.executable, str(HERE / "child.py"), name, json.dumps(wl), str(repeats), str(args.threads)]
    cmd += ["auto" if auto else str(int(warmup)), str(limit)]
    # auto: one run of up to `limit`, or a first run of at most a second and `repeats` more like it
    timeout = limit + repeats * 10 * AUTO_WARMUP_S if auto else limit * (repeats + warmup)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + SLACK_S)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout after {limit:g} s"}
    if p.returncode != 0:
        return failure(p.returncode, p.stdout, p.stderr)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out.setdefault("status", "ok")  # a solver stopped at its own limit reports "timeout after ..." itself
    if "seconds" in out:
        out["repeats"] = len(out["seconds"])  # auto warm-up: one timed run where the first was slow
    return out


def pooled(first: dict, more: dict) -> dict:
    """``first`` (a child's output) with another process's run of the same contender on the same workload: the
    repeats and the solver's own clock pooled, the peak memory the larger. A run that failed, or answered another
    value, ends the row as that run did."""
    if more.get("status") != "ok":
        return more
    if more.get("value") != first.get("value"):
        return {
            "status": "failed",
            "error": f"another process answered {more.get('value')}, the first {first.get('value')}",
        }
    out = {**first, "seconds": first["seconds"] + more["seconds"], "processes": first.get("processes", 1) + 1}
    out["repeats"] = len(out["seconds"])
    if first.get("rss_peak") is not None and more.get("rss_peak") is not None:
        out["rss_peak"] = max(first["rss_peak"], more["rss_peak"])
    if first.get("internal_s") and more.get("internal_s"):
        out["internal_s"] = first["internal_s"] + more["internal_s"]
    return out


def short(out: dict) -> bool:
    """Whether a child's run is one the suite pools over POOL_PROCESSES processes (see POOL_BELOW_S)."""
    return out.get("status") == "ok" and bool(out.get("seconds")) and statistics.median(out["seconds"]) < POOL_BELOW_S


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def judge(rows: list[dict], wl: dict) -> None:
    """Mark every run against the optimum: the known one, else the best feasible selection of an exact contender.

    A value-only contender (weight None: combo) is judged on its value; its feasibility stays unknown (feasible:
    None). Its value never sets the optimum, and where it claims more than every checked selection, no one is
    optimal: either it is wrong or the selections are, and nothing here can tell which ("disputed")."""
    ok = [r for r in rows if r["status"] == "ok"]
    if wl["group"] == "pareto":  # the answer is a budget: the knees must agree
        searched = [r for r in ok if (r.get("extra") or {}).get("knee") is not None]
        knees = {r["extra"]["knee"] for r in searched}
        for r in ok:
            if r in searched:
                r["verdict"] = f"knee {r['extra']['knee']:.4g}" + ("" if len(knees) == 1 else " (knees differ)")
            else:  # a plain solver asked for a knee (--contenders): say so rather than crash the run
                r["verdict"] = "no knee: not a knee search"
        return
    optimum, known = wl["optimum"], wl["optimum"] is not None
    claims = [r for r in ok if r["contender"] in EXACT and r["weight"] is None]
    disputed = None
    if not known:
        checked = [r for r in ok if r["contender"] in EXACT and r["weight"] is not None]
        optimum = max((r["value"] for r in checked if r["weight"] <= wl["capacity"]), default=None)
        above = [r["value"] for r in claims if optimum is not None and not _same(r["value"], optimum)]
        disputed = max((x for x in above if x > optimum), default=None)
    for r in ok:
        value_only = r["weight"] is None
        r["feasible"] = None if value_only else r["weight"] <= wl["capacity"]
        if r["feasible"] is False:
            r["verdict"] = f"OVER CAPACITY by {r['weight'] - wl['capacity']}"
        elif optimum is None:
            r["verdict"] = "unchecked"
        elif disputed is not None and value_only and r["value"] > optimum and not _same(r["value"], optimum):
            r["verdict"] = f"disputed: value only, {r['value']} above every checked selection ({optimum})"
        elif disputed is not None and _same(r["value"], optimum):
            who = ", ".join(sorted({c["contender"] for c in claims if c["value"] == disputed}))
            r["verdict"] = f"disputed: {who} claims {disputed} (value only) against this {r['value']}"
        elif _same(r["value"], optimum):
            r["verdict"] = "optimal"
        elif value_only and known and r["value"] > optimum:
            r["verdict"] = f"WRONG: value only, {r['value']} above the known optimum {optimum}"
        else:
            r["verdict"] = f"gap {(optimum - r['value']) / max(1e-300, abs(optimum)):.2e}"
        r["optimum"] = optimum


def summarize(r: dict) -> dict:
    if r["status"] != "ok":
        return r
    r["median_s"] = statistics.median(r["seconds"])
    r["min_s"] = min(r["seconds"])
    if r.get("internal_s"):  # the solver's own clock (combo's milliseconds), beside the suite's wall time
        r["internal_median_s"] = statistics.median(r["internal_s"])
    return r


def merge(paths: list[str], stem: str) -> int:
    """Combine result files into one JSON and one report (see results.merge: every source's runs are kept)."""
    from report import write_report

    runs, rows = results.merge([results.load(p) for p in paths])
    out = RESULTS / stem
    results.save(out.with_suffix(".json"), runs, rows)
    print(write_report(runs, rows, out.parent, out.name))
    return 0


def selection(args, only: list[str] | None) -> list[tuple[str, dict, list[str]]]:
    """(group, workload, contenders) in run order: each group's workloads whose id contains a --workloads part.

    Raises:
        FileNotFoundError: a public group was asked for and the instance folder is missing.
    """
    parts = args.workloads.split(",") if args.workloads else None
    return [
        (group, wl, only or GROUP_CONTENDERS[group])
        for group in args.groups.split(",")
        for wl in GROUPS[group](args)
        if parts is None or any(part in wl["id"] for part in parts)
    ]


def how_long(chosen: list[tuple[str, dict, list[str]]], args, pool: int) -> str:
    """What a run will take, said before it starts: its contender runs, each a fresh process (the start-up of one is
    measured here, imports included), and the most its solves may take (their time limits)."""
    runs = [(name, wl) for _, wl, names in chosen for name in names if not skip_reason(name, wl, args)]
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy, torch, knapsack_gpu.solver"], capture_output=True)
    start = time.perf_counter() - t
    least = len(runs) * start * (1 + (pool - 1) / 2)  # (about half the runs are short enough to pool)
    return (
        f"{len(runs)} contender runs, each in a fresh process that starts in {start:.1f} s here: about "
        f"{least / 60:.0f} min of start-ups, plus the solves (each at most {args.timeout:g} s)"
    )


def print_selection(chosen: list[tuple[str, dict, list[str]]], args) -> None:
    """What a run with these arguments would do, without doing it (--list)."""
    for group, wl, names in chosen:
        for name in names:
            why = skip_reason(name, wl, args)
            repeats = repeats_for(name, wl["n"] * wl["capacity"], args.quick, group)
            plan = f"skip: {why}" if why else f"{repeats} repeat(s), at most {time_limit(name, args):g} s each"
            print(f"{group:<12} {wl['id']:<60} {name:<26} {plan}")
    print(f"{len(chosen)} workloads, {sum(len(names) for *_, names in chosen)} contender runs")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small workloads and few repeats (a few minutes)")
    ap.add_argument("--large", action="store_true", help="also n=2000, C=3.8e8 (the seeds' largest scale)")
    ap.add_argument("--threads", type=int, default=1, help="threads for every contender (default 1)")
    ap.add_argument("--groups", default=",".join(GROUPS), help=f"comma-separated, of: {', '.join(GROUPS)}")
    ap.add_argument("--contenders", default=None, help="contenders to run instead of each group's line-up")
    ap.add_argument("--workloads", default=None, help="comma-separated id substrings to run (e.g. kplib/,_c_1000000_)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per solve (default 900; 60 with --quick)")
    ap.add_argument("--cell-budget", type=float, default=None, help="skip torch's dense DPs above this n*C")
    ap.add_argument(
        "--instances",
        default=None,
        help=f"folder of the public instances (default ${INSTANCES_VAR}, else ../shared/instances)",
    )
    ap.add_argument("--list", action="store_true", help="print the workloads and contenders a run would time, and exit")
    ap.add_argument(
        "--out",
        default=None,
        help="results stem under benchmarks/results/, e.g. tmp/mine (default suite or suite-quick)",
    )
    ap.add_argument("--merge", nargs="+", metavar="JSON", help="only combine earlier result files into --out's report")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.out or "suite")
    args.timeout = args.timeout or (60 if args.quick else 900)
    # 1.3e11: Jooken's hardest c=1e8 instance (1.2e11) fits; kplib's n=1e4 instances (2.5e11, easy for branch and
    # bound, not what torch's dense DPs are for) do not.
    args.cell_budget = args.cell_budget or (5e9 if args.quick else 1.3e11)
    args.memory_budget = int(0.75 * (provenance.memory_total() or 16 << 30))
    stem = args.out or ("suite-quick" if args.quick else "suite")
    # --contenders: exactly these, in this order, even outside a group's usual line-up (e.g. a low-memory run).
    only = args.contenders.split(",") if args.contenders else None
    unknown = set(only or ()) - set(CONTENDERS)
    if unknown:
        ap.error(f"unknown contenders: {', '.join(sorted(unknown))}; known: {', '.join(CONTENDERS)}")
    unknown = set(args.groups.split(",")) - set(GROUPS)
    if unknown:
        ap.error(f"unknown groups: {', '.join(sorted(unknown))}; known: {', '.join(GROUPS)}")
    try:
        chosen = selection(args, only)
    except FileNotFoundError as e:
        ap.error(str(e))
    stand_ins = [wl for _, wl, _ in chosen if wl["id"].startswith(GENERATED + "/")]
    if stand_ins:
        print(
            f"# public instances: none given (--instances, ${INSTANCES_VAR}) and none in ../shared/instances; "
            f"this quick run uses {len(stand_ins)} generated instances in their place (knapsack_gpu.generate, "
            f"seeded; ids {GENERATED}/...)"
        )
    if args.list:
        print_selection(chosen, args)
        return 0
    if not chosen:
        ap.error(f"no workload of groups {args.groups} matches --workloads {args.workloads}")

    runs = [{**provenance.machine(args.threads), "copy_bandwidth_bytes_per_s": copy_bandwidth()}]
    meta = runs[0]
    print(
        f"# {meta['cpu']} ({meta['cores']} cores), gpu: {meta['gpu']}, threads: {args.threads}, "
        f"copy bandwidth {meta['copy_bandwidth_bytes_per_s'] / 1e9:.1f} GB/s, commit {meta['git_commit']}"
    )
    out = RESULTS / stem
    rows = []
    pool = 1 if args.quick else POOL_PROCESSES  # (--quick: one process a run, its few repeats)
    print(f"# {how_long(chosen, args, pool)}", flush=True)
    for group, wl, names in chosen:
        wl_rows, timed = [], {}
        for name in names:
            base = {"workload": wl["id"], "group": group, "n": wl["n"], "capacity": wl["capacity"], "contender": name}
            base = results.stamp(base | ({"class": wl["class"]} if "class" in wl else {}), runs, 0)
            why = skip_reason(name, wl, args)
            if why:
                wl_rows.append({**base, "status": "skipped", "reason": why})
                continue
            repeats = repeats_for(name, wl["n"] * wl["capacity"], args.quick, group)
            timed[name] = (base, repeats, run_child(name, wl, repeats, args))
        for _ in range(pool - 1):  # the short ones again, in turns (see POOL_BELOW_S)
            for name, (base, repeats, got) in timed.items():
                if short(got):
                    timed[name] = (base, repeats, pooled(got, run_child(name, wl, repeats, args)))
        for name, (base, repeats, got) in timed.items():
            r = summarize({**base, "repeats": repeats, **got})
            wl_rows.append(r)
            line = f"{r['median_s']:.4f} s" if r["status"] == "ok" else f"{r['status']} {r.get('error', '')}"[:120]
            if r.get("internal_median_s") is not None:
                line += f" (its own clock {r['internal_median_s']:.4f} s)"
            print(f"{wl['id']:<60} {name:<26} {line}", flush=True)
        wl_rows.sort(key=lambda r: names.index(r["contender"]))  # the line-up's order, skipped ones included
        judge(wl_rows, wl)
        rows.extend(wl_rows)
        results.save(out.with_suffix(".json"), runs, rows)

    from report import write_report

    md = write_report(runs, rows, out.parent, out.name)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
