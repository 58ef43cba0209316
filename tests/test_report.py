"""The benchmark suite's bookkeeping: merging result files and the generated report (no solver runs here)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

suite = pytest.importorskip("suite")
report = pytest.importorskip("report")

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
    meta = {**META, "git_commit": commit, "copy_bandwidth_bytes_per_s": bandwidth}
    path.write_text(json.dumps({"meta": meta, "rows": rows}))
    return str(path)


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
    assert [(r["workload"], r["contender"], r["commit"]) for r in rows] == [
        ("w1", "ours-numpy", "bbbb"),  # replaced where it stood
        ("w1", "torch-dp", "aaaa"),
        ("w2", "ours-numpy", "aaaa"),
    ]
    md = (tmp_path / "MERGED.md").read_text()
    assert "aaaa (2 workloads), bbbb (1 workloads)" in md
    assert "copy bandwidth 12.0-24.0 GB/s by run" in md
    # torch-dp against the replaced row: 4.0 / 0.5; 2e9 cells/s * 12 B against its own run's 12 GB/s.
    assert "| w1 | torch-dp | 4 (3x) | 8.00x |" in md
    assert "2e+09 cells/s, 200% of copy bw" in md


def test_report_lists_every_wrong_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "plots", lambda *args: [])
    rows = [row("w1", "ours-numpy", 1.0), row("w1", "torch-sliding-hirschberg", 2.0, verdict="OVER CAPACITY by 3")]
    md = report.write_report({**META, "git_commit": "cccc"}, rows, tmp_path, "one")
    wrong = md.split("## Answers that were not optimal or not feasible")[1]
    assert "w1: torch-sliding-hirschberg: OVER CAPACITY by 3" in wrong
    assert "ours-numpy" not in wrong
