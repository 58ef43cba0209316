"""solve_batch: many instances in one call, each row's optimum exact against oracles that do not share its path
(brute force over exact rationals, a plain DP, solve() on the row's whole-number instance), each selection's weight
summed apart in exact arithmetic; shapes, dtypes, devices and capacities as scalars and rows; bad input named by row
and index."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import knapsack_gpu
from knapsack_gpu import batch_input, dyadic, generate
from knapsack_gpu.reference import reference_dp


def _brute(w, v, c) -> Fraction:
    """A row's optimum over every subset, in exact rationals."""
    w = [Fraction(float(x)) for x in w]
    v = [Fraction(float(x)) for x in v]
    best = Fraction(0)
    for mask in itertools.product((0, 1), repeat=len(w)):
        if sum((a for a, m in zip(w, mask, strict=True) if m), Fraction(0)) <= Fraction(float(c)):
            best = max(best, sum((a for a, m in zip(v, mask, strict=True) if m), Fraction(0)))
    return best


def _as_np(x) -> np.ndarray:
    return x.cpu().double().numpy() if isinstance(x, torch.Tensor) and x.is_floating_point() else _plain(x)


def _plain(x) -> np.ndarray:
    return x.cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _check_rows(res, W, V, C) -> None:
    """Each row's selection: within its capacity and worth its value, summed apart in exact rationals; the weight
    reported is that selection's."""
    sel, val, wt = _as_np(res.selected), _as_np(res.value), _as_np(res.weight)
    W = np.broadcast_to(_as_np(W).astype(np.float64), sel.shape)
    V = _as_np(V).astype(np.float64)
    C = np.broadcast_to(_as_np(C).astype(np.float64), val.shape)
    for b in np.ndindex(val.shape):
        chosen = np.flatnonzero(sel[b])
        w = sum((Fraction(float(x)) for x in W[b][chosen]), Fraction(0))
        v = sum((Fraction(float(x)) for x in V[b][chosen]), Fraction(0))
        assert w <= Fraction(float(C[b])), f"row {b}: over capacity"
        assert Fraction(float(wt[b])) == w or float(wt[b]) == float(w)
        assert float(val[b]) == float(v), f"row {b}: the value is not the selection's (correctly rounded)"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_float_rows_against_every_subset(dtype):
    """POMO-style rows (weights and values uniform in [0, 1)) of every float dtype, n <= 12: each optimum is the
    brute force's over exact rationals, value and weight float64."""
    gen = torch.Generator().manual_seed(1)
    W = torch.rand(40, 11, generator=gen).to(dtype)
    V = torch.rand(40, 11, generator=gen).to(dtype)
    C = torch.rand(40, generator=gen) * 3
    res = knapsack_gpu.solve_batch(W, V, C, device="cpu")
    assert res.value.dtype == res.weight.dtype == torch.float64 and res.selected.dtype == torch.bool
    assert res.value.shape == (40,) and res.selected.shape == (40, 11)
    _check_rows(res, W, V, C)
    for b in range(40):
        assert Fraction(float(res.value[b])) == _brute(W[b].double().tolist(), V[b].double().tolist(), float(C[b]))


def test_pomo_rows_against_solve_on_the_scaled_instances():
    """n = 50 / 100 rows as POMO draws them (capacity 12.5 / 25): every optimum equals solve() on the row's
    integer instance (weights and values times 2**24, an independent path: the whole planner), and the compiled
    first runs answered them."""
    torch.manual_seed(7)
    for n, cap in ((50, 12.5), (100, 25.0)):
        W, V = torch.rand(60, n), torch.rand(60, n)
        res = knapsack_gpu.solve_batch(W, V, cap, threads=2)
        _check_rows(res, W, V, torch.full((60,), cap))
        Wi, Vi = (W.double() * 2**24).long(), (V.double() * 2**24).long()
        for b in range(60):
            sol = knapsack_gpu.solve(Wi[b].numpy(), Vi[b].numpy(), int(cap * 2**24), strategy="dense"
                                     if n == 50 and b < 3 else None)  # fmt: skip
            assert float(res.value[b]) * 2**24 == sol.value
        if knapsack_gpu.jit.enabled():
            assert res.stats["engines"]["compiled"] == 60


