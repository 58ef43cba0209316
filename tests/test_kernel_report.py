"""Every kernel variant the launchers can launch compiles for sm_80 and sm_90a without a GPU, with no spill, and the
grid kernels reach the occupancy floor: benchmarks/kernel_report.py --check, with this environment's triton and with
the device image's (triton 3.6) where .ci/run made a side environment for it (KNAPSACK_GPU_TRITON36_PYTHON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_S, HAS_TRITON

ROOT = Path(__file__).resolve().parent.parent
SIDE = os.environ.get("KNAPSACK_GPU_TRITON36_PYTHON")


def report(python: str, out: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    r = subprocess.run(
        [python, str(ROOT / "benchmarks" / "kernel_report.py"), "--check", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(out.read_text())


def check(data: dict) -> None:
    from knapsack_gpu.kernels.variants import variants

    rows = data["rows"]
    assert {(r["variant"], r["arch"]) for r in rows} == {(v.name, a) for v in variants() for a in ("sm_80", "sm_90a")}
    assert all(r["error"] is None for r in rows)
    assert all(r["spill_stores"] == 0 == r["spill_loads"] for r in rows)
    assert all(r["occupancy"] >= data["occupancy_floor"] for r in rows if r["kernel"] in ("item", "tile"))


@pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed")
def test_kernels_compile_for_sm80_and_sm90a(tmp_path):
    check(report(sys.executable, tmp_path / "report.json"))


@pytest.mark.skipif(not SIDE, reason="no triton 3.6 side environment (.ci/run makes one: KNAPSACK_GPU_TRITON36_PYTHON)")
def test_kernels_compile_with_the_device_images_triton(tmp_path):
    data = report(SIDE, tmp_path / "report.json")
    assert data["meta"]["triton"].startswith("3.6")
    check(data)
