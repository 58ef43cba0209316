"""Compiling ahead of use: ``knapsack-gpu compile`` (:func:`compile_all`) and :func:`warm`.

Every entry point of the states engine (both value kinds) and of the grouped solver compiles into numba's disk
cache, job by job (:data:`knapsack_gpu.numba_jit.JOBS`), in parallel worker processes; later processes load them.
numba itself (whether the compiled kernels may run, how they compile, the disk cache's lookup, the notices) is
guarded in :mod:`knapsack_gpu.numba_jit`, which the solvers import: this module sits above them (it runs them on tiny
instances), and names :func:`enabled` and :func:`ready` for the callers that ask it.
"""

from __future__ import annotations

import os
import time

from . import numba_jit
from .numba_jit import CHAIN_SECONDS, COMPILE_SECONDS, JOBS, enabled, estimate_total, job_label, ready

__all__ = ["CHAIN_SECONDS", "COMPILE_SECONDS", "JOBS", "compile_all", "cores", "enabled", "estimate_total",
           "job_label", "ready", "warm"]  # fmt: skip


def warm(kinds: str = "if") -> None:
    """Compile (or load from the disk cache) the states engine's kernels for whole-number ("i") and float ("f")
    values in this process (:func:`knapsack_gpu.states.warm`); blocks until done."""
    from . import states

    states.warm(kinds)


def run_job(name: str, kind: str) -> float:
    """One job of :data:`~knapsack_gpu.numba_jit.JOBS` in this process, quietly: its seconds."""
    t0 = time.perf_counter()
    with numba_jit.quiet():
        if name == "grouped":
            from . import grouped

            grouped.warm()
        else:
            from . import states

            states.warm_step(name, kind or "i")
    return time.perf_counter() - t0


def cores() -> int:
    """The cores this process may run on (its affinity where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # (not Linux)
        return os.cpu_count() or 1


def _worker() -> None:
    """A compile worker's set-up: numba's cache writes locked before anything compiles."""
    numba_jit.set_up()


def ordered(first: str | None = None) -> list[tuple[str, str, tuple[str, ...]]]:
    """:data:`JOBS` in the order they run: those for values of kind ``first`` (and the kind-free ones) first, each
    after the jobs it waits for (a search waiting on a background compile switches once its kind's are there)."""
    if first is None:
        return list(JOBS)
    mine = [job for job in JOBS if job[1] in (first, "")]
    return mine + [job for job in JOBS if job not in mine]


def compile_all(workers: int | None = None, report=None, first: str | None = None) -> int:
    """Every job of :data:`~knapsack_gpu.numba_jit.JOBS` (every entry point of the states engine, both value kinds,
    and the grouped solver's) compiled into numba's disk cache by ``workers`` worker processes (None: one per core),
    a job starting once the jobs it waits for are done; ``report(done, total, name, kind, seconds)`` after each. With
    one worker the jobs run in this process, which then has them loaded. Returns the workers used.

    Raises:
        RuntimeError: a job failed (its error attached).
    """
    workers = max(1, min(workers or cores(), len(JOBS)))
    total = len(JOBS)
    jobs = ordered(first)
    if workers == 1:
        for done, (name, kind, _) in enumerate(jobs, 1):
            seconds = run_job(name, kind)
            if report is not None:
                report(done, total, name, kind, seconds)
        numba_jit.mark_ready("i")
        numba_jit.mark_ready("f")
        return 1
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    finished: set[tuple[str, str]] = set()
    waiting = jobs
    running = {}
    # spawn: a fresh interpreter (no fork of a process that may hold numba's or torch's threads)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_worker) as pool:
        while waiting or running:
            for job in list(waiting):
                name, kind, after = job
                if len(running) < workers and all((a, kind) in finished for a in after):
                    waiting.remove(job)
                    running[pool.submit(run_job, name, kind)] = (name, kind)
            if not running:  # (every job waits for one listed before it: this cannot happen)
                raise RuntimeError(f"compile jobs wait for jobs that never run: {waiting}")
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                name, kind = running.pop(future)
                try:
                    seconds = future.result()
                except Exception as exc:
                    raise RuntimeError(f"compiling {job_label(name, kind)} failed: {exc}") from exc
                finished.add((name, kind))
                if report is not None:
                    report(len(finished), total, name, kind, seconds)
    numba_jit.cache_changed()
    return workers
