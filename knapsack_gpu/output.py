"""What ``knapsack-gpu solve`` prints and the codes it exits with, for the single-process CLI and the sharded one.

Exit codes: 0 solved (and as ``--expect`` said), 1 the optimum differs from ``--expect``, 2 a usage error or bad input
(a malformed file, an argument out of range), 3 out of memory (no plan fits ``--memory-limit`` or the machine), 130
interrupted (Ctrl-C). A closed pipe on stdout (``| head``) is not an error: 0.
"""

from __future__ import annotations

import json
import math

from .sizes import format_bytes

EXIT_OK, EXIT_MISMATCH, EXIT_INPUT, EXIT_MEMORY, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
# Float optima are compared with --expect to this relative tolerance (plus the same absolute one near zero).
EXPECT_TOLERANCE = 1e-9
# Text mode lists the selected items when there are at most this many, else their count and a hint.
SHOW_SELECTED = 40


def exit_code(exc: BaseException) -> int:
    """The exit code of a user error (see the module docstring)."""
    return EXIT_MEMORY if isinstance(exc, MemoryError) else EXIT_INPUT


def mismatch(value: int | float, expect: int | float) -> str | None:
    """Why ``value`` is not ``expect`` (whole numbers exactly, floats within EXPECT_TOLERANCE), or None."""
    if isinstance(value, int) and isinstance(expect, int):
        ok = value == expect
    else:
        ok = math.isclose(value, expect, rel_tol=EXPECT_TOLERANCE, abs_tol=EXPECT_TOLERANCE)
    if ok:
        return None
    how = "" if isinstance(value, int) and isinstance(expect, int) else f" (relative tolerance {EXPECT_TOLERANCE:g})"
    return f"optimum {value} differs from the expected {expect}{how}"


def _selected(sol) -> str:
    sel = sol.selected
    if len(sel) <= SHOW_SELECTED:
        return f"{len(sel)} items, weight {sol.weight}: {sel}"
    return f"{len(sel)} items, weight {sol.weight} (--json lists them all)"


def _work(s: dict) -> str:
    """The work the plan did: state updates for the states engine; cells and their rate over the DP's own time for
    a dense plan; nothing for plans that did neither."""
    parts = []
    if s.get("state_updates"):
        parts.append(
            f"{s['state_updates']:.3g} state updates ({s.get('core', 0)} core items, {s['peak_states']:.3g} "
            "states at the peak)"
        )
    if s.get("cell_updates"):
        dp = s.get("dp_seconds") or 0.0
        rate = f" at {s['cell_updates'] / dp:.3g}/s" if dp > 0 else ""
        parts.append(f"{s['cell_updates']:.3g} cell updates{rate}")
    return "; ".join(parts) or "none (the bounds and reductions settled it)"


def summary(name: str, n: int, capacity: int, sol, extra: tuple[str, ...] = ()) -> str:
    """The text ``solve`` prints: the instance, the optimum, the selection, how it was solved."""
    s = sol.stats
    where = s.get("ranks_note") or f"on {s['device']}"
    return "\n".join(
        [
            f"instance   {name}: {n} items, capacity {capacity}",
            f"optimum    {sol.value}",
            f"selected   {_selected(sol)} (capacity {capacity})",
            f"solved in  {s['seconds']:.3f} s {where} ({s['backend']}, {s['strategy']}, {s['dtype']})",
            f"work       {_work(s)}",
            f"memory     {format_bytes(s['peak_bytes'])} at the peak (limit {format_bytes(s['memory_limit'])})",
            *extra,
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
