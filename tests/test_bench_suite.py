"""The suite's selection and limits without timing anything: instance folder, groups, skips, time limits, --list;
and one real child process per time-limit outcome on tiny instances (on a fake clock where the outcome turns on
time)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_S

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

suite = pytest.importorskip("suite")
workloads = pytest.importorskip("workloads")
child = pytest.importorskip("child")

from knapsack_gpu.reference import brute_force  # noqa: E402


@pytest.fixture(autouse=True)
def _no_kill_for_slow_imports(monkeypatch):
    """The suite kills a child SLACK_S after its time limit; starting Python with torch on a busy machine must not
    reach that here: the kill becomes a hang guard."""
    monkeypatch.setattr(suite, "SLACK_S", HANG_S)


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


def test_quick_runs_generated_stand_ins_where_no_instance_folder_is_given(monkeypatch, capsys, tmp_path):
    """A fresh clone (no --instances, no $KNAPSACK_INSTANCES, no ../shared/instances): `knapsack-gpu bench --quick`
    selects seeded, generated stand-ins for the public groups and says so; only the selection runs here, nothing is
    timed. A full run still asks for the folder."""
    monkeypatch.delenv("KNAPSACK_INSTANCES", raising=False)
    monkeypatch.setattr(workloads, "DEFAULT_INSTANCES", tmp_path / "absent")
    assert suite.main(["--quick", "--list", "--contenders", "ours-numpy"]) == 0
    assert "generated instances in their place" in capsys.readouterr().out
    args = argparse.Namespace(quick=True, large=False, instances=None, workloads=None, groups=",".join(suite.GROUPS))
    chosen = suite.selection(args, ["ours-numpy"])
    public = [wl for group, wl, _ in chosen if group in ("public", "kplib10k", "kplib", "jooken")]
    assert {wl["group"] for wl in public} == {"public", "kplib10k", "kplib", "jooken"}
    assert all(wl["id"].startswith("generated/") for wl in public)
    assert any(wl["source"]["generator"] == "jooken" for wl in public)
    for wl in public:
        w, v, cap = workloads.load(wl["source"])
        assert len(w) == len(v) == wl["n"] and cap == wl["capacity"]
        assert np.array_equal(w, workloads.load(wl["source"])[0])  # seeded: the same instance every run
    with pytest.raises(SystemExit):
        suite.main(["--groups", "public", "--list"])
    assert "public instances not found" in capsys.readouterr().err


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


def test_ortools_branch_and_bound_answers_within_its_limit(monkeypatch, tiny):
    pytest.importorskip("ortools")
    wl, optimum = tiny
    # its own 60 s leash lifted: the answer must not turn on how busy the machine is (the leash's effect: below)
    bb = dataclasses.replace(suite.CONTENDERS["ortools-bb"], time_limit=HANG_S)
    monkeypatch.setitem(suite.CONTENDERS, "ortools-bb", bb)
    out = suite.run_child("ortools-bb", wl, 1, args(timeout=HANG_S))
    assert out["status"] == "ok" and out["value"] == optimum and out["weight"] <= wl["capacity"]


@pytest.mark.parametrize("name, module", [("ortools-bb", "ortools"), ("scipy-milp", "scipy")])
def test_a_solver_stopped_at_its_own_time_limit_is_a_timeout_not_an_answer(tiny, name, module):
    pytest.importorskip(module)
    wl, _ = tiny
    out = suite.run_child(name, wl, 1, args(timeout=1e-9))  # nothing is proven optimal in 1 ns
    assert out["status"] == "timeout after 1e-09 s"
    assert "stopped at its 1e-09 s limit" in out["error"] and "value" not in out


# Pisinger's codes (issue 15), faked: CI has no network and must not need the digneapy wheel. A child script that
# swaps a fake in for "combo" and runs the real child stands in for benchmarks/child.py. The child's clock is faked
# too: a solve takes 1.2 s ("slow") or none, exactly, however busy the machine.
FAKE_CHILD = """
import os, signal, sys, types
sys.path.insert(0, {bench!r})
import contenders
from contenders import Contender

