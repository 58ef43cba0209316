"""A user's first hour (issue 17): progress that moves, memory errors that give a limit that works, a torch.compile
hook that logs, exit codes and input edges of the CLI, and packaging. Each test failed before."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import knapsack_gpu
from knapsack_gpu import generate, progress
from knapsack_gpu.cli import main
from knapsack_gpu.formats import write_json

ROOT = Path(__file__).resolve().parent.parent


class Recorder:
    """A Progress that keeps every call."""

    def __init__(self):
        self.calls = []

    def start(self, total, unit, phase):
        self.calls.append(("start", total, unit, phase))

    def update(self, done):
        self.calls.append(("update", done))

    def done(self, unit: str) -> int:
        """Units reported in the last phase of ``unit``."""
        total, phase = 0, None
        for call in self.calls:
            if call[0] == "start":
                phase, total = call[2], 0
            elif phase == unit:
                total += call[1]
        return total


def test_reporter_throttles_by_its_clock():
    now = [0.0]
    rec = Recorder()
    rep = progress.Reporter(rec, clock=lambda: now[0])
    rep.start(100, "cells", "dense pass")
    for _ in range(10):
        rep.add(3)  # within INTERVAL: summed, not forwarded
    assert rec.calls == [("start", 100, "cells", "dense pass")]
    now[0] += progress.INTERVAL
    rep.add(5)
    assert rec.calls[-1] == ("update", 35)
    rep.add(1)
    rep.flush()
    assert rec.calls[-1] == ("update", 1)


def test_a_dense_pass_reports_while_it_runs(monkeypatch):
    """Every chunk of profile reaches the listener as it is done (INTERVAL 0 forwards each), so a long pass moves the
    bar during the pass; the phase's total is the bit-table pass's planned cells, and the updates add up to it."""
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    w, v, c = generate.FAMILIES["uncorrelated"](np.random.default_rng(1), 60, 10**5, 0.5)
    rec = Recorder()
    sol = knapsack_gpu.solve(w, v, c, device="cpu", backend="numpy", strategy="dense", progress=rec)
    starts = [call for call in rec.calls if call[0] == "start"]
    assert starts == [("start", sol.stats["cell_updates"], "cells", "dense pass")]
    updates = [call[1] for call in rec.calls if call[0] == "update"]
    assert len(updates) > 60  # more than one a item: long items report per chunk
    assert sum(updates) == sol.stats["cell_updates"]


def test_the_states_engine_reports_its_phase():
    w, v, c = generate.FAMILIES["strongly"](np.random.default_rng(2), 300, 1000, 0.5)
    rec = Recorder()
    sol = knapsack_gpu.solve(w, v, c, device="cpu", strategy="states", progress=rec)
    assert rec.calls[0] == ("start", None, "states", "states")  # a budget is a cap, not a total
    assert rec.done("states") == sol.stats["state_updates"]


def test_each_phase_is_named_and_only_real_totals_are_given(monkeypatch):
    """The states engine's phase has no total even under a budget (it is only a cap); a dense plan that recurses is
    "Hirschberg" with its estimate; a listener of two arguments is still served, without the phase's name."""
    import knapsack_gpu.plan as plan_mod

    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    for name, value in (("STATES_MIN_UPDATES", 1), ("STATES_FIRST_SHARE", 1e-12), ("STATES_BUDGET_SHARE", 1e-12)):
        monkeypatch.setattr(plan_mod, name, value)
    monkeypatch.setattr(plan_mod, "STATES_CAP_SHARE", 0.0)
    w, v, c = generate.FAMILIES["strongly"](np.random.default_rng(2), 300, 1000, 0.5)
    rec = Recorder()
    least = _needed(w, v, c, strategy="pruned")  # the Hirschberg minimum: a bit table does not fit there
    sol = knapsack_gpu.solve(w, v, c, device="cpu", progress=rec, memory_limit=least)
    phases = [(call[3], call[1] is None) for call in rec.calls if call[0] == "start"]
    assert phases[0] == ("states", True)
    assert sol.stats["strategy"].endswith("hirschberg") and ("Hirschberg", False) in phases

    class TwoArguments:
        def __init__(self):
            self.units = []

        def start(self, total, unit):
            self.units.append(unit)

        def update(self, done):
            pass

    old = TwoArguments()
    knapsack_gpu.solve(w, v, c, device="cpu", progress=old)
    assert old.units and old.units[0] == "states"


