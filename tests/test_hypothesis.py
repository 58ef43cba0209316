"""Property-based: weights and values up to 2**62 (sums past 2**63 included), every CPU backend, every plan, the
Triton kernels in the interpreter, against brute force in Python integers. Seeded (derandomized): CI runs the same
examples every time."""

from __future__ import annotations

import pytest
from conftest import HAS_TRITON, device_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import knapsack_gpu
from knapsack_gpu.reference import brute_force

BIG = 2**62 - 1

# A mix that reaches the edges: tiny numbers (ties, dense DPs), numbers near 2**62, and everything between.
numbers = st.one_of(st.integers(0, 20), st.integers(BIG - 2**20, BIG), st.integers(0, BIG))
capacities = st.one_of(st.integers(0, 60), st.integers(0, BIG), st.integers(BIG - 2**40, BIG))
instances = st.integers(0, 7).flatmap(
    lambda n: st.tuples(st.lists(numbers, min_size=n, max_size=n), st.lists(numbers, min_size=n, max_size=n))
)


def check(weights, values, capacity, **kwargs):
    best, optimal = brute_force(weights, values, capacity)
    try:
        sol = knapsack_gpu.solve(weights, values, capacity, device=device_for(kwargs.get("backend", "auto")), **kwargs)
    except ValueError as exc:
        # Refused only where the optimum itself may not fit int64 (a bound past it), and said so.
        assert "int64" in str(exc)
        assert sum(v for w, v in zip(weights, values, strict=True) if w <= capacity) >= 2**63
        return
    except MemoryError as exc:
        # Only a forced dense (or pruned dense) plan over a capacity no row can hold.
        assert kwargs.get("strategy") in ("dense", "pruned") and "bytes" in str(exc)
        return
    assert sol.value == best and isinstance(sol.value, int)
    assert sol.selected in optimal
    assert sol.weight == sum(weights[i] for i in sol.selected) <= capacity


FAST = settings(max_examples=1500, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(instances, capacities, st.sampled_from(["numpy", "torch"]), st.sampled_from(["auto", "states", "pruned"]))
def test_cpu_backends_and_plans(items, capacity, backend, strategy):
    weights, values = items
    check(weights, values, capacity, backend=backend, strategy=strategy)


@FAST
@given(instances, st.integers(0, 60), st.sampled_from(["numpy", "torch"]), st.booleans())
def test_dense_with_big_values(items, capacity, backend, canonical):
    """Capacities a dense row holds, values to 2**62: the DP itself in int64 (or refused), canonical or not."""
    weights, values = items
    check(weights, values, capacity, backend=backend, strategy="dense", canonical=canonical)


@pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed")
@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances, st.integers(0, 60), st.sampled_from(["pruned", "dense"]))
def test_triton_interpreter(items, capacity, strategy):
    weights, values = items
    check(weights, values, capacity, backend="triton", strategy=strategy)
