"""The states engine's compiled list passes on a search's own lists: nanoseconds a candidate, checked against numpy.

    python benchmarks/list_passes.py circle:10000:1e5                    # table + results/list_passes.json
    python benchmarks/list_passes.py ../shared/instances/kplib/12Circle_n10000_R10000_s000.kp --every 65536

A solve's time on a states-heavy instance is its merges: one linear pass a step over the list and its shifted copy.
Timing a whole solve mixes that pass with everything else, so this script takes the lists a real search holds and
replays the pass on them. The search runs once, pausing every ``--every`` state updates (the engine's progress
event); at each pause with at least ``--min-states`` states it copies the list and the search's registers. Each copy
is replayed as two steps, the next right unit added and the next left unit removed, each fathomed at the slope of
the units after it: through the compiled ``merge_c`` (the merge alone) and ``merge_prune_c`` (merge and fathoming
in one pass), the median of ``--repeats`` runs over all copies, on rows allocated and touched once (as the search's
rows are reused). Every replayed step is checked state for state against the numpy merge and fathoming of the
python binding. One thread.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import provenance  # noqa: E402  (benchmarks/ on the path first)
from perf_profile import _instance  # noqa: E402

from knapsack_gpu import solve  # noqa: E402
from knapsack_gpu.states import engine, modes  # noqa: E402
from knapsack_gpu.states.kernels import registers as K  # noqa: E402
from knapsack_gpu.states.kernels.merge import _fusable, _head  # noqa: E402
from knapsack_gpu.states.kernels.search import _bit  # noqa: E402


class _Silent:
    """A progress sink: the engine pauses at its progress events only when one is attached."""

    def start(self, total, unit, phase):
        pass

    def update(self, done):
        pass


def capture(w, v, c, every: int, min_states: int) -> tuple[list[dict], dict]:
    """Copies of the list and registers at the search's pauses, and the solve's stats."""
    B = modes.compiled()
    run, saved_every = B.run, engine.PROGRESS_UPDATES
    copies: list[dict] = []

    def pausing_run(L, *arrays):
        event, L = run(L, *arrays)
        IR, VR, SR, _, BUF, _, UP, UW = arrays[:8]
        s = int(IR[K.SIZE])
        if event == K.PROGRESS and s >= min_states:
            rows = {name: L[r][:s].copy() for r, name in enumerate("WPV")}
            copies.append(dict(rows, IR=IR.copy(), VR=VR.copy(), SR=SR.copy(), BUF=BUF.copy(), UP=UP, UW=UW))
        return event, L

    B.run, engine.PROGRESS_UPDATES = pausing_run, every
    try:
        result = solve(w, v, c, strategy="states", progress=_Silent())
    finally:
        B.run, engine.PROGRESS_UPDATES = run, saved_every
    return copies, result.stats


def steps(copies: list[dict]) -> list[tuple]:
    """Two steps a copy where the search would take its fused pass: the next right unit popped and added, the next
    left unit popped and removed, each asked the search's own test (kernels._fusable, interpreted) after the pop.
    Returns (copy, unit, sign, its decision bit, the next right unit t, the next left unit s or -1)."""
    out = []
    for cp in copies:
        IR, BUF = cp["IR"], cp["BUF"]
        for side, sign in ((K.RIGHT, 1), (K.LEFT, -1)):
            SR = cp["SR"].copy()
            u = int(_head(SR, BUF, side))
            if u < 0:
                continue
            SR[side, K.BPOS] += 1  # the step pops u, as run() does
            if _fusable((cp["W"], cp["P"]), IR, cp["VR"], SR, BUF, cp["UP"], cp["UW"], u, sign):
                t, s = int(_head(SR, BUF, K.RIGHT)), int(_head(SR, BUF, K.LEFT))
                bit = _bit(int(IR[K.ENTRIES]) % int(IR[K.WINDOW]))  # the bit the search's step sets
                out.append((cp, u, sign, bit, t, s))
    return out


def _rows(cp: dict) -> tuple:
    """The list in the compiled layout (two rows of 2n + 2, written once so no page is first touched when timed)."""
    n = cp["W"].size
    rows = [np.full(2 * n + 2, 0, dtype=a.dtype) for a in (cp["W"], cp["P"], cp["V"]) * 2]  # (zeros: lazy pages)
    for r, a in zip(rows, (cp["W"], cp["P"], cp["V"]), strict=False):
        r[:n] = a
    return tuple(rows)


def _call(B, fused: bool, L, IR, cp, u, sign, bit, t, s):
    pu, wu, sg = cp["UP"][u], cp["UW"][u], np.int64(sign)
    if fused:
        return B.merge_prune_c(L, IR, cp["VR"], pu, wu, sg, bit, np.int64(t), np.int64(s), cp["UP"], cp["UW"])
    return B.merge_c(L, IR, pu, wu, sg, bit)


def check(plan: list[tuple]) -> int:
    """Each step through both compiled passes against the numpy merge (and fathoming); returns the steps checked."""
    B, N = modes.compiled(), modes.python()
    for cp, u, sign, bit, t, s in plan:
        IR = cp["IR"].copy()
        IR[K.SIZE], IR[K.MEM_BYTES] = cp["W"].size, K.LIM
        Ln, kn, fn = N.merge((cp["W"], cp["P"], cp["V"]), IR, cp["UP"][u], cp["UW"][u], np.int64(sign), bit)
        Lc, kc, fc = _call(B, False, _rows(cp), IR, cp, u, sign, bit, t, s)
        if (kc, fc) != (kn, fn) or not all(np.array_equal(a[:kc], b) for a, b in zip(Lc[:3], Ln, strict=True)):
            raise SystemExit(f"merge_c differs from the numpy merge at a list of {cp['W'].size} states")
        Ln, kn = N.prune(Ln, IR, cp["VR"], kn, fn, t, s, cp["UP"], cp["UW"])
        Lc, kc, fc = _call(B, True, _rows(cp), IR, cp, u, sign, bit, t, s)
        if kc != kn or not all(np.array_equal(a[:kc], b) for a, b in zip(Lc[:3], Ln, strict=True)):
            raise SystemExit(f"merge_prune_c differs from the numpy merge and fathoming at {cp['W'].size} states")
    return len(plan)


def time_pass(plan: list[tuple], fused: bool, repeats: int) -> list[float]:
    """Seconds over all steps, one entry a repeat (each step on its own rows, allocated once)."""
    B = modes.compiled()
    ready = []
    for cp, u, sign, bit, t, s in plan:
        IR = cp["IR"].copy()
        IR[K.SIZE], IR[K.MEM_BYTES] = cp["W"].size, K.LIM
        ready.append((_rows(cp), IR, cp, u, sign, bit, t, s))
    out = []
    for _ in range(repeats + 1):  # the first warms the caches and is dropped
        total = 0.0
        for L, IR, cp, u, sign, bit, t, s in ready:
            t0 = time.perf_counter()
            _call(B, fused, L, IR, cp, u, sign, bit, t, s)
            total += time.perf_counter() - t0
        out.append(total)
    return out[1:]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", help="an instance file, or family:n:R[:seed] (capacity: half the weight)")
    ap.add_argument("--every", type=int, default=1 << 22, help="state updates between pauses (default 2^22)")
    ap.add_argument("--min-states", type=int, default=1000, help="lists shorter than this are not copied")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=str(HERE / "results" / "list_passes.json"), help="'' to write nothing")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    w, v, c = _instance(args.spec)
    copies, stats = capture(w, v, c, args.every, args.min_states)
    plan = steps(copies)
    if not plan:
        raise SystemExit(f"{args.spec}: no pause with a list of {args.min_states}+ states (try a smaller --every)")
    checked = check(plan)
    candidates = sum(2 * cp["W"].size for cp, *_ in plan)
    sizes = [cp["W"].size for cp in copies]
    head = f"{args.spec}: {stats['state_updates']} state updates, peak list {stats['peak_states']}; "
    print(f"{head}{len(copies)} lists of {min(sizes)}-{max(sizes)} states, {checked} steps as numpy's, one thread")
    print(f"{'pass':16s} {'ns/candidate':>13s} {'min':>7s}")
    rows = []
    for name, fused in (("merge_c", False), ("merge_prune_c", True)):
        ts = time_pass(plan, fused, args.repeats)
        med, low = float(np.median(ts)) * 1e9 / candidates, min(ts) * 1e9 / candidates
        print(f"{name:16s} {med:13.2f} {low:7.2f}")
        rows.append({"pass": name, "ns_per_candidate": med, "min_ns_per_candidate": low})
    if args.out:
        meta = {"machine": provenance.machine(1), "commit": provenance.commit(), "spec": args.spec}
        meta |= {"lists": len(copies), "states": [min(sizes), max(sizes)], "candidates": candidates}
        Path(args.out).write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