def test_integer_rows_against_the_plain_dp_and_shared_weights():
    """Whole-number rows (int64 answers) against the textbook DP; one weight vector shared by every row of values
    (predict-then-optimise); capacities one per row."""
    rng = np.random.default_rng(2)
    w = rng.integers(1, 60, 30)
    V = rng.integers(0, 100, (25, 30))
    C = rng.integers(0, 600, 25)
    res = knapsack_gpu.solve_batch(w, V, C, device="cpu")
    assert isinstance(res.value, np.ndarray) and res.value.dtype == np.int64 and res.weight.dtype == np.int64
    for b in range(25):
        assert res.value[b] == reference_dp(w.tolist(), V[b].tolist(), int(C[b]))[0]
    _check_rows(res, w, V, C)


def test_rows_the_first_run_leaves_go_through_the_planner():
    """Strongly correlated and subset-sum rows (the first run stops for combo's extras or its budget): the planner
    answers them, counted in the stats, with solve()'s optimum."""
    rng = np.random.default_rng(4)
    families = ("strongly", "subset-sum", "inverse-strongly", "uncorrelated")
    rows = [generate.FAMILIES[f](rng, 300, 10**5) for f in families]
    rows.append((2**55 + np.arange(300) * 7919, 1000 + (np.arange(300) * 37) % 101, 2**57))  # (totals past 2**53)
    W = np.stack([np.asarray(r[0]) for r in rows])
    V = np.stack([np.asarray(r[1]) for r in rows])
    C = np.array([r[2] for r in rows])
    res = knapsack_gpu.solve_batch(W, V, C, device="cpu")
    engines = res.stats["engines"]
    assert engines["compiled"] + engines["planner"] == 5 and engines["planner"] >= 1
    assert sum(res.stats["strategies"].values()) == engines["planner"]
    for b in range(5):
        assert res.value[b] == knapsack_gpu.solve(W[b], V[b], int(C[b])).value
    _check_rows(res, W, V, C)


def test_shapes_lists_and_devices():
    """(*, n) with two leading dimensions, a scalar capacity, a list of rows of different lengths (padded with items
    that are never chosen), numpy in numpy out, tensors in tensors out on the input's device."""
    W = torch.randint(1, 20, (2, 3, 6))
    V = torch.randint(0, 20, (2, 3, 6))
    res = knapsack_gpu.solve_batch(W, V, 30)
    assert res.value.shape == res.weight.shape == (2, 3) and res.selected.shape == (2, 3, 6)
    flat = knapsack_gpu.solve_batch(W.reshape(6, 6), V.reshape(6, 6), 30)
    assert torch.equal(res.value.reshape(6), flat.value) and torch.equal(res.selected.reshape(6, 6), flat.selected)
    rows_w = [[3, 4, 5], [1], [], [2, 2]]
    rows_v = [[30, 50, 60], [7], [], [5, 5]]
    res = knapsack_gpu.solve_batch(rows_w, rows_v, [8, 0, 3, 4])
    assert res.value.tolist() == [90, 0, 0, 10] and res.selected.shape == (4, 3)
    assert res.selected.tolist() == [[True, False, True], [False] * 3, [False] * 3, [True, True, False]]
    single = knapsack_gpu.solve_batch(np.array([3, 4, 5]), np.array([30, 50, 60]), 8)
    assert single.value.shape == () and int(single.value) == 90


