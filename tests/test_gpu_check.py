"""The GPU check script must keep working between the sessions that get a GPU: run its smoke mode here."""

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


def sections() -> list[str]:
    """The sections gpu_check.py runs, in order, from the script itself."""
    script = str(ROOT / "benchmarks" / "gpu_check.py")
    listed = subprocess.run([sys.executable, script, "--sections"], capture_output=True, text=True, timeout=HANG_S)
    assert listed.returncode == 0 and listed.stdout.strip(), listed.stderr
    return [name.replace("-", " ") for name in listed.stdout.split()]


SECTIONS = sections()


def smoke(python: str, out: Path) -> dict:
    """The smoke run has no time budget: every section must run and be right, however long the machine takes."""
    r = subprocess.run(
        [python, str(ROOT / "benchmarks" / "gpu_check.py"), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    tail = r.stdout[-2000:] + r.stderr[-2000:]
    assert out.exists(), tail
    data = json.loads(out.read_text())
    assert data["meta"]["budget_s"] is None
    assert [s["section"] for s in data["sections"]] == SECTIONS
    assert all(s["status"] == "ok" for s in data["sections"]), data["sections"]
    assert data["checks"] and all(c["ok"] for c in data["checks"])
    assert {c["path"] for c in data["checks"] if c["check"] == "kernel==numpy"} == {"sweep", "item", "tile", "mixed"}
    assert any(c["check"] == "partitioner" for c in data["checks"])
    assert {"batch kernel==torch pass", "dense batch==cpu"} <= {c["check"] for c in data["checks"]}
    assert [c["compiled"] for c in data["checks"] if c["check"] == "numba kernels"] == [
        data["meta"]["versions"]["numba"] is not None
    ]
    assert data["throughput"] and data["end_to_end"]
    # an end-to-end case is skipped only where its instance file is absent (the checkout has no shared/instances)
    assert all(e["skipped"].startswith("instance not found") for e in data["end_to_end"] if "skipped" in e)
    assert any("median_s" in e for e in data["end_to_end"])
    assert r.returncode == 0, tail
    return data


@pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed")
def test_gpu_check_smoke(tmp_path):
    smoke(sys.executable, tmp_path / "gpu.json")


@pytest.mark.slow  # the same smoke run again, under the other Triton, a minute or more (CI runs the slow tier)
@pytest.mark.skipif(not SIDE, reason="no triton 3.6 side environment (.ci/run makes one: KNAPSACK_GPU_TRITON36_PYTHON)")
def test_gpu_check_smoke_with_the_device_images_triton(tmp_path):
    data = smoke(SIDE, tmp_path / "gpu.json")
    assert data["meta"]["versions"]["triton"].startswith("3.6")


@pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed")
def test_only_runs_the_named_sections(tmp_path):
    """A rerun inside a short lease: --only runs those sections, names the others as not run, and still passes; a
    section that does not exist is refused by name."""
    script, out = str(ROOT / "benchmarks" / "gpu_check.py"), tmp_path / "gpu.json"
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    run = [sys.executable, script, "--smoke", "--out", str(out), "--only", "numba,end-to-end"]
    r = subprocess.run(run, capture_output=True, text=True, timeout=HANG_S, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    status = {s["section"]: s["status"] for s in json.loads(out.read_text())["sections"]}
    assert list(status) == SECTIONS
    assert {k for k, v in status.items() if v == "ok"} == {"numba", "end to end"}
    assert all(v == "not run (--only)" for k, v in status.items() if k not in ("numba", "end to end"))
    r = subprocess.run([*run[:-1], "numba,nope"], capture_output=True, text=True, timeout=HANG_S, env=env)
    assert r.returncode == 2 and "no section ['nope']" in r.stderr


def test_instance_files_lists_what_a_run_reads():
    """--instance-files names the files a device run needs beside the checkout; each is a shipped instance."""
    script = str(ROOT / "benchmarks" / "gpu_check.py")
    r = subprocess.run([sys.executable, script, "--instance-files"], capture_output=True, text=True, timeout=HANG_S)
    assert r.returncode == 0, r.stderr[-2000:]
    files = r.stdout.split()
    assert len(files) == len(set(files)) >= 6 and all(f.startswith(("jooken/", "kplib/")) for f in files)
    shipped = ROOT.parent / "shared" / "instances"
    if shipped.is_dir():
        assert [f for f in files if not (shipped / f).is_file()] == []
