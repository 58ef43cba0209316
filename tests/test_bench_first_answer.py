"""benchmarks/first_answer.py: it runs the README's own example, in a process whose numba cache is the folder given,
and writes its rows (the commands stubbed: the real ones compile for a minute)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

first_answer = pytest.importorskip("first_answer")


def test_it_times_the_readme_example_as_it_stands():
    code = first_answer.readme_example()
    assert "knapsack_gpu.solve(" in code
    compile(code, "README.md", "exec")  # a block that parses, not a fragment
    cmds = first_answer.commands(sys.executable)
    assert list(cmds)[0] == "compile" and cmds["readme 5 items"][-1] == code


def test_each_run_gets_the_cache_folder_and_the_rows_are_written(tmp_path, monkeypatch):
    probe = "import os; print(os.environ['NUMBA_CACHE_DIR'], os.environ['NUMBA_NUM_THREADS'])"
    monkeypatch.setattr(first_answer, "commands", lambda py: {"compile": [py, "-c", probe], "probe": [py, "-c", probe]})
    out = tmp_path / "rows.json"
    rows = first_answer.main(["--repeats", "2", "--out", str(out)])
    assert [(r["what"], r["cache"]) for r in rows] == [("compile", "empty"), ("probe", "empty"),
                                                       ("compile", "warm"), ("probe", "warm")]  # fmt: skip
    folders = {(r["what"], r["cache"]): r["last_output"].split()[0] for r in rows}
    assert rows[0]["last_output"].split()[1] == "1"  # one thread
    assert folders["compile", "warm"] == folders["probe", "warm"] == folders["compile", "empty"]  # the last compile's
    assert folders["probe", "empty"] != folders["compile", "empty"]
    saved = json.loads(out.read_text())
    assert len(saved["rows"]) == 4 and all(len(r["seconds"]) == 2 for r in saved["rows"])


def test_a_failing_command_stops_the_run(tmp_path):
    with pytest.raises(SystemExit, match="failed"):
        first_answer.run([sys.executable, "-c", "raise SystemExit(3)"], str(tmp_path))
