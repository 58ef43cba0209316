"""The states engine's kernels in their bindings: the compiled operations against the numpy reference and Python
integers, the two bindings' searches state for state, and the fallback where numba is missing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import knapsack_gpu
from knapsack_gpu import generate, jit, numba_jit, states
from knapsack_gpu.states import Search, StatesStats, exact, modes, solve_items
from knapsack_gpu.states.kernels import registers as K
from knapsack_gpu.states.kernels.instance import init_state, state_views
from knapsack_gpu.states.kernels.search import _bit

pytestmark = pytest.mark.skipif(not numba_jit.enabled(), reason="numba is not installed: nothing compiled to compare")

FAMILIES = sorted(k for k in generate.FAMILIES if k != "float-values")
I62 = st.integers(-(2**62) + 1, 2**62 - 1)


@pytest.fixture(scope="module")
def C():
    return modes.compiled()


@settings(max_examples=400, derandomize=True, deadline=None)
@given(I62, I62, I62, I62)
def test_128_bit_sums_of_products_against_python_integers(a, x, b, y):
    B = modes.compiled()
    exact_value = a * x + b * y
    assert B.lin_ge0_c(a, x, b, y) == (exact_value >= 0)
    assert int(B.lin_sat_c(a, x, b, y)) == max(-K.LIM, min(K.LIM, exact_value))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.integers(0, 2**62), st.integers(1, 2**62), st.integers(0, 2**62), st.integers(1, 2**62))
def test_exact_ratio_comparison_and_muldiv(pa, wa, pb, wb):
    B = modes.compiled()
    assert B.ratio_cmp_c(pa, wa, pb, wb) == exact.ratio_cmp(pa, wa, pb, wb)
    lo, hi = sorted((pa, pb))
    if wa > lo:  # floor(lo * hi / wa) < hi < 2**63
        assert int(B.muldiv_c(lo, hi, wa)) == lo * hi // wa


def _instances():
    rng = np.random.default_rng(3)
    for family in FAMILIES:
        for n, R in ((40, 100), (300, 10**4), (3000, 10**6)):
            w, v, c = generate.FAMILIES[family](rng, n, R)
            p, w = np.asarray(v, dtype=np.int64), np.asarray(w, dtype=np.int64)
            keep = (p > 0) & (w > 0) & (w <= c)  # what the engine is handed (Search takes the rest out)
            yield family, p[keep], w[keep], int(c)
    # equal float keys, different exact ratios: (1e17 + 1) / 1e17 and (1e17 + 2) / (1e17 + 1) both round to 1.0
    big = 10**17
    p = np.array([big + 1, big + 2, 5, big + 1, 3, 1], dtype=np.int64)
    w = np.array([big, big + 1, 5, big, 3, 1], dtype=np.int64)
    yield "float-ties", p, w, int(w.sum() // 2)


@pytest.mark.parametrize("family, p, w, c", list(_instances()), ids=lambda x: x if isinstance(x, str) else "")
def test_setup_agrees_with_numpy(C, family, p, w, c):
    """The break item (selected in O(n)) is the one a full sort in the exact efficiency order finds, with the same
    items before it; the bounds, reduced costs, gcd, offsets test and first incumbent agree."""
    if int(w.sum()) <= c:
        return
    keys = exact.keys(p, w)
    got = C.setup(keys, p, w, c, True)
    want = exact.setup_np(keys, p, w, c, True)
    (go, gj), (wo, wj) = got[:2], want[:2]
    assert gj == wj and go[gj] == wo[wj]
    assert np.array_equal(np.sort(go[:gj]), np.sort(wo[:wj]))
    assert got[2] == want[2] and np.array_equal(got[3], want[3])
    if want[5]:  # the reduced costs fit: the compiled ones are exact
        assert np.array_equal(got[4], want[4])
    assert got[5] == want[5] and got[6] == want[6] and got[7] == want[7]
    assert p[got[8]] == p[want[8]] if want[8] >= 0 else got[8] == -1


def _surbin_reference(p, w, c, lo, hi, card, start):
    """combo's surbin in exact fractions over a full sort: the LP bound of (p, w + s) at c + s * card, items with
    w + s <= 0 taken, and the half chosen by the slope estimated with the break item kept."""
    from fractions import Fraction

    best_s, best_u = 0, Fraction(start)
    while lo <= hi:
        s = (lo + hi) // 2
        ws = [int(x) + s for x in w]
        pl = [int(x) for x in p]
        free = [i for i in range(len(ws)) if ws[i] <= 0]
        psum = sum(pl[i] for i in free)
        cap = max(0, c + s * card) - sum(ws[i] for i in free)
        rest = sorted((i for i in range(len(ws)) if ws[i] > 0), key=lambda i: (-Fraction(pl[i], ws[i]), i))
        whole, b = len(free), None
        for i in rest:
            if ws[i] > cap:
                b = i
                break
            cap, psum, whole = cap - ws[i], psum + pl[i], whole + 1
        u = psum + (Fraction(cap * pl[b], ws[b]) if b is not None else 0)
        if u < best_u:
            best_s, best_u = s, u
        slope = -1 if b is None else psum + Fraction((cap + card - whole) * pl[b], ws[b] + 1) - u
        lo, hi = (lo, s - 1) if slope > 0 else (s + 1, hi)
    return best_s


@pytest.mark.parametrize(
    "family, p, w, c", [x for x in _instances() if x[1].size <= 300], ids=lambda x: x if isinstance(x, str) else ""
)
def test_surrogate_multiplier_search_against_exact_fractions(C, family, p, w, c):
    """combo's binary search for the surrogate multiplier, in float64 in both bindings, picks the multiplier an exact
    search in fractions picks, for cardinalities around the break solution's and both signs of s (where sums are exact
    doubles; beyond, float64 may pick another multiplier, and the bound taken at it is exact all the same)."""
    if int(w.sum()) <= c or w.size < 3 or int(p.sum()) * w.size >= 2**53 or int(w.sum()) * w.size >= 2**53:
        return
    top = int(w.max())
    b1 = int(np.searchsorted(np.cumsum(np.sort(w)), c, side="right"))
    ub = float(p.sum())
    for card, lo, hi in ((b1, 0, top), (b1 + 1, -top, 0), (max(b1 - 2, 1), 0, top)):
        want = _surbin_reference(p, w, c, lo, hi, card, ub)
        for B in (C, modes.python()):
            got, _ = B.surrogate_bisect(p.astype(np.float64), w.astype(np.float64), float(c), lo, hi, card, ub)
            assert got == want, (B.name, card, lo, hi)


def _random_list(rng, s):
    W = np.unique(rng.integers(0, 5000, s)).astype(np.int64)
    P = np.cumsum(rng.integers(1, 50, W.size)).astype(np.int64)
    V = rng.integers(0, 2**40, W.size).astype(np.int64)
    return W, P, V


def _random_step(rng):
    """A list, its scalars (capacity, z1), the unit that enters (value, weight, sign, bit) and two units a fathoming
    test may take its slope from (values UP, weights UW)."""
    W, P, V = _random_list(rng, int(rng.integers(1, 400)))
    IR = np.zeros(K.N_IR, dtype=np.int64)
    IR[K.C], IR[K.SIZE], IR[K.INTEGRAL], IR[K.MEM_BYTES] = int(rng.integers(0, 6000)), W.size, 1, 2**40
    VR = np.zeros(K.N_VR, dtype=np.int64)
    VR[K.Z1] = int(rng.integers(0, int(P[-1]) + 100))
    pu, wu, sign = int(rng.integers(1, 300)), int(rng.integers(1, 300)), int(rng.choice([-1, 1]))
    unit = pu, wu, sign, _bit(int(rng.integers(0, 64)))
    UP, UW = (rng.integers(1, 300, 2).astype(np.int64) for _ in range(2))
    return (W, P, V), IR, VR, unit, (UP, UW)


@pytest.mark.parametrize("seed", range(40))
def test_merge_and_prune_agree_with_numpy(C, seed):
    """One step on the same list, unit and incumbent: the compiled linear merge and fathoming pass keep exactly the
    states (and bits) the numpy sort-based ones keep."""
    rng = np.random.default_rng(seed)
    (W, P, V), IR, VR, (pu, wu, sign, bit), (UP, UW) = _random_step(rng)
    s = W.size
    cap = 2 * s + int(rng.integers(0, 5))
    L = (W.copy(), P.copy(), V.copy(), np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64))
    Lc, kc, fc = C.merge_c((*[np.r_[a, np.zeros(cap - s, np.int64)] for a in (W, P, V)], *L[3:]), IR, pu, wu, sign, bit)
    Ln, kn, fn = modes.python().merge((W, P, V), IR, pu, wu, sign, bit)
    assert (kc, fc) == (kn, fn)
    for a, b in zip(Lc[:3], Ln, strict=True):
        assert np.array_equal(a[:kc], b)
    t, sl = (int(rng.integers(-1, 2)) for _ in range(2))
    Lc, kc = C.prune_c(Lc, IR, VR, kc, fc, t, sl, UP, UW)
    Ln, kn = modes.python().prune(Ln, IR, VR, kn, fn, t, sl, UP, UW)
    assert kc == kn
    for a, b in zip(Lc[:3], Ln, strict=True):
        assert np.array_equal(a[:kc], b)


@pytest.mark.parametrize("seed", range(40))
def test_the_fused_step_keeps_what_merge_then_prune_keep(C, seed):
    """The compiled step's one pass (merge and fathoming together, where a right unit is left) keeps the states,
    bits and count of weight <= c that the numpy merge followed by the numpy fathoming keep, equal weights of the
    list and its shift colliding, with and without a left unit."""
    rng = np.random.default_rng(seed)
    (W, P, V), IR, VR, (pu, wu, sign, bit), (UP, UW) = _random_step(rng)
    s = W.size
    t, sl = 0, int(rng.integers(-1, 2))
    cap = int(rng.integers(1, 4 * s + 5))  # a spare row too short grows as the merge's does
    rows = [np.r_[a, np.zeros(cap, np.int64)][: max(cap, s)] for a in (W, P, V)]
    L = (*rows, *(np.empty(cap, np.int64) for _ in range(3)))
    Lc, kc, fc = C.merge_prune_c(L, IR, VR, pu, wu, sign, bit, t, sl, UP, UW)
    Ln, kn, fn = modes.python().merge((W, P, V), IR, pu, wu, sign, bit)
    Ln, kn = modes.python().prune(Ln, IR, VR, kn, fn, t, sl, UP, UW)
    assert (kc, fc) == (kn, int(np.count_nonzero(Ln[0] <= IR[K.C])))
    for a, b in zip(Lc[:3], Ln, strict=True):
        assert np.array_equal(a[:kc], b)


def _search(p, w, c, binding, budget=None):
    stats = StatesStats()
    s = Search(p, w, c, stats=stats, binding=binding)
    done = s.run(budget)
    return s, stats, done


@pytest.mark.parametrize("family", FAMILIES)
def test_the_bindings_search_state_for_state(family):
    """The same search in both bindings: the same items enter in the same order, the lists hold the same states at
    every pause, and the optimum agrees."""
    rng = np.random.default_rng(11)
    for n, R in ((60, 1000), (400, 10**5)):
        w, v, c = generate.FAMILIES[family](rng, n, R)
        p, w = np.asarray(v, dtype=np.int64), np.asarray(w, dtype=np.int64)
        runs = [_search(p, w, int(c), b, budget=2000) for b in ("compiled", "python")]
        (sc, stc, dc), (sp, stp, dp) = runs
        assert dc == dp and stc.state_updates == stp.state_updates and stc.core == stp.core
        if sc.engine is not None and not dc:
            Wc, Pc, _ = sc.engine.host_lists()
            Wp, Pp, _ = sp.engine.host_lists()
            assert np.array_equal(Wc, Wp) and np.array_equal(Pc, Pp)
            # the same units (identical items may swap: the two sides' pools start in different orders)
            enter = [[(e.unit_pw(u), sg) for u, sg in e.entries()] for e in (sc.engine, sp.engine)]
            assert enter[0] == enter[1]
        assert sc.run(None) and sp.run(None)
        assert sc.result()[0] == sp.result()[0]
        assert stc.binding == "compiled" and stp.binding == "python"


def test_a_borrowed_array_is_its_owners_memory():
    """run()'s borrowed views (:mod:`knapsack_gpu.states.borrow`): reads and writes go to the owner's memory, of any
    dtype and layout, and a view made and dropped a thousand times frees nothing (the owner's array stays whole)."""
    import numba

    from knapsack_gpu.states.borrow import borrowed

    @numba.njit
    def bump(a, b, c, reps):
        for _ in range(reps):
            x, y, z = borrowed(a), borrowed(b), borrowed(c)
            x[1] += 1
            y[0, 1] += 0.5
            z[2] -= 1
        return borrowed(a).sum()

    a, b, whole = np.arange(4, dtype=np.int64), np.zeros((2, 3)), np.zeros(8, dtype=np.int32)
    c = whole[::2]  # a strided view: its strides carry over
    assert bump(a, b, c, 1000) == 6 + 1000 and a[1] == 1001 and b[0, 1] == 500.0
    assert whole[4] == -1000 and np.count_nonzero(whole) == 1
    assert exact.same(a) is a  # the interpreted bindings' twin


def test_without_numba_the_numpy_operations_run_with_one_warning(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba" else real(name, *a))
    monkeypatch.setattr(numba_jit, "_warned", False)
    monkeypatch.setattr(numba_jit, "_found", None)
    rng = np.random.default_rng(5)
    w, v, c = generate.strongly_correlated(rng, 200, 1000)
    with pytest.warns(RuntimeWarning, match="pip install numba") as seen:
        first = knapsack_gpu.solve(w, v, c, device="cpu", strategy="states")
        second = knapsack_gpu.solve(w, v, c, device="cpu", strategy="states")
    assert len([x for x in seen if "numba" in str(x.message)]) == 1
    assert first.stats["binding"] == second.stats["binding"] == "python"
    monkeypatch.undo()
    compiled = knapsack_gpu.solve(w, v, c, device="cpu", strategy="states")
    assert compiled.stats["binding"] == "compiled" and compiled.value == first.value


def test_the_environment_variable_turns_compilation_off(monkeypatch):
    monkeypatch.setenv(numba_jit.ENV, "0")
    sol = knapsack_gpu.solve([3, 4, 5, 6], [4, 5, 7, 8], 9, device="cpu", strategy="states")
    assert sol.stats["binding"] == "python" and sol.value == 12


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(1, 2**58), min_size=n, max_size=n),
            st.lists(st.integers(1, 2**58), min_size=n, max_size=n),
        )
    ),
    st.floats(0.05, 0.95),
)
def test_compiled_search_to_2_58_against_brute_force(items, share):
    """Sums below 2**62 run compiled whatever the products (the 128-bit helpers); the optimum is brute force's."""
    from knapsack_gpu.reference import brute_force

    weights, values = items
    c = int(sum(weights) * share)
    p, w = np.array(values, dtype=np.int64), np.array(weights, dtype=np.int64)
    s, stats, done = _search(p, w, c, "compiled")
    value, chosen = s.result()
    assert done and value == brute_force(weights, values, c)[0]
    assert chosen is not None and int(w[chosen].sum()) <= c and int(p[chosen].sum()) == value
    if s.engine is not None:
        assert stats.binding == s.engine.B.name


