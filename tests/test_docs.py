"""The examples in docstrings run, and the partitioner's cache key covers every file that decides a plan."""

from __future__ import annotations

import doctest

import knapsack_gpu
import knapsack_gpu.partitioner as kp


def test_package_docstring_examples_run():
    failures, tried = doctest.testmod(knapsack_gpu, verbose=False)
    assert tried > 0 and failures == 0


def test_cache_key_covers_the_kernels():
    names = {(p.parent.name, p.name) for p in kp.source_files()}
    assert ("kernels", "item.py") in names and ("kernels", "tile.py") in names  # the top-level kernels/ folder
    assert ("passes", "triton_pass.py") in names and ("knapsack_gpu", "solver.py") in names
