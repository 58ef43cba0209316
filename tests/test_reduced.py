"""Reduced values (knapsack_gpu/reduced.py): h = Q*f - P*c in int16/int32 with a floor, against the textbook DP.

Adversarial on purpose: values whose r = Q*v - P*w spans the dtype, lower bounds equal to the optimum (the floor as
high as the argument allows, so it is hit), every plan and backend forced, and a floor one step too high must break
something (the check can fail).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import HAS_TRITON, device_for
from oracle import assert_feasible

import knapsack_gpu
import knapsack_gpu.reduced as reduced
import knapsack_gpu.stages
from knapsack_gpu.reference import reference_dp
from knapsack_gpu.testing import random_job, run_pass

BACKENDS = ["numpy", "torch"] + (["triton"] if HAS_TRITON else [])


@pytest.fixture
def always(monkeypatch):
    """Reduce at every capacity (the default waits for profiles of a million cells), to int16 on every device (CUDA's
    plans stop at int32 for speed, not exactness)."""
    monkeypatch.setattr(reduced, "MIN_CAPACITY", 0)
    monkeypatch.setitem(reduced.NARROWEST, "cuda", "int16")


def jooken_like(rng, n: int, cap: int, spread: int):
    """Values within ``spread`` of the weights: r = v - w small whatever the capacity (Jooken's structure)."""
    w = rng.integers(cap // 20, cap // 4, n)
    v = w + rng.integers(-spread, spread + 1, n)
    return w, np.maximum(v, 1), cap


def greedy(w, v, cap) -> int:
    total = room = 0
    room = cap
    for i in np.argsort(-(v / w), kind="stable"):
        if w[i] <= room:
            room, total = room - int(w[i]), total + int(v[i])
    return total


def test_choose_takes_p_q_one_and_the_narrowest_dtype_for_jooken_like_items(always):
    rng = np.random.default_rng(0)
    w, v, cap = jooken_like(rng, 200, 10**5, 100)
    scale, dtype = reduced.choose(w, v, cap, lower=greedy(w, v, cap), current=torch.int32)
    assert (scale.P, scale.Q) == (1, 1)
    assert dtype == torch.int16  # r in [-100, 100], R+ about 1e4, a greedy gap under 2.5e4: h spans int16
    assert reduced.choose(w, v, cap, lower=greedy(w, v, cap), current=torch.int16) is None  # nothing narrower
    assert reduced.choose(w, v, cap, lower=cap // 10, current=torch.int32) is None  # a weak bound: a floor too low


def test_choose_picks_int16_exactly_at_its_span(always):
    """What must fit is the span [floor + min r, R+] (rows may hold h minus an offset): at capacity 2000 with
    L = OPT = R+ + 2000 the span is R+ + 1 cells wide, so R+ = 65534 fits int16 and 65535 does not."""
    w = np.array([1000, 1000, 1000], dtype=np.int64)
    for pos, want in ((65534, torch.int16), (65535, torch.int32)):
        v = np.array([1000 + pos, 1000, 1000], dtype=np.int64)  # r = (pos, 0, 0) at P = Q = 1
        opt = pos + 2000  # item 0 and one more
        scale, dtype = reduced.choose(w, v, 2000, lower=opt, current=torch.int64)
        assert dtype == want, pos
        assert scale.floor + scale.offset == opt - 2000 - pos - 1  # the threshold less one, in h
        info = torch.iinfo(dtype)
        assert info.min <= scale.floor and pos - scale.offset <= info.max


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64], ids=str)
def test_reduced_passes_agree_bit_for_bit(backend, dtype):
    """The same reduced-value job (negative values, a floor inside the ramp, windows) on every backend: profiles
    and decision bits equal to the numpy pass's."""
    rng = np.random.default_rng(3)
    for m, length in [(1, 1), (6, 40), (17, 333), (9, 2000)]:
        for windows in (False, True):
            job = random_job(rng, m, length, dtype, cover=False, windows=windows, ramp=True)
            f, b = run_pass(backend, job, device_for(backend))
            g, c = run_pass("numpy", job)
            assert torch.equal(f, g) and np.array_equal(b, c), (m, length, windows)


def family(rng, kind: str, n: int):
    if kind == "jooken":
        return jooken_like(rng, n, int(rng.integers(200, 3000)), 40)
    if kind == "wide-r":  # r of both signs up to a few thousand at P = Q = 1
        w = rng.integers(1, 3000, n)
        return w, np.maximum(1, w + rng.integers(-3000, 3000, n)), int(w.sum() // 2)
    w = rng.integers(1, 500, n)  # uncorrelated: P/Q from the break item, r anything
    return w, rng.integers(1, 500, n), int(w.sum() // 3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["jooken", "wide-r", "uncorrelated"])
def test_every_plan_in_reduced_values_against_the_textbook_dp(always, backend, kind):
    rng = np.random.default_rng(len(kind) * 31 + len(backend))
    seen = set()
    for trial in range(6 if backend == "triton" else 12):
        w, v, cap = family(rng, kind, int(rng.integers(4, 14 if backend == "triton" else 40)))
        best, canonical = reference_dp(w.tolist(), v.tolist(), cap)
        for strategy in ("dense", "pruned"):
            base = knapsack_gpu.solve(w, v, cap, device=device_for(backend), backend=backend, strategy=strategy)
            for share in (None, 0.6):  # the bit table, then a limit that forces Hirschberg splits
                limit = None
                if share is not None:
                    held = knapsack_gpu.stages.held_bytes(len(w), device_for(backend))
                    if base.stats["peak_bytes"] == held:
                        continue  # the reductions left nothing (on CUDA a limit of 0 bytes): no split to force
                    limit = held + int(base.stats["peak_bytes"] * share)
                try:
                    sol = knapsack_gpu.solve(
                        w,
                        v,
                        cap,
                        device=device_for(backend),
                        backend=backend,
                        strategy=strategy,
                        memory_limit=limit,
                        canonical=trial % 2 == 0,
                    )
                except MemoryError:
                    continue
                assert sol.value == best, (kind, strategy, share, sol.stats)
                assert_feasible(sol, w, cap)
                assert int(np.asarray(v)[sol.selected].sum()) == best
                if trial % 2 == 0 and sol.stats["strategy"].endswith("bits"):
                    assert sol.selected == canonical  # same decisions as f's DP: dp_knapsack's set
                if sol.stats.get("reduced_values"):
                    seen.add((sol.stats["strategy"], sol.stats["dtype"]))
    assert seen, "no plan ran in reduced values"


def test_the_floor_is_hit_and_a_floor_too_high_breaks_answers(always, monkeypatch):
    """With L = OPT the floor is the highest the argument allows, and cells sit on it; one above, (F = T: a fake
    path can tie the optimum) or far above (F = 0) must give some wrong answer, or this test could not fail."""
    rng = np.random.default_rng(11)
    instances = [jooken_like(rng, int(rng.integers(6, 30)), int(rng.integers(300, 3000)), 30) for _ in range(60)]
    hit = 0
    for w, v, cap in instances:
        best, _ = reference_dp(w.tolist(), v.tolist(), cap)
        choice = reduced.choose(w, v, cap, lower=best, current=torch.int64)
        scale, dtype = choice
        from knapsack_gpu.dense.passes.base import Job

        job = Job(w, reduced.reduced_values(w, v, scale, dtype), cap + 1, False, dtype, ramp=scale.ramp)
        f, _ = run_pass("numpy", job, record=False)
        hit += int((f == scale.floor).any())
        assert scale.value(int(f[cap]), cap) == best
    assert hit, "no instance put a cell on the floor"

    wrong = 0
    real = reduced.choose
    for bump in (1, None):

        def high(*args, bump=bump, **kw):
            out = real(*args, **kw)
            if out is None:
                return None
            s, d = out
            return reduced.Scale(s.P, s.Q, s.offset, s.floor + 1 if bump else -s.offset), d

        monkeypatch.setattr(reduced, "choose", high)
        for w, v, cap in instances:
            best, _ = reference_dp(w.tolist(), v.tolist(), cap)
            try:
                sol = knapsack_gpu.solve(w, v, cap, device="cpu", backend="numpy", strategy="dense")
                wrong += sol.value != best or int(np.asarray(w)[sol.selected].sum()) > cap
            except RuntimeError:
                wrong += 1  # the solver's own check caught it
    assert wrong, "a floor above the threshold went unnoticed"


def test_stats_name_the_reduced_dtype(always):
    rng = np.random.default_rng(2)
    w, v, cap = jooken_like(rng, 30, 5000, 20)
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", strategy="dense")
    assert sol.stats["dtype"] == "int16"
    assert sol.stats["reduced_values"]["P"] == 1 and sol.stats["reduced_values"]["Q"] == 1
    assert knapsack_gpu.solve(w, v, cap, device="cpu", strategy="dense", dtype=torch.int64).stats["dtype"] == "int64"


def test_reduced_hirschberg_fits_where_plain_values_do_not(always):
    """The minimum a reduced-value plan needs is counted in its own dtype, its split's int64 chunks included (and
    reported in peak_bytes): a limit between the int16 and the int32 minimum runs Hirschberg in int16."""
    from knapsack_gpu.backends import make_pass
    from knapsack_gpu.memory import Meter, Workspace
    from knapsack_gpu.plan import min_bytes

    rng = np.random.default_rng(5)
    w = rng.integers(100, 3000, 40)
    v = w + rng.integers(-30, 31, 40)
    cap = int(w.sum()) // 2
    dev = torch.device("cpu")

    def least(dtype, reduced):
        p = make_pass("numpy", dev, dtype, Workspace(Meter(2**40, dev)), reduced=reduced)
        return min_bytes(p, 40, cap + 1)

    assert least(torch.int16, True) < least(torch.int32, False)
    from knapsack_gpu.stages import HOST_BYTES_PER_ITEM

    limit = HOST_BYTES_PER_ITEM * 40 + (least(torch.int16, True) + least(torch.int32, False)) // 2
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", backend="numpy", strategy="dense", memory_limit=limit)
    assert sol.stats["strategy"] == "dense-hirschberg" and sol.stats["dtype"] == "int16"
    assert sol.stats["peak_bytes"] <= limit
    assert sol.value == reference_dp(w.tolist(), v.tolist(), cap)[0]


def test_reduced_values_stop_at_int32_on_cuda(monkeypatch):
    """Where the CPU's plan runs in int16 reduced values, CUDA's runs the same items in int32 (the H200 ran an int16
    pass at a twelfth of the int32 rate over the same launches): the plain job where that is int32 already, else
    reduced values in int32."""
    from knapsack_gpu import plan
    from knapsack_gpu.problem import make_instance
    from knapsack_gpu.reduce import reduce

    monkeypatch.setattr(reduced, "MIN_CAPACITY", 0)  # reduce at every capacity (not the fixture: it lifts CUDA's)
    rng = np.random.default_rng(5)
    # (capacity, plain dtype, the CPU's reduced dtype, CUDA's dtype, CUDA's job in reduced values)
    cases = ((3000, torch.int32, torch.int16, torch.int32, False), (2**34, torch.int64, torch.int32, torch.int32, True))
    for cap, plain, on_cpu, on_cuda, ramp in cases:  # the second: values past int32, their r as small
        w, v, cap = jooken_like(rng, 40, cap, 30)
        red = reduce(make_instance(w, v, cap), None)
        cpu, cuda = plan.pruned(red, False, "cpu"), plan.pruned(red, False, "cuda")
        assert red.dtype == plain and cpu.job.dtype == on_cpu and cpu.job.ramp is not None, cap
        assert cuda.job.dtype == on_cuda and (cuda.job.ramp is not None) == ramp, cap
        assert np.array_equal(cpu.positions, cuda.positions)
