"""The GPU check script must keep working between the sessions that get a GPU: run its smoke mode here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HAS_TRITON

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed")
def test_gpu_check_smoke(tmp_path):
    out = tmp_path / "gpu.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "TRITON_INTERPRET": "1"},
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["checks"] and all(c["ok"] for c in data["checks"])
    assert data["throughput"] and data["end_to_end"]
