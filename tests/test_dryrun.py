"""The dry run (knapsack_gpu.plan_for, ``knapsack-gpu plan``): the plan a device would run, its bytes and time, and
the solver's own choice of the one-row torch pass where the kernels' two rows do not fit."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import TRITON_DEVICE

import knapsack_gpu
from knapsack_gpu import cli

H200 = 141 * 10**9


def jooken_like(n: int = 1000, cap: int = 10**10, seed: int = 0):
    """Values within 300 of the weights, weights 1-10% of C: Jooken's c = 1e10 structure (f needs int64, h int32)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(cap // 100, cap // 10, n)
    return w, w + rng.integers(-300, 301, n), cap


def test_c_1e10_gets_a_plan_in_reduced_values_within_80_percent_of_an_h200():
    """Jooken's c = 1e10 structure on an H200: the states engine's first budget (priced at the device's cell rate,
    run on the CPU) gives way, and its incumbent starts a dense plan in reduced values (P = Q = 1: int16 or int32
    instead of int64) that fits 80% of the device."""
    w, v, cap = jooken_like()
    r = knapsack_gpu.plan_for(w, v, cap, device="cuda", device_memory=H200)
    assert r.states is not None and 0 < r.states["budget"] <= r.states["state_updates"] + 2 * r.states["peak_states"]
    assert r.fits and r.strategy in ("pruned", "dense") and r.recovery in ("bits", "hirschberg")
    assert r.dtype in ("int32", "int16") and r.reduced_values["P"] == 1 == r.reduced_values["Q"]
    need = r.bits_bytes if r.recovery == "bits" else r.hirschberg_bytes
    assert need <= r.memory_limit == int(0.8 * H200)
    passes = 2 if r.recovery == "hirschberg" else 1
    assert r.seconds == pytest.approx(r.cells / r.cell_rate * passes)
    assert r.recovery in str(r) and r.dtype in str(r) and "states engine first" in str(r)


