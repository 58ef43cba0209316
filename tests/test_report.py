"""The benchmark suite's bookkeeping: merging result files and the generated report (no solver runs here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

suite = pytest.importorskip("suite")
report = pytest.importorskip("report")
results = pytest.importorskip("results")
provenance = pytest.importorskip("provenance")

META = {
    "cpu": "test cpu",
    "cores": 2,
    "memory_bytes": 24 << 30,
    "gpu": None,
    "versions": {k: "0" for k in ("python", "torch", "numpy", "triton", "scipy", "ortools")},
    "threads": 1,
    "timestamp": "2026-01-01T00:00:00+00:00",
    "copy_bandwidth_bytes_per_s": 24e9,
}


def row(workload: str, contender: str, seconds: float, verdict: str = "optimal", cells: int | None = None) -> dict:
    stats = None
    if cells is not None:
        stats = {"strategy": "bits", "dtype": "int32", "cell_updates": cells, "peak_bytes": 1e6}
    return {
        "workload": workload,
        "group": "partitioner",
        "n": 100,
        "capacity": 1000,
        "contender": contender,
        "repeats": 3,
        "seconds": [seconds] * 3,
        "status": "ok",
        "median_s": seconds,
        "min_s": seconds,
        "rss_peak": 300e6,
        "stats": stats,
        "verdict": verdict,
    }


def write(path: Path, commit: str, rows: list[dict], bandwidth: float = 24e9) -> str:
    """A results file as suite.py writes it: one run, every row pointing to it."""
    runs = [{**META, "git_commit": commit, "copy_bandwidth_bytes_per_s": bandwidth}]
    results.save(path, runs, [results.stamp(r, runs, 0) for r in rows])
    return str(path)


def table_cells(md: str) -> dict[tuple[str, str], list[str]]:
    """The result tables' cells by (workload, contender) (not the ours-against-rivals tables)."""
    out = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| w") and len(cells) == len(report.COLUMNS):
            out[cells[0], cells[1]] = cells
    return out


def fake_git(monkeypatch, answers: dict[tuple, tuple[int, str]]) -> list[tuple]:
    """provenance.git answering from `answers` (the first key that prefixes the arguments; else git's error 128),
    recording every call."""
    calls = []

    def git(*args):
        calls.append(args)
        for prefix, (rc, out) in answers.items():
            if args[: len(prefix)] == prefix:
                return subprocess.CompletedProcess(args, rc, out, "")
        return subprocess.CompletedProcess(args, 128, "", "fatal: bad revision")

    monkeypatch.setattr(provenance, "git", git)
    return calls


def test_merge_replaces_rows_per_workload_and_contender_in_place(tmp_path, monkeypatch):
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    monkeypatch.setattr(report, "plots", lambda *args: [])
    first = write(
        tmp_path / "a.json",
        "aaaa",
        [row("w1", "ours-numpy", 1.0, cells=10**9), row("w1", "torch-dp", 4.0), row("w2", "ours-numpy", 2.0)],
    )
    second = write(tmp_path / "b.json", "bbbb", [row("w1", "ours-numpy", 0.5, cells=10**9)], bandwidth=12e9)
    assert suite.merge([first, second], "merged") == 0
    rows = json.loads((tmp_path / "merged.json").read_text())["rows"]
    assert [(r["workload"], r["contender"], r["commit"], r["run"]) for r in rows] == [
        ("w1", "ours-numpy", "bbbb", 1),  # replaced where it stood
        ("w1", "torch-dp", "aaaa", 0),
        ("w2", "ours-numpy", "aaaa", 0),
    ]
    md = (tmp_path / "MERGED.md").read_text()
    assert "| 0 | aaaa | 2026-01-01T00:00:00+00:00 |" in md and "| 1 | bbbb |" in md
    assert "copy bandwidth 12.0-24.0 GB/s by run" in md
    # torch-dp against the replaced row: 4.0 / 0.5; 2e9 cells/s * 12 B against its own run's 12 GB/s.
    assert "| w1 | torch-dp | 4 (3x) | 8.00x |" in md
    assert "2e+09 cells/s, 200% of copy bw" in md


def test_report_lists_every_wrong_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "plots", lambda *args: [])
    rows = [row("w1", "ours-numpy", 1.0), row("w1", "torch-sliding-hirschberg", 2.0, verdict="OVER CAPACITY by 3")]
    runs = [{**META, "git_commit": "cccc"}]
    md = report.write_report(runs, [results.stamp(r, runs, 0) for r in rows], tmp_path, "one")
    wrong = md.split("## Answers that were not optimal or not feasible")[1]
    assert "w1: torch-sliding-hirschberg: OVER CAPACITY by 3" in wrong
    assert "ours-numpy" not in wrong


