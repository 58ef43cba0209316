"""Checks shared by the test modules: feasibility separately from value, against an independent oracle."""

from __future__ import annotations

import math

import numpy as np


def assert_feasible(sol, weights, capacity) -> None:
    w = np.asarray(weights, dtype=np.int64)
    sel = sol.selected
    assert sel == sorted(set(sel)), "selected must be ascending and unique"
    indices = getattr(sol, "indices", None)  # (a result sent back from a subprocess as JSON has only the list)
    if indices is not None:  # the array behind the list: int64, the same items, read-only (a Solution is frozen)
        assert indices.dtype == np.int64 and indices.tolist() == sel and not indices.flags.writeable
    assert all(0 <= i < len(w) for i in sel)
    assert int(w[sel].sum()) == sol.weight
    assert sol.weight <= capacity, f"over capacity: {sol.weight} > {capacity}"


def assert_value(sol, values, optimum) -> None:
    v = np.asarray(values)
    if v.dtype.kind == "f" and not np.all(v == np.floor(v)):
        assert math.isclose(sol.value, optimum, rel_tol=1e-9, abs_tol=1e-9)
        assert math.isclose(math.fsum(v[sol.selected].tolist()), sol.value, rel_tol=1e-12, abs_tol=1e-9)
    else:
        assert isinstance(sol.value, int)
        assert sol.value == int(optimum)
        assert int(v[sol.selected].astype(object).sum()) == sol.value
