"""Jooken's whole public set (3,240 instances) through ``knapsack_gpu.solve``, one thread, each under a time limit
(issue 50).

    python benchmarks/jooken_sweep.py --set DIR [--limit 60] [--jobs 1] [--only REGEX] [--cells c=1e10,g=14]
    python benchmarks/jooken_sweep.py --report            # the report again from the rows so far, nothing solved
    python benchmarks/jooken_sweep.py --set DIR --verify  # combo's failures solved again by another exact method

DIR is a checkout of https://github.com/JorikJooken/knapsackProblemInstances (problemInstances/<name>/test.in and
optima.csv; -1 there where combo failed), or set KNAPSACK_JOOKEN_SET to it.

How an instance is timed: worker processes take batches of instances (--batch), so imports and numba's cache load
are paid once a batch; each worker first solves a tiny instance and loads every compiled kernel (the warm-up), so no
timed solve pays for them. One thread everywhere: OMP/MKL/OPENBLAS/NUMBA_NUM_THREADS=1 in the worker's environment,
``torch.set_num_threads(1)`` and ``solve(..., threads=1)``. The time is a monotonic clock (``time.perf_counter``)
around ``solve()`` alone (the instance is read before it). An instance that passes the limit has its worker killed
and is recorded as a timeout; one whose worker dies (a signal, an exit) as a crash; one whose solve raises as an
error, with the message; the rest of its batch goes on in a fresh worker. ``--jobs N`` runs N workers side by side:
with more jobs than free cores the times are no longer one-thread times, and the run says so.

Every answer is checked apart from the solver: this script reads the instance file again in plain Python (no
knapsack_gpu code), sums the selected items' weights and profits in Python ints, and requires weight <= capacity,
that sum == the reported value, and == optima.csv's optimum where combo found one; any mismatch is "wrong". Item
indices are 0-based positions in the file's item order (the files' id column is the same number).

Rows go to a JSONL file (--out, default benchmarks/results/tmp/jooken-sweep.jsonl) as they finish; a rerun skips
instances that have a row (--redo solves them again, --retry timeout,crash only those). At the end (and with
--report) it writes, under --results-dir (default benchmarks/results/):

- jooken-sweep.json: the runs' provenance (machine, versions, commit, timestamp, limit, jobs) and every row;
- JOOKEN-SWEEP.md: a table per (n, C, g) cell, the totals, the slowest 20 and every instance not solved;
- jooken-unknown-optima.json: the instances combo failed on: our optimum, its selection, its weight and value
  summed here, and which other exact method confirmed it (--verify), or why none did.

--verify solves each of those again by another exact method, with its own time limit (--verify-limit) and memory
limit (--verify-memory, on the CPU): the expanding-core states engine alone (strategy="states") where the sweep's
answer came from the grouped solver (the grouped solver where it came from the states engine), and the dense DP over
capacities (strategy="pruned": every cell between the bounds, selection by Hirschberg's recursion) on CUDA where
there is one, or on the CPU where n (C + 1) is small enough to finish (never at C = 1e10). Each method confirms the
value (its own selection summed here too), disagrees, or is recorded as "not checked" with the reason. On Jooken's C
= 1e10 instances the states engine alone ran out of 4 GB on the six tried, and of 8 GB on the one tried there (its
MemoryError says how much it wanted), and the dense DP needs at least 79.2 GiB on the GPU (plan_for on two of them:
the planner's Hirschberg minimum, int32 rows over 1e10 + 1 capacities; a forced strategy="dense" plan needs 298 GiB,
and a value-only profile an int64 row of 80 GB and its copy). Given 140 GB of device memory the planner allows
itself 104 GiB and plans 40-60 s a solve: an H200; on an 80 GB H100 it allows 59.6 GiB and the check ends in
MemoryError.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/ (provenance: the standard library only)

from provenance import ONE_THREAD, machine, machine_id  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DEFAULT_OUT = RESULTS / "tmp" / "jooken-sweep.jsonl"
SET_ENV = "KNAPSACK_JOOKEN_SET"
CLONE = "git clone https://github.com/JorikJooken/knapsackProblemInstances"
# A worker may take this long to start and warm up (torch's import and numba's cache load: 2-10 s on the 2-core VM,
# tens of seconds where numba compiles): a hang guard, not a budget.
START_LIMIT_S = 900.0
# The limit is measured here from the worker's "start" message; the worker's own clock decides a finished solve.
GRACE_S = 1.0
# Test hooks (tests/test_bench_jooken_sweep.py): a worker hangs, dies, or raises on instances whose names match.
HOOKS = ("KNAPSACK_SWEEP_TEST_HANG", "KNAPSACK_SWEEP_TEST_CRASH", "KNAPSACK_SWEEP_TEST_RAISE")
# The dense DP check runs on the CPU where n (C + 1) is at most this (tens of seconds at one thread), else only on CUDA.
DENSE_CPU_CELLS = 2 * 10**10
NAME = re.compile(r"n_(\d+)_c_(\d+)_g_(\d+)_f_([0-9.e+-]+)_eps_([0-9.e+-]+)(?:_s_(\d+))?$")
CHECK_KEYS = ("method", "device", "status", "why", "value", "seconds", "strategy", "peak_bytes")
FIELDS = {"n": int, "c": int, "g": int, "f": float, "eps": float, "s": int}


# ----------------------------------------------------------------------------------------------------------------
# The set, its names and the independent check (plain Python: nothing here imports knapsack_gpu, torch or numpy)


def parameters(name: str) -> dict:
    """{"n", "c", "g", "f", "eps", "s"} from a name such as n_1200_c_10000000000_g_14_f_0.1_eps_0.0001_s_200 (None
    for a name that does not parse)."""
    m = NAME.search(name)
    if m is None:
        return dict.fromkeys(FIELDS)
    return {k: (None if v is None else FIELDS[k](v)) for k, v in zip(FIELDS, m.groups(), strict=True)}


def find_set(arg: str | None) -> Path:
    """The set's folder from --set or KNAPSACK_JOOKEN_SET; SystemExit saying how to get it where neither holds it."""
    where = "--set" if arg else SET_ENV
    folder = arg or os.environ.get(SET_ENV)
    if not folder:
        raise SystemExit(
            f"jooken_sweep: no instance set given. Pass --set DIR or set {SET_ENV}=DIR, DIR a checkout of Jooken's "
            f"public set holding problemInstances/ and optima.csv:\n    {CLONE}"
        )
    path = Path(folder).expanduser()
    if not (path / "problemInstances").is_dir():
        raise SystemExit(
            f"jooken_sweep: {path} (from {where}) holds no problemInstances/ folder; it should be a checkout of "
            f"Jooken's public set:\n    {CLONE}"
        )
    return path


