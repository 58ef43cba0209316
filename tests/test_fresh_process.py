"""What a fresh process imports (issue 59): torch only where a solve needs it (a tensor passed in, a CUDA device, a
dense pass, the torch or Triton backends, the partitioner), numba only where a search is long enough to pay for
loading its kernels. Each case runs in a fresh interpreter and reports its sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import HANG_S

from knapsack_gpu import numba_jit

FIVE = "[12, 7, 11, 8, 9], [24, 13, 23, 15, 16], 26"


def _fresh(code: str, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; return what it printed last (a JSON object) with which of torch, numba
    and triton it had imported."""
    tail = "\nimport json, sys\nprint(json.dumps({'torch': 'torch' in sys.modules, 'numba': 'numba' in sys.modules,"
    tail += " 'triton': 'triton' in sys.modules, **globals().get('OUT', {})}))"
    import os

    r = subprocess.run([sys.executable, "-c", code + tail], capture_output=True, text=True, timeout=HANG_S,
                       env={**os.environ, **(env or {})})  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "call",
    [
        f"knapsack_gpu.solve({FIVE})",  # the README's example: lists
        "knapsack_gpu.solve(np.array([12, 7, 11, 8, 9]), np.array([24, 13, 23, 15, 16]), 26)",  # numpy arrays
        "knapsack_gpu.solve([0.5, 0.25, 0.75], [1.0, 2.5, 3.0], 1.0)",  # float weights and values
    ],
    ids=["lists", "numpy", "floats"],
)
def test_a_small_cpu_solve_imports_neither_torch_nor_numba(call):
    got = _fresh(f"import numpy as np\nimport knapsack_gpu\nOUT = {{'answer': str({call})[:40]}}")
    assert not got["torch"], f"{call} imported torch"
    assert not got["numba"], f"{call} imported numba (a small search runs interpreted in a fresh process)"


def test_the_readmes_first_example_imports_neither_torch_nor_numba():
    """The README's first python block, as a reader pastes it (benchmarks/first_answer.py times it): its README
    says a fresh process answers it without torch."""
    from test_docs import readme_blocks

    got = _fresh(readme_blocks()[0])
    assert not got["torch"] and not got["numba"]


def _search(family: str, n: int, R: int) -> dict:
    code = (
        "import numpy as np\nimport knapsack_gpu\nfrom knapsack_gpu import generate\n"
        f"w, v, c = generate.FAMILIES[{family!r}](np.random.default_rng(0), {n}, R={R})\n"
        "s = knapsack_gpu.solve(w, v, c)\nOUT = {'binding': s.stats['binding'], 'strategy': s.stats['strategy'],"
        " 'updates': s.stats['state_updates']}"
    )
    return _fresh(code)


def test_a_short_search_of_many_items_loads_no_kernels():
    """10,000 items that the states engine closes in a few thousand updates: interpreted, numba never imported, as
    with an empty cache (loading the compiled kernels would cost a fresh process more than the whole search)."""
    got = _search("uncorrelated", 10000, 10**4)
    assert got["strategy"] == "states" and got["updates"] < numba_jit.LOAD_UPDATES
    assert not got["torch"] and not got["numba"] and got["binding"] == "python"


def test_a_long_search_loads_the_compiled_kernels_but_not_torch():
    """circle, 2,000 items: past the first LOAD_UPDATES the compiled kernels pay for themselves (numba imported),
    torch still not (the interpreted merge borrows torch's cummax only where torch is imported already)."""
    got = _search("circle", 2000, 10**5)
    assert not got["torch"] and got["strategy"] == "states" and got["updates"] > numba_jit.LOAD_UPDATES
    if numba_jit.enabled():
        assert got["numba"] and got["binding"] == "compiled"


def test_a_tensor_or_a_dense_plan_imports_torch():
    """Where a solve does need torch, it imports it: a tensor passed in, a forced dense plan."""
    assert _fresh("import torch\nimport knapsack_gpu\nknapsack_gpu.solve(torch.tensor([3, 4]), [5, 6], 4)")["torch"]
    got = _fresh(f"import knapsack_gpu\nOUT = {{'s': knapsack_gpu.solve({FIVE}, strategy='dense').stats['strategy']}}")
    assert got["torch"] and got["s"].startswith("dense")


def test_solve_batch_of_arrays_on_the_cpu_imports_no_torch():
    code = (
        "import numpy as np\nimport knapsack_gpu\nrng = np.random.default_rng(0)\n"
        "r = knapsack_gpu.solve_batch(rng.random((50, 20)), rng.random((50, 20)), 4.0)\n"
        "OUT = {'type': type(r.value).__name__}"
    )
    got = _fresh(code)
    assert not got["torch"] and got["type"] == "ndarray"


def test_the_cli_solves_a_small_file_without_torch(tmp_path):
    path = tmp_path / "five.json"
    path.write_text('{"weights": [12, 7, 11, 8, 9], "values": [24, 13, 23, 15, 16], "capacity": 26}')
    code = (
        "import sys, contextlib, io\nfrom knapsack_gpu.cli import main\nbuf = io.StringIO()\n"
        f"with contextlib.redirect_stdout(buf):\n    rc = main(['solve', {str(path)!r}])\n"
        "OUT = {'rc': rc, 'text': buf.getvalue()}"
    )
    got = _fresh(code)
    assert got["rc"] == 0 and "optimum    51" in got["text"]
    assert not got["torch"] and not got["numba"]