def test_edges_empty_heavy_ties_and_free_items():
    """B = 0, n = 0, every item too heavy, a capacity that takes everything, zero-weight and zero-value items,
    duplicates and ties."""
    res = knapsack_gpu.solve_batch(np.zeros((0, 5)), np.zeros((0, 5)), 3.0)
    assert res.value.shape == (0,) and res.selected.shape == (0, 5)
    res = knapsack_gpu.solve_batch(np.zeros((3, 0)), np.zeros((3, 0)), 3)
    assert res.value.tolist() == [0, 0, 0] and res.selected.shape == (3, 0)
    W = np.array([[9, 9, 9], [1, 2, 3], [0, 5, 5], [4, 4, 4], [2, 2, 2]])
    V = np.array([[5, 5, 5], [1, 1, 1], [3, 0, 7], [6, 6, 6], [0, 0, 0]])
    res = knapsack_gpu.solve_batch(W, V, np.array([8, 100, 5, 8, 6]))
    assert res.value.tolist() == [0, 3, 10, 12, 0]
    assert res.selected[0].tolist() == [False] * 3 and res.selected[1].tolist() == [True] * 3
    assert res.selected[2, 0] and not res.selected[2, 1] and res.selected[3].sum() == 2
    assert res.selected[4].sum() == 0  # (zero-value items are never chosen)
    _check_rows(res, W, V, np.array([8, 100, 5, 8, 6]))


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((np.array([[1.0, np.nan]]), np.ones((1, 2)), 3), ValueError, r"weights\[0, 1\] = (np\.float64\()?nan"),
        ((np.ones((2, 3)), -np.ones((2, 3)), 3), ValueError, r"values\[0, 0\] = .*must be >= 0"),
        ((np.ones((2, 2, 3)), np.ones((2, 2, 3)), np.array([[1, 2], [3, -1]])), ValueError, r"capacity\[1, 1\]"),
        ((np.ones((2, 3)), np.ones((2, 4)), 3), ValueError, "3 items a row but values have 4"),
        ((np.ones((2, 3)), np.ones((3, 3)), 3), ValueError, r"shape \(2, 3\) but values \(3, 3\)"),
        ((np.ones((2, 3)), np.ones((2, 3)), [1, 2, 3]), ValueError, "give one per row"),
        (([[1, 2], [3]], [[1, 2], [3, 4]], 3), ValueError, r"weights\[1\] has 1 items but values\[1\] has 2"),
        ((np.array([[True, False]]), np.ones((1, 2)), 3), TypeError, "booleans"),
        ((np.ones((1, 2)), np.ones((1, 2)), "3"), TypeError, "capacity must be a number"),
        ((np.array([[1e-30, 1.0]]), np.ones((1, 2)), 3), ValueError, r"weights\[0, 1\] = 1.0: float weights.*2\*\*"),
        ((np.array([[2**62, 1]]), np.ones((1, 2), dtype=np.int64), 3), ValueError, r"weights\[0, 0\].*< 2\*\*62"),
        ((np.ones((1, 3)), np.full((1, 3), 2**62), 3), ValueError, r"values\[0\]: this row's values sum to 2\*\*63"),
        ((5, np.ones(2), 3), TypeError, "weights must be a tensor"),
    ],
)
def test_bad_input_named_by_row_and_index(args, error, match):
    with pytest.raises(error, match=match):
        knapsack_gpu.solve_batch(*args, device="cpu")


def test_threads_agree():
    """One thread and two take the same rows to the same answers."""
    torch.manual_seed(3)
    W, V = torch.rand(700, 40), torch.rand(700, 40)
    one = knapsack_gpu.solve_batch(W, V, 10.0, threads=1)
    two = knapsack_gpu.solve_batch(W, V, 10.0, threads=2)
    assert torch.equal(one.value, two.value) and torch.equal(one.selected, two.selected)
    assert one.stats["threads"] == 1 and two.stats["threads"] == 2


def test_the_compiled_scaling_agrees_with_the_numpy_twin():
    """The batch's compiled row scaling (weights and capacities, values) against knapsack_gpu.dyadic's numpy twin,
    on rows with zeros, subnormals, whole numbers, huge and tiny magnitudes; rows the kernel flags go to the twin,
    which raises with the entry's name."""
    if not knapsack_gpu.jit.enabled():
        pytest.skip("numba is not installed")
    from knapsack_gpu.states import modes

    K = modes.compiled()
    rng = np.random.default_rng(9)
    edges = [0.0, 5e-324, 2.0**-1000, 1.0, 3.0, 0.1, 2.0**40 + 0.5, 2.0**61, 1e-7, 0.75]
    for _ in range(300):
        X = rng.random((4, 7)) * rng.choice([1e-6, 1.0, 1e6, 2.0**50])
        X = X.astype(np.float32).astype(np.float64) if rng.random() < 0.5 else X
        for _ in range(int(rng.integers(0, 4))):
            X[rng.integers(0, 4), rng.integers(0, 7)] = rng.choice(edges)
        C = rng.random(4) * X.sum(axis=1) * 1.2
        W, caps, k, flag = np.empty(X.shape, dtype=np.int64), *(np.empty(4, dtype=np.int64) for _ in range(3))
        K.scale_rows_c(X, C, 0, 4, W, caps, k, flag)
        for b in range(4):
            want_k = dyadic.exponent(X[b])
            if flag[b]:
                continue
            assert k[b] == want_k
            Wt, capt, kt = dyadic.scale_rows(X[b : b + 1], C[b : b + 1])
            assert np.array_equal(W[b], Wt[0]) and caps[b] == capt[0]
        P, kv, ok = np.empty(X.shape, dtype=np.int64), np.empty(4, dtype=np.int64), np.empty(4, dtype=np.bool_)
        K.whole_values_c(X, 0, 4, 2.0**53, P, kv, ok)
        Pt, kvt, okt = dyadic.whole_values(X)
        assert np.array_equal(ok, okt) and np.array_equal(P[ok], Pt[ok]) and np.array_equal(kv[ok], kvt[ok])
    with pytest.raises(ValueError, match=r"weights\[1, 0\] = 1.0: float weights"):
        batch_input.read(np.array([[1.0, 1.0], [1.0, 1e-30]]), np.ones((2, 2)), 3.0)