def test_no_tqdm_hint_for_a_quick_solve(monkeypatch, capsys):
    """Without tqdm a bar says how to get one, once, and only when a solve runs past the bar's delay."""
    now = [0.0]
    monkeypatch.setattr(progress.TqdmProgress, "_told", False)
    bar = progress.TqdmProgress(delay=1.0, clock=lambda: now[0])
    bar.tqdm = None  # as without tqdm installed
    bar.start(None, "states", "states")
    bar.update(10)
    assert capsys.readouterr().err == ""  # a quick solve: nothing to say
    now[0] = 2.0
    bar.update(10)
    bar.update(10)
    assert capsys.readouterr().err.count("pip install 'knapsack-gpu[progress]'") == 1


def test_progress_true_is_a_bar_and_a_bad_listener_is_refused():
    w, v, c = generate.FAMILIES["weakly"](np.random.default_rng(3), 200, 1000, 0.5)
    assert knapsack_gpu.solve(w, v, c, device="cpu", progress=True).value == knapsack_gpu.solve(w, v, c).value
    with pytest.raises(TypeError, match="start.total, unit, phase. and update.done."):
        knapsack_gpu.solve(w, v, c, progress=object())


def _needed(w, v, c, **kw) -> int:
    with pytest.raises(MemoryError) as info:
        knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=1000, **kw)
    found = re.findall(r"memory_limit >= (\d+) bytes", str(info.value))
    assert found, str(info.value)
    return int(found[-1])


@pytest.mark.parametrize("plan", [dict(strategy="dense"), dict(strategy="pruned"), dict(canonical=True)], ids=str)
@pytest.mark.parametrize("family", ["uncorrelated", "strongly", "float-values"])
def test_a_memory_error_names_a_limit_that_works(plan, family):
    """'memory_limit >= N': N works, N - 1 does not (per-item state included)."""
    w, v, c = generate.FAMILIES[family](np.random.default_rng(4), 200, 3000, 0.5)
    n = _needed(w, v, c, **plan)
    sol = knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=n, **plan)
    assert sol.stats["peak_bytes"] <= n and sol.weight <= c
    with pytest.raises(MemoryError):
        knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=n - 1, **plan)


def test_the_partitioner_hook_logs_each_solve(caplog):
    import knapsack_gpu.partitioner as kp

    estimator = kp.RecordingRuntimeEstimator("testing")
    solver = kp.KnapsackSolver(estimator, device="cpu")
    nodes = [object() for _ in range(4)]
    estimator.runtimes.update({node: float(i + 1) for i, node in enumerate(nodes)})
    with caplog.at_level(logging.DEBUG, logger="knapsack_gpu"):
        saved, recomputable = solver([0.3, 0.2, 0.4, 0.1], None, 0.5, None, nodes)
    info = [r for r in caplog.records if r.levelno == logging.INFO and r.name.startswith("knapsack_gpu")]
    assert len(info) == 1
    line = info[0].getMessage()
    assert "4 candidates" in line and "budget 0.5" in line and "runtime-optimal" in line and "ms" in line
    assert any(r.levelno == logging.DEBUG for r in caplog.records)
    assert solver.calls == 1 and solver.last_call["saved"] == saved and "strategy" in solver.last_call["stats"]


def _kp_file(tmp_path, text="3\n10\n\n5 4\n6 5\n7 6\n", name="t.kp", bom=False) -> Path:
    f = tmp_path / name
    f.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return f


def test_exit_codes_and_expect_with_floats(tmp_path, capsys):
    f = _kp_file(tmp_path)
    assert main(["solve", str(f), "--device", "cpu", "--expect", "12"]) == 0
    assert main(["solve", str(f), "--device", "cpu", "--expect", "13"]) == 1
    floats = tmp_path / "f.json"
    write_json(floats, [4, 5, 6], [1.5, 2.25, 3.125], 10)
    assert main(["solve", str(floats), "--device", "cpu", "--expect", "4.625"]) == 0
    assert main(["solve", str(floats), "--device", "cpu", "--expect", "4.6250000001"]) == 0  # within 1e-9
    assert main(["solve", str(floats), "--device", "cpu", "--expect", "4.7"]) == 1
    assert main(["solve", str(_kp_file(tmp_path, "3\n10\n1 2\n", "bad.kp"))]) == 2
    assert main(["solve", str(f), "--memory-limit", "100B"]) == 3
    with pytest.raises(SystemExit) as info:
        main(["demo", "--n", "-5"])
    assert info.value.code == 2 and "must be at least 1" in capsys.readouterr().err


