"""benchmarks/few_items.py: its numpy meet in the middle is right (brute force), and it compares and writes rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

few_items = pytest.importorskip("few_items")

from knapsack_gpu.reference import brute_force  # noqa: E402


@pytest.mark.parametrize("n", [1, 2, 5, 9, 12])
def test_the_contender_is_the_brute_force_optimum(n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        w, p = rng.integers(1, 50, n), rng.integers(1, 50, n)
        c = int(rng.integers(0, w.sum() + 2))
        assert few_items.meet_in_the_middle(w, p, c) == brute_force(w.tolist(), p.tolist(), c)[0]


def test_it_compares_ours_with_the_contender_and_writes_rows(tmp_path, capsys):
    out = tmp_path / "few.json"
    rows = few_items.main(["--sizes", "12,16", "--seeds", "0,1", "--repeats", "1", "--out", str(out)])
    want = [(n, v, s) for n in (12, 16) for v in few_items.KINDS for s in (0, 1)]
    assert [(r["n"], r["values"], r["seed"]) for r in rows] == want
    assert all(r["ours_s"] > 0 and r["mitm_s"] > 0 for r in rows)
    assert json.loads(out.read_text())["rows"] == rows and "ours/MITM" in capsys.readouterr().out