def test_a_canonical_solve_never_waits_for_a_compile(monkeypatch):
    """The drop-in's solves ask for the "ready" binding: before this process has the compiled kernels they run the
    interpreted ones (the same value) and the compiled ones load in the background; after, the compiled ones."""
    import knapsack_gpu.plan as plan

    monkeypatch.setattr(plan, "CANONICAL_STATES_SECONDS", 0.0)  # the states engine's value first, at any size
    monkeypatch.setattr(numba_jit, "_ready", set())
    started = []
    monkeypatch.setattr(states, "warm_in_background", lambda: started.append(True))
    w, v, c = generate.strongly_correlated(np.random.default_rng(2), 300, 1000)
    before = knapsack_gpu.solve(w, v, c, device="cpu", canonical=True)
    assert before.stats["binding"] == "python" and started
    jit.warm("i")
    after = knapsack_gpu.solve(w, v, c, device="cpu", canonical=True)
    assert after.stats["binding"] == "compiled"
    assert before.value == after.value and before.selected == after.selected


def _with_spread(monkeypatch, spread):
    """The python binding with a band of 2 * spread + 1 sample ranks around a guessed break (kernels share globals)."""
    P = modes.python()
    monkeypatch.setitem(P.break_order_c.__globals__, "SPREAD", spread)
    return P


