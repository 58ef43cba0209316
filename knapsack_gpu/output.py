"""What ``knapsack-gpu solve`` prints and the codes it exits with, for the single-process CLI and the sharded one.

Exit codes: 0 solved (and as expected), 1 an optimum differs from the expected one (``--expect``, else the file's
own, as Pisinger's files state it; with several instances solved, any one), 2 a usage error or bad input (a malformed
file, an argument out of range), 3 out of memory (no plan fits ``--memory-limit`` or the machine), 130 interrupted
(Ctrl-C). A closed pipe on stdout (``| head``) is not an error: 0. A file's own solution that is infeasible or not
worth its optimum is a warning on stderr, not an exit code: it says nothing about the solver's answer.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from .formats import known_solution
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


@dataclass(frozen=True)
class Check:
    """A solve's optimum against the expected one, and the file's own solution measured.

    Attributes:
        expected: ``--expect``, else the optimum the file states (pisinger-csv's z), else None.
        source: where ``expected`` comes from ("--expect", "the file's z"), or None.
        why: how the optimum differs from ``expected`` (see :func:`mismatch`), else None.
        known: :func:`knapsack_gpu.formats.known_solution` of the instance (None where the file states none).
    """

    expected: int | float | None
    source: str | None
    why: str | None
    known: dict | None

    @property
    def verdict(self) -> str:
        """ok, MISMATCH, or - where nothing was expected."""
        return "-" if self.expected is None else "MISMATCH" if self.why else "ok"


def check(inst, sol, expect: int | float | None = None) -> Check:
    """``sol`` (a solve of the FileInstance ``inst``) against ``expect``, else against the file's own optimum."""
    expected, source = (expect, "--expect") if expect is not None else (inst.optimum, "the file's z")
    if expected is None:
        source = None
    why = None if expected is None else mismatch(sol.value, expected)
    return Check(expected, source, why, known_solution(inst))


def known_solution_warning(path, inst) -> str | None:
    """The stderr line for a file whose own solution is over its capacity or not worth its z, else None."""
    known = known_solution(inst)
    if known is None or known["problem"] is None:
        return None
    return (
        f"knapsack-gpu: warning: {path}:{inst.line}: instance {inst.name}: the file's own solution (its x column) "
        f"{known['problem']}; solving it anyway"
    )


def _check_lines(c: Check) -> tuple[str, ...]:
    """The summary's lines for the expected optimum and the file's own solution."""
    lines = []
    if c.expected is not None:
        lines.append(f"expected   {c.expected} ({c.source}): {c.verdict}")
    if c.known is not None:
        k = c.known
        fine = "feasible" + (" and worth z" if c.source == "the file's z" else "")
        items = f"{k['items']} item{'s' if k['items'] != 1 else ''}"
        lines.append(f"file's x   {items}, weight {k['weight']}, value {k['value']}: {k['problem'] or fine}")
    return tuple(lines)


def report(inst, sol, expect, as_json: bool, summarize=None) -> tuple[str, str | None]:
    """What ``solve`` prints for one instance (``summarize``: :func:`summary` or the sharded solve's) and the
    mismatch line for stderr, or None."""
    c = check(inst, sol, expect)
    if as_json:
        text = solution_json(inst, sol, c)
    else:
        text = (summarize or summary)(inst.name, len(inst.weights), inst.capacity, sol, extra=_check_lines(c))
    return text, c.why and f"knapsack-gpu: {c.why} ({c.source})"


# The columns of a solve of every instance in a file, one line each.
_TABLE = ("instance", "n", "capacity", "value", "expected", "check", "seconds")


def table_header(width: int) -> str:
    """The header line of the table whose first column is ``width`` characters wide."""
    name, n, capacity, value, expected, verdict, seconds = _TABLE
    return f"{name:<{width}}  {n:>6}  {capacity:>12}  {value:>12}  {expected:>12}  {verdict:<8}  {seconds:>8}"


def table_row(inst, sol, c: Check, width: int) -> str:
    """One instance's line of the table: name, n, capacity, value, expected optimum, ok/MISMATCH/-, seconds."""
    expected = "-" if c.expected is None else c.expected
    return (
        f"{inst.name:<{width}}  {len(inst.weights):>6}  {inst.capacity:>12}  {sol.value:>12}  {expected:>12}  "
        f"{c.verdict:<8}  {sol.stats['seconds']:>8.3f}"
    )


# What each name in stats["reductions"] did, for the text summary.
REDUCTIONS = {
    "zero-value": "items worth nothing left out",
    "heavy": "items heavier than the capacity left out",
    "zero-weight": "items weighing nothing taken",
    "take-all": "everything fits: all taken",
    "gcd": "weights and capacity divided by their gcd",
    "bundles": "identical items bundled",
    "states": "the states engine's best solution as the lower bound",
    "fixing": "items fixed in or out by the bounds",
    "complement": "solved as what to leave out",
}


def _items(k: int) -> str:
    return f"{k} item{'' if k == 1 else 's'}"


def _selected(sol, json_hint: bool = True) -> str:
    sel = sol.selected
    if len(sel) <= SHOW_SELECTED:
        return f"{_items(len(sel))}, weight {sol.weight}: {sel}"
    return f"{_items(len(sel))}, weight {sol.weight}" + (" (--json lists them all)" if json_hint else "")


def _reductions(names: list[str]) -> str:
    return "; ".join(f"{name} ({REDUCTIONS[name]})" if name in REDUCTIONS else name for name in names) or "none"


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
    g = s.get("grouped")
    if s.get("strategy") == "grouped" and g and "vectors" in g:
        parts.append(
            f"{g['vectors']:.3g} count vectors over {g['groups']} groups, {g['completions']:.3g} completed "
            f"({g['noise_dps']} noise DPs, {g['noise_cells']:.3g} cells)"
        )
    if parts:
        return "; ".join(parts)
    settled = {"closed": "the bounds met", "reduced": "the reductions left nothing to search"}
    return f"none ({settled.get(s.get('strategy'), 'every item it would search fits, or none is left')})"


def summary(name: str, n: int, capacity: int, sol, extra: tuple[str, ...] = (), json_hint: bool = True) -> str:
    """The text ``solve`` prints: the instance, the optimum, the selection, how it was solved (``json_hint``: a long
    selection says that --json lists it, where the command has --json)."""
    s = sol.stats
    where = s.get("ranks_note") or f"on {s['device']}"
    how = (s["backend"], s["strategy"], s["dtype"])  # (a backend only where a dense pass or list ops ran: not None)
    return "\n".join(
        [
            f"instance   {name}: {_items(n)}, capacity {capacity}",
            f"optimum    {sol.value}",
            f"selected   {_selected(sol, json_hint)} (capacity {capacity})",
            f"solved in  {s['seconds']:.3f} s {where} ({', '.join(str(x) for x in how if x)})",
            f"work       {_work(s)}",
            f"memory     {format_bytes(s['peak_bytes'])} at the peak (limit {format_bytes(s['memory_limit'])})",
            *extra,
            f"reductions {_reductions(s['reductions'])}",
        ]
    )


def solution_json(inst, sol, c: Check | None = None) -> str:
    """``solve --json``'s line: the instance's name and size, the answer, and the stats; with ``c``, also "expected"
    and "ok" where an optimum was expected, and "file_solution" (:func:`known_solution`) where the file states one."""
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
    if c is not None and c.expected is not None:
        out |= {"expected": c.expected, "ok": c.why is None}
    if c is not None and c.known is not None:
        out["file_solution"] = c.known
    return json.dumps(out)
