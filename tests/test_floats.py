"""Float weights and capacities are solved exactly, against the binary numbers given: every finite float is a dyadic
rational, so one power-of-two scale makes a row whole (knapsack_gpu.dyadic). The oracles work in exact rationals
(fractions.Fraction of each float), never at the solver's scale."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import torch

import knapsack_gpu
from knapsack_gpu import dyadic
from knapsack_gpu.reference import reference_dp


def _brute(weights, values, capacity) -> Fraction:
    """The optimum over every subset, in exact rationals (n <= 14)."""
    w = [Fraction(float(x)) for x in weights]
    v = [Fraction(float(x)) for x in values]
    c = Fraction(float(capacity))
    best = Fraction(0)
    for mask in itertools.product((0, 1), repeat=len(w)):
        if sum(wi for wi, m in zip(w, mask, strict=True) if m) <= c:
            best = max(best, sum(vi for vi, m in zip(v, mask, strict=True) if m))
    return best


def _check(sol, weights, values, capacity) -> None:
    """Feasibility in exact rationals, apart from the value; the weight reported is the selection's, rounded once."""
    w = [Fraction(float(x)) for x in weights]
    total = sum((w[i] for i in sol.selected), Fraction(0))
    assert total <= Fraction(float(capacity)), f"over capacity: {total} > {capacity}"
    assert sol.weight == float(total) or sol.weight == total  # (an int where every weight was whole)
    chosen = sum((Fraction(float(values[i])) for i in sol.selected), Fraction(0))
    assert sol.value == chosen if isinstance(sol.value, int) else abs(sol.value - float(chosen)) <= 1e-12 * sol.value


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_float_weights_of_every_dtype_against_every_subset(dtype):
    """torch tensors of each float dtype (and the same numbers as numpy arrays where numpy has the dtype): the
    optimum equals the brute force over exact rationals, whole-number values and float values alike, for capacities
    on and off the weights' grid."""
    gen = torch.Generator().manual_seed(5)
    for trial in range(30):
        n = int(torch.randint(1, 13, (1,), generator=gen))
        w = torch.rand(n, generator=gen).to(dtype)
        v = torch.randint(0, 50, (n,), generator=gen) if trial % 2 else torch.rand(n, generator=gen).to(dtype)
        cap = float(w.double().sum()) * float(torch.rand(1, generator=gen))
        if trial % 3 == 0:
            cap = float(w[0])  # exactly on an item's weight: a rounding of the capacity would show
        sol = knapsack_gpu.solve(w, v, cap, device="cpu")
        _check(sol, w.double().tolist(), v.double().tolist(), cap)
        expect = _brute(w.double().tolist(), v.double().tolist(), cap)
        if v.dtype.is_floating_point:
            assert abs(sol.value - float(expect)) <= 1e-12 * max(1.0, float(expect))
        else:
            assert sol.value == expect
        if dtype in (torch.float16, torch.float32, torch.float64):
            again = knapsack_gpu.solve(w.numpy(), v.numpy(), cap, device="cpu")
            assert (again.value, again.selected) == (sol.value, sol.selected)


def test_the_instance_is_the_one_given_not_a_rounded_one():
    """Weights a hair apart: a power-of-ten rounding (what users do for OR-Tools) would merge them and pick a set
    over the capacity; the exact scale keeps them apart."""
    w = [0.1, 0.2, 0.30000000000000004, 0.3]
    v = [1, 1, 5, 4]
    sol = knapsack_gpu.solve(w, v, 0.6, device="cpu")  # 0.1 + 0.2 + 0.3 = 0.6000000000000001 > 0.6 as floats
    assert sol.value == _brute(w, v, 0.6) == 6
    _check(sol, w, v, 0.6)
    assert sol.stats["weight_exponent"] == dyadic.exponent(np.array(w))


def test_a_coarse_grid_against_the_plain_dp():
    """Weights on a grid of eighths (exact scale 2**3): the plain full-table DP on the integers k = 8 w is an
    independent oracle at n = 60, where no brute force reaches."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        k = rng.integers(1, 200, 60)
        w = k / 8.0
        v = rng.integers(1, 1000, 60)
        cap = float(rng.uniform(0.2, 0.6) * w.sum())
        sol = knapsack_gpu.solve(w, v, cap, device="cpu")
        value, _ = reference_dp(k.tolist(), v.tolist(), int(np.floor(cap * 8)))
        assert sol.value == value
        _check(sol, w, v, cap)
        assert sol.stats["weight_exponent"] <= 3


def test_whole_number_floats_and_fractional_capacities_with_integer_weights():
    """Whole-number float weights stay at scale 1 (an int weight back); a fractional capacity over integer weights
    is its floor; a capacity past the total weight takes everything."""
    sol = knapsack_gpu.solve([3.0, 4.0, 5.0], [30, 50, 60], 8.9, device="cpu")
    assert (sol.value, sol.selected, sol.weight, sol.stats["weight_exponent"]) == (90, [0, 2], 8, 0)
    assert isinstance(sol.weight, int)
    sol = knapsack_gpu.solve([3, 4, 5], [30, 50, 60], 7.999, device="cpu")
    assert (sol.value, sol.selected) == (80, [0, 1])
    sol = knapsack_gpu.solve([0.5, 0.25], [1, 2], 1e300, device="cpu")
    assert (sol.value, sol.selected, sol.weight) == (3, [0, 1], 0.75)
    sol = knapsack_gpu.solve([3, 4], [1, 2], 2.0**70, device="cpu")
    assert sol.selected == [0, 1]


def test_the_exponent_is_the_least_that_makes_every_entry_whole():
    """dyadic.exponent against Fraction's denominators, for zeros, subnormals, huge and negative powers."""
    xs = [0.0, 1.0, 0.5, 3.0, 6.0, 2.0**-1074, 1e300, 0.1, 2.0**-30 * 3, 7.75]
    for x in xs:
        den = Fraction(x).denominator
        assert 2 ** dyadic.exponent(np.array([x])) == den
    rows = np.array([[0.5, 0.25], [1.0, 2.0], [0.0, 0.0]])
    assert dyadic.exponent(rows, axis=1).tolist() == [2, 0, 0]