def test_too_little_memory_says_so_and_the_cli_exits_3(tmp_path, capsys):
    w, v, cap = jooken_like(n=200, cap=10**9)
    r = knapsack_gpu.plan_for(w, v, cap, device="cuda", device_memory=10**6)
    assert not r.fits and r.strategy == "none" and "MemoryError" in str(r)
    path = tmp_path / "inst.json"
    path.write_text(json.dumps({"weights": w.tolist(), "values": v.tolist(), "capacity": cap}))
    assert cli.main(["plan", str(path), "--device", "cuda", "--device-memory", "1MB", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["fits"] is False and out["strategy"] == "none"
    assert cli.main(["plan", str(path), "--device", "cuda", "--device-memory", "141GB"]) == 0
    assert "plan: " in capsys.readouterr().out


def test_cpu_plan_and_a_stated_cell_rate():
    w, v, cap = jooken_like(n=100, cap=10**7)
    r = knapsack_gpu.plan_for(w, v, cap, device="cpu", device_memory=16 * 2**30, cell_rate=1e9)
    assert r.backend == "numpy" and r.fits and r.cell_rate == 1e9
    forced = r.fallback if r.strategy == "states" else r.strategy
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", strategy=forced)
    assert sol.stats["dtype"] == r.dtype  # the solve runs the plan the dry run names (same bounds, no states)


def test_plan_defaults_to_the_device_solve_uses(tmp_path, capsys):
    """No GPU: plan as a solve would run, on the CPU with its free memory; asked for CUDA without a device and
    without its memory, the message names the CLI's flags."""
    w, v, cap = jooken_like(n=50, cap=10**6)
    r = knapsack_gpu.plan_for(w, v, cap)
    assert r.device == ("cuda" if torch.cuda.is_available() else "cpu") and r.fits
    path = tmp_path / "inst.json"
    path.write_text(json.dumps({"weights": w.tolist(), "values": v.tolist(), "capacity": cap}))
    assert cli.main(["plan", str(path)]) == 0
    assert "states engine first" in capsys.readouterr().out
    if not torch.cuda.is_available():
        assert cli.main(["plan", str(path), "--device", "cuda"]) == 2
        err = capsys.readouterr().err
        assert "--device-memory" in err and "--device" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="the message for machines without CUDA")
def test_cuda_without_device_memory_needs_one():
    with pytest.raises(ValueError, match="pass device_memory"):
        knapsack_gpu.plan_for([1, 2], [3, 4], 2, device="cuda")


def test_the_solver_takes_the_one_row_torch_pass_where_the_kernels_do_not_fit(monkeypatch):
    """On CUDA "auto" means the kernels; when their two rows exceed the limit and the torch pass's row and chunk do
    not, the solve runs torch (the branch is taken here by making "auto" resolve to triton on the CPU)."""
    import knapsack_gpu.solver as solver
    from knapsack_gpu.backends import make_pass
    from knapsack_gpu.memory import Meter, Workspace
    from knapsack_gpu.plan import min_bytes

    real = solver.resolve_backend
    monkeypatch.setattr(solver, "resolve_backend", lambda b, d, t: "triton" if b == "auto" else real(b, d, t))
    rng = np.random.default_rng(4)
    w = rng.integers(1000, 20000, 40)
    v, cap = w + rng.integers(-30, 31, 40), 200_000
    dev = torch.device(TRITON_DEVICE)  # a CUDA machine takes the branch for real
    need = {
        n: min_bytes(make_pass(n, dev, torch.int32, Workspace(Meter(2**40, dev))), 40, cap + 1)
        for n in ("triton", "torch")
    }
    assert need["torch"] < need["triton"]
    limit = solver.held_bytes(40, dev) + (need["torch"] + need["triton"]) // 2
    sol = knapsack_gpu.solve(w, v, cap, device=dev, memory_limit=limit, strategy="dense")
    assert sol.stats["backend"] == "torch" and sol.stats["peak_bytes"] <= limit
    from knapsack_gpu.reference import reference_dp

    assert sol.value == reference_dp(w.tolist(), v.tolist(), cap)[0]


# (family, seed, n, R) whose dry run names each kind once the states engine gives way at once (found by a search
# over 200 generated instances: every one agreed with its solve)
GIVE_WAY = {
    "pruned": ("uncorrelated", 0, 166, 94),
    "closed": ("spanner-uncorrelated", 7, 67, 168),
    "reduced": ("float-values", 14, 51, 740),
    "dense": ("zeros", 9, 50, 102),  # (at 31 items a meet in the middle answers at once)
}


def _agrees(plan, sol) -> None:
    """The solve did what the dry run said: the states engine answered, or the plan it named ran."""
    got = sol.stats["strategy"]
    if plan.strategy == "states":
        assert got == "states"
    elif plan.strategy in ("closed", "reduced"):
        assert got == plan.strategy
    else:
        assert got.split("-")[0] == plan.strategy and got.split("-")[1] == plan.recovery
        assert sol.stats["dtype"] == plan.dtype and sol.stats["profile_length"] == plan.profile_length


def _no_groups(monkeypatch):
    """The grouped solver stays out (spanner instances' identical items form groups it would take)."""
    import knapsack_gpu.grouped as grouped

    monkeypatch.setattr(grouped, "looks_grouped", lambda *args: False)


@pytest.mark.parametrize("kind", sorted(GIVE_WAY))
def test_plan_agrees_with_solve_where_the_states_engine_gives_way(monkeypatch, kind):
    import knapsack_gpu.plan as plan_mod
    from knapsack_gpu import generate

    _no_groups(monkeypatch)
    for name, value in (("STATES_MIN_UPDATES", 1), ("STATES_FIRST_SHARE", 1e-12), ("STATES_BUDGET_SHARE", 1e-12)):
        monkeypatch.setattr(plan_mod, name, value)
    monkeypatch.setattr(plan_mod, "STATES_CAP_SHARE", 0.0)
    family, seed, n, R = GIVE_WAY[kind]
    w, v, c = generate.FAMILIES[family](np.random.default_rng(seed), n, R)
    r = knapsack_gpu.plan_for(w, v, c, device="cpu", device_memory=2**34)
    assert r.strategy == kind and not r.states["finished"] and not r.states_go_on
    _agrees(r, knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=r.memory_limit))


def test_plan_agrees_with_solve_where_the_states_engine_answers_or_nothing_fits():
    from knapsack_gpu import generate

    w, v, c = generate.uncorrelated(np.random.default_rng(1), 300, 1000)
    r = knapsack_gpu.plan_for(w, v, c, device="cpu", device_memory=2**34)
    assert r.strategy == "states" and r.states["finished"] and r.fallback in ("pruned", "dense", "closed")
    _agrees(r, knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=r.memory_limit))
    # the per-item state alone passes the memory: a solve raises MemoryError, the dry run says so
    r = knapsack_gpu.plan_for(w, v, c, device="cpu", device_memory=2 * 256 * len(w) - 2)
    assert r.strategy == "none" and not r.fits
    with pytest.raises(MemoryError):
        knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=r.memory_limit)
    # C = 1e12, 3,000 items: no dense row fits anywhere, the states engine answers (the huge.json)
    rng = np.random.default_rng(0)
    w, v = rng.integers(1, 10**9, 3000), rng.integers(1, 10**9, 3000)
    r = knapsack_gpu.plan_for(w, v, 10**12, device="cpu")
    assert r.strategy == "states" and r.fits
    _agrees(r, knapsack_gpu.solve(w, v, 10**12, device="cpu"))


