"""benchmarks/jooken_sweep.py on a tiny fake Jooken set: rows and their statuses (ok, wrong, timeout, crash, error),
the independent selection check, resume, the report files and the --verify pass. Outcomes that turn on time are
made by test hooks (a worker that hangs is killed at the limit), never by how fast the machine is."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

sweep = pytest.importorskip("jooken_sweep")

from knapsack_gpu.generate import jooken  # noqa: E402
from knapsack_gpu.reference import reference_dp  # noqa: E402

# name -> what optima.csv says: "right" (the optimum), "unknown" (-1), "wrong" (the optimum + 1)
ROLES = {
    "n_20_c_1000_g_4_f_0.2_eps_0.01_s_10": "right",
    "n_21_c_1000_g_4_f_0.2_eps_0.01_s_10": "right",  # hangs: a timeout
    "n_22_c_1000_g_3_f_0.1_eps_0_s_10": "unknown",
    "n_23_c_1000_g_4_f_0.2_eps_0.01_s_10": "right",  # its worker dies: a crash
    "n_24_c_1000_g_4_f_0.2_eps_0.01_s_10": "wrong",
    "n_25_c_1000_g_4_f_0.2_eps_0.01_s_10": "right",  # its solve raises: an error
}
# A tiny solve takes milliseconds; the limit is far above that, and the hanging worker is killed at it.
LIMIT = "5"


def write(path: Path, w, p, c: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [str(len(w)), *(f"{k} {int(p[k])} {int(w[k])}" for k in range(len(w))), str(c)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def fake_set(tmp_path) -> tuple[Path, dict[str, int]]:
    """Six tiny instances in Jooken's format (folders problemInstances/<name>/test.in) and optima.csv."""
    root = tmp_path / "set"
    truth, csv = {}, ["name,optimum"]
    for k, (name, role) in enumerate(ROLES.items()):
        p = sweep.parameters(name)
        w, v, c = jooken(np.random.default_rng(k), p["n"], p["c"], p["g"], p["f"], p["eps"], p["s"])
        write(root / "problemInstances" / name / "test.in", w, v, c)
        truth[name] = int(reference_dp(w.tolist(), v.tolist(), c)[0])
        csv.append(f"{name},{ {'right': truth[name], 'unknown': -1, 'wrong': truth[name] + 1}[role] }")
    (root / "optima.csv").write_text("\n".join(csv) + "\n")
    return root, truth


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_names_cells_and_bytes_parse():
    assert sweep.parameters("n_1200_c_10000000000_g_14_f_0.1_eps_1e-05_s_200") == {
        "n": 1200, "c": 10**10, "g": 14, "f": 0.1, "eps": 1e-05, "s": 200,
    }  # fmt: skip
    assert sweep.parameters("something else")["n"] is None
    assert sweep.parse_cells(["c=1e10,g=14; n=400"]) == [{"c": 10**10, "g": 14}, {"n": 400}]
    with pytest.raises(SystemExit):
        sweep.parse_cells(["q=1"])
    names = ["n_400_c_1000000_g_2_f_0.1_eps_0_s_100", "n_400_c_10000000000_g_14_f_0.1_eps_0_s_100"]
    assert sweep.selected_names(names, None, sweep.parse_cells(["c=1e10,g=14"])) == names[1:]
    assert sweep.selected_names(names, "c_1000000_", []) == names[:1]
    assert sweep.parse_bytes("8GB") == 8 * 10**9 and sweep.parse_bytes("8GiB") == 8 * 2**30
    assert sweep.quantile([3.0, 1.0, 2.0], 0.5) == 2.0 and sweep.quantile(list(range(1, 11)), 0.9) == 9


def test_a_missing_set_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.delenv(sweep.SET_ENV, raising=False)
    with pytest.raises(SystemExit, match="git clone https://github.com/JorikJooken/knapsackProblemInstances"):
        sweep.find_set(None)
    with pytest.raises(SystemExit, match="holds no problemInstances"):
        sweep.find_set(str(tmp_path))