def instances(folder: Path) -> dict[str, Path]:
    """Every instance of the set: name -> its test.in."""
    base = folder / "problemInstances"
    return {p.parent.name: p for p in sorted(base.glob("*/test.in"))}


def optima(folder: Path) -> dict[str, int]:
    """optima.csv's optimum per name (-1 where combo failed); empty where the file is missing."""
    path = folder / "optima.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        return {r["name"].strip(): int(r["optimum"]) for r in csv.DictReader(f)}


def read_plain(path: str | Path) -> tuple[list[int], list[int], int]:
    """(profits, weights, capacity) of a Jooken file read with plain Python: n, then n lines "id profit weight",
    then the capacity."""
    tokens = Path(path).read_text().split()
    n = int(tokens[0])
    if len(tokens) != 2 + 3 * n:
        raise ValueError(f"{path}: {len(tokens)} numbers, expected 2 + 3 n = {2 + 3 * n}")
    profits = [int(tokens[2 + 3 * k]) for k in range(n)]
    weights = [int(tokens[3 + 3 * k]) for k in range(n)]
    return profits, weights, int(tokens[1 + 3 * n])


def check_selection(path: str | Path, selected: list[int], reported, optimum: int | None) -> dict:
    """The selection summed from the file apart from the solver: {"weight", "checked_value", "capacity", "status":
    "ok" or "wrong", "message"}. Wrong: repeated or unknown indices, weight over the capacity, a sum other than the
    reported value, or other than a known optimum (optimum None or < 0: unknown)."""
    profits, weights, capacity = read_plain(path)
    out = {"capacity": capacity, "weight": None, "checked_value": None, "status": "ok", "message": None}
    if len(set(selected)) != len(selected) or any(not (0 <= i < len(weights)) for i in selected):
        return out | {"status": "wrong", "message": "the selection repeats items or names items not in the file"}
    weight, value = sum(weights[i] for i in selected), sum(profits[i] for i in selected)
    out |= {"weight": weight, "checked_value": value}
    problems = []
    if weight > capacity:
        problems.append(f"weight {weight} is over the capacity {capacity}")
    if value != reported:
        problems.append(f"the selection is worth {value}, the solver reported {reported}")
    if optimum is not None and optimum >= 0 and value != optimum:
        problems.append(f"the selection is worth {value}, optima.csv's optimum is {optimum}")
    if problems:
        out |= {"status": "wrong", "message": "; ".join(problems)}
    return out


def parse_cells(specs: list[str] | None) -> list[dict]:
    """--cells "c=1e10,g=14" (several: separated by ';' or the flag repeated) as [{"c": 10**10, "g": 14}]."""
    cells = []
    for spec in specs or []:
        for part in filter(None, (p.strip() for p in spec.split(";"))):
            cell = {}
            for item in part.split(","):
                key, _, value = item.partition("=")
                key = key.strip()
                if key not in FIELDS or not value.strip():
                    raise SystemExit(f"--cells {part!r}: expected KEY=VALUE pairs, KEY one of {', '.join(FIELDS)}")
                cell[key] = int(float(value)) if FIELDS[key] is int else float(value)
            cells.append(cell)
    return cells


def selected_names(names, only: str | None, cells: list[dict]) -> list[str]:
    pattern = re.compile(only) if only else None
    keep = []
    for name in names:
        if pattern is not None and not pattern.search(name):
            continue
        p = parameters(name)
        if cells and not any(all(p[k] == v for k, v in cell.items()) for cell in cells):
            continue
        keep.append(name)
    return keep


def parse_bytes(text: str) -> int:
    """Bytes from "8GB", "8GiB", "512MiB", "8e9" or "8589934592"."""
    m = re.fullmatch(r"\s*([0-9.e+]+)\s*([kmgt]?)(i?)b?\s*", text.lower())
    if m is None:
        raise argparse.ArgumentTypeError(f"{text!r}: give bytes as e.g. 8GB, 8GiB or 8589934592")
    scale = (1024 if m.group(3) else 1000) ** "_kmgt".index(m.group(2) or "_")
    return int(float(m.group(1)) * scale)


