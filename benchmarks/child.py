"""Time one contender on one workload in a process of its own, so that its peak memory is its own.

    python benchmarks/child.py CONTENDER WORKLOAD_JSON REPEATS THREADS [WARMUP [TIME_LIMIT]]

With WARMUP=1 one untimed run comes first (its time is reported as cold_s): the first solve in a process pays for
imports, kernel loading and first touch of fresh memory (~1.5 s/GB on the VM), which says nothing about the solver.
WARMUP=auto: the first run is that warm-up when it took at most AUTO_WARMUP_S, else it is the one timed run (a
solve of milliseconds is timed warm, one of minutes is not run twice), a timeout where it took over TIME_LIMIT.
TIME_LIMIT (seconds) goes to contenders with a time limit of their own; one that stops there unproven ends the row
as a timeout. Prints one JSON line: seconds of each repeat, the selection's exact value and weight (a value-only
contender: its value, weight null), the peak RSS of this process (VmHWM) and the peak before the first solve
(imports, the instance and the contender's prepare: loading compiled code), the solver's own stats where it has
them, and the solver's own clock per timed repeat (internal_s) where it reports one. A contender that refuses the
instance (its input limits) prints status "skipped" and its reason without a run. Thread counts are pinned before
torch is imported. A solve of under SHORT_RUN_S is repeated SHORT_REPEATS times, one of under TINY_RUN_S
TINY_REPEATS times, whatever REPEATS says.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time
from pathlib import Path


def peak_rss() -> int:
    """This process's peak resident set (VmHWM). Not ru_maxrss: Linux carries that across fork and exec, so a child
    would report its parent's peak."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


AUTO_WARMUP_S = 1.0
# A solve whose first timed run takes under SHORT_RUN_S is run SHORT_REPEATS times (at most half a second): five runs
# right after the warm-up of a process still warm its caches (sub-millisecond solves, ours and combo's, fell by a
# third over them), and their median said more about that than about the solver. Under TINY_RUN_S, TINY_REPEATS
# (at most 0.2 s): of 51 solves of 0.1-0.3 ms the first dozen still fell (both solvers), and the VM's bursts of
# noise moved such medians by up to 2x between runs.
SHORT_RUN_S = 0.01
SHORT_REPEATS = 51
TINY_RUN_S = 0.001
TINY_REPEATS = 201


def main() -> None:
    name, workload, repeats, threads = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    warmup_arg = sys.argv[5] if len(sys.argv) > 5 else "0"
    limit = float(sys.argv[6]) if len(sys.argv) > 6 else None
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    import numpy as np
    import torch

    torch.set_num_threads(threads)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from contenders import CONTENDERS, TimeLimitReached
    from workloads import load

    contender = CONTENDERS[name]
    limited = (limit,) if contender.time_limit and limit else ()
    w, v, cap = load(workload["source"])
    why = contender.refuses and contender.refuses(w, v, cap)
    if why:
        print(json.dumps({"status": "skipped", "reason": why}))
        return
    if contender.prepare:
        contender.prepare()
    rss_before = peak_rss()
    times, extras = [], []
    cold = None
    warmup = warmup_arg in ("1", "auto")
    k = 0
    cuda = torch.cuda.is_available()  # (once: ~2 us a call, inside the clock, where combo's own clock has none)
    while k < repeats + warmup:
        t0 = time.perf_counter()
        try:
            result = contender.run(w, v, cap, *limited)
        except TimeLimitReached as e:
            print(json.dumps({"status": f"timeout after {limit:g} s", "error": str(e), "seconds": times}))
            return
        selected = result[1]
        if cuda:
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        extra = result[2] if len(result) > 2 else None
        if warmup and k == 0 and warmup_arg == "auto" and elapsed > AUTO_WARMUP_S:
            warmup, repeats = False, 1  # too slow to run twice: this cold run is the one timed run
            if limit and elapsed > limit:  # the suite lets it run on (see run_child): past the limit is a timeout
                print(json.dumps({"status": f"timeout after {limit:g} s", "seconds": [elapsed]}))
                return
        if warmup and k == 0:
            cold = elapsed
        else:
            if not times and elapsed < SHORT_RUN_S:  # the same rule for every contender, by its own first time
                repeats = max(repeats, TINY_REPEATS if elapsed < TINY_RUN_S else SHORT_REPEATS)
            times.append(elapsed)
            extras.append(extra or {})
        k += 1
    out = {"seconds": times, "cold_s": cold}
    if selected is None:  # value only: nothing to compute the value or the weight from
        out |= {"value": result[0], "weight": None}
    else:
        selected = sorted(int(i) for i in selected)
        integral = np.asarray(v).dtype.kind in "iu"
        value = int(np.asarray(v)[selected].astype(object).sum()) if integral else math.fsum(np.asarray(v)[selected])
        out |= {"value": value, "weight": int(np.asarray(w)[selected].sum())}
    out |= {
        "capacity": cap,
        "rss_peak": peak_rss(),
        "rss_before": rss_before,
        "stats": getattr(contender.run, "last_stats", None),
        "extra": extra,
    }
    if extras and all("internal_ms" in e for e in extras):
        out["internal_s"] = [e["internal_ms"] / 1e3 for e in extras]
    if torch.cuda.is_available():
        out["cuda_peak"] = torch.cuda.max_memory_allocated()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
