"""The suite's time limits without timing anything, and one real child process per time-limit outcome on tiny
instances."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

suite = pytest.importorskip("suite")
workloads = pytest.importorskip("workloads")

from knapsack_gpu.reference import brute_force  # noqa: E402


def args(**kw) -> argparse.Namespace:
    base = {"cell_budget": 1.3e11, "memory_budget": 24 << 30, "timeout": 900, "quick": False, "threads": 1}
    return argparse.Namespace(**{**base, **kw})


def test_branch_and_bound_runs_under_its_own_shorter_limit():
    assert suite.time_limit("ortools-bb", args()) == 60
    assert suite.time_limit("scipy-milp", args()) == 60
    assert suite.time_limit("ours-numpy", args()) == 900
    assert suite.time_limit("ortools-bb", args(timeout=5)) == 5


@pytest.fixture
def tiny(tmp_path):
    """A strongly correlated instance (hard for branch and bound to prove) as a workload."""
    from knapsack_gpu.formats import write_json

    rng = np.random.default_rng(7)
    w = rng.integers(1, 1000, 14)
    v = w + 100
    cap = int(w.sum() // 2)
    write_json(tmp_path / "tiny.json", w, v, cap)
    wl = {"id": "tiny", "group": "public", "n": 14, "capacity": cap, "optimum": None}
    return {**wl, "source": {"file": str(tmp_path / "tiny.json")}}, brute_force(w.tolist(), v.tolist(), cap)[0]


def test_ortools_branch_and_bound_answers_within_its_limit(tiny):
    pytest.importorskip("ortools")
    wl, optimum = tiny
    out = suite.run_child("ortools-bb", wl, 1, args(timeout=60))
    assert out["status"] == "ok" and out["value"] == optimum and out["weight"] <= wl["capacity"]


@pytest.mark.parametrize("name, module", [("ortools-bb", "ortools"), ("scipy-milp", "scipy")])
def test_a_solver_stopped_at_its_own_time_limit_is_a_timeout_not_an_answer(tiny, name, module):
    pytest.importorskip(module)
    wl, _ = tiny
    out = suite.run_child(name, wl, 1, args(timeout=1e-9))  # nothing is proven optimal in 1 ns
    assert out["status"] == "timeout after 1e-09 s"
    assert "stopped at its 1e-09 s limit" in out["error"] and "value" not in out