def test_the_selection_is_checked_apart_from_the_solver(tmp_path):
    path = tmp_path / "test.in"
    write(path, [5, 4, 3], [10, 7, 1], 8)  # weights, profits, capacity
    assert sweep.read_plain(path) == ([10, 7, 1], [5, 4, 3], 8)
    good = sweep.check_selection(path, [0, 2], 11, 11)
    assert good["status"] == "ok" and (good["weight"], good["checked_value"]) == (8, 11)
    assert sweep.check_selection(path, [0, 2], 11, -1)["status"] == "ok"  # unknown optimum: only the sums
    for selected, reported, optimum, why in [
        ([0, 1], 17, None, "over the capacity"),
        ([0, 2], 12, None, "the solver reported 12"),
        ([0, 2], 11, 17, "optima.csv's optimum is 17"),
        ([0, 0], 20, None, "repeats"),
        ([3], 0, None, "not in the file"),
    ]:
        out = sweep.check_selection(path, selected, reported, optimum)
        assert out["status"] == "wrong" and why in out["message"], (selected, out)


def test_a_sweep_records_every_outcome_resumes_and_reports(fake_set, tmp_path, monkeypatch):
    root, truth = fake_set
    out, res = tmp_path / "rows.jsonl", tmp_path / "results"
    monkeypatch.setenv("KNAPSACK_SWEEP_TEST_HANG", "n_21_")
    monkeypatch.setenv("KNAPSACK_SWEEP_TEST_CRASH", "n_23_")
    monkeypatch.setenv("KNAPSACK_SWEEP_TEST_RAISE", "n_25_")
    common = ["--set", str(root), "--out", str(out), "--results-dir", str(res), "--limit", LIMIT]
    assert sweep.main([*common, "--batch", "10"]) == 0

    records = lines(out)
    assert [r["kind"] for r in records] == ["run"] + ["row"] * len(ROLES)
    run = records[0]
    assert run["threads"] == 1 and run["set_size"] == len(ROLES) and run["git_commit"] and run["timestamp"]
    rows = {r["name"]: r for r in records[1:]}
    status = {n[:4]: r["status"] for n, r in rows.items()}
    assert status == {"n_20": "ok", "n_21": "timeout", "n_22": "ok", "n_23": "crash", "n_24": "wrong", "n_25": "error"}
    assert "limit" in rows["n_21_c_1000_g_4_f_0.2_eps_0.01_s_10"]["message"]
    assert "SIGKILL" in rows["n_23_c_1000_g_4_f_0.2_eps_0.01_s_10"]["message"]
    assert "test hook" in rows["n_25_c_1000_g_4_f_0.2_eps_0.01_s_10"]["message"]
    wrong = rows["n_24_c_1000_g_4_f_0.2_eps_0.01_s_10"]
    assert wrong["value"] == truth[wrong["name"]] and "optima.csv's optimum" in wrong["message"]
    for name in ("n_20_c_1000_g_4_f_0.2_eps_0.01_s_10", "n_22_c_1000_g_3_f_0.1_eps_0_s_10"):
        r = rows[name]
        assert r["value"] == r["checked_value"] == truth[name] and r["weight"] <= r["capacity"] == 1000
        assert r["seconds"] >= 0 and r["strategy"] and r["peak_bytes"] is not None
        assert (r["n"], r["c"], r["g"], r["s"]) == (int(name.split("_")[1]), 1000, int(name.split("_")[5]), 10)
    assert "selected" not in rows["n_20_c_1000_g_4_f_0.2_eps_0.01_s_10"]  # selections only where combo failed
    unknown = rows["n_22_c_1000_g_3_f_0.1_eps_0_s_10"]
    assert unknown["optimum"] == -1 and unknown["selected"]
    # the worker after the crash took the rest of the batch, warmed up (its first solve is solves_before 0)
    assert rows["n_24_c_1000_g_4_f_0.2_eps_0.01_s_10"]["solves_before"] == 0

    # the report files
    data = json.loads((res / "jooken-sweep.json").read_text())
    assert len(data["rows"]) == len(ROLES) and data["runs"][0]["git_commit"] == run["git_commit"]
    assert all(r["commit"] == run["git_commit"] and r["machine"].startswith("m") for r in data["rows"])
    assert data["summary"]["statuses"] == {"ok": 2, "timeout": 1, "crash": 1, "wrong": 1, "error": 1}
    md = (res / "JOOKEN-SWEEP.md").read_text()
    assert "## By cell (n, C, g)" in md and "| 20 | 1e3 | 4 | 1 | 1 | 0 | 0 |" in md and "## The slowest 20" in md
    for name, r in rows.items():
        if r["status"] != "ok":
            assert f"| {name} | {r['status']} |" in md
    unk = json.loads((res / "jooken-unknown-optima.json").read_text())["instances"]
    assert [u["name"] for u in unk] == [unknown["name"]]
    assert unk[0]["optimum"] == unk[0]["value"] == truth[unknown["name"]] and unk[0]["selected"] == unknown["selected"]
    assert unk[0]["checked_by"].startswith("not checked")

    # a rerun solves nothing; --report alone rewrites the files from the rows
    assert sweep.main(common) == 0
    assert len(lines(out)) == len(records)
    (res / "JOOKEN-SWEEP.md").unlink()
    assert sweep.main(["--report", "--out", str(out), "--results-dir", str(res)]) == 0
    assert (res / "JOOKEN-SWEEP.md").read_text() == md

    # --retry solves the timeout again (no hang now) in a run of its own; the last row of an instance counts
    monkeypatch.delenv("KNAPSACK_SWEEP_TEST_HANG")
    assert sweep.main([*common, "--retry", "timeout", "--only", "n_2[01]_"]) == 0
    again = lines(out)[len(records) :]
    assert [r["kind"] for r in again] == ["run", "row"] and again[1]["status"] == "ok" and again[1]["run"] == 1
    assert json.loads((res / "jooken-sweep.json").read_text())["summary"]["statuses"]["ok"] == 3

    # --verify: combo's failure solved again by the other engine and the dense DP (tiny C: on the CPU)
    monkeypatch.delenv("KNAPSACK_SWEEP_TEST_CRASH")
    monkeypatch.delenv("KNAPSACK_SWEEP_TEST_RAISE")
    assert sweep.main(["--set", str(root), "--out", str(out), "--results-dir", str(res), "--verify"]) == 0
    checks = [r for r in lines(out) if r["kind"] == "verify"]
    other = "grouped" if unknown["strategy"] == "states" else "states"
    expect = ["pruned", other] + ([sweep.SPLIT] if unknown["strategy"] == "grouped" else [])
    assert sorted((c["name"], c["method"], c["status"]) for c in checks) == sorted(
        (unknown["name"], m, "confirmed") for m in expect
    )
    unk = json.loads((res / "jooken-unknown-optima.json").read_text())["instances"]
    assert sorted(unk[0]["checked_by"]) == sorted(expect)
    assert "Confirmed by another exact method (`--verify`): 1" in (res / "JOOKEN-SWEEP.md").read_text()
    n = len(lines(out))
    assert sweep.main(["--set", str(root), "--out", str(out), "--results-dir", str(res), "--verify"]) == 0
    assert [r["kind"] for r in lines(out)[n:]] == ["run"]  # nothing checked twice