def test_merged_files_keep_every_run_and_each_row_points_to_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    monkeypatch.setattr(report, "plots", lambda *args: [])
    a = write(tmp_path / "a.json", "aaaa", [row("w1", "ours-numpy", 1.0), row("w2", "ours-numpy", 2.0)])
    b = write(tmp_path / "b.json", "bbbb", [row("w2", "ours-numpy", 3.0)], bandwidth=12e9)
    c = write(tmp_path / "c.json", "cccc", [row("w3", "torch-dp", 4.0)])
    suite.merge([a, b], "ab")
    suite.merge([str(tmp_path / "ab.json"), c, str(tmp_path / "ab.json")], "abc")  # merged again, and twice
    runs, rows = results.load(tmp_path / "abc.json")
    assert [r["git_commit"] for r in runs] == ["aaaa", "bbbb", "cccc"]
    assert runs[1]["copy_bandwidth_bytes_per_s"] == 12e9
    assert {r["workload"]: runs[r["run"]]["git_commit"] for r in rows} == {"w1": "aaaa", "w2": "bbbb", "w3": "cccc"}
    assert all(r["commit"] == runs[r["run"]]["git_commit"] for r in rows)
    assert all(r["machine"] == provenance.machine_id(META) for r in rows)


def test_files_from_before_runs_were_kept_find_each_rows_run(tmp_path):
    """The old merged format: meta.runs lists the sources; a row names its run by commit and copy bandwidth (the
    same commit was measured twice, at two bandwidths)."""
    metas = [{**META, "git_commit": "aaaa", "copy_bandwidth_bytes_per_s": bw, "workloads": 1} for bw in (1e9, 2e9)]
    old_rows = [{**row("w1", "ours-numpy", 1.0), "commit": "aaaa", "copy_bandwidth": bw} for bw in (2e9, 1e9)]
    old_rows[1]["workload"] = "w2"
    (tmp_path / "old.json").write_text(json.dumps({"meta": {**metas[-1], "runs": metas}, "rows": old_rows}))
    runs, rows = results.load(tmp_path / "old.json")
    assert [r["copy_bandwidth_bytes_per_s"] for r in runs] == [1e9, 2e9]
    assert "workloads" not in runs[0] and "runs" not in runs[1]
    assert [(r["workload"], r["run"], r["commit"]) for r in rows] == [("w1", 1, "aaaa"), ("w2", 0, "aaaa")]
    assert "copy_bandwidth" not in rows[0]


def test_stale_marks_our_rows_whose_solver_code_changed_since_their_commit(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "plots", lambda *args: [])
    calls = fake_git(
        monkeypatch,
        {
            ("rev-parse", "--short", "HEAD"): (0, "head123\n"),
            ("diff", "--quiet", "old", "HEAD"): (1, ""),  # knapsack_gpu/ or kernels/ changed since
            ("diff", "--quiet", "new", "HEAD"): (0, ""),
            ("log",): (0, "c2\nc1\n"),
        },
    )
    runs = [{**META, "git_commit": c} for c in ("old", "new", "new+dirty", "gone")]
    rows = [
        results.stamp(row("w1", "ours-numpy", 1.0), runs, 0),
        results.stamp(row("w1", "torch-dp", 2.0), runs, 0),
        results.stamp(row("w2", "ours-numpy", 1.0), runs, 1),
        results.stamp(row("w3", "ours-numpy", 1.0), runs, 2),
        results.stamp(row("w4", "ours-numpy", 1.0), runs, 3),  # git does not know "gone"
    ]
    md = report.write_report(runs, rows, tmp_path, "stale")
    c = {key: cells[-3:] for key, cells in table_cells(md).items()}
    assert c["w1", "ours-numpy"] == ["old", provenance.machine_id(META), "stale"]
    assert c["w1", "torch-dp"] == ["old", provenance.machine_id(META), ""]  # a rival: its code is its version
    assert c["w2", "ours-numpy"] == ["new", provenance.machine_id(META), ""]
    assert c["w3", "ours-numpy"][::2] == ["new+dirty", ""]  # the dirty mark stays on the commit; the code is new's
    assert c["w4", "ours-numpy"][2] == "?"
    assert "**Stale: 1 of our 4 rows** (1 of them timed" in md
    assert "HEAD head123" in md and "1 were measured on a dirty tree, 1 at a commit git cannot place" in md
    assert ("diff", "--quiet", "old", "HEAD", "--", "knapsack_gpu", "kernels") in calls
    assert ("diff", "--quiet", "new", "HEAD", "--", "knapsack_gpu", "kernels") in calls
    assert "| 0 | old |" in md and "| c2, c1 |" in md  # the runs table lists the solver commits since