# ----------------------------------------------------------------------------------------------------------------
# The worker: one process, a batch of tasks from stdin, one JSON event a line on its own copy of stdout


def _hooked(name: str) -> None:
    """The test hooks: hang, die by SIGKILL, or raise where the instance's name matches the variable's regex."""
    if re.search(os.environ.get("KNAPSACK_SWEEP_TEST_HANG") or "$^", name):
        time.sleep(10**6)
    if re.search(os.environ.get("KNAPSACK_SWEEP_TEST_CRASH") or "$^", name):
        os.kill(os.getpid(), signal.SIGKILL)
    if re.search(os.environ.get("KNAPSACK_SWEEP_TEST_RAISE") or "$^", name):
        raise RuntimeError("test hook: KNAPSACK_SWEEP_TEST_RAISE")


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:  # "5": reset VmHWM to the current resident set
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss() -> int | None:
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None


def worker_main() -> int:
    """Solve the tasks on stdin (one JSON object a line) in order; events go to the stdout this process started
    with, anything the solver prints to stderr."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints cannot break the protocol

    def send(event: dict) -> None:
        proto.write(json.dumps(event) + "\n")
        proto.flush()

    tasks = [json.loads(line) for line in sys.stdin if line.strip()]
    t0 = time.perf_counter()
    import torch

    torch.set_num_threads(1)
    import knapsack_gpu
    from knapsack_gpu.formats import read_instance

    try:  # every compiled kernel loaded now, so that no timed solve loads one (knapsack-gpu compile does the same)
        from knapsack_gpu import grouped, jit

        jit.warm("i")
        grouped.warm()
    except (ImportError, AttributeError):
        pass
    knapsack_gpu.solve([3, 4, 5], [30, 50, 60], 8, device="cpu", threads=1)
    if any(t.get("device", "cpu").startswith("cuda") for t in tasks):
        knapsack_gpu.solve([3, 4, 5], [30, 50, 60], 8, device="cuda", strategy="pruned")
        torch.cuda.synchronize()
    send({"event": "ready", "pid": os.getpid(), "warmup_s": time.perf_counter() - t0})
    for k, task in enumerate(tasks):
        name = task["name"]
        try:
            fi = read_instance(task["path"], "jooken")
        except Exception as e:  # noqa: BLE001 (recorded as the instance's error, and the batch goes on)
            send({"event": "done", "name": name, "status": "error", "message": f"reading: {type(e).__name__}: {e}"})
            continue
        method = task.get("method") or "auto"
        kwargs = {"device": task.get("device", "cpu"), "threads": 1, "memory_limit": task.get("memory_limit")}
        kwargs["strategy"] = "auto" if method == "auto" else method
        resets = _reset_peak_rss()
        send({"event": "start", "name": name})
        t = time.perf_counter()
        try:
            _hooked(name)
            if method == SPLIT:
                sol = other_split(fi.weights, fi.values, fi.capacity)
            else:
                sol = knapsack_gpu.solve(fi.weights, fi.values, fi.capacity, **kwargs)
            if kwargs["device"].startswith("cuda"):
                torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 (an error row: what the solver raised)
            seconds = time.perf_counter() - t
            send({"event": "done", "name": name, "status": "error", "message": f"{type(e).__name__}: {e}",
                  "seconds": seconds, "solves_before": k})  # fmt: skip
            continue
        seconds = time.perf_counter() - t
        stats = sol.stats
        send(
            {
                "event": "done",
                "name": name,
                "status": "solved",
                "seconds": seconds,
                "value": int(sol.value),
                "selected": sol.selected,
                "strategy": stats.get("strategy"),
                "plan_reason": stats.get("plan_reason"),
                "peak_bytes": stats.get("peak_bytes"),
                "rss_peak_bytes": _peak_rss() if resets else None,
                "solves_before": k,
            }
        )
    return 0


# ----------------------------------------------------------------------------------------------------------------
# Running batches in workers, with limits


class Fatal(RuntimeError):
    """A worker that cannot start: every instance would fail the same way."""


class Worker:
    """A worker process on a list of tasks; its events arrive through a reader thread."""

    live: set[Worker] = set()
    lock = threading.Lock()

    def __init__(self, tasks: list[dict], env: dict) -> None:
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            env=env,
            text=True,
            start_new_session=True,  # its own process group: a kill reaches anything it started
        )
        with Worker.lock:
            Worker.live.add(self)
        self.events: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._write, args=(tasks,), daemon=True).start()

    def _write(self, tasks: list[dict]) -> None:
        try:
            self.proc.stdin.write("".join(json.dumps(t) + "\n" for t in tasks))
            self.proc.stdin.close()
        except OSError:  # it died first: the reader sees the end of its output
            pass

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self.events.put(json.loads(line))
            except json.JSONDecodeError:
                continue
        self.events.put(None)

    def next(self, timeout: float) -> dict | None | str:
        """The next event; None when the worker's output ended (it died or finished); "timeout" past `timeout` s."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return "timeout"

    def how_it_ended(self) -> str:
        """How it ended ("killed by SIGKILL", "exit code 3") and the end of its stderr."""
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        self.err.seek(0)
        tail = self.err.read()[-600:].strip()
        what = f"killed by {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
        return what + (f"; stderr: ...{tail}" if tail else "")

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        self.err.close()
        with Worker.lock:
            Worker.live.discard(self)


