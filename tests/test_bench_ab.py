"""benchmarks/ab.py: two workers solve the same instances in turns and the rows say whose median is whose (here both
sides are the working tree: the protocol, not a comparison)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

ab = pytest.importorskip("ab")


def test_two_sides_in_turns_write_their_medians(tmp_path, monkeypatch):
    monkeypatch.setattr(ab, "HERE", tmp_path)  # results under tmp_path/results/
    rc = ab.main([".", ".", "--groups", "partitioner", "--workloads", "n100-", "--rounds", "2", "--processes", "2",
                  "--turn-s", "0", "--out", "ab"])  # fmt: skip
    assert rc == 0
    saved = json.loads((tmp_path / "results" / "ab.json").read_text())
    (row,) = saved["rows"]
    assert row["workload"].startswith("partitioner/n100-") and row["same_optimum"]
    assert row["solves"] == [2, 2]  # one solve a turn (--turn-s 0), a turn a round
    assert row["a_s"] > 0 and row["b_s"] > 0


def test_an_unknown_group_is_refused_by_name():
    with pytest.raises(SystemExit, match="--groups takes"):
        ab.chosen(["nope"])