def test_plan_column_shows_the_pruning_solvers_stats_and_tolerates_their_absence(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "plots", lambda *args: [])
    new = row("w1", "ours-numpy", 1.0)  # n*C = 1e5
    new["stats"] = {
        "strategy": "states",
        "dtype": "int64",
        "cells": 2_000,
        "peak_states": 8600,
        "fixed": {"in": 12, "out": 80},
        "lower_bound": 5000134810,
        "upper_bound": 5000134817,
        "peak_bytes": 1e6,
    }
    old = row("w2", "ours-numpy", 1.0, cells=50_000)  # today's solver: cell_updates, no bounds or states
    bare = {**row("w3", "ours-numpy", 1.0), "stats": {"peak_bytes": 1e6}}
    runs = [{**META, "git_commit": "cccc"}]
    md = report.write_report(runs, [results.stamp(r, runs, 0) for r in (new, old, bare)], tmp_path, "plan")
    plan = {key[0]: cells[report.COLUMNS.index("plan")] for key, cells in table_cells(md).items()}
    assert plan["w1"] == (
        "states, int64; 2e+03 cells, 2% of n*C; 8.6e+03 states; fixed 12 in, 80 out; bounds [5000134810, 5000134817]"
    )
    assert plan["w2"] == "bits, int32; 5e+04 cells, 50% of n*C"
    assert plan["w3"] == ""


def test_each_group_opens_with_ours_against_the_fastest_right_rival(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "plots", lambda *args: [])
    rows = [
        row("w1", "ours-numpy", 1.0),
        row("w1", "scipy-milp", 3.0),
        row("w1", "torch-greedy", 0.001, verdict="gap 1e-3"),  # fast and wrong: not a rival that counts
        row("w2", "ours-numpy", 1.0),
        row("w2", "ortools-bb", 0.25),  # more than 2x faster than ours
        row("w2", "ortools-dc", 0.9),
        {**row("w3", "ours-numpy", 0.0), "status": "timeout after 60 s"},
        row("w3", "ortools-bb", 5.0),
        row("w4", "ours-numpy", 1.0),
        {**row("w4", "ortools-bb", 0.0), "status": "timeout after 60 s"},
    ]
    runs = [{**META, "git_commit": "cccc"}]
    md = report.write_report(runs, [results.stamp(r, runs, 0) for r in rows], tmp_path, "vs")
    assert (
        "**ours-numpy against the fastest rival with a right answer**, on 2 workloads where both were right: ours "
        "faster on 1, median rival/ours 1.62x; a rival more than 2x faster on 1 (w2). Ours skipped, timed out, failed "
        "or wrong where a rival was right: 1 (w3); no rival right: 1." in md
    )
    assert "| w1 | 1 (3x) | scipy-milp | 3 (3x) | 3.00x |" in md
    assert "| w2 | 1 (3x) | ortools-bb | 0.25 (3x) | 0.25x |" in md
    assert "| w3 | timeout after 60 s | ortools-bb | 5 (3x) | - |" in md
    assert "| w4 | 1 (3x) | none right |  |  |" in md


def pisinger_row(workload: str, contender: str, seconds: float, cls: str, verdict: str = "optimal", **kw) -> dict:
    """A row of the classes group; a combo row carries its own clock beside the suite's wall time."""
    r = {**row(workload, contender, seconds, verdict), "group": "classes", "class": cls, **kw}
    if contender == "combo" and r["status"] == "ok":
        r |= {"weight": None, "internal_median_s": seconds, "median_s": seconds + 0.5}  # wall time: not the ratio's
    return r


