"""TqdmProgress through its API on a fake clock (issue 51): nothing drawn before the solve's delay, not even by a new
phase; once drawn, a bar the next phase resets and ``close`` clears; counts as whole numbers or SI-scaled ("0 states",
"784k", "651M", never "0.00states"); KNAPSACK_GPU_PROGRESS_DELAY; the CLI closes the bar before it prints."""

from __future__ import annotations

import io
import sys

import pytest

from knapsack_gpu import cli, progress
from knapsack_gpu.progress import TqdmProgress

pytest.importorskip("tqdm")

W, V, C = [23, 31, 29, 44, 53, 38, 63, 85, 89, 82], [92, 57, 49, 68, 60, 43, 67, 84, 87, 72], 165


def shown(err: str) -> str:
    """What the bar's line shows last: the text after its last carriage return."""
    return err.rstrip("\r").rsplit("\r", 1)[-1]


def test_a_solve_that_ends_before_the_delay_draws_nothing(capsys):
    """tqdm's reset draws at once, and its close then takes the bar for never drawn: a second phase left
    "states: 0.00states" or "dense pass: 0%" on the terminal, and the result was printed onto it."""
    now = [0.0]
    bar = TqdmProgress(delay=1.0, clock=lambda: now[0])
    bar.start(None, "states", "states")
    bar.update(784_394)
    now[0] = 0.05
    bar.start(None, "states", "states")
    bar.update(9_232_280)
    now[0] = 0.5
    bar.start(651_000_000, "cells", "dense pass")
    bar.update(651_000_000)
    bar.close()
    assert capsys.readouterr().err == ""


def test_a_bar_past_the_delay_follows_the_phases_and_is_cleared(capsys):
    now = [0.0]
    bar = TqdmProgress(delay=1.0, clock=lambda: now[0])
    bar.start(None, "states", "states")
    bar.update(784_390)
    assert capsys.readouterr().err == ""
    now[0] = 2.0
    bar.update(4)  # past the delay: drawn at the phase's count so far
    err = capsys.readouterr().err
    assert shown(err).startswith("states: 784k states [") and "0.00" not in err
    bar.start(651_000_000, "cells", "dense pass")
    assert shown(capsys.readouterr().err).startswith("dense pass:   0%|")
    assert bar.bar.total == 651_000_000
    bar.start(None, "states", "states")  # no total: not the last phase's
    assert bar.bar.total is None
    assert shown(capsys.readouterr().err).startswith("states: 0 states [")
    bar.close()
    err = capsys.readouterr().err
    assert err.endswith("\r") and shown(err).strip() == ""  # the line is blank: what comes next starts clean
    assert bar.bar is None


def test_a_phase_started_past_the_delay_draws_at_once_with_its_total(capsys):
    now = [5.0]
    bar = TqdmProgress(delay=1.0, clock=lambda: now[0])
    bar.start(None, "states", "states")  # the solve's clock starts here
    assert capsys.readouterr().err == ""
    now[0] = 6.0
    bar.start(651_000_000, "cells", "dense pass")
    assert "| 0/651M [" in shown(capsys.readouterr().err)
    bar.close()


def test_hirschberg_past_its_estimate_raises_the_total(capsys):
    bar = TqdmProgress(delay=0.0, clock=lambda: 0.0)
    bar.start(100, "cells", "Hirschberg")
    bar.update(60)
    bar.update(60)
    assert (bar.bar.n, bar.bar.total) == (120, 120)
    bar.close()
    assert shown(capsys.readouterr().err).strip() == ""


def test_the_delay_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(progress.ENV_DELAY, raising=False)
    assert TqdmProgress().delay == progress.DELAY == 1.0
    monkeypatch.setenv(progress.ENV_DELAY, "0")
    assert TqdmProgress().delay == 0.0
    assert TqdmProgress(delay=3.0).delay == 3.0  # an argument wins
    monkeypatch.setenv(progress.ENV_DELAY, " 2.5 ")
    assert TqdmProgress().delay == 2.5
    for bad in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv(progress.ENV_DELAY, bad)
        with pytest.raises(ValueError, match=f"{progress.ENV_DELAY}=.*a number >= 0"):
            TqdmProgress()


def test_the_cli_closes_the_bar_before_it_prints(tmp_path, monkeypatch):
    out = io.StringIO()
    closed = []

    class Bar:
        def __init__(self):
            self.phases = []

        def start(self, total, unit, phase=""):
            self.phases.append(phase)

        def update(self, done):
            pass

        def close(self):
            closed.append((list(self.phases), out.getvalue()))

    monkeypatch.setattr(progress, "TqdmProgress", Bar)
    monkeypatch.setattr(sys, "stdout", out)
    path = tmp_path / "p01.json"
    path.write_text(f'{{"weights": {W}, "values": {V}, "capacity": {C}}}')
    assert cli.main(["solve", str(path), "--device", "cpu"]) == 0
    assert len(closed) == 1 and closed[0][0] and closed[0][1] == ""  # closed after its phases, before any output
    assert "optimum    309" in out.getvalue()