NOW = [0.0]


def run(w, v, cap):
    how = {how!r}
    if how == "exit":  # what combo does when its states array overflows: printf, then exit(-1)
        print("multiply, no space", flush=True)
        print("PROGRAM TERMINATED !!!", flush=True)
        os._exit(255)
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if how == "slow":
        NOW[0] += 1.2
    return {value}, None, {{"internal_ms": 1.5}}  # value only, and its own clock


contenders.CONTENDERS["combo"] = Contender("combo", run, lambda: None, integer_values_only=True)
import child

child.time = types.SimpleNamespace(perf_counter=lambda: NOW[0])
child.main()
"""


def fake_combo(monkeypatch, tmp_path, how: str, value: int = 0) -> None:
    bench = Path(suite.__file__).resolve().parent
    (tmp_path / "child.py").write_text(FAKE_CHILD.format(bench=str(bench), how=how, value=value))
    monkeypatch.setattr(suite, "HERE", tmp_path)


@pytest.mark.parametrize("how, ended", [("exit", "exit 255"), ("segv", "killed by SIGSEGV")])
def test_a_contender_that_exits_or_crashes_is_failed_with_what_it_printed(monkeypatch, tmp_path, tiny, how, ended):
    wl, _ = tiny
    fake_combo(monkeypatch, tmp_path, how)
    out = suite.run_child("combo", wl, 3, args())
    assert out["status"] == "failed" and out["error"].startswith(ended)
    if how == "exit":
        assert out["error"] == "exit 255: multiply, no space / PROGRAM TERMINATED !!!"
    assert "value" not in out


def test_a_value_only_contender_reports_its_value_and_its_own_clock(monkeypatch, tmp_path, tiny):
    wl, optimum = tiny
    fake_combo(monkeypatch, tmp_path, "answer", value=optimum)
    out = suite.summarize({"status": "ok", **suite.run_child("combo", {**wl, "group": "classes"}, 3, args())})
    assert out["status"] == "ok" and out["value"] == optimum and out["weight"] is None
    # auto: warmed up; a first timed run under SHORT_RUN_S (this machine's clock) is repeated SHORT_REPEATS times,
    # one under TINY_RUN_S TINY_REPEATS times
    first = out["seconds"][0]
    expect = child.TINY_REPEATS if first < child.TINY_RUN_S else child.SHORT_REPEATS if first < child.SHORT_RUN_S else 3
    assert out["repeats"] == expect == len(out["seconds"]) and out["cold_s"] is not None
    assert out["internal_s"] == [0.0015] * out["repeats"] and out["internal_median_s"] == 0.0015


def test_a_first_run_past_the_limit_is_a_timeout_where_the_suite_let_it_run_on(monkeypatch, tmp_path, tiny):
    wl, optimum = tiny
    fake_combo(monkeypatch, tmp_path, "slow", value=optimum)
    out = suite.run_child("combo", {**wl, "group": "classes"}, 3, args(timeout=1.1))
    assert out["status"] == "timeout after 1.1 s" and "value" not in out
    out = suite.run_child("combo", {**wl, "group": "classes"}, 3, args(timeout=5))
    assert out["status"] == "ok" and out["repeats"] == 1 and out["cold_s"] is None  # slow: timed once, cold
    assert out["seconds"] == [1.2]


def ok(contender: str, value: int, weight: int | None) -> dict:
    return {"contender": contender, "status": "ok", "value": value, "weight": weight}


def test_a_value_only_answer_is_judged_on_its_value_and_never_sets_the_optimum():
    wl = {"group": "classes", "capacity": 100, "optimum": None}
    rows = [ok("ours-numpy", 50, 99), ok("combo", 50, None), ok("minknap", 50, 100)]
    suite.judge(rows, wl)
    assert [r["verdict"] for r in rows] == ["optimal"] * 3
    assert [r["feasible"] for r in rows] == [True, None, True]  # value only: feasibility unknown
    rows = [ok("ours-numpy", 50, 99), ok("combo", 49, None)]
    suite.judge(rows, wl)
    assert rows[1]["verdict"] == "gap 2.00e-02" and rows[1]["optimum"] == 50
    # combo alone: nothing to check its value against
    rows = [{"contender": "ours-numpy", "status": "failed"}, ok("combo", 50, None)]
    suite.judge(rows, wl)
    assert rows[1]["verdict"] == "unchecked"
    # combo claims more than every checked selection: one of them is wrong, and no answer counts as optimal
    rows = [ok("ours-numpy", 50, 99), ok("combo", 51, None), ok("ours-numpy-dense", 48, 90)]
    suite.judge(rows, wl)
    assert rows[0]["verdict"] == "disputed: combo claims 51 (value only) against this 50"
    assert rows[1]["verdict"] == "disputed: value only, 51 above every checked selection (50)"
    assert rows[2]["verdict"] == "gap 4.00e-02"
    # against a known optimum a larger value is simply wrong
    rows = [ok("ours-numpy", 50, 99), ok("combo", 51, None)]
    suite.judge(rows, {**wl, "optimum": 50})
    assert rows[0]["verdict"] == "optimal"
    assert rows[1]["verdict"] == "WRONG: value only, 51 above the known optimum 50"


def test_a_plain_solver_in_the_pareto_group_is_no_knee_not_a_crash():
    """--contenders can put a solver without a knee search in the pareto group: the run goes on and says so."""
    rows = [{**ok("ours-pareto-knee", 0, None), "extra": {"knee": 0.25}}, ok("ours-numpy", 7, 3)]
    suite.judge(rows, {"group": "pareto", "capacity": 10, "optimum": None})
    assert [r["verdict"] for r in rows] == ["knee 0.25", "no knee: not a knee search"]


def test_pisingers_codes_refuse_what_their_int32_arrays_cannot_hold():
    contenders = pytest.importorskip("contenders")
    combo, minknap = contenders.CONTENDERS["combo"].refuses, contenders.CONTENDERS["minknap"].refuses
    w, v = np.array([3, 4, 5]), np.array([4, 5, 6])
    assert combo(w, v, 7) is None and minknap(w, v, 7) is None
    assert "integer values only" in combo(w, v / 2, 7)
    assert "capacity 2.15e+09 >= 2^31" in combo(np.array([2**31, 1]), v[:2], 2**31)
    assert "a weight or value >= 2^31" in combo(w, np.array([4, 5, 2**31]), 7)
    assert "every item fits" in combo(w, v, 12)
    big = np.array([2**30, 2**30, 2**30])  # an optimum of 2^31 in a C int: minknap only
    assert combo(w, big, 9) is None and "C int" in minknap(w, big, 9)


def test_pisingers_codes_are_unavailable_beside_python_3_11(monkeypatch):
    contenders = pytest.importorskip("contenders")
    monkeypatch.setattr(sys, "version_info", (3, 12, 1, "final", 0))
    why = contenders._pisinger_so.__wrapped__()[1]
    assert why.startswith("the digneapy 0.2.5 wheel is built for CPython 3.11 only")


def test_the_classes_are_regenerated_from_their_source_and_the_new_groups_list(capsys, tmp_path):
    wl = workloads.class_workload("strongly", 1000, 10**6)
    assert wl["id"] == "classes/strongly-n1000-R1e6-s1" and wl["class"] == "strongly"
    assert wl["source"] == {"generator": "strongly", "n": 1000, "R": 10**6, "seed": 1, "fraction": 0.5}
    w, v, cap = workloads.load(wl["source"])
    assert cap == wl["capacity"] == int(0.5 * int(w.sum())) and (v == w + 10**5).all()
    full = workloads.classes(False)
    assert len(full) == 13 * 2 * 4 and len({x["id"] for x in full}) == len(full)
    assert {x["source"]["seed"] for x in full} == {1}  # not kplib's s000
    root = fake_instances(tmp_path)
    (root / "jooken").mkdir()
    (root / "jooken" / "manifest.csv").write_text(
        "file,n,capacity,optimum\n"
        + "".join(f"n_400_c_{c}_g_2_f_0.1_eps_0_s_100.in,400,{c},{c // 2}\n" for c in (10**6, 10**8, 10**10))
    )
    assert [x["class"] for x in workloads.jooken(False, root)] == ["c=1e6", "c=1e8"]  # c = 1e10: past int32
    assert [x["n"] for x in workloads.kplib(False, root)] == [1000, 10_000]
    assert workloads.kplib(False, root)[0]["class"] == "Uncorrelated"
    listing = ["--groups", "kplib,jooken", "--instances", str(root), "--list", "--contenders", "ours-numpy"]
    assert suite.main(listing) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "4 workloads, 4 contender runs"


def test_a_long_traceback_keeps_its_last_line_whole():
    tb = "Traceback (most recent call last):\n  File x\n    raise MemoryError(" + "x" * 300 + ")\n"
    tb += "MemoryError: needs 11.9 GiB"
    assert suite.failure(1, "", tb) == {"status": "out of memory", "error": "exit 1: MemoryError: needs 11.9 GiB"}


def test_short_runs_are_pooled_over_processes_and_a_different_answer_fails_the_row():
    first = {"status": "ok", "value": 7, "weight": 3, "seconds": [0.001, 0.0015], "rss_peak": 5}
    first["internal_s"] = [1e-3] * 2
    more = {**first, "seconds": [0.002], "rss_peak": 9, "internal_s": [2e-3]}
    out = suite.pooled(first, more)
    assert out["seconds"] == [0.001, 0.0015, 0.002] and out["repeats"] == 3 and out["processes"] == 2
    assert out["rss_peak"] == 9 and out["internal_s"] == [1e-3, 1e-3, 2e-3]
    assert suite.pooled(out, more)["processes"] == 3
    assert suite.pooled(first, {**more, "value": 8})["status"] == "failed"
    assert suite.pooled(first, {"status": "timeout after 5 s"}) == {"status": "timeout after 5 s"}
    assert suite.short(first) and not suite.short({**first, "seconds": [1.0]}) and not suite.short({"status": "failed"})


def test_the_suite_runs_short_contenders_again_in_turns_and_keeps_the_line_up_order(monkeypatch, tmp_path, capsys):
    """A workload where ours is short and combo long: ours runs POOL_PROCESSES processes, combo one; the rows come
    out in the line-up's order with the pooled repeats (run_child is faked: no process starts)."""
    import report

    calls = []

    def fake_run_child(name, wl, repeats, a):
        calls.append(name)
        seconds = [0.0005, 0.0007] if name == "ours-numpy" else [0.5]
        return {"status": "ok", "value": 4005798, "weight": 2500000, "seconds": seconds, "repeats": len(seconds)}

    monkeypatch.setattr(suite, "run_child", fake_run_child)
    monkeypatch.setattr(suite, "copy_bandwidth", lambda: 1e9)
    monkeypatch.setattr(suite, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(report, "write_report", lambda *a: "")
    argv = ["--groups", "classes", "--workloads", "classes/uncorrelated-n1000-R1e4-"]
    argv += ["--contenders", "ours-numpy,combo"]
    assert suite.main([*argv, "--out", "pooled"]) == 0
    assert calls == ["ours-numpy", "combo"] + ["ours-numpy"] * (suite.POOL_PROCESSES - 1)
    rows = suite.results.load(tmp_path / "results" / "pooled.json")[1]
    assert [r["contender"] for r in rows] == ["ours-numpy", "combo"]
    assert rows[0]["repeats"] == 2 * suite.POOL_PROCESSES and rows[0]["processes"] == suite.POOL_PROCESSES
    assert rows[1]["repeats"] == 1 and "processes" not in rows[1]