def _band_instances(seed, dtype):
    rng = np.random.default_rng(seed)
    for family in FAMILIES:
        w, v, c = generate.FAMILIES[family](rng, 1500, 10**4)
        p, w = np.asarray(v, dtype=dtype), np.asarray(w, dtype=dtype)
        keep = (p > 0) & (w > 0) & (w <= c)
        yield family, p[keep], w[keep], int(c)


@pytest.mark.parametrize("spread", [0, 1, 8])
def test_the_break_items_sampled_band_and_its_misses(monkeypatch, spread):
    """The break item's band guess, run interpreted with a band of 2 * spread + 1 sample ranks (0: the guess misses
    on most instances, above or below, and a quickselect finishes within what the one pass split): always the item
    a full sort finds, with the same items before it."""
    P = _with_spread(monkeypatch, spread)
    for _, p, w, c in _band_instances(spread, np.int64):
        if int(w.sum()) <= c:
            continue
        keys = exact.keys(p, w)
        got, gj = P.break_order_c(keys, p, w, c, True)
        want, wj = exact.break_order(keys, p, w, c, True)
        assert gj == wj and got[gj] == want[wj] and np.array_equal(np.sort(got[:gj]), np.sort(want[:wj]))


@pytest.mark.parametrize("binding", ["compiled", "python"])
def test_the_surrogate_lp_over_the_order_it_keeps(C, binding):
    """The surrogate's LP at a run of multipliers (a bisection's: far apart, then close), each call starting from the
    order the last one's selection left (the arrays permuted in place, as :func:`.kernels.surrogate_bisect` keeps
    them), compiled and interpreted: the break item, its rank and the sums before it are those of a full sort of the
    items in index order, with items of weight <= 0 first and equal keys (the duplicates) by index; the arrays stay a
    permutation of the items."""
    lp = (C if binding == "compiled" else modes.python()).lp_at_c
    for family, p, w, c in _band_instances(3, np.float64):
        card = int(np.searchsorted(np.cumsum(np.sort(w)), c, side="right"))
        pp, ww, ids, kk = p.copy(), w.copy(), np.arange(p.size), np.empty(p.size)
        sums = float(p.sum()), float(w.sum())
        top = int(w.max())
        for s in (0, -top // 2, top // 3, -int(np.median(w)), top // 5, top // 5 + 1, top // 4, -top, 1, 0):
            cap = max(0.0, c + float(s) * card)
            got = lp(pp, ww, ids, *sums, float(s), cap, kk)
            want = exact.lp_at_np(p, w, np.arange(p.size), *sums, float(s), cap)
            assert got[0] == want[0] and got[3:] == want[3:], (family, s)
            assert got[1:3] == want[1:3], (family, s)  # (integer sums below 2^53: exact in any order)
            assert np.array_equal(np.sort(ids), np.arange(p.size))
            assert np.array_equal(pp, p[ids]) and np.array_equal(ww, w[ids]), (family, s)


def test_the_pairing_stops_at_the_bound_with_the_answer_of_a_full_scan(monkeypatch):
    """Whole-number pairing stops at the first result that meets the upper bound (a subset sum's that fills c): the
    interpreted kernel, in blocks of 3 units so that the stop falls inside a scan, gives the value, state, unit and
    side of the numpy twin's full scan, and the stop is reached on subset sums."""
    from knapsack_gpu.states import common, extras

    py = modes.python()
    monkeypatch.setitem(py.pair_c.__globals__, "PAIR_BLOCK", 3)
    met = []
    real = extras.pairing

    def both(eng):
        W, P, _ = eng.host_lists()
        got = py.pair_c(W, P, *eng.arrays[:16])
        want = extras._pairing_np(eng, eng.c, eng.num, W, P)
        got = (got[0], got[1], got[2], got[3]) if got[1] >= 0 else None
        assert got == want, (got, want)
        met.append(got is not None and got[0] >= eng.ub)
        real(eng)

    monkeypatch.setattr(extras, "pairing", both)
    monkeypatch.setattr(common, "PAIRING_STATES", 4)
    rng = np.random.default_rng(11)
    for n in (300, 2000):
        w, v, c = generate.FAMILIES["subset-sum"](rng, n, 10**5)
        w, v = np.asarray(w, dtype=np.int64), np.asarray(v, dtype=np.int64)
        s, _, done = _search(v, w, int(c), "compiled")
        value, chosen = s.result()
        assert done and np.array_equal(v, w) and int(w[chosen].sum()) == value <= c  # a selection worth its value
        # values are weights: a selection worth c is optimal; below it, the dense DP (~10 s at these sizes) says
        assert value == c or value == knapsack_gpu.solve(w, v, c, strategy="dense", device="cpu").value
    assert any(met), met


@pytest.mark.parametrize("family", FAMILIES)
def test_the_pairing_searches_against_numpy(monkeypatch, family):
    """The compiled pairing (batched branch-free searches over the list) finds the numpy twin's value, state, unit
    and side, wherever the engine fires it on every class generator; lists of one, two and three states too."""
    from knapsack_gpu.states import common, extras

    seen = []
    real = extras.pairing

    def both(eng):
        W, P, _ = eng.host_lists()
        for size in sorted({1, 2, 3, W.size}):
            got = eng.B.pair_c(W[:size], P[:size], *eng.arrays[:16])
            want = extras._pairing_np(eng, eng.c, eng.num, W[:size], P[:size])
            got = (got[0], got[1], got[2], got[3]) if got[1] >= 0 else None
            assert got == want, (size, got, want)
        seen.append(W.size)
        real(eng)

    monkeypatch.setattr(extras, "pairing", both)
    monkeypatch.setattr(common, "PAIRING_STATES", 4)  # from short lists on, and more often
    monkeypatch.setattr(common, "PAIRING_GROWTH", 2)
    rng = np.random.default_rng(5)
    for n, R in ((300, 10**4), (2000, 10**5)):
        w, v, c = generate.FAMILIES[family](rng, n, R)
        p, w = np.asarray(v, dtype=np.int64), np.asarray(w, dtype=np.int64)
        _search(p, w, int(c), "compiled", budget=200_000)
    assert seen


@pytest.mark.parametrize("top", [2**30, 2**40])
def test_keys_that_round_together_break_by_exact_ratio(C, top):
    """(top + k + 1) / (top + k) for k < 300 differ by less than a double's ulp: many items share one float key,
    and only the exact ratio (smaller k first) orders them. The compiled break item, with its int64 cross products
    below 2**31 and 128-bit ones above, is the one exact fractions give, wherever the capacity puts the break."""
    rng = np.random.default_rng(top % 97)
    k = rng.permutation(300).astype(np.int64)
    w = top + k
    p = w + 1
    keys = exact.keys(p, w)
    assert np.unique(keys).size < k.size // 4  # the floats do tie
    by_ratio = np.argsort(k)  # the exact efficiency order
    for m in (1, 37, 150, 299):
        c = int(w[by_ratio[:m]].sum()) + int(w.min()) // 2
        order, j = C.break_order(keys, p, w, c, True)
        assert j == m and order[j] == by_ratio[m], (m, j)
        assert np.array_equal(np.sort(order[:j]), np.sort(by_ratio[:m]))


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(0, 2**40), max_size=300).map(lambda xs: np.array(xs, dtype=np.int64)),
    st.integers(-5, 2**48),
    st.booleans(),
)
def test_counting_the_smallest_that_fit_against_a_sort(C, x, cap, copies):
    """count_within (a quickselect with sums) against the sort and prefix sums of the python binding and a loop:
    many copies of few values exercise the pivot's ties, where the count ends among them."""
    if copies and x.size:
        x = np.repeat(x[:5], 60)[: x.size * 3]
    cap = min(cap, int(x.sum()) + 3) if x.size and cap > 50 else cap
    acc, want = 0, 0
    for v in sorted(x.tolist()):
        if acc + v > cap:
            break
        acc, want = acc + v, want + 1
    assert C.count_within(x, cap) == exact.count_within_np(x, cap) == want


