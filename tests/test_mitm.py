"""The meet in the middle (:mod:`knapsack_gpu.states.mitm`): its kernel in both bindings against brute force and a
meet in the middle in Python integers (knapsack_gpu.reference), the planner's choice to run it at once
(:func:`.mitm.at_once`), and where it must step aside (sums past int64, a memory limit, strategy="states").
Feasibility is checked apart from value."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import knapsack_gpu
from knapsack_gpu import generate
from knapsack_gpu.memory import Meter
from knapsack_gpu.reference import brute_force, meet_in_the_middle
from knapsack_gpu.states import Search, StatesStats, mitm, modes, solve_items

BINDINGS = ["compiled", "python"]


def kinds(rng, n: int):
    """Weights and values of every kind the meet in the middle is chosen for, and some it is not."""
    w = rng.integers(2**49, 2**50, n)
    yield "subset-sum", w, w.copy()
    yield "near-ties", w, w + rng.integers(0, 2**20, n)
    yield "random", w, rng.integers(2**49, 2**50, n)
    small = rng.integers(1, 30, n)
    yield "small-duplicates", small, small + rng.integers(0, 3, n)
    yield "worthless", rng.integers(1, 5, n), rng.integers(0, 3, n)  # (zero weights: the caller takes them)


def check(p, w, c, value, chosen, optimum) -> None:
    chosen = np.asarray(chosen)
    assert np.array_equal(chosen, np.unique(chosen)), "ascending, distinct"
    assert sum(int(w[i]) for i in chosen) <= c, "feasible"
    assert sum(int(p[i]) for i in chosen) == value, "worth what it says"
    assert value == optimum


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_kernel_against_brute_force(binding):
    """mitm.best (kernels.meet: two half lists and their pairing) over every item, capacities from 0 to past the
    total, against brute force."""
    B = modes.compiled() if binding == "compiled" else modes.python()
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 7, 12, 15):
        for kind, w, p in kinds(rng, n):
            w, p = w.astype(np.int64), p.astype(np.int64)
            for c in {0, int(w.min()), int(w.sum()) // 3, int(w.sum()) // 2, int(w.sum()), int(w.sum()) + 1}:
                items = np.flatnonzero((w > 0) & (w <= c) & (p > 0))
                st = StatesStats()
                value, chosen = mitm.best(B, p, w, items, c, st, None)
                check(p, w, c, int(value), chosen, brute_force(w.tolist(), p.tolist(), c)[0])
                assert set(chosen.tolist()) <= set(items.tolist()), (kind, n, c)
                assert st.peak_states <= mitm.half_size(items.size), "a half list holds at most 2**(m/2) states"


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("n", [5, 20, 28, 34])
def test_search_meets_at_once_where_the_planner_says(binding, n):
    """Search(meet=True): where at_once holds, no engine is built and the answer is the meet in the middle's, free
    (zero-weight), worthless and too heavy items included; where it does not, the engine runs."""
    rng = np.random.default_rng(n)
    for kind, w, p in kinds(rng, n):
        w = np.concatenate([w, [0, 3, 2**55]]).astype(np.int64)  # a free item, a worthless one, one too heavy
        p = np.concatenate([p, [7, 0, 9]]).astype(np.int64)
        c = int(w[:n].sum()) // 2
        st = StatesStats()
        s = Search(p, w, c, binding=binding, stats=st, first_run=10**6, meet=True)
        assert s.run(None)
        value, chosen = s.result()
        optimum = brute_force(w.tolist(), p.tolist(), c)[0] if n <= 9 else meet_in_the_middle(w.tolist(), p.tolist(), c)
        check(p, w, c, value, chosen, optimum)
        assert n + 0 in chosen.tolist(), "the free item is always taken"
        if s.totals is not None:  # (the one call at once over few items sums its solution too)
            assert s.totals == (sum(int(w[i]) for i in chosen), value)
        items = np.flatnonzero((w > 0) & (w <= c) & (p > 0))
        planned = mitm.at_once(p[items], w[items], c)
        if planned:
            assert s.engine is None and "meet-in-the-middle" in st.extras and st.core == 0, kind
            assert s.totals is not None or p.size > mitm.DIRECT_ITEMS, "few items: one call, summed there"
        else:
            assert s.engine is not None, kind
        if n <= mitm.DIRECT_ITEMS:
            assert planned, kind


def test_at_once_follows_the_engines_projection():
    rng = np.random.default_rng(0)
    m = 40
    w = rng.integers(2**49, 2**50, m)
    c = int(w.sum()) // 2
    assert mitm.at_once(w, w, c), "ties: every subset sum"
    assert mitm.at_once(w + rng.integers(0, 2**20, m), w, c), "near ties: bounds bite only at a near-full knapsack"
    assert not mitm.at_once(rng.integers(2**49, 2**50, m), w, c), "random values: bounds fix items early"
    small = rng.integers(1, 1000, m)
    assert not mitm.at_once(small, small, int(small.sum()) // 2), "small weights: few distinct subset sums"
    assert not mitm.at_once(3 * small, 2 * small, int(small.sum()) // 2), "ties of another ratio, small weights"
    assert not mitm.at_once(3 * small, small, np.int64(small.sum() // 2)), "a numpy capacity"
    assert Search(3 * small, small, np.int64(small.sum() // 2), meet=True).engine is not None
    assert mitm.at_once(3 * w, 2 * w, c), "ties of another ratio, huge weights"
    tiny = rng.integers(1, 1000, mitm.DIRECT_ITEMS)
    assert mitm.at_once(tiny, tiny, 100), "few items: always"


@pytest.mark.parametrize("binding", BINDINGS)
def test_lower_bound_and_values_past_int64(binding):
    rng = np.random.default_rng(3)
    w = rng.integers(2**49, 2**50, 18)
    c = int(w.sum()) // 2
    best = meet_in_the_middle(w.tolist(), w.tolist(), c)
    assert solve_items(w, w, c, lower=best, binding=binding, meet=True) == (best, None)
    value, chosen = solve_items(w, w, c, lower=best - 1, binding=binding, meet=True)
    check(w, w, c, value, chosen, best)
    # sums past 2**62: no meet in the middle at once (its lists are int64), the engine's Python integers instead
    big = np.array([2**62 - 5, 2**62 - 7, 2**61, 3, 5], dtype=np.int64)
    st = StatesStats()
    value, chosen = solve_items(big, big, 2**62, stats=st, binding=binding, meet=True)
    check(big, big, 2**62, value, chosen, brute_force(big.tolist(), big.tolist(), 2**62)[0])
    assert "meet-in-the-middle" not in st.extras


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_memory_limit_too_small_for_the_lists_leaves_it_to_the_engine(binding):
    """The lists are metered in both bindings (numpy's merges at their peak too), and a limit that cannot hold them
    leaves the instance to the engine."""
    rng = np.random.default_rng(4)
    w = rng.integers(2**49, 2**50, 28)
    c = int(w.sum()) // 2
    per_state = mitm.BYTES_PER_STATE if binding == "compiled" else mitm.BYTES_PER_STATE_NUMPY
    need = (mitm.half_size(28) + 2) * per_state
    for limit, planned in ((need, True), (need - 1, False)):
        st = StatesStats()
        meter = Meter(limit, torch.device("cpu"))
        try:
            value, chosen = solve_items(w, w, np.int64(c), stats=st, meter=meter, binding=binding, meet=True)
        except knapsack_gpu.states.StatesOverflow:
            assert not planned  # the engine's list outgrew the limit: it says so, never a wrong answer
            continue
        check(w, w, c, value, chosen, meet_in_the_middle(w.tolist(), w.tolist(), c))
        assert (st.core == 0) == planned
        assert 0 < meter.peak <= limit
        if planned:
            assert meter.peak > need // 2, "the lists' bytes are counted"


def test_solve_plans_it_and_strategy_states_keeps_the_engine():
    rng = np.random.default_rng(6)
    for family in ("uncorrelated", "strongly", "subset-sum", "zeros"):
        w, v, c = generate.FAMILIES[family](rng, 14, 1000)
        best = brute_force(w.tolist(), v.tolist(), c)[0]
        auto = knapsack_gpu.solve(w, v, c, device="cpu")
        forced = knapsack_gpu.solve(w, v, c, device="cpu", strategy="states")
        for sol in (auto, forced):
            assert sol.value == best and sol.weight <= c
            assert sum(int(v[i]) for i in sol.indices) == best
            assert sol.weight == sum(int(w[i]) for i in sol.indices)
        assert "meet-in-the-middle" in auto.stats["extras"] and auto.stats["core"] == 0, family
        assert forced.stats["core"] > 0 or forced.stats["state_updates"] == 0, family


def test_it_does_not_claim_the_engines_kernels_are_loaded(monkeypatch):
    """numba_jit.ready tells callers who must not wait for a compile (the torch.compile plug-in) that the engine's
    kernels are loaded; a meet in the middle loads only its own, so it must not say so."""
    from knapsack_gpu import numba_jit

    monkeypatch.setattr(numba_jit, "_ready", set())
    w = np.random.default_rng(7).integers(2**49, 2**50, 10)
    s = Search(w, w, int(w.sum()) // 2, binding="compiled", meet=True)
    assert s.engine is None and s.result()[1] is not None
    assert not numba_jit.ready("i")


@pytest.mark.parametrize("binding", BINDINGS)
def test_few_items_where_no_search_is_needed(binding):
    """The one call over a few items also answers where every item fits, none is left, or the capacity is below 0
    (a sub-search's), as the usual path does: no meet in the middle is claimed, and its totals are the selection's."""
    p = np.array([3, 4, 0, 5], dtype=np.int64)
    w = np.array([2, 0, 1, 9], dtype=np.int64)  # a free item, a worthless one, one too heavy at c = 3
    for c, value, chosen in ((3, 7, [0, 1]), (0, 4, [1]), (-1, 0, []), (20, 12, [0, 1, 3])):
        st = StatesStats()
        s = Search(p, w, c, binding=binding, stats=st, meet=True)
        assert s.run(None) and s.engine is None
        got, sel = s.result()
        assert (got, sel.tolist()) == (value, chosen), c
        assert "meet-in-the-middle" not in st.extras and st.state_updates == 0
        assert s.totals is None or s.totals == (sum(int(w[i]) for i in chosen), value)


@pytest.mark.parametrize("seed", [4, 9])
def test_the_engine_hands_over_once_the_gap_has_fixed_enough_items(seed):
    """Issue 50: the engine weighed the handover once, at its first look; where a meet over the items open then did
    not fit (here the memory limit; past 46 items the item limit), it never looked again, though a rising z fixes
    items as the list grows, and built its list until the limit ended it (a MemoryError at 16 MB here; over 58 items
    near 2**50 with 44 tied, lists of 1.6e8 states for 12 s and more). It counts the open items again as its
    updates double, and hands over to a meet over the 25-27 tied items left."""
    rng = np.random.default_rng(seed)
    tied = int(rng.integers(22, 30))
    w = [int(x) for x in rng.integers(2**40, 2**50, 40)]
    v = [x * 3 // 2 for x in w[:tied]]  # efficiency 3/2 to within 2**-40: no bound fixes these
    e = float(10.0 ** rng.uniform(-7, -4))  # the rest are 1e-7 to 1e-4 more or less efficient
    v += [int(x * 3 / 2 * (1 + e * rng.choice([-1, 1]) * rng.uniform(0.5, 2))) for x in w[tied:]]
    c = int(sum(w) * rng.uniform(0.3, 0.7))
    limit = 16_000_000  # a meet over all 40 items needs ~100 MB: at the first look it does not fit
    sol = knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=limit)
    check(v, w, c, sol.value, sol.indices, meet_in_the_middle(w, v, c))
    assert "meet-in-the-middle" in sol.stats["extras"] and sol.stats["core"] > 0  # (the engine's, then the meet)
    assert sol.stats["peak_bytes"] <= limit
