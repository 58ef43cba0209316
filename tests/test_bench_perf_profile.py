"""benchmarks/perf_profile.py: numba's symbol names read back, and (where Linux perf runs) a profile that names the
states engine's kernels."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

perf_profile = pytest.importorskip("perf_profile")


@pytest.mark.parametrize(
    "mangled, name",
    [
        ("_ZN12knapsack_gpu6states7kernels3runB4v122B52c8tJTIeFIjxB2IKSgI4CrvSCKg1MMfAwK4LJ", "run"),
        ("_ZN7cpython12knapsack_gpu6states7kernels5startB2v1B40c8tJTIeFIjxB2IK", "cpython start"),
        ("cfunc._ZN12knapsack_gpu6states7kernels8refill_cB4v138B52c8tJTIeFIjx", "cfunc refill_c"),
        ("_ZN5numba2np8arrayobj11ol_np_empty12_3clocals_3e4implB2v3B42c8tJTIeF", "impl"),
        ("NRT_incref", "NRT_incref"),
    ],
)
def test_numba_symbols_read_back_as_their_function_names(mangled, name):
    assert perf_profile._demangle(mangled) == name


def _perf_runs() -> bool:
    if shutil.which("perf") is None:
        return False
    probe = subprocess.run(["perf", "stat", "-e", "task-clock", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _perf_runs(), reason="needs Linux perf, allowed to sample")
def test_a_profile_names_the_compiled_kernels():
    out = subprocess.run(
        [sys.executable, str(BENCH / "perf_profile.py"), "strongly:1000:1e5", "--solves", "300", "--top", "40"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout
    assert "a solve (states)" in text
    assert "compiled kernels" in text
    # the search's kernels by name, not as anonymous JIT addresses
    assert any(f"  {k}" in text for k in ("run", "start", "setup_c", "items_c", "init_state")), text