def _sampled_band_cases(rng):
    """Arrays past count_within's sampled-band size, with capacities at every quantile: random, few distinct values,
    and samples that lie (the sampled positions all 0, or all huge): the guess misses above and below."""
    n = 4 * K.SAMPLE + 1 + int(rng.integers(0, 3000))
    step = n // K.SAMPLE
    sampled = np.arange(K.SAMPLE) * step
    for kind in ("random", "few", "samples-small", "samples-huge"):
        if kind == "few":
            x = rng.choice(np.array([3, 17, 17, 40, 1000]), n)
        else:
            x = rng.integers(0, 10**6, n)
        if kind == "samples-small":
            x[sampled] = 0
        if kind == "samples-huge":
            x[sampled] = 10**12
        total = int(x.sum())
        for cap in (-1, 0, 5, total // 100, total // 3, total // 2, total - 1, total, total + 7):
            yield kind, x.astype(np.int64), cap


@pytest.mark.parametrize("seed", range(3))
def test_counting_the_smallest_that_fit_past_the_sampled_band(C, seed):
    """count_within past 4 * SAMPLE entries (a sampled band, one branch-free pass, a second pass where the guess
    missed) against a sort and its prefix sums, compiled and interpreted."""
    P = modes.python()
    for kind, x, cap in _sampled_band_cases(np.random.default_rng(seed)):
        want = int(np.searchsorted(np.cumsum(np.sort(x)), cap, side="right")) if cap >= 0 else 0
        assert C.count_within(x, cap) == want, (kind, cap)
        if seed == 0:
            assert P.count_within_c(x, cap) == want, (kind, cap)


@pytest.mark.parametrize("family", ["almost-strongly", "strongly", "uncorrelated", "subset-sum"])
def test_the_surrogates_item_counts_against_sorts(family):
    """most_items / fewest_items (selections) against sorted prefix sums: the most items that fit, and the fewest
    whose values beat z, for z at every prefix sum of the values and one below it."""
    from knapsack_gpu.states.engine import Engine
    from knapsack_gpu.states.relax import fewest_items, most_items

    for seed in range(6):
        p, w, c = generate.FAMILIES[family](np.random.default_rng(seed), 400, R=1000, fraction=0.5)
        eng = Search(p.astype(np.int64), w.astype(np.int64), c, binding="compiled").engine
        # the values' total: handed on by the set-up, or summed by an engine made without it
        assert eng.total == int(np.sum(eng.p)) == Engine(eng.p, eng.w, eng.c, binding="compiled").total
        assert most_items(eng) == int(np.searchsorted(np.cumsum(np.sort(eng.w)), eng.c, side="right"))
        top = np.cumsum(np.sort(eng.p)[::-1])
        for z in [0, *top[::37].tolist(), *(top[::37] - 1).tolist(), int(top[-1]), int(top[-1]) + 5]:
            assert fewest_items(eng, z) == int(np.searchsorted(top, z, side="right")) + 1


@pytest.mark.parametrize("family", [*FAMILIES, "float-values"])
def test_the_one_call_set_up_builds_the_engine_the_steps_build(family):
    """kernels.start (items, keys, set-up and initial state in one compiled call) against the same engine built step
    by step (items_c, then Engine's own keys, setup_c and init_state): registers, keys, reduced costs, sides, units."""
    from knapsack_gpu.states.engine import Engine

    for seed, n, free in ((1, 50, 0), (2, 700, 0), (3, 5000, 0), (4, 700, 9)):
        w, v, c = generate.FAMILIES[family](np.random.default_rng(seed), n, R=10**4)
        p, w = np.asarray(v), np.asarray(w, dtype=np.int64)
        if free:  # items of weight <= 0 (a surrogate's multiplier makes them): taken for free, their room added
            w[::free] = -w[::free] // 2
        one = Search(p, w, int(c), binding="compiled")
        items = one.items
        if one.engine is None:
            continue
        cap = int(c) - int(w[one.free].sum())
        steps = Engine(p[items], w[items], cap, binding="compiled", doubles=True, solve=solve_items)
        a, b = one.engine, steps
        assert np.array_equal(a.keys, b.keys) and np.array_equal(a.d, b.d)
        assert np.array_equal(a.IR, b.IR) and np.array_equal(a.VR, b.VR, equal_nan=True)
        assert np.array_equal(a.left_items, b.left_items) and np.array_equal(a.right_items, b.right_items)
        assert np.array_equal(a.SR, b.SR)
        for side in (K.LEFT, K.RIGHT):  # the pools as init_state filled them (the chunks are not sorted yet)
            k = int(a.SR[side, K.PLEN])
            assert np.array_equal(a.arrays[3][side, :k], b.arrays[3][side, :k])
        for x, y in zip(a.arrays[6:9], b.arrays[6:9], strict=True):  # the units UP, UW, UD: the items so far
            assert np.array_equal(x[: items.size], y[: items.size])
        assert one.run(None) and steps.run(None) and one.engine.z == steps.z


@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_the_state_views_tile_their_allocations(n):
    """kernels.state_views cuts init_state's four allocations into the state's twelve arrays: each has the shape the
    engine reads, no two share memory, and together they use every entry once (a wrong offset would let one side's
    pool overwrite another array, a search's state silently corrupted)."""
    p = np.arange(1, n + 1, dtype=np.int64)
    w = np.arange(2, n + 2, dtype=np.int64)
    order = np.arange(n, dtype=np.int64)
    j = min(1, n - 1)  # the break item's place: the item before it in the left pool, the rest in the right one
    alloc = init_state(order, j, p, w, p * 3)  # uncompiled: numpy views, as the engine's
    views = state_views(*alloc, n)
    units, size = n + n // 2 + 1, max(n, 1)
    shapes = [(2, K.N_SR), (2, size), (2, size), (2, size), (units,), (units,), (units,)] + [(units,)] * 2
    shapes += [(size,), (units,), (units,)]
    assert [v.shape for v in views] == shapes
    for a in range(len(views)):
        for b in range(a + 1, len(views)):
            assert not np.shares_memory(views[a], views[b]), (a, b)
    assert sum(v.size for v in views) == sum(x.size for x in alloc)
    SR, POOL, UP, UW, UD, UML = views[0], views[1], views[4], views[5], views[6], views[8]
    assert SR[K.LEFT, K.PLEN] == j and SR[K.RIGHT, K.PLEN] == n - j - 1
    assert np.array_equal(UP[:n], p) and np.array_equal(UW[:n], w) and np.array_equal(UD[:n], p * 3)
    assert np.all(UML[:n] == 1) and np.array_equal(POOL[K.RIGHT, : n - j - 1], order[j + 1 :])


@pytest.mark.parametrize("binding", ["compiled", "python"])
def test_a_negative_capacity_holds_nothing(binding):
    """Below capacity 0 nothing fits, not even an item of weight 0 (it once set up an engine over no items)."""
    for w in ([1, 2], [0, 2], [0, 0]):
        s = Search(np.array([3, 4]), np.array(w), -1, binding=binding)
        assert s.run(None) and s.engine is None
        value, chosen = s.result()
        assert value == 0 and chosen.size == 0


def test_a_strided_view_runs_the_kernels_compiled_for_contiguous_arrays():
    """Columns of a file's table arrive as strided views: the search copies them to contiguous arrays, so that the
    kernels `knapsack-gpu compile` cached (for contiguous arrays) serve them, with no compile for another layout."""
    w, v, c = generate.FAMILIES["uncorrelated"](np.random.default_rng(5), 300, R=1000)
    table = np.stack([v, w], axis=1).astype(np.int64)  # rows (value, weight): each column a strided view
    p, wv = table[:, 0], table[:, 1]
    assert not p.flags.c_contiguous
    s = Search(p, wv, int(c), binding="compiled")
    assert s.run(None) and s.result()[0] == brute_value(p, wv, int(c))
    assert all(sig[0].layout == sig[1].layout == "C" for sig in modes.compiled().start.signatures)


def brute_value(p, w, c):
    """The optimum by a plain DP over capacities (the instances here are small)."""
    best = np.zeros(c + 1, dtype=np.int64)
    for pi, wi in zip(p.tolist(), w.tolist(), strict=True):
        if wi <= c:
            best[wi:] = np.maximum(best[wi:], best[: c + 1 - wi] + pi)
    return int(best[c])


def _cases_both_ways(monkeypatch, fams, sizes, oracle, seeds=2):
    """Solve generated instances with every extra due early, comparing each surrogate case's compiled set-up
    (kernels.surrogate_case), each open-items pass (kernels.open_items) and each gcd test's pass
    (kernels.gcd_and_sum) with their numpy / Python-integer twins at the moment the engine calls them, and each
    answer with ``oracle(w, p, c)``; returns how often each status came back."""
    from knapsack_gpu.states import common, engine, extras, relax

    real_open, real_gcd = engine.Engine.open_items, extras._gcd_and_sum
    statuses = {0: 0, 1: 0, 2: 0, "open": 0, "gcd": 0}

    def gcd_and_sum(eng, a, items, fixed_in):
        got = real_gcd(eng, a, items, fixed_in)
        if eng.B.compiled:
            eng.B = modes.python()
            try:
                assert got == real_gcd(eng, a, items, fixed_in)
            finally:
                eng.B = modes.compiled()
            statuses["gcd"] += got[0] > 1
        return got

    def open_items(eng):
        got = real_open(eng)
        if eng.B.compiled and eng.d_fits:
            eng.B = modes.python()  # the numpy branch of the same method
            try:
                want = real_open(eng)
            finally:
                eng.B = modes.compiled()
            assert all(np.array_equal(a, b) and a.dtype == np.int64 for a, b in zip(got, want, strict=True))
            statuses["open"] += 1
        return got

    def case(eng, sign, card, items, fixed_in):
        args = (eng.p, eng.w, eng.c, items, fixed_in, sign, card, eng.ub, eng.z)
        got = eng.B.surrogate_case(*args)
        statuses[int(got[0])] += 1
        if got[0] != 2:
            want = relax._prepare(eng, sign, card, items, fixed_in)
            assert [int(x) for x in got[:6]] == [int(x) for x in want[:6]], (got[:6], want[:6])
            for a, b in zip(got[6:], want[6:], strict=True):
                assert np.array_equal(a, b)
            interpreted = modes.python().surrogate_case(*args)  # the kernel's code itself, uncompiled
            assert [int(x) for x in interpreted[:6]] == [int(x) for x in got[:6]]
        return real_case(eng, sign, card, items, fixed_in)

    real_case = relax._case
    monkeypatch.setattr(relax, "_case", case)
    monkeypatch.setattr(engine.Engine, "open_items", open_items)
    monkeypatch.setattr(extras, "_gcd_and_sum", gcd_and_sum)
    monkeypatch.setattr(common, "SURROGATE_STATES", 0)
    monkeypatch.setattr(common, "GCD_STATES", 0)
    for k, family in enumerate(fams):
        for n, R in sizes:
            for seed in range(seeds):
                w, v, c = generate.FAMILIES[family](np.random.default_rng(100 * k + seed), n, R)
                p, w = np.asarray(v, dtype=np.int64), np.asarray(w, dtype=np.int64)
                got = knapsack_gpu.solve(w, p, int(c), device="cpu")
                assert got.value == oracle(w, p, int(c)), family
                assert int(w[got.indices].sum()) <= c
    return statuses


def test_the_surrogate_set_up_open_items_and_gcds_in_one_pass_are_their_twins(monkeypatch):
    """The surrogate case's set-up in one compiled pass (the multiplier, the exact bound, the items the multiplier
    frees, the others in tie order), the open items and the gcd tests' gcd and sum in one pass each are, call for
    call inside real searches, what the numpy and Python-integer code computes (and the surrogate kernel
    interpreted computes what it compiled does); both statuses that matter (bound only, solve the surrogate) and a
    gcd above 1 occur, and every answer is the DP's."""
    if not jit.enabled():
        pytest.skip("numba is not installed: there is no compiled binding")

    def sevens(rng, n, R):  # weights all multiples of 7 and a capacity that is not: the gcd test has work to do
        w, v, c = generate.FAMILIES["weakly"](rng, n, R)
        return np.asarray(w) * 7, v, int(c) * 7 + 3

    def similar(rng, n, R):  # C ~ 1e8 at n = 500: the dense DP, the oracle, took ~8 s an instance; n <= 200, 0.4 s
        return generate.FAMILIES["similar-weights"](rng, min(n, 200), R)

    monkeypatch.setitem(generate.FAMILIES, "sevens", sevens)
    monkeypatch.setitem(generate.FAMILIES, "similar-200", similar)
    fams = ["almost-strongly", "strongly", "inverse-strongly", "similar-200", "circle", "weakly", "sevens"]
    dp = lambda w, p, c: knapsack_gpu.solve(w, p, c, device="cpu", strategy="dense").value  # noqa: E731
    seen = _cases_both_ways(monkeypatch, fams, ((200, 1000), (500, 3000)), dp)
    assert seen[0] >= 5 and seen[1] >= 5 and seen["open"] >= 20 and seen["gcd"] >= 1, seen


def test_a_surrogate_past_int64_products_bounds_in_python_integers(monkeypatch):
    """Weights and values near 2**40 (almost strongly correlated: the surrogate gets as far as its bound): the
    exact bound's products could pass int64, so the compiled set-up says so (status 2) and the Python-integer twin
    bounds instead; the answers stay the DP's."""
    if not jit.enabled():
        pytest.skip("numba is not installed: there is no compiled binding")
    scale = 2**28  # a weight R of 2**12 times this: products of two near 2**80

    def big(rng, n, R):
        w, v, c = generate.FAMILIES["almost-strongly"](rng, n, R)
        return np.asarray(w) * scale, np.asarray(v) * scale, int(c) * scale

    monkeypatch.setitem(generate.FAMILIES, "big-almost-strongly", big)

    def scaled_dp(w, p, c):  # every number a multiple of scale: the optimum is scale times the unscaled one's
        return scale * knapsack_gpu.solve(w // scale, p // scale, c // scale, device="cpu", strategy="dense").value

    seen = _cases_both_ways(monkeypatch, ["big-almost-strongly"], ((60, 2**12), (200, 1000)), scaled_dp, seeds=3)
    assert seen[2] >= 1, seen


def test_where_the_list_lives(monkeypatch):
    """The host keeps the list on CUDA while the compiled engine runs (measured faster there on an H200); without it,
    the list moves at DEVICE_STATES; torch backends on the CPU take torch list ops from the first state."""
    assert states.placement("cpu") == (None, 0) and states.placement("cpu", "numpy") == (None, 0)
    assert states.placement("cpu", "torch") == ("cpu", 0)
    monkeypatch.setenv(numba_jit.ENV, "1")
    monkeypatch.setattr(numba_jit, "_installed", lambda: True)
    assert states.placement("cuda:0", "triton") == (None, 0)
    monkeypatch.setattr(states, "DEVICE_STATES_COMPILED", 0)  # what benchmarks/gpu_check.py forces
    assert states.placement("cuda:0", "triton") == ("cuda:0", 0)
    monkeypatch.setenv(numba_jit.ENV, "0")
    assert states.placement("cuda:0", "torch") == ("cuda:0", states.DEVICE_STATES)
