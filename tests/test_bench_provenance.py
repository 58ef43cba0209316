"""Where a benchmark row was measured: the commit with its dirty mark, the machine id, staleness (git faked)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

provenance = pytest.importorskip("provenance")
from test_report import META, fake_git  # noqa: E402


@pytest.mark.parametrize(
    "diff_rc, expected",
    [(0, "abc1234"), (1, "abc1234+dirty"), (128, "abc1234+dirty")],  # git failing to compare: not known clean
    ids=["clean", "dirty", "diff-fails"],
)
def test_commit_is_marked_dirty_by_tracked_changes_to_measured_code(monkeypatch, diff_rc, expected):
    calls = fake_git(monkeypatch, {("rev-parse",): (0, "abc1234\n"), ("diff", "--quiet", "HEAD"): (diff_rc, "")})
    assert provenance.commit() == expected
    diff = next(c for c in calls if c[0] == "diff")
    # the solver, the kernels and the benchmark code count; results the suite itself writes do not
    assert diff[diff.index("--") + 1 :] == ("knapsack_gpu", "kernels", "benchmarks", ":(exclude)benchmarks/results")


def test_commit_outside_a_checkout_is_none(monkeypatch):
    fake_git(monkeypatch, {})
    assert provenance.commit() is None
    monkeypatch.setattr(provenance, "git", lambda *args: None)  # no git at all
    assert provenance.commit() is None


def test_solver_changed_since_reads_git_diff_quiet(monkeypatch):
    fake_git(monkeypatch, {("diff", "--quiet", "aaa", "HEAD"): (1, ""), ("diff", "--quiet", "bbb", "HEAD"): (0, "")})
    assert provenance.solver_changed_since("aaa") is True
    assert provenance.solver_changed_since("aaa+dirty") is True
    assert provenance.solver_changed_since("bbb") is False
    assert provenance.solver_changed_since("zzz") is None  # a commit this clone does not have
    assert provenance.solver_changed_since(None) is None


def test_machine_id_names_hardware_threads_and_versions_only():
    same = {**META, "git_commit": "other", "timestamp": "later", "copy_bandwidth_bytes_per_s": 1.0}
    assert provenance.machine_id(same) == provenance.machine_id(META)
    for change in ({"threads": 2}, {"gpu": "H200"}, {"versions": {**META["versions"], "ortools": "9.16"}}):
        assert provenance.machine_id({**META, **change}) != provenance.machine_id(META)


def test_machine_id_survives_memtotal_moving_between_boots():
    assert provenance.machine_id({**META, "memory_bytes": (24 << 30) - 300_000}) == provenance.machine_id(META)