def worker_env() -> dict:
    env = {**os.environ, **ONE_THREAD}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("KNAPSACK_GPU_STRATEGY", None)  # the task names its strategy
    return env


def run_batch(tasks: list[dict], limit: float, on_result, stop: threading.Event) -> None:
    """Each task through a worker; `on_result(task, result)` for each, result the worker's "done" event or a
    timeout / crash / error of this script's making. A fresh worker takes the rest after a timeout or a crash."""
    pending = list(tasks)
    env = worker_env()
    while pending and not stop.is_set():
        worker = Worker(pending, env)
        try:
            ready = worker.next(START_LIMIT_S)
            if not isinstance(ready, dict) or ready.get("event") != "ready":
                raise Fatal(f"a worker did not start ({'hung' if ready == 'timeout' else worker.how_it_ended()})")
            while pending and not stop.is_set():
                task = pending[0]
                event = worker.next(START_LIMIT_S)
                if isinstance(event, dict) and event.get("event") == "start":
                    event = worker.next(limit + GRACE_S)
                    started = True
                else:
                    started = False
                pending.pop(0)
                if event == "timeout":
                    worker.kill()
                    what = f"over the {limit:g} s limit: the worker was killed" if started else "hung before solving"
                    on_result(task, {"status": "timeout" if started else "crash", "message": what, "seconds": None})
                    break
                if event is None:
                    on_result(task, {"status": "crash", "message": worker.how_it_ended(), "seconds": None})
                    break
                on_result(task, event)
        finally:
            worker.close()


