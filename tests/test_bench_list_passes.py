"""benchmarks/list_passes.py: the lists it replays are a real search's, its check can fail, and it writes its table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

list_passes = pytest.importorskip("list_passes")

from knapsack_gpu import jit  # noqa: E402
from knapsack_gpu.states import modes  # noqa: E402

pytestmark = pytest.mark.skipif(not jit.enabled(), reason="replays the compiled binding's passes")
SPEC = "circle:1000:1e4"  # lists of up to ~8,000 states, 1.4 million updates


def _plan():
    w, v, c = list_passes._instance(SPEC)
    copies, stats = list_passes.capture(w, v, c, every=1 << 15, min_states=300)
    return copies, stats, list_passes.steps(copies)


def test_the_copies_are_the_searchs_lists_and_every_step_matches_numpy():
    copies, stats, plan = _plan()
    assert len(copies) >= 10 and plan
    assert max(cp["W"].size for cp in copies) <= stats["peak_states"]
    for cp in copies:  # a search's list: weights and values strictly increasing
        assert np.all(np.diff(cp["W"]) > 0) and np.all(np.diff(cp["P"]) > 0)
    assert list_passes.check(plan) == len(plan)


def test_a_pass_that_drops_a_state_fails_the_check(monkeypatch):
    _, _, plan = _plan()
    B = modes.compiled()
    merge = B.merge_c

    def dropping(L, IR, *args):
        L, k, feasible = merge(L, IR, *args)
        return L, k - 1, min(feasible, k - 1)

    monkeypatch.setattr(B, "merge_c", dropping)
    with pytest.raises(SystemExit, match="merge_c differs"):
        list_passes.check(plan)


def test_it_prints_and_writes_ns_per_candidate(tmp_path, capsys):
    out = tmp_path / "passes.json"
    list_passes.main([SPEC, "--every", str(1 << 15), "--min-states", "300", "--repeats", "1", "--out", str(out)])
    text = capsys.readouterr().out
    assert "merge_prune_c" in text and "steps as numpy's" in text
    got = json.loads(out.read_text())
    assert got["spec"] == SPEC and got["candidates"] > 0 and got["machine"]["threads"] == 1
    assert [r["pass"] for r in got["rows"]] == ["merge_c", "merge_prune_c"]
    assert all(r["ns_per_candidate"] > 0 for r in got["rows"])