def test_plan_agrees_with_solve_where_the_grouped_solver_answers():
    """Jooken's class: the dry run runs the grouped solver as a solve does, and says so; what it reports is what the
    solve did, and a forced strategy="grouped" on items without groups is refused by both alike."""
    from knapsack_gpu import generate

    w, v, c = generate.jooken(np.random.default_rng(3), 400, c=10**8, g=10, eps=1e-4, s=200)
    r = knapsack_gpu.plan_for(w, v, c, device="cpu", device_memory=2**34)
    sol = knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=r.memory_limit)
    assert r.strategy == "grouped" == sol.stats["strategy"] and r.grouped == sol.stats["grouped"]
    assert "grouped solver" in str(r) and sol.weight <= c
    u, x, cap = generate.uncorrelated(np.random.default_rng(3), 200, 1000)
    for run in (knapsack_gpu.solve, knapsack_gpu.plan_for):
        with pytest.raises(ValueError, match="strategy='grouped': no groups"):
            run(u, x, cap, device="cpu", strategy="grouped")
    # fractional values: the grouped solver's integers would truncate them, so a forced run is refused
    for run in (knapsack_gpu.solve, knapsack_gpu.plan_for):
        with pytest.raises(ValueError, match="strategy='grouped': the grouped solver takes whole-number values"):
            run(w, np.asarray(v) + 0.5, c, device="cpu", strategy="grouped")


def test_plan_names_a_forced_strategy_as_solve_runs_it(monkeypatch):
    _no_groups(monkeypatch)
    from knapsack_gpu import generate

    w, v, c = generate.FAMILIES["spanner-uncorrelated"](np.random.default_rng(7), 67, 168)
    for strategy in ("closed", "pruned", "dense"):
        try:
            r = knapsack_gpu.plan_for(w, v, c, device="cpu", device_memory=2**34, strategy=strategy)
        except ValueError:  # strategy="closed" on bounds that do not meet: the solve refuses alike
            with pytest.raises(ValueError):
                knapsack_gpu.solve(w, v, c, device="cpu", strategy=strategy)
            continue
        _agrees(r, knapsack_gpu.solve(w, v, c, device="cpu", strategy=strategy, memory_limit=r.memory_limit))


STATS_KEYS = (
    "strategy device backend dtype reduced_values reductions fixed lower_bound upper_bound instance_lower_bound "
    "instance_upper_bound items profile_length dp_seconds cell_updates full_cells peak_states passes item_passes "
    "leaves depth launches threads peak_bytes memory_limit plan_reason seconds core state_updates bundled extras "
    "resolves binding grouped"
).split()


@pytest.mark.parametrize("kind", sorted(GIVE_WAY) + ["states"])
def test_every_documented_stat_is_there_whatever_answers(monkeypatch, kind):
    """Solution.stats documents its keys: each is present on every path (None where it does not apply); the
    states engine's answer says why too (plan_reason was missing there: a KeyError)."""
    import knapsack_gpu.plan as plan_mod
    from knapsack_gpu import generate

    _no_groups(monkeypatch)
    if kind != "states":
        for name, value in (("STATES_MIN_UPDATES", 1), ("STATES_FIRST_SHARE", 1e-12), ("STATES_BUDGET_SHARE", 1e-12)):
            monkeypatch.setattr(plan_mod, name, value)
        monkeypatch.setattr(plan_mod, "STATES_CAP_SHARE", 0.0)
        family, seed, n, R = GIVE_WAY[kind]
    else:
        family, seed, n, R = "uncorrelated", 1, 300, 1000
    w, v, c = generate.FAMILIES[family](np.random.default_rng(seed), n, R)
    st = knapsack_gpu.solve(w, v, c, device="cpu").stats
    assert sorted(set(STATS_KEYS) - set(st)) == []
    assert st["plan_reason"], st["strategy"]
    doc = knapsack_gpu.Solution.__doc__
    assert all(f"``{key}``" in doc for key in STATS_KEYS)