def run_all(batches: list[list[dict]], jobs: int, limit: float, on_result) -> None:
    """The batches on `jobs` workers side by side."""
    todo: queue.Queue = queue.Queue()
    for b in batches:
        todo.put(b)
    stop = threading.Event()
    failures: list[BaseException] = []

    def slot() -> None:
        while not stop.is_set():
            try:
                batch = todo.get_nowait()
            except queue.Empty:
                return
            try:
                run_batch(batch, limit, on_result, stop)
            except BaseException as e:  # noqa: BLE001 (handed to the main thread, which raises it)
                failures.append(e)
                stop.set()

    threads = [threading.Thread(target=slot, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        stop.set()
        with Worker.lock:
            live = list(Worker.live)
        for w in live:
            w.kill()
        raise
    if failures:
        raise failures[0]


# ----------------------------------------------------------------------------------------------------------------
# The rows file


def load_jsonl(path: Path) -> tuple[list[dict], dict[str, dict], dict[tuple[str, str], dict]]:
    """(runs, the last sweep row of each instance, the last verify row of each (instance, method))."""
    runs, rows, checks = [], {}, {}
    if not path.exists():
        return runs, rows, checks
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by a kill: that instance is simply not done
                continue
            kind = r.pop("kind", None)
            if kind == "run":
                runs.append(r)
            elif kind == "row":
                rows[r["name"]] = r
            elif kind == "verify":
                checks[r["name"], r["method"]] = r
    return runs, rows, checks


class Appender:
    """Lines appended to the JSONL file, flushed at once, from any thread."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.f = open(path, "a")
        self.lock = threading.Lock()

    def write(self, record: dict) -> None:
        with self.lock:
            self.f.write(json.dumps(record) + "\n")
            self.f.flush()

    def close(self) -> None:
        self.f.close()


def free_cores() -> tuple[int, float]:
    """(cores this process may use, the 1-minute load average)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores, os.getloadavg()[0]


def new_run(out: Appender, runs: list[dict], args, folder: Path | None, size: int | None, mode: str) -> int:

    cores, load = free_cores()
    info = machine(threads=1)
    set_commit = None
    if folder is not None:
        p = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True)
        set_commit = p.stdout.strip() if p.returncode == 0 else None
    info |= {
        "mode": mode,
        "limit_s": args.verify_limit if mode == "verify" else args.limit,
        "jobs": args.jobs,
        "batch": args.batch,
        "memory_limit": args.verify_memory if mode == "verify" else args.memory,
        "strategy": args.strategy,
        "usable_cores": cores,
        "load_average": round(load, 2),
        "one_thread_times": args.jobs <= max(1, cores - round(load)),
        "set": str(folder) if folder else None,
        "set_commit": set_commit,
        "set_size": size,
    }
    index = max((r["index"] for r in runs), default=-1) + 1
    info["index"] = index
    out.write({"kind": "run", **info})
    runs.append(info)
    return index


def jobs_note(jobs: int) -> str | None:
    cores, load = free_cores()
    free = max(1, cores - round(load))
    if jobs > free:
        return (
            f"--jobs {jobs} with about {free} free core(s) ({cores} usable, load average {load:.1f}): the workers "
            "share cores, so these times are not one-thread times"
        )
    return None


# ----------------------------------------------------------------------------------------------------------------
# The sweep


def sweep(args) -> int:
    folder = find_set(args.set)
    files = instances(folder)
    if not files:
        raise SystemExit(f"jooken_sweep: no problemInstances/*/test.in under {folder}; expected a checkout of:\n"
                         f"    {CLONE}")  # fmt: skip
    known = optima(folder)
    if not known:
        print(f"jooken_sweep: no optima.csv in {folder}: no answer is compared with combo's", file=sys.stderr)
    out_path = Path(args.out)
    runs, rows, _ = load_jsonl(out_path)
    names = selected_names(files, args.only, parse_cells(args.cells))
    retry = set(filter(None, (args.retry or "").split(",")))
    todo = [n for n in names if args.redo or n not in rows or rows[n]["status"] in retry]
    print(
        f"jooken_sweep: {len(names)} of {len(files)} instances selected, {len(names) - len(todo)} already in "
        f"{out_path}, {len(todo)} to solve (limit {args.limit:g} s, {args.jobs} job(s), one thread each)"
    )
    note = jobs_note(args.jobs)
    if note:
        print(f"jooken_sweep: note: {note}")
    if todo:
        out = Appender(out_path)
        try:
            run = new_run(out, runs, args, folder, len(files), "sweep")
            if args.jobs > 1:  # numba compiles (or loads) once here, not in every worker at the same time
                subprocess.run([sys.executable, "-m", "knapsack_gpu", "compile"], cwd=ROOT, env=worker_env())
            tasks = [
                {"name": n, "path": str(files[n]), "method": args.strategy, "device": "cpu",
                 "memory_limit": args.memory}
                for n in todo
            ]  # fmt: skip
            batches = [tasks[i : i + args.batch] for i in range(0, len(tasks), args.batch)]
            done = [0]

            def on_result(task: dict, result: dict) -> None:
                row = make_row(task, result, files, known, args.limit, run)
                out.write({"kind": "row", **row})
                done[0] += 1
                secs = "" if row["seconds"] is None else f" {row['seconds']:.3f} s"
                extra = f" ({row['message']})" if row.get("message") else ""
                print(f"[{done[0]}/{len(todo)}] {row['name']}: {row['status']}{secs} {row.get('strategy') or ''}"
                      f"{extra}", flush=True)  # fmt: skip

            run_all(batches, args.jobs, args.limit, on_result)
        except Fatal as e:
            raise SystemExit(f"jooken_sweep: {e}") from None
        finally:
            out.close()
    if not args.no_report:
        report(out_path, Path(args.results_dir))
    return 0


def make_row(task: dict, result: dict, files: dict[str, Path], known: dict[str, int], limit: float, run: int) -> dict:
    """A sweep row from a worker's result, its selection checked here."""
    name = task["name"]
    optimum = known.get(name)
    unknown = optimum is None or optimum < 0
    row = {"name": name, **parameters(name), "status": result["status"], "message": result.get("message"),
           "seconds": result.get("seconds"), "strategy": result.get("strategy"), "value": result.get("value"),
           "optimum": optimum, "weight": None, "checked_value": None, "capacity": None,
           "peak_bytes": result.get("peak_bytes"), "rss_peak_bytes": result.get("rss_peak_bytes"),
           "plan_reason": result.get("plan_reason"), "solves_before": result.get("solves_before"),
           "limit_s": limit, "run": run}  # fmt: skip
    if result["status"] == "solved":
        check = check_selection(files[name], result["selected"], result["value"], optimum)
        row |= {k: check[k] for k in ("weight", "checked_value", "capacity")}
        row["status"], row["message"] = check["status"], check["message"]
        if row["status"] == "ok" and result["seconds"] > limit:
            row["status"], row["message"] = "timeout", f"finished in {result['seconds']:.2f} s, past the limit"
        if unknown or row["status"] == "wrong":
            row["selected"] = result["selected"]
    return row


# ----------------------------------------------------------------------------------------------------------------
# The independent check of combo's failures


# A cross-check, not an independent method: the grouped solver again on another split of the items (each group's
# lightest weight as its base instead of the affine fit that halves: other partial sums, stages up to 3e7 of them,
# other walks and bounds; the same decomposition, so a shared error in it would pass).
SPLIT = "grouped-split"
METHODS = ("states", "grouped", "pruned", SPLIT)


def other_split(weights, values, capacity):
    """The grouped solver's optimum and selection on the split without the halving fit, as a Solution-like
    object (the worker reads value, selected and stats)."""
    from types import SimpleNamespace

    import numpy as np

    from knapsack_gpu import grouped

    w, v = np.asarray(weights, dtype=np.int64), np.asarray(values, dtype=np.int64)
    split = grouped.detect(w, v, capacity, halving=False)
    if split is None:
        raise ValueError("no groups on this split")
    st = grouped.GroupedStats()
    value, selected = grouped.solve(w, v, capacity, groups=split, stats=st)
    reason = f"{len(split.members)} groups on their lightest weights, stages up to {max(st.stage_sizes)} sums"
    stats = {"strategy": SPLIT, "plan_reason": reason, "peak_bytes": grouped.peak_bytes(split, st)}
    return SimpleNamespace(value=value, selected=selected, stats=stats)


def verify_methods(row: dict, cuda: bool, wanted=METHODS) -> list[tuple[str, str | None, str | None]]:
    """(method, device, or None and why it is not run) for a solved row, of those ``wanted``: the other engine, the
    dense DP ("pruned") and, where the grouped solver answered, it again on another split (:data:`SPLIT`). A method
    is the strategy solve() is given."""
    other = "grouped" if row.get("strategy") == "states" else "states"
    methods = [(other, "cpu", None)] if other in wanted else []
    if row.get("strategy") == "grouped" and SPLIT in wanted:
        methods.append((SPLIT, "cpu", None))
    if "pruned" not in wanted:
        return methods
    cells = (row["n"] or 0) * ((row["capacity"] or row["c"] or 0) + 1)
    if cuda:
        methods.append(("pruned", "cuda", None))
    elif cells <= DENSE_CPU_CELLS:
        methods.append(("pruned", "cpu", None))
    else:
        methods.append(("pruned", None, f"no CUDA device here, and n (C + 1) = {cells:.1e} cell updates on one CPU "
                                       "thread would take hours"))  # fmt: skip
    return methods


def verify(args) -> int:
    folder = find_set(args.set)
    files = instances(folder)
    out_path = Path(args.out)
    runs, rows, checks = load_jsonl(out_path)
    names = set(selected_names(rows, args.only, parse_cells(args.cells)))
    targets = [r for n, r in sorted(rows.items()) if n in names and (r["optimum"] is None or r["optimum"] < 0)]
    import torch

    cuda = torch.cuda.is_available()
    wanted = tuple(m.strip() for m in args.verify_methods.split(","))
    if not set(wanted) <= set(METHODS):
        raise SystemExit(f"jooken_sweep: --verify-methods takes {', '.join(METHODS)}; got {args.verify_methods!r}")
    out = Appender(out_path)
    try:
        run = new_run(out, runs, args, folder, len(files), "verify")
        tasks = []
        for r in targets:
            if r["status"] != "ok":
                for method, _, _ in verify_methods(r, cuda, wanted):
                    if args.redo or (r["name"], method) not in checks:
                        out.write({"kind": "verify", "name": r["name"], "method": method, "status": "not checked",
                                   "why": f"the sweep did not solve it ({r['status']})", "run": run})  # fmt: skip
                continue
            for method, device, why in verify_methods(r, cuda, wanted):
                if not args.redo and (r["name"], method) in checks:
                    continue
                if why:
                    out.write({"kind": "verify", "name": r["name"], "method": method, "status": "not checked",
                               "why": why, "run": run})  # fmt: skip
                    print(f"{r['name']} by {method}: not checked ({why})")
                    continue
                memory = None if device == "cuda" else args.verify_memory
                tasks.append({"name": r["name"], "path": str(files[r["name"]]), "method": method, "device": device,
                              "memory_limit": memory})  # fmt: skip
        print(
            f"jooken_sweep --verify: {len(targets)} instances combo failed on, {len(tasks)} checks to run "
            f"(limit {args.verify_limit:g} s each, memory {args.verify_memory} bytes on the CPU; CUDA: {cuda})"
        )

        def on_result(task: dict, result: dict) -> None:
            row = rows[task["name"]]
            rec = {"name": task["name"], "method": task["method"], "device": task["device"],
                   "seconds": result.get("seconds"), "strategy": result.get("strategy"),
                   "value": result.get("value"), "peak_bytes": result.get("peak_bytes"), "run": run}  # fmt: skip
            if result["status"] == "solved":
                check = check_selection(files[task["name"]], result["selected"], result["value"], None)
                if check["status"] != "ok":
                    rec |= {"status": "disagrees", "why": f"its own selection: {check['message']}"}
                elif result["value"] == row["value"]:
                    rec |= {"status": "confirmed", "why": None}
                else:
                    rec |= {"status": "disagrees", "why": f"it found {result['value']}, the sweep {row['value']}"}
            else:
                rec |= {"status": "not checked", "why": f"{result['status']}: {result.get('message')}"}
            out.write({"kind": "verify", **rec})
            print(f"{task['name']} by {task['method']}: {rec['status']}"
                  + (f" ({rec['why']})" if rec["why"] else f" in {rec['seconds']:.2f} s"), flush=True)  # fmt: skip

        by_device = defaultdict(list)
        for t in tasks:
            by_device[t["device"]].append(t)
        batches = [ts[i : i + args.batch] for ts in by_device.values() for i in range(0, len(ts), args.batch)]
        run_all(batches, 1 if cuda else args.jobs, args.verify_limit, on_result)
    except Fatal as e:
        raise SystemExit(f"jooken_sweep: {e}") from None
    finally:
        out.close()
    if not args.no_report:
        report(out_path, Path(args.results_dir))
    return 0


# ----------------------------------------------------------------------------------------------------------------
# The report


def quantile(xs: list[float], q: float) -> float | None:
    """The nearest-rank q-quantile (None for no values)."""
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, -(-int(q * 1000) * len(s) // 1000) - 1))]


def _s(x: float | None) -> str:
    return "" if x is None else f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _mib(x: int | None) -> str:
    return "" if x is None else f"{x / 2**20:.1f}" if x < 10 * 2**20 else f"{x / 2**20:.0f}"


def _c(c: int | None) -> str:
    return "?" if c is None else f"1e{len(str(c)) - 1}" if str(c).strip("0") == "1" else str(c)


def unknown_optima(rows: dict[str, dict], checks: dict[tuple[str, str], dict]) -> list[dict]:
    """combo's failures: our optimum, selection, its sums, and the other methods' checks."""
    out = []
    for name, r in sorted(rows.items()):
        if r["optimum"] is not None and r["optimum"] >= 0:
            continue
        mine = [c for (n, _), c in sorted(checks.items()) if n == name]
        confirmed = [c["method"] for c in mine if c["status"] == "confirmed"]
        if confirmed:
            checked_by = confirmed
        elif mine:
            checked_by = "not checked: " + "; ".join(f"{c['method']}: {c['why']}" for c in mine)
        else:
            checked_by = "not checked: the --verify pass has not run on it"
        out.append(
            {
                "name": name,
                "status": r["status"],
                "optimum": r["checked_value"] if r["status"] == "ok" else None,
                "capacity": r["capacity"],
                "weight": r["weight"],
                "value": r["checked_value"],
                "selected": r.get("selected"),
                "seconds": r["seconds"],
                "strategy": r["strategy"],
                "checked_by": checked_by,
                "checks": [{k: c.get(k) for k in CHECK_KEYS} for c in mine],
            }
        )
    return out


def report(jsonl: Path, results_dir: Path) -> dict:
    """Write jooken-sweep.json, JOOKEN-SWEEP.md and jooken-unknown-optima.json from the rows file; returns the
    summary."""

    runs, rows, checks = load_jsonl(jsonl)
    if not rows:
        raise SystemExit(f"jooken_sweep: no rows in {jsonl}: run the sweep first (--set DIR)")
    by_index = {r["index"]: r for r in runs}
    stamped = []
    for name in sorted(rows):
        r = dict(rows[name])
        run = by_index.get(r.get("run"), {})
        r["commit"], r["machine"] = run.get("git_commit"), machine_id(run) if run else None
        stamped.append(r)
    ok = [r for r in stamped if r["status"] == "ok"]
    statuses = Counter(r["status"] for r in stamped)
    seconds = [r["seconds"] for r in ok]
    set_size = max((r.get("set_size") or 0 for r in runs if r.get("mode") == "sweep"), default=0) or None
    summary = {
        "instances": len(stamped),
        "set_size": set_size,
        "statuses": dict(statuses),
        "solved": len(ok),
        "median_s": quantile(seconds, 0.5),
        "p90_s": quantile(seconds, 0.9),
        "max_s": max(seconds, default=None),
        "total_s": sum(seconds),
        "strategies": dict(Counter(r["strategy"] for r in ok)),
    }
    unknown = unknown_optima(rows, checks)
    results_dir.mkdir(parents=True, exist_ok=True)
    runs_out = [{k: v for k, v in r.items()} for r in runs]
    (results_dir / "jooken-sweep.json").write_text(
        json.dumps({"runs": runs_out, "summary": summary, "rows": stamped}, indent=1) + "\n"
    )
    (results_dir / "jooken-unknown-optima.json").write_text(
        json.dumps(
            {
                "about": "Jooken's instances whose optimum combo never found (optima.csv: -1), solved by "
                "knapsack_gpu.solve: each optimum with its selection (0-based item positions, the files' id "
                "column), its weight and value summed from the instance file apart from the solver, and "
                "checked_by: the other exact methods that found the same value (--verify), or why none did",
                "runs": runs_out,
                "instances": unknown,
            },
            indent=1,
        )
        + "\n"
    )
    (results_dir / "JOOKEN-SWEEP.md").write_text(markdown(runs, stamped, summary, unknown))
    return summary


def markdown(runs: list[dict], rows: list[dict], summary: dict, unknown: list[dict]) -> str:
    limits = sorted({r["limit_s"] for r in rows if r.get("limit_s") is not None})
    ok = [r for r in rows if r["status"] == "ok"]
    md = [
        "# Jooken's public set, swept instance by instance",
        "",
        f"{summary['instances']} instances"
        + (f" of the set's {summary['set_size']}" if summary["set_size"] else "")
        + f", each solved by `knapsack_gpu.solve` on one thread (torch, numba and BLAS pinned to 1) under a time "
        f"limit of {', '.join(f'{x:g}' for x in limits)} s, in worker processes that take batches of instances and "
        "warm up on a tiny instance first (numba's cache load is in no time); a time is the monotonic clock around "
        "`solve()` alone. Every selection was summed apart from the solver (plain Python ints, from the file): "
        "weight <= C, worth the reported value, and equal to optima.csv's optimum where combo found one (else "
        "the row is *wrong*). Written by `benchmarks/jooken_sweep.py` (rows: jooken-sweep.json).",
        "",
        "Runs:",
        "",
    ]
    for r in runs:
        md.append(
            f"- run {r['index']} ({r.get('mode')}): {r.get('cpu')} ({r.get('usable_cores')} usable cores, load "
            f"average {r.get('load_average')}), {r.get('jobs')} job(s), limit {r.get('limit_s'):g} s, at "
            f"{r.get('git_commit')}, {r.get('timestamp')}; torch {r['versions'].get('torch')}, numba "
            f"{r['versions'].get('numba')}"
            + ("" if r.get("one_thread_times", True) else " — **more jobs than free cores: not one-thread times**")
        )
    counts = summary["statuses"]
    md += [
        "",
        "## Totals",
        "",
        "| instances | solved | wrong | timeout | crash | error | median s | p90 s | max s | total s | engines |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| {summary['instances']} | {summary['solved']} | {counts.get('wrong', 0)} | {counts.get('timeout', 0)} | "
        f"{counts.get('crash', 0)} | {counts.get('error', 0)} | {_s(summary['median_s'])} | {_s(summary['p90_s'])} | "
        f"{_s(summary['max_s'])} | {_s(summary['total_s'])} | "
        f"{', '.join(f'{k} {v}' for k, v in sorted(summary['strategies'].items(), key=lambda kv: -kv[1]))} |",
        "",
        "Times are of the solved rows (ok).",
        "",
        "## By cell (n, C, g)",
        "",
        "| n | C | g | count | solved | wrong | not solved | median s | p90 s | max s | engines |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    cells = defaultdict(list)
    for r in rows:
        cells[r["c"] or 0, r["n"] or 0, r["g"] or 0].append(r)
    for (c, n, g), rs in sorted(cells.items()):
        good = [r["seconds"] for r in rs if r["status"] == "ok"]
        wrong = sum(r["status"] == "wrong" for r in rs)
        engines = Counter(r["strategy"] for r in rs if r["status"] == "ok")
        md.append(
            f"| {n} | {_c(c)} | {g} | {len(rs)} | {len(good)} | {wrong} | {len(rs) - len(good) - wrong} | "
            f"{_s(quantile(good, 0.5))} | {_s(quantile(good, 0.9))} | {_s(max(good, default=None))} | "
            f"{', '.join(f'{k} {v}' for k, v in engines.most_common())} |"
        )
    md += [
        "",
        "## The slowest 20",
        "",
        "| instance | s | how | solver's peak MiB | process peak RSS MiB (imports included) |",
        "|---|---:|---|---:|---:|",
    ]
    for r in sorted(ok, key=lambda r: -r["seconds"])[:20]:
        md.append(f"| {r['name']} | {_s(r['seconds'])} | {r['strategy']} | {_mib(r['peak_bytes'])} | "
                  f"{_mib(r['rss_peak_bytes'])} |")  # fmt: skip
    bad = [r for r in rows if r["status"] != "ok"]
    md += ["", "## Not solved", ""]
    if bad:
        md += ["| instance | status | what happened |", "|---|---|---|"]
        md += [f"| {r['name']} | {r['status']} | {(r.get('message') or '').replace('|', '/')} |" for r in bad]
    else:
        md.append("Every instance swept was solved, and every answer checked out.")
    solved_unknown = [u for u in unknown if u["status"] == "ok"]
    confirmed = [u for u in solved_unknown if isinstance(u["checked_by"], list)]
    methods = Counter(m for u in confirmed for m in u["checked_by"])
    md += [
        "",
        "## Combo's failures",
        "",
        f"{len(unknown)} of the instances swept have no optimum in optima.csv (-1: combo failed); "
        f"{len(solved_unknown)} of them solved here, each optimum published with its selection in "
        "jooken-unknown-optima.json (weight and value summed from the file apart from the solver). "
        f"Confirmed by another exact method (`--verify`): "
        f"{sum(1 for u in confirmed if set(u['checked_by']) - {SPLIT})}"
        + (f" (by method: {', '.join(f'{k} {v}' for k, v in methods.most_common())})" if methods else "")
        + f"; each other one says there why it was not checked. {SPLIT} is the grouped solver again on another split "
        "of the items (each group's lightest weight as its base, no halving fit): other sums, walks and bounds, the "
        "same decomposition, so it cross-checks the code and is not counted as an independent method.",
        "",
    ]
    return "\n".join(md)


# ----------------------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", help=f"a checkout of Jooken's set (default: ${SET_ENV}); get it with: {CLONE}")
    p.add_argument("--limit", type=float, default=60.0, help="seconds a solve may take (default 60)")
    p.add_argument("--jobs", type=int, default=1, help="workers side by side (default 1; more than free cores: "
                   "the times are not one-thread times)")  # fmt: skip
    p.add_argument("--batch", type=int, default=50, help="instances a worker process takes (default 50)")
    p.add_argument("--only", help="a regex the instance's name must contain (re.search)")
    p.add_argument("--cells", action="append", help="cells to keep, e.g. c=1e10,g=14 (';' or the flag again: or)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help=f"the rows file (JSONL; default {DEFAULT_OUT})")
    p.add_argument("--results-dir", default=str(RESULTS), help="where the report goes (default benchmarks/results)")
    p.add_argument("--redo", action="store_true", help="solve (or check) again what the rows file already holds")
    p.add_argument("--retry", help="solve again the rows of these statuses, e.g. timeout,crash")
    p.add_argument("--strategy", default="auto", help="solve()'s strategy (default auto)")
    p.add_argument("--memory", type=parse_bytes, help="solve()'s memory_limit (default: the solver's own)")
    p.add_argument("--report", action="store_true", help="only write the report from the rows file")
    p.add_argument("--no-report", action="store_true", help="do not write the report at the end")
    p.add_argument("--verify", action="store_true", help="check combo's failures by another exact method")
    p.add_argument("--verify-methods", default=",".join(METHODS),
                   help=f"the checks --verify runs, of {', '.join(METHODS)} (default: all that apply; {SPLIT}: "
                   "the grouped solver on another split: a cross-check of the code, not another method)")  # fmt: skip
    p.add_argument("--verify-limit", type=float, default=600.0, help="seconds a check may take (default 600)")
    p.add_argument("--verify-memory", type=parse_bytes, default=parse_bytes("8GB"),
                   help="the memory_limit of a check on the CPU (default 8GB)")  # fmt: skip
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.worker:
        return worker_main()
    if args.jobs < 1 or args.batch < 1 or args.limit <= 0:
        raise SystemExit("jooken_sweep: --jobs and --batch must be >= 1 and --limit > 0")
    if args.report:
        summary = report(Path(args.out), Path(args.results_dir))
        print(json.dumps(summary))
        return 0
    if args.verify:
        return verify(args)
    return sweep(args)


if __name__ == "__main__":
    sys.exit(main())
