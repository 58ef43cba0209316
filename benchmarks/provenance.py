"""Where and at which code a measurement was taken, and whether that code is still the code at HEAD.

Every results file records its run's machine (:func:`machine`) and commit (:func:`commit`, "+dirty" when tracked
files it measures differ from that commit); the report asks :func:`solver_changed_since` whether the solver code has
changed since a row's commit, and marks the row stale if so.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLVER = ("knapsack_gpu", "kernels")  # the code our contenders' rows measure
# Uncommitted changes to tracked files here make a run "+dirty"; results/ is what the suite itself writes.
MEASURED = (*SOLVER, "benchmarks", ":(exclude)benchmarks/results")
MACHINE_KEYS = ("cpu", "cores", "memory_bytes", "gpu", "threads", "versions")
# The environment of a one-thread child process: every thread pool a solve may start (BLAS, OpenMP, numba) held to one.
ONE_THREAD = dict.fromkeys(("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"), "1")


def git(*args: str) -> subprocess.CompletedProcess | None:
    """`git args` at the repository root (pathspecs are relative to it); None where git cannot run."""
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)
    except OSError:
        return None


def head() -> str | None:
    """HEAD's short hash (what stale marks are computed against); None outside a git checkout."""
    p = git("rev-parse", "--short", "HEAD")
    return p.stdout.strip() if p is not None and p.returncode == 0 else None


def commit() -> str | None:
    """HEAD's short hash, "+dirty" appended when tracked files under knapsack_gpu/, kernels/ or benchmarks/ (results
    aside) differ from HEAD; None outside a git checkout."""
    at = head()
    if at is None:
        return None
    clean = git("diff", "--quiet", "HEAD", "--", *MEASURED)
    return at + ("" if clean is not None and clean.returncode == 0 else "+dirty")


def solver_changed_since(rev: str | None) -> bool | None:
    """Whether knapsack_gpu/ or kernels/ differ between commit `rev` and HEAD (`git diff --quiet`); None when that
    cannot be told (no commit recorded, a commit this clone does not have, no git). A "+dirty" mark is dropped here:
    the row's commit string keeps it for the reader."""
    if not rev:
        return None
    p = git("diff", "--quiet", rev.removesuffix("+dirty"), "HEAD", "--", *SOLVER)
    if p is None or p.returncode not in (0, 1):
        return None
    return p.returncode == 1


def solver_commits_since(rev: str | None) -> list[str]:
    """Short hashes of the commits after `rev` up to HEAD that touched knapsack_gpu/ or kernels/, newest first."""
    p = git("log", "--format=%h", f"{rev.removesuffix('+dirty')}..HEAD", "--", *SOLVER) if rev else None
    return p.stdout.split() if p is not None and p.returncode == 0 else []


def memory_total() -> int | None:
    """MemTotal in bytes; None where /proc/meminfo is missing."""
    try:
        with open("/proc/meminfo") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    except (OSError, StopIteration):
        return None


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


def machine(threads: int) -> dict:
    """The run's machine (cpu, cores, memory, gpu, threads, library versions), commit and UTC timestamp."""
    import numpy
    import torch

    versions = {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__}
    for mod in ("triton", "scipy", "ortools", "numba"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = None
    return {
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "memory_bytes": memory_total(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "versions": versions,
        "git_commit": commit(),
        "threads": threads,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def machine_id(meta: dict) -> str:
    """A short name for a run's machine, the same for every run on the same hardware, threads and versions (memory
    in whole GiB: MemTotal moves by a few hundred KiB between boots of the same VM)."""
    key = {k: meta.get(k) for k in MACHINE_KEYS}
    key["memory_bytes"] = round((key["memory_bytes"] or 0) / 2**30)
    return "m" + hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:6]


def write_rows(path: str | Path, rows: list[dict], **meta) -> None:
    """A one-thread benchmark's results file: its machine and commit, ``meta`` (e.g. repeats) and its rows."""
    head = {"machine": machine(1), "commit": commit(), **meta}
    Path(path).write_text(json.dumps({**head, "rows": rows}, indent=1) + "\n")
