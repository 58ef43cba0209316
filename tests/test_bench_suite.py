"""The suite's selection and limits without timing anything: instance folder, groups, skips, time limits, --list;
and one real child process per time-limit outcome on tiny instances."""

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


def fake_instances(root: Path) -> Path:
    """A kplib folder with one class at n = 1000 and at n = 10000 (the files themselves are never read here)."""
    kplib = root / "kplib"
    kplib.mkdir(parents=True)
    names = ["00Uncorrelated_n01000_R10000_s000.kp", "00Uncorrelated_n10000_R10000_s000.kp"]
    (kplib / "manifest.csv").write_text(
        "file,n,capacity,max_w,max_p,sum_w,sum_p\n"
        + f"{names[0]},1000,2500000,1,1,1,1\n{names[1]},10000,25000000,1,1,1,1\n"
    )
    (kplib / "optima_computed.csv").write_text(f"file,optimum\n{names[0]},4005798\n{names[1]},40500261\n")
    return root


def test_a_missing_instance_folder_is_an_error_naming_the_variable_and_the_flag(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("KNAPSACK_INSTANCES", str(tmp_path / "absent"))
    for args in (["--groups", "public"], ["--groups", "kplib10k"], ["--quick"]):
        with pytest.raises(SystemExit) as e:
            suite.main([*args, "--list"])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert f"public instances not found at {tmp_path / 'absent'} (from KNAPSACK_INSTANCES)" in err
        assert "--instances" in err
    with pytest.raises(SystemExit):
        suite.main(["--groups", "public", "--instances", str(tmp_path / "flag"), "--list"])
    assert f"not found at {tmp_path / 'flag'} (from --instances)" in capsys.readouterr().err
    # groups that need no instances do not ask for them
    assert suite.main(["--groups", "seeds", "--quick", "--list"]) == 0


def test_instances_come_from_the_flag_before_the_variable(monkeypatch, tmp_path):
    flag, var = fake_instances(tmp_path / "flag"), fake_instances(tmp_path / "var")
    monkeypatch.setenv("KNAPSACK_INSTANCES", str(var))
    assert workloads.instances() == var
    assert workloads.instances(str(flag)) == flag


def test_kplib10k_lists_the_n10000_instances_with_ours_and_three_rivals(capsys, tmp_path):
    root = fake_instances(tmp_path)
    assert [wl["id"] for wl in workloads.kplib10k(False, root)] == ["kplib/00Uncorrelated_n10000_R10000_s000"]
    assert suite.main(["--groups", "kplib10k", "--instances", str(root), "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[2] for line in out[:-1]] == ["ours-numpy", "ortools-bb", "ortools-dc", "scipy-milp"]
    assert out[-1] == "1 workloads, 4 contender runs"
    ours = out[0]
    assert "skip" not in ours and "at most 900 s" in ours  # 2.5e11 cells: bounded by the timeout, not the budget


def args(**kw) -> argparse.Namespace:
    base = {"cell_budget": 1.3e11, "memory_budget": 24 << 30, "timeout": 900, "quick": False, "threads": 1}
    return argparse.Namespace(**{**base, **kw})


def test_only_torchs_dense_dps_are_skipped_by_the_cell_budget():
    wl = {"n": 1200, "capacity": 10**10, "source": {"file": "x.in"}}  # Jooken c = 1e10: 1.2e13 cells
    assert suite.skip_reason("ours-numpy", wl, args()) is None
    assert "budget" not in (suite.skip_reason("ortools-bb", wl, args()) or "")  # skipped only when not installed
    small = {"n": 10_000, "capacity": 25_000_000, "source": {"file": "x.kp"}}  # 2.5e11 cells, 1 GB per row
    assert "budget" in suite.skip_reason("torch-sliding-hirschberg", small, args(memory_budget=1 << 40))
    assert "out of memory" in suite.skip_reason("torch-dp", small, args())


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