def test_a_dense_check_too_large_for_the_cpu_says_why():
    row = {"n": 1000, "c": 10**10, "capacity": 10**10, "strategy": "grouped"}
    methods = sweep.verify_methods(row, cuda=False)
    assert methods[:2] == [("states", "cpu", None), (sweep.SPLIT, "cpu", None)]
    assert methods[2][0] == "pruned" and methods[2][1] is None and "no CUDA" in methods[2][2]
    assert sweep.verify_methods(row, cuda=True)[2] == ("pruned", "cuda", None)
    assert [m for m, _, _ in sweep.verify_methods({**row, "strategy": "states"}, cuda=False)] == ["grouped", "pruned"]
    assert sweep.verify_methods(row, cuda=False, wanted=(sweep.SPLIT,)) == [(sweep.SPLIT, "cpu", None)]


def test_the_other_split_solves_as_the_grouped_solver_does():
    from knapsack_gpu import grouped

    w, v, cap = jooken(np.random.default_rng(2), 60, 10**5, 6, 0.2, 1e-4, 50)
    got = sweep.other_split(w.tolist(), v.tolist(), cap)
    assert got.value == grouped.solve(w, v, cap)[0] == reference_dp(w.tolist(), v.tolist(), cap)[0]
    assert sum(w[i] for i in got.selected) <= cap and sum(v[i] for i in got.selected) == got.value
