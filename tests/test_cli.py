"""The command line and the instance formats, on small fixture files the tests write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from knappi import KNAPPI_1_50_1000_1, brute_forced, knappi_text

from knapsack_gpu.cli import JSON_SCHEMA, main, parse_bytes
from knapsack_gpu.formats import FORMATS, FormatError, read_instance, write_json
from knapsack_gpu.reference import brute_force

W = [23, 31, 29, 44, 53, 38, 63, 85, 89, 82]
V = [92, 57, 49, 68, 60, 43, 67, 84, 87, 72]
C = 165
OPT = 309  # brute force, and the classic P01 answer


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def kp_text():
    return f"\n{len(W)}\n{C}\n\n" + "".join(f"{v} {w}\n" for w, v in zip(W, V, strict=True))


def jooken_text():
    return f"{len(W)}\n" + "".join(f"{i} {v} {w}\n" for i, (w, v) in enumerate(zip(W, V, strict=True))) + f"{C}\n"


def pisinger_text():
    return f"{len(W)}\n" + "".join(f"{v} {w}\n" for w, v in zip(W, V, strict=True)) + f"{C}"


def test_fixture_optimum_is_right():
    assert brute_force(W, V, C)[0] == OPT


@pytest.mark.parametrize(
    "name, text, fmt",
    [
        ("a.kp", kp_text(), "kp"),
        ("b.in", jooken_text(), "jooken"),
        ("knapPI_1_10_1000_1", pisinger_text(), "pisinger"),
        ("c.json", json.dumps({"weights": W, "values": V, "capacity": C}), "json"),
        ("noext", kp_text(), "kp"),
    ],
)
def test_formats_parse_and_detect(tmp_path, name, text, fmt):
    inst = read_instance(write(tmp_path, name, text))
    assert inst.format == fmt
    assert inst.weights.tolist() == W and inst.values.tolist() == V and inst.capacity == C


@pytest.mark.parametrize(
    "name, text, fmt, match",
    [
        ("a.kp", "\n3\n10\n\n1 2\n3 x\n5 6\n", "auto", r"a.kp:6: expected 'profit weight'"),
        ("a.kp", "3\n10\n1 2\n3 4\n", "auto", r"expected 3 item lines 'profit weight', found 2"),
        ("a.kp", "3\n10\n1 2\n3 4\n5 6 7\n", "auto", r"a.kp:5: expected 'profit weight' \(2 integers\)"),
        ("b.in", "2\n0 5 6\n1 7\n10\n", "auto", r"b.in:3: expected 'id profit weight'"),
        ("b.in", "2\n0 5 6\n1 7 8\n", "auto", r"ended early: expected the capacity"),
        ("b.in", "2\n0 5 6\n1 7 8\n10\n11\n", "auto", r"b.in:5: expected the end of the file"),
        ("b.in", "two\n0 5 6\n", "jooken", r"b.in:1: expected the number of items"),
        ("c.json", '{"weights": [1]', "auto", r"c.json:1:16: invalid JSON at line 1, column 16"),
        ("c.json", '{"weights": [1]}', "auto", r"expected a JSON object with 'weights', 'values' and 'capacity'"),
        ("d.txt", "hello world\n", "auto", r"cannot tell the format"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, name, text, fmt, match):
    with pytest.raises(FormatError, match=match):
        read_instance(write(tmp_path, name, text), fmt)


@pytest.mark.parametrize(
    "text, expect",
    [("8GB", 8 * 10**9), ("512MiB", 512 * 2**20), ("1e9", 10**9), ("100000", 100000), ("1.5 GiB", 3 * 2**29)],
)
def test_memory_limit_parsing(text, expect):
    assert parse_bytes(text) == expect


@pytest.mark.parametrize(
    "text",
    ["8 parsecs", "", "-3GB", "0", "GB", "1e400", "nan", "inf", "0.5", "1e-9KB", "9.3e18", "1e99999999999999999999"],
)
def test_memory_limit_parsing_rejects(text):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        parse_bytes(text)


@pytest.mark.parametrize("text", ["1e400", "0", "nan", "12 furlongs", "1e-99999999999999999999"])
def test_bad_memory_limit_is_a_usage_error_not_a_traceback(tmp_path, capsys, text):
    f = write(tmp_path, "p01.kp", kp_text())
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(f), "--device", "cpu", "--memory-limit", text])
    assert exc.value.code == 2  # argparse's status for a bad argument
    err = capsys.readouterr().err
    assert "argument --memory-limit:" in err and repr(text) in err


# file name, content, the line the error must name
BAD_FILES = [
    ("int64.kp", "2\n10\n1 2\n3 99999999999999999999\n", 4),
    ("n.kp", "-3\n10\n1 2\n", 1),
    ("count.kp", "3\n10\n1 2\n3 4\n5 6\n7 8\n", 6),
    ("binary.kp", "3\n10\n\x8f\x00\xfe\x01 2\n", 3),
    ("neg.in", "2\n0 1 2\n1 -5 3\n10\n", 3),
    ("w62.kp", f"1\n10\n1 {2**62}\n", 3),
    ("c62.kp", f"1\n{2**62}\n1 2\n", 2),
    ("blank.kp", "\n\n", 2),
    ("cut.kp", "2\n10\n1", 3),
    ("types.json", '{"weights": [1, 2],\n"values": [3, "4"], "capacity": 3}', 2),
    ("x.csv", "knapPI_1_2_1000_1\nn 2\nc 10\nz 13\n1,6,4,1\n2,7,5,2\n-----\n", 6),
]


@pytest.mark.parametrize("name, text, line", BAD_FILES, ids=[b[0] for b in BAD_FILES])
@pytest.mark.parametrize("command", ["solve", "profile"])
def test_file_errors_name_file_and_line_and_exit_2(tmp_path, capsys, name, text, line, command):
    f = tmp_path / name
    f.write_bytes(text.encode("latin-1"))  # the bytes as written, \x8f included
    assert main([command, str(f), "--device", "cpu"]) == 2  # bad input
    err = capsys.readouterr().err
    assert err.startswith(f"knapsack-gpu: error: {f}:{line}: ") and err.count("\n") == 1, err


def test_unreadable_file_exits_2(tmp_path, capsys):
    assert main(["solve", str(tmp_path / "missing.kp")]) == 2
    assert capsys.readouterr().err.startswith("knapsack-gpu: error: [Errno 2] No such file or directory")
    assert main(["solve", str(tmp_path)]) == 2
    assert str(tmp_path) in capsys.readouterr().err


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("values[0] = nan: values must be finite"),
        TypeError("weights must be numbers"),
        MemoryError(),
        OverflowError("int too large"),
        OSError(28, "No space left on device"),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_user_errors_from_solving_exit_2_or_3(tmp_path, monkeypatch, capsys, exc):
    import knapsack_gpu.solver

    def failing(*args, **kwargs):
        raise exc

    monkeypatch.setattr(knapsack_gpu.solver, "solve", failing)
    expected = 3 if isinstance(exc, MemoryError) else 2  # out of memory, else bad input
    assert main(["solve", str(write(tmp_path, "p01.kp", kp_text())), "--device", "cpu"]) == expected
    err = capsys.readouterr().err
    assert err == f"knapsack-gpu: error: {str(exc) or type(exc).__name__}\n"


def test_internal_errors_stay_visible(tmp_path, monkeypatch):
    import knapsack_gpu.solver

    def broken(*args, **kwargs):
        raise RuntimeError("internal error: recovered items are worth 3 but the DP optimum is 5")

    monkeypatch.setattr(knapsack_gpu.solver, "solve", broken)
    with pytest.raises(RuntimeError, match="internal error"):
        main(["solve", str(write(tmp_path, "p01.kp", kp_text())), "--device", "cpu"])


def test_solve_json_schema_and_known_optimum(tmp_path, capsys):
    f = write(tmp_path, "p01.kp", kp_text())
    assert main(["solve", str(f), "--json", "--device", "cpu", "--expect", str(OPT), "--memory-limit", "64MiB"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"name", "format", "n", "capacity", "value", "selected", "weight", "stats", "expected", "ok"}
    assert out["value"] == OPT and out["capacity"] == C and out["n"] == len(W)
    assert out["expected"] == OPT and out["ok"] is True
    assert sum(W[i] for i in out["selected"]) == out["weight"] <= C
    assert sum(V[i] for i in out["selected"]) == OPT
    assert {"device", "backend", "strategy", "cell_updates", "seconds", "peak_bytes"} <= set(out["stats"])
    assert out["stats"]["memory_limit"] == 64 * 2**20


def test_expect_mismatch_and_errors_exit_nonzero(tmp_path, capsys):
    f = write(tmp_path, "p01.kp", kp_text())
    assert main(["solve", str(f), "--device", "cpu", "--expect", str(OPT + 1)]) == 1
    bad = write(tmp_path, "bad.kp", "3\n10\n1 2\n")
    assert main(["solve", str(bad)]) == 2
    assert "bad.kp: expected 3 item lines" in capsys.readouterr().err
    assert main(["solve", str(f), "--device", "cpu", "--memory-limit", "100B"]) == 3
    assert "memory_limit" in capsys.readouterr().err


def test_json_roundtrip_and_profile_plot(tmp_path, capsys):
    f = tmp_path / "inst.json"
    write_json(f, W, V, C)
    png, csv = tmp_path / "p.png", tmp_path / "p.csv"
    pytest.importorskip("matplotlib")
    assert main(["profile", str(f), "--plot", str(png), "--csv", str(csv), "--device", "cpu"]) == 0
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
    rows = np.loadtxt(csv, delimiter=",", skiprows=1)
    assert rows.shape == (C + 1, 2) and rows[-1, 1] == OPT


def test_module_entry_point_and_ctrl_c(tmp_path, monkeypatch, capsys):
    f = write(tmp_path, "p01.in", jooken_text())
    r = subprocess.run(
        [sys.executable, "-m", "knapsack_gpu", "solve", str(f), "--device", "cpu", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(r.stdout)["value"] == OPT
    bad = write(tmp_path, "big.kp", "1\n10\n1 99999999999999999999\n")
    r = subprocess.run([sys.executable, "-m", "knapsack_gpu", "solve", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr == f"knapsack-gpu: error: {bad}:3: weight = 99999999999999999999: weights must be < 2**62 = {2**62}\n"
    )

    import knapsack_gpu.solver

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(knapsack_gpu.solver, "solve", interrupted)
    assert main(["solve", str(f), "--device", "cpu"]) == 130
    assert "interrupted" in capsys.readouterr().err


# ---------------------------------------------------------------- Pisinger's own files: several instances, z and x

COLUMNS = ["instance", "n", "capacity", "value", "expected", "check", "seconds"]


def solve(*argv) -> int:
    return main(["solve", *map(str, argv), "--device", "cpu", "--no-progress"])


def test_solve_runs_every_instance_a_line_each(tmp_path, capsys, rng):
    cases = brute_forced(rng, 6)  # z from the brute-force oracle, not from the solver under test
    f = write(tmp_path, "many.csv", knappi_text(cases))
    assert solve(f) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == COLUMNS and len(lines) == 1 + len(cases) and err == ""
    for line, (name, w, _, capacity, z, _) in zip(lines[1:], cases, strict=True):
        row = line.split()
        assert row[:6] == [name, str(len(w)), str(capacity), str(z), str(z), "ok"] and float(row[6]) >= 0

    assert solve(f, "--json") == 0
    objs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["name"] for o in objs] == [c[0] for c in cases]
    for o, (_, w, v, capacity, z, x) in zip(objs, cases, strict=True):
        assert o["value"] == o["expected"] == z and o["ok"] is True and o["format"] == "pisinger-csv"
        assert sum(w[i] for i in o["selected"]) == o["weight"] <= capacity and sum(v[i] for i in o["selected"]) == z
        assert o["file_solution"] == {
            "items": sum(x),
            "weight": o["file_solution"]["weight"],
            "value": z,
            "problem": None,
        }


def test_a_wrong_z_is_a_mismatch_and_exits_1(tmp_path, capsys, rng):
    cases = brute_forced(rng, 4)
    name, w, v, capacity, z, x = cases[2]
    cases[2] = (name, w, v, capacity, z + 1, x)  # the file claims more than the optimum
    f = write(tmp_path, "wrong.csv", knappi_text(cases))
    assert solve(f) == 1
    out, err = capsys.readouterr()
    checks = [line.split()[5] for line in out.splitlines()[1:]]
    assert checks == ["ok", "ok", "MISMATCH", "ok"]
    line = 1 + sum(5 + len(c[1]) + 2 for c in cases[:2])  # name, n, c, z, time, the rows, "-----", a blank line
    assert f"warning: {f}:{line}: instance {name}: the file's own solution (its x column) is worth {z}, not the " in err
    assert err.endswith(f"knapsack-gpu: 1 of 4 optima differ from the file's z: {name}\n")
    assert solve(f, "--json") == 1
    assert [json.loads(o)["ok"] for o in capsys.readouterr().out.splitlines()] == [True, True, False, True]
    # one instance, by name or index: the file's z is its expected optimum; --expect overrides it
    assert solve(f, "--instance", name) == 1
    out, err = capsys.readouterr()
    assert f"expected   {z + 1} (the file's z): MISMATCH" in out
    assert err.endswith(f"knapsack-gpu: optimum {z} differs from the expected {z + 1} (the file's z)\n")
    assert solve(f, "--instance", 3, "--expect", z) == 0
    assert f"expected   {z} (--expect): ok" in capsys.readouterr().out


def test_choose_an_instance_by_name_or_index(tmp_path, capsys):
    # "tiny" starts on line 59: the sample's 56 lines and two blank ones before it
    sample = KNAPPI_1_50_1000_1 + "\n" + knappi_text([("tiny", W, V, C, OPT, [1, 1, 0, 0, 0, 0, 0, 0, 0, 0])])
    f = write(tmp_path, "knapPI_1_50_1000.csv", sample)
    for choice in ("knapPI_1_50_1000_1", "1"):
        assert solve(f, "--instance", choice) == 0
        out = capsys.readouterr().out
        assert out.startswith("instance   knapPI_1_50_1000_1: 50 items, capacity 995\noptimum    8373\n")
        assert "expected   8373 (the file's z): ok" in out
        assert "file's x   11 items, weight 971, value 8373: feasible and worth z" in out
    assert solve(f, "--instance", "tiny", "--json") == 0  # P01's x above is not optimal: a warning, not an error
    out, err = capsys.readouterr()
    o = json.loads(out)
    assert (o["name"], o["value"], o["expected"], o["ok"]) == ("tiny", OPT, OPT, True)
    assert o["file_solution"]["problem"] == f"is worth {V[0] + V[1]}, not the file's z = {OPT}"
    assert err.startswith(f"knapsack-gpu: warning: {f}:59: instance tiny: the file's own solution") and "solving" in err


def test_a_files_infeasible_solution_is_reported_and_solved_anyway(tmp_path, capsys):
    x = [1] * len(W)  # every item: weight 577 > 165
    f = write(tmp_path, "over.csv", knappi_text([("p01", W, V, C, OPT, x)]))
    assert solve(f) == 0  # the file's z is right, so the solve is as expected
    out, err = capsys.readouterr()
    assert err == (
        f"knapsack-gpu: warning: {f}:1: instance p01: the file's own solution (its x column) weighs {sum(W)}, over "
        f"the capacity c = {C} and is worth {sum(V)}, not the file's z = {OPT}; solving it anyway\n"
    )
    assert f"optimum    {OPT}\n" in out and f"file's x   10 items, weight {sum(W)}, value {sum(V)}: weighs" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["solve", "--instance", "7"], "instance 7: the file holds 2 instances, numbered 1 to 2"),
        (["solve", "--instance", "knapPI_x"], "no instance is named 'knapPI_x'; it holds a, b"),
        (["solve", "--expect", "5"], "--expect checks one optimum, but {f} holds 2 instances"),
        (["plan"], "{f} holds 2 instances (a, b): choose one by name or 1-based index"),
        (["profile"], "{f} holds 2 instances (a, b): choose one"),
    ],
    ids=["index-past-the-end", "unknown-name", "expect-with-several", "plan-needs-one", "profile-needs-one"],
)
def test_instance_usage_errors_exit_2(tmp_path, capsys, argv, message):
    f = write(tmp_path, "two.csv", knappi_text([("a", [1], [2], 1, 2, [1]), ("b", [3], [4], 2, 0, [0])]))
    assert main([argv[0], str(f), *argv[1:], "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("knapsack-gpu: error: ") and message.format(f=f) in err, err


def test_plan_and_profile_take_one_instance(tmp_path, capsys):
    f = write(tmp_path, "two.csv", KNAPPI_1_50_1000_1 + knappi_text([("p01", W, V, C, OPT, [0] * len(W))]))
    csv = tmp_path / "p.csv"
    assert main(["profile", str(f), "--instance", "p01", "--csv", str(csv), "--device", "cpu"]) == 0
    assert capsys.readouterr().out.startswith(f"instance p01: {len(W)} items, capacity {C}")
    assert np.loadtxt(csv, delimiter=",", skiprows=1)[-1, 1] == OPT
    assert main(["plan", str(f), "--instance", "1", "--device", "cpu", "--device-memory", "1GB", "--json"]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), dict)


def test_help_describes_every_layout_and_the_instance_flag(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solve", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--instance NAME|INDEX" in out and "solve them all, a line each" in out
    epilog = out[out.index("instance files, the layout") :]
    for fmt in FORMATS[1:]:
        line = next(i for i, text in enumerate(epilog.splitlines()) if text.startswith(f"  {fmt} "))
        assert "e.g. " in "\n".join(epilog.splitlines()[line : line + 3]), fmt
    docs = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    assert JSON_SCHEMA in docs, "docs/cli.md's list of instance files is --help's: copy it over"


def test_the_summary_names_no_missing_backend_and_what_settled_it():
    """Issue 59: the summary printed "(None, grouped, int64)" and "work none (the bounds and reductions settled it)"
    beside "reductions none". A grouped solve names its work, a set-up that answers says so, no None is printed."""
    import knapsack_gpu
    from knapsack_gpu import generate
    from knapsack_gpu.output import summary

    w, v, c = generate.jooken(np.random.default_rng(3), 400, c=10**8, g=10, eps=1e-4, s=200)
    sol = knapsack_gpu.solve(w, v, c, device="cpu")
    text = summary("j", len(w), c, sol)
    assert sol.stats["strategy"] == "grouped" and "None" not in text and "(grouped, int64)" in text
    assert "count vectors over" in text
    sol = knapsack_gpu.solve([3, 4], [5, 6], 10, device="cpu")  # everything fits: no search
    text = summary("all", 2, 10, sol)
    assert "work       none (every item it would search fits, or none is left)" in text and "None" not in text