def test_stdin_and_a_byte_order_mark(tmp_path):
    f = _kp_file(tmp_path, bom=True)
    assert main(["solve", str(f), "--device", "cpu", "--expect", "12"]) == 0
    j = tmp_path / "b.json"
    j.write_bytes(b'\xef\xbb\xbf{"weights": [4, 5, 6], "values": [5, 6, 7], "capacity": 10, "name": "bom"}')
    r = subprocess.run(
        [sys.executable, "-m", "knapsack_gpu", "solve", "-", "--json", "--device", "cpu"],
        input=j.read_bytes(),
        capture_output=True,
        check=True,
    )
    out = json.loads(r.stdout)
    assert out["value"] == 12 and out["name"] == "bom"


@pytest.mark.parametrize("data", [b"", b"3\n1 2\n"], ids=["empty", "short"])
def test_errors_on_stdin_name_it_as_the_user_gave_it(data):
    r = subprocess.run([sys.executable, "-m", "knapsack_gpu", "solve", "-"], input=data, capture_output=True)
    assert r.returncode == 2 and b"<stdin>" in r.stderr and b"/tmp" not in r.stderr, r.stderr


def test_a_closed_pipe_is_not_an_error(tmp_path):
    f = _kp_file(tmp_path)
    cmd = f"{sys.executable} -m knapsack_gpu solve {f} --device cpu | head -c 1"
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True)
    assert r.returncode == 0 and "Broken pipe" not in r.stderr and "Error" not in r.stderr, r.stderr


def test_help_version_and_no_command_answer_without_torch():
    code = (
        "import sys\nfrom knapsack_gpu.cli import main\n"
        "for argv in (['--version'], ['-V'], ['solve', '--help']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "print('torch' in sys.modules, 'numba' in sys.modules, main([]))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.count("knapsack-gpu 0.1.0") == 2
    assert '"weights"' in r.stdout and "byte-order mark" in r.stdout  # the JSON schema in solve --help
    assert r.stdout.strip().endswith("False False 2")  # no torch, no numba (nothing compiles); no command: exit 2
    assert "usage: knapsack-gpu" in r.stderr


def test_text_output_shows_the_items_memory_and_work(tmp_path, capsys):
    f = _kp_file(tmp_path)
    assert main(["solve", str(f), "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "selected   2 items, weight 10: [0, 2]" in out
    assert re.search(r"memory     \d+(\.\d)? (B|KiB|MiB) at the peak", out) and "0.0 MiB" not in out
    assert "state updates" in out
    big = tmp_path / "big.json"
    rng = np.random.default_rng(5)
    w = rng.integers(1, 100, 200)
    write_json(big, w, w + 10, int(w.sum()) // 2)
    assert main(["solve", str(big), "--device", "cpu"]) == 0
    assert "(--json lists them all)" in capsys.readouterr().out
    assert main(["solve", str(f), "--device", "cpu", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)["stats"]
    assert {"lower_bound", "upper_bound", "instance_lower_bound", "instance_upper_bound"} <= set(stats)


def test_profile_csv_writes_integer_capacities(tmp_path):
    floats = tmp_path / "f.json"
    write_json(floats, [4, 5, 6], [1.5, 2.25, 3.125], 10)
    csv = tmp_path / "p.csv"
    assert main(["profile", str(floats), "--csv", str(csv), "--device", "cpu"]) == 0
    lines = csv.read_text().splitlines()
    assert lines[0] == "capacity,value" and lines[1].startswith("0,") and lines[-1].startswith("10,")


def test_packaging_license_sdist_and_optional_imports(tmp_path):
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    sdist = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; print(build_meta.build_sdist({str(tmp_path)!r}))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[-1]
    import tarfile

    with tarfile.open(tmp_path / sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert {"LICENSE", "tests/conftest.py", "tests/oracle.py", "kernels/item.py", "knapsack_gpu/solver.py"} <= names
    missing_triton = (
        "import sys; sys.modules['triton'] = None\n"
        "try:\n    import knapsack_gpu.kernels\nexcept ImportError as e:\n    print(e)"
    )
    r = subprocess.run([sys.executable, "-c", missing_triton], capture_output=True, text=True, check=True)
    assert "pip install 'knapsack-gpu[triton]'" in r.stdout
    missing_tqdm = (  # two bars on solves that run past their delay (0 s here): told once
        "import sys; sys.modules['tqdm'] = None\n"
        "from knapsack_gpu.progress import TqdmProgress\n"
        "for bar in (TqdmProgress(delay=0.0), TqdmProgress(delay=0.0)):\n"
        "    bar.start(None, 'states', 'states'); bar.update(1)"
    )
    r = subprocess.run([sys.executable, "-c", missing_tqdm], capture_output=True, text=True, check=True)
    assert r.stderr.count("knapsack-gpu[progress]") == 1  # told once


def test_the_two_clis_share_their_output_without_importing_each_other():
    code = "import sys, knapsack_gpu.distributed.cli; print('knapsack_gpu.cli' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"
