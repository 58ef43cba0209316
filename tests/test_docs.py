"""The examples in docstrings run, and the partitioner's cache key covers every file that decides a plan."""

from __future__ import annotations

import doctest

from conftest import HANG_S

import knapsack_gpu
import knapsack_gpu.partitioner as kp


def test_package_docstring_examples_run():
    failures, tried = doctest.testmod(knapsack_gpu, verbose=False)
    assert tried > 0 and failures == 0


def test_cache_key_covers_the_kernels():
    names = {(p.parent.name, p.name) for p in kp.source_files()}
    assert ("kernels", "item.py") in names and ("kernels", "tile.py") in names  # the top-level kernels/ folder
    assert ("passes", "triton_pass.py") in names and ("knapsack_gpu", "solver.py") in names


def readme_blocks() -> list[str]:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_every_readme_python_block_runs_as_written(tmp_path, monkeypatch):
    """Each ```python block of the README, run on its own in a fresh process (what a reader pastes)."""
    import subprocess
    import sys

    blocks = readme_blocks()
    assert len(blocks) >= 3  # the API, torch.compile and the Pareto front
    monkeypatch.chdir(tmp_path)  # blocks that write files write them here
    for i, block in enumerate(blocks):
        r = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=HANG_S)
        assert r.returncode == 0, f"README python block {i} failed:\n{block}\n{r.stderr[-3000:]}"