def test_without_numba_every_row_goes_through_the_planner(monkeypatch):
    """KNAPSACK_GPU_JIT=0: no compiled first runs; the planner answers every row, the same optima."""
    torch.manual_seed(5)
    W, V = torch.rand(6, 12), torch.rand(6, 12)
    want = knapsack_gpu.solve_batch(W, V, 3.0)
    monkeypatch.setenv("KNAPSACK_GPU_JIT", "0")
    got = knapsack_gpu.solve_batch(W, V, 3.0)
    assert got.stats["engines"]["planner"] == 6 and torch.equal(got.value, want.value)


_DTYPES = {"int64": np.int64, "int32": np.int32, "float64": np.float64, "float32": np.float32, "float16": np.float16}


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    B=st.integers(0, 5),
    n=st.integers(0, 7),
    wdtype=st.sampled_from(sorted(_DTYPES)),
    vdtype=st.sampled_from(sorted(_DTYPES)),
    per_row=st.booleans(),
    shared=st.booleans(),
    tensors=st.booleans(),
    strategy=st.sampled_from([None, "dense"]),
    seed=st.integers(0, 2**31),
)
def test_property_every_row_is_its_brute_force(B, n, wdtype, vdtype, per_row, shared, tensors, strategy, seed):
    """Any batch of up to 5 rows of 7 items, weights and values of any dtype (floats on and off a grid, huge and
    tiny), weights per row or shared, capacities one for all or one per row, numpy or torch, the CPU path or the
    dense batch: every row's optimum is its brute force over exact rationals, every selection within its capacity."""
    rng = np.random.default_rng(seed)
    scale = rng.choice([1.0, 1e-3, 37.0, 2.0**20])
    top = 60000.0 if wdtype == "float16" else np.inf  # (float16 ends at 65,504)
    W = np.minimum(rng.random((n,) if shared else (B, n)) * 20 * scale, top).astype(_DTYPES[wdtype])
    V = (rng.random((B, n)) * 20).astype(_DTYPES[vdtype])
    if W.dtype.kind == "f" and rng.random() < 0.3:
        W = np.round(W)  # whole numbers as floats
    total = float(np.broadcast_to(W, (B, n)).astype(np.float64).sum()) / max(B, 1)
    C = rng.random(B) * total if per_row else float(rng.random() * total)
    args = (torch.from_numpy(W), torch.from_numpy(V), torch.from_numpy(np.asarray(C))) if tensors else (W, V, C)
    if tensors and not per_row:
        args = (*args[:2], C)
    res = knapsack_gpu.solve_batch(*args, device="cpu", strategy=strategy)
    value = _plain(res.value)
    assert value.shape == (B,) and _plain(res.selected).shape == (B, n)
    Wb = np.broadcast_to(W, (B, n))
    Cb = np.broadcast_to(np.asarray(C, dtype=np.float64), (B,))
    _check_rows(res, Wb, V, Cb)
    for b in range(B):
        best = _brute(Wb[b].astype(np.float64).tolist(), V[b].astype(np.float64).tolist(), float(Cb[b]))
        if vdtype == "float64":  # (random doubles: a row's sums are not all doubles; the float search, to 1e-12)
            assert abs(float(value[b]) - float(best)) <= 1e-12 * max(1.0, float(best))
        else:  # whole numbers, or float32 / float16 values made whole at their scale: exact
            assert Fraction(float(value[b])) == best