def test_the_per_class_table_takes_combos_own_clock_over_ours_where_both_were_right(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "plots", lambda *args: [])
    rows = []
    for wl, ours_s, combo_s in (("w1", 1.0, 0.1), ("w2", 0.2, 0.5), ("w3", 0.02, 0.001), ("w4", 3.0, 0.2)):
        rows += [pisinger_row(wl, "ours-numpy", ours_s, "strongly"), pisinger_row(wl, "combo", combo_s, "strongly")]
    rows += [
        pisinger_row("w5", "ours-numpy", 1.0, "strongly"),
        {**pisinger_row("w5", "combo", 0.0, "strongly"), "status": "failed", "error": "exit 255: multiply, no space"},
        pisinger_row("w6", "ours-numpy", 1.0, "strongly"),
        {**pisinger_row("w6", "combo", 0.0, "strongly"), "status": "skipped", "reason": "capacity >= 2^31"},
        pisinger_row("w7", "ours-numpy", 1.0, "strongly", verdict="gap 1e-3"),
        pisinger_row("w7", "combo", 0.3, "strongly"),
        pisinger_row("wc1", "ours-numpy", 0.5, "circle"),
        pisinger_row("wc1", "combo", 0.05, "circle"),
        pisinger_row("wc1", "minknap", 0.06, "circle"),  # minknap: a table of its own
    ]
    runs = [{**META, "git_commit": "cccc"}]
    md = report.write_report(runs, [results.stamp(r, runs, 0) for r in rows], tmp_path, "classes")
    # combo/ours on w1..w4: 0.1, 2.5, 0.05, 0.0667 (median 0.0833); ours over 10x combo's time on w3 and w4; combo
    # 0.1 s or more and ours slower on w1 and w4; w5: only ours right (combo failed); w6: combo skipped; w7: only
    # combo right.
    assert "| classes | strongly | 7 | 4 | 0.0833 | 0.05 | 2 | 2 | 1 | 1 | 1 |" in md
    assert "| classes | circle | 1 | 1 | 0.1 | 0.1 | 0 | 0 | 0 | 0 | 0 |" in md
    assert (
        "**combo against ours-numpy, per class**: combo's own clock over ours' wall time (below 1: combo is faster), "
        "on the 5 instances where both were right; median combo/ours 0.1, min 0.05; ours took over 10x combo's time "
        "on 2 (w3, w4); combo took 0.1 s or more and ours longer on 2 (w1, w4)." in md
    )
    assert "**minknap against ours-numpy, per class**" in md and "| classes | circle | 1 | 1 | 0.12 | 0.12 |" in md
    cells = table_cells(md)
    assert cells["w1", "combo"][2:4] == ["0.6 (3x)", "0.10x"]  # the suite's wall time shown, the own clock compared
    note = cells["w1", "combo"][report.COLUMNS.index("result")]
    assert note == "optimal; value only: no selection, feasibility unchecked; its own clock 0.1 s (the ratios use it)"
    assert cells["w5", "combo"][report.COLUMNS.index("result")] == "exit 255: multiply, no space"
    assert "| w2 | 0.2 (3x) | combo | 0.5 own clock (3x) | 2.50x |" in md  # the fastest-rival table uses it too


def test_one_instance_in_two_groups_keeps_a_row_in_each_when_merged(tmp_path, monkeypatch):
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    monkeypatch.setattr(report, "plots", lambda *args: [])
    kp = "kplib/00Uncorrelated_n01000_R10000_s000"
    a = write(tmp_path / "a.json", "aaaa", [{**row(kp, "ours-numpy", 1.0), "group": "public"}])
    b = write(tmp_path / "b.json", "bbbb", [{**row(kp, "ours-numpy", 2.0), "group": "kplib", "class": "Uncorrelated"}])
    suite.merge([a, b], "ab")
    _, rows = results.load(tmp_path / "ab.json")
    assert [(r["group"], r["median_s"]) for r in rows] == [("public", 1.0), ("kplib", 2.0)]


def test_the_targets_summary_counts_what_the_issue_asks():
    def r(wl, contender, s, verdict="optimal", group="classes", status="ok", internal=None):
        out = {**row(wl, contender, s, verdict), "group": group, "status": status}
        if internal is not None:
            out["internal_median_s"] = internal
        return out

    rows = [
        r("classes/strongly-n1000-R1e4-s1", "ours-numpy", 0.002),
        r("classes/strongly-n1000-R1e4-s1", "combo", 0.0001, internal=0.0001),  # 0.05: ours over 10x
        r("classes/circle-n10000-R1e5-s1", "ours-numpy", 1.5),
        r("classes/circle-n10000-R1e5-s1", "combo", 0.3, internal=0.3),  # combo >= 0.1 s and ours slower
        r("classes/spanner-strongly-n10000-R1e4-s1", "ours-numpy", 0.01),
        r("classes/spanner-strongly-n10000-R1e4-s1", "combo", 0.05, internal=0.05),  # 5.0
        r("classes/uncorrelated-n10000-R1e7-s1", "ours-numpy", 0.01),
        r("classes/circle-n10000-R1e7-s1", "ours-numpy", 60.0, status="timeout", verdict="timeout"),
        r("jooken/n_800_c_10000000000_g_10_f_0.3_eps_0_s_200", "ours-numpy", 12.0, group="public"),
    ]
    text = report.targets(rows)
    assert "3 instances both got right" in text and "median 0.2 " in text  # ratios 0.05, 0.2, 5
    assert "issue 23, the 3 kplib and class instances" in text and "median combo/ours 0.2 " in text
    assert "over 3x combo's time on 2 (strongly-n1000-R1e4-s1, circle-n10000-R1e5-s1)" in text
    assert "10 ms or more, ours took longer on 1 (circle-n10000-R1e5-s1)" in text
    assert (
        "over 10x combo's time on 1" in text
        and "of the 1 where combo took 0.1 s or more, ours took longer on 1" in text
    )
    assert "1 of 2 solved within 1 s" in text and "circle-n10000-R1e7-s1 (timeout)" in text
    assert "1 of 1 solved" in text
