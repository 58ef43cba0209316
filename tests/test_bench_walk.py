"""benchmarks/walk.py: the floors it reads from the imports, and its classes of a traced solve's calls (a plain solve
goes down only; the grouped solver's sub-search, passed in, is a call up: the tracer sees one where there is one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

walk = pytest.importorskip("walk")


def test_floors_and_what_lies_below():
    edges = {"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": set()}
    assert walk.below(edges) == {"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": set()}
    assert walk.floors(edges) == {"a": 3, "b": 2, "c": 1, "d": 1}


@pytest.fixture(scope="module")
def down():
    return walk.below(walk.import_graph())


def test_a_plain_solve_calls_only_down_the_floors(down):
    cases = {name: (inst, kw) for name, inst, kw in walk.cases()}
    for name in ("README example (5 items)", "dense over capacity (n=200)"):
        _, calls, entries, odd = walk.trace(*cases[name], down)
        assert calls["down"] > 0 and calls["up"] == 0, (name, odd)
        assert "knapsack_gpu.solver" in entries or "knapsack_gpu.stages" in entries


def test_a_search_passed_in_is_a_call_up(down):
    """The grouped solver gets the package's search from the solver (it sits below it): the one call back up."""
    inst, kw = next((inst, kw) for name, inst, kw in walk.cases() if name.startswith("grouped"))
    strategy, calls, _, odd = walk.trace(inst, kw, down)
    assert strategy == "grouped" and calls["up"] > 0
    assert any(line.startswith("up: knapsack_gpu.grouped -> knapsack_gpu.solver.") for line in odd), odd
