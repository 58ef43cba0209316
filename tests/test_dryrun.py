"""The dry run (knapsack_gpu.plan_for, ``knapsack-gpu plan``): the plan a solve runs, stage by stage, with no search;
held to what the solve then did on instances of every kind of plan, and the solver's own choice of the one-row torch
pass where the kernels' two rows do not fit."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
import torch
from conftest import TRITON_DEVICE

import knapsack_gpu
from knapsack_gpu import cli, generate

H200 = 141 * 10**9
BIG_LIMIT = 2**34  # a limit every instance here fits, the same for the plan and the solve


def jooken_like(n: int = 1000, cap: int = 10**10, seed: int = 0):
    """Values within 300 of the weights, weights 1-10% of C: Jooken's c = 1e10 structure (f needs int64, h int32)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(cap // 100, cap // 10, n)
    return w, w + rng.integers(-300, 301, n), cap


def test_c_1e10_gets_a_plan_in_reduced_values_within_80_percent_of_an_h200():
    """Jooken's c = 1e10 structure on an H200: the states engine first under a budget priced at the device's cell
    rate, then a dense plan in reduced values (P = Q = 1: int16 or int32 instead of int64) that fits 80% of the
    device."""
    w, v, cap = jooken_like()
    r = knapsack_gpu.plan_for(w, v, cap, device="cuda", device_memory=H200)
    first = r.stages[0]
    assert first["stage"] == "states" and first["budget"] > 0 and first["memory"] == r.memory_limit - r.held
    assert r.fits and r.strategy in ("pruned-bits", "pruned-hirschberg", "dense-bits", "dense-hirschberg")
    assert r.recovery in ("bits", "hirschberg")
    assert r.dtype in ("int32", "int16") and r.reduced_values["P"] == 1 == r.reduced_values["Q"]
    need = r.bits_bytes if r.recovery == "bits" else r.hirschberg_bytes
    assert need <= r.memory_limit == int(0.8 * H200) and r.upper_estimate
    passes = 2 if r.recovery == "hirschberg" else 1
    assert r.seconds == pytest.approx(r.cells / r.cell_rate * passes)
    assert r.recovery in str(r) and r.dtype in str(r) and "states engine" in str(r)


def test_cpu_plan_and_a_stated_cell_rate():
    w, v, cap = jooken_like(n=100, cap=10**7)
    r = knapsack_gpu.plan_for(w, v, cap, device="cpu", device_memory=16 * 2**30, cell_rate=1e9)
    assert r.backend == "numpy" and r.fits and r.cell_rate == 1e9
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", strategy=r.stages[-1]["stage"])
    assert sol.stats["dtype"] == r.dtype  # the solve runs the plan the dry run names (same bounds, no states)


def test_plan_defaults_to_the_device_solve_uses(tmp_path, capsys):
    """No GPU: plan as a solve would run, on the CPU with its default limit; asked for CUDA without a device and
    without its memory, the message names the CLI's flags."""
    w, v, cap = jooken_like(n=50, cap=10**6)
    r = knapsack_gpu.plan_for(w, v, cap)
    assert r.device == ("cuda" if torch.cuda.is_available() else "cpu") and r.fits
    path = tmp_path / "inst.json"
    path.write_text(json.dumps({"weights": w.tolist(), "values": v.tolist(), "capacity": cap}))
    assert cli.main(["plan", str(path)]) == 0
    assert "states engine" in capsys.readouterr().out
    if not torch.cuda.is_available():
        assert cli.main(["plan", str(path), "--device", "cuda"]) == 2
        err = capsys.readouterr().err
        assert "--device-memory" in err and "--memory-limit" in err and "--device" in err
        # a memory limit is all a plan for a device that is not present needs
        assert cli.main(["plan", str(path), "--device", "cuda", "--memory-limit", "1GB", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["memory_limit"] == 10**9


@pytest.mark.skipif(torch.cuda.is_available(), reason="the message for machines without CUDA")
def test_cuda_without_device_memory_needs_one():
    with pytest.raises(ValueError, match="pass memory_limit or device_memory"):
        knapsack_gpu.plan_for([1, 2], [3, 4], 2, device="cuda")
    assert knapsack_gpu.plan_for([1, 2], [3, 4], 2, device="cuda", memory_limit=10**6).memory_limit == 10**6


def test_the_solver_takes_the_one_row_torch_pass_where_the_kernels_do_not_fit(monkeypatch):
    """On CUDA "auto" means the kernels; when their two rows exceed the limit and the torch pass's row and chunk do
    not, the plan names torch and the solve runs it (the branch is taken here by making "auto" resolve to triton on
    the CPU)."""
    from knapsack_gpu import stages
    from knapsack_gpu.backends import make_pass
    from knapsack_gpu.memory import Meter, Workspace
    from knapsack_gpu.plan import min_bytes

    real = stages.resolve_backend
    monkeypatch.setattr(stages, "resolve_backend", lambda b, d, t: "triton" if b == "auto" else real(b, d, t))
    rng = np.random.default_rng(4)
    w = rng.integers(1000, 20000, 40)
    v, cap = w + rng.integers(-30, 31, 40), 200_000
    dev = torch.device(TRITON_DEVICE)  # a CUDA machine takes the branch for real
    need = {
        n: min_bytes(make_pass(n, dev, torch.int32, Workspace(Meter(2**40, dev))), 40, cap + 1)
        for n in ("triton", "torch")
    }
    assert need["torch"] < need["triton"]
    limit = stages.held_bytes(40, dev) + (need["torch"] + need["triton"]) // 2
    sol = knapsack_gpu.solve(w, v, cap, device=dev, memory_limit=limit, strategy="dense")
    assert sol.stats["backend"] == "torch" and sol.stats["peak_bytes"] <= limit
    r = knapsack_gpu.plan_for(w, v, cap, device=dev, memory_limit=limit, strategy="dense")
    assert r.backend == "torch" and r.hirschberg_bytes == need["torch"]
    from knapsack_gpu.reference import reference_dp

    assert sol.value == reference_dp(w.tolist(), v.tolist(), cap)[0]


# --- the plan against the solve, on every kind of plan ---

# What may answer in a plan's place at a stage: the solve's strategy names (a meet in the middle's is "states").
DENSE = ("pruned", "dense")


def _answered_at(plan, sol) -> int:
    """The index of the stage that answered in ``sol``: the first whose strategy the solve reports (a dense stage
    planned before the states engine's incumbent: or one the solve may plan in its place). Every stage before it
    is one that can give way, and none after it runs."""
    got = sol.stats["strategy"]
    for k, s in enumerate(plan.stages):
        if s["strategy"] == got or got in s.get("instead", ()):
            assert all(t["gives_way"] for t in plan.stages[:k]), (got, plan.stages[:k])
            return k
    raise AssertionError(f"the solve answered {got!r}, which the plan does not name: {plan}")


def _agrees(plan, sol) -> None:
    """The solve did what the plan said: the stage that answered is one of the plan's, in order; where no search ran
    before the dense stage (its figures are the solve's own, not an upper estimate), the same dense plan."""
    k = _answered_at(plan, sol)
    s = plan.stages[k]
    if s["stage"] in DENSE and not plan.upper_estimate:
        assert sol.stats["strategy"] == s["strategy"]
        assert sol.stats["dtype"] == s["dtype"] == plan.dtype and sol.stats["profile_length"] == s["profile_length"]
        assert sol.stats["items"] == s["items"] and sol.stats["backend"] == s["backend"]
        assert sol.stats["reduced_values"] == s["reduced_values"]
    if s["stage"] in DENSE and plan.upper_estimate and sol.stats["strategy"] == s["strategy"]:
        assert sol.stats["profile_length"] <= s["profile_length"]
    if s["stage"] == "meet-in-the-middle":
        assert "meet-in-the-middle" in sol.stats["extras"]
    assert sol.stats["memory_limit"] == plan.memory_limit


def _check(w, v, c, **options):
    """The plan and the solve at the same options: they agree, or both say MemoryError (the same message)."""
    r = knapsack_gpu.plan_for(w, v, c, device="cpu", **options)
    try:
        sol = knapsack_gpu.solve(w, v, c, device="cpu", **options)
    except MemoryError as exc:
        memory = r.stage("memory")
        assert memory is not None, (str(exc), str(r))
        assert str(exc).endswith(memory["error"])  # (a states engine that ran out says so first)
        return r, None
    assert r.fits, str(r)
    _agrees(r, sol)
    return r, sol


def _no_groups(monkeypatch):
    """The grouped solver stays out (spanner instances' identical items form groups it would take)."""
    import knapsack_gpu.grouped as grouped

    monkeypatch.setattr(grouped, "looks_grouped", lambda *args: False)


def _give_way_at_once(monkeypatch):
    """The states engine gives way after its first update, and does not go on before the dense plan."""
    import knapsack_gpu.plan as plan_mod

    for name, value in (("STATES_MIN_UPDATES", 1), ("STATES_FIRST_SHARE", 1e-12), ("STATES_BUDGET_SHARE", 1e-12)):
        monkeypatch.setattr(plan_mod, name, value)
    monkeypatch.setattr(plan_mod, "STATES_CAP_SHARE", 0.0)


# (family, seed, n, R) whose solve answers with each kind once the states engine gives way at once
GIVE_WAY = {
    "pruned": ("uncorrelated", 0, 166, 94),
    "closed": ("spanner-uncorrelated", 7, 67, 168),
    "reduced": ("float-values", 14, 51, 740),
    "dense": ("zeros", 9, 50, 102),  # (at 31 items a meet in the middle answers at once)
}


@pytest.mark.parametrize("kind", sorted(GIVE_WAY))
def test_plan_agrees_with_solve_where_the_states_engine_gives_way(monkeypatch, kind):
    """The states engine first, then the dense stage: planned here before its incumbent (an upper estimate the
    solve's own planning from the incumbent may close, empty or shrink), and the solve's answer is that stage."""
    _no_groups(monkeypatch)
    _give_way_at_once(monkeypatch)
    family, seed, n, R = GIVE_WAY[kind]
    w, v, c = generate.FAMILIES[family](np.random.default_rng(seed), n, R)
    r, sol = _check(w, v, c, memory_limit=BIG_LIMIT)
    assert r.stages[0]["stage"] == "states" and r.stages[0]["budget"] == 1
    assert sol.stats["strategy"].split("-")[0] == kind and r.stages[_answered_at(r, sol)]["stage"] != "states"


@pytest.mark.parametrize("strategy", ["closed", "pruned", "dense"])
def test_a_forced_plan_is_the_solves_own(monkeypatch, strategy):
    """No states engine before it: the dense stage the plan names is the one the solve runs, figure for figure
    (a forced "closed" on bounds that do not meet is refused by both alike)."""
    _no_groups(monkeypatch)
    w, v, c = generate.FAMILIES["spanner-uncorrelated"](np.random.default_rng(7), 67, 168)
    try:
        r = knapsack_gpu.plan_for(w, v, c, device="cpu", memory_limit=BIG_LIMIT, strategy=strategy)
    except ValueError:
        with pytest.raises(ValueError):
            knapsack_gpu.solve(w, v, c, device="cpu", strategy=strategy)
        return
    assert not r.upper_estimate and r.stages[0]["stage"] == strategy
    _check(w, v, c, memory_limit=BIG_LIMIT, strategy=strategy)


def test_plan_agrees_with_solve_where_the_states_engine_answers():
    w, v, c = generate.uncorrelated(np.random.default_rng(1), 300, 1000)
    r, sol = _check(w, v, c, memory_limit=BIG_LIMIT)
    assert sol.stats["strategy"] == "states" and _answered_at(r, sol) == 0
    assert r.stages[0]["memory"] == BIG_LIMIT - r.held and r.stages[0]["budget"] >= 200_000


@pytest.mark.parametrize("n", [5, 36])
def test_plan_agrees_with_solve_where_a_meet_in_the_middle_answers_at_once(n):
    """Few items (any), or a few dozen whose efficiencies tie (a subset sum near 2**40): the plan's one stage is the
    meet in the middle, and the solve's answer came from it."""
    rng = np.random.default_rng(n)
    w = rng.integers(2**40, 2**41, n) if n > 28 else rng.integers(1, 100, n)
    v = w.copy() if n > 28 else rng.integers(1, 100, n)
    c = int(w.sum() // 2)
    r, sol = _check(w, v, c)
    assert [s["stage"] for s in r.stages] == ["meet-in-the-middle"] and r.stages[0]["items"] == n
    assert r.stages[0]["memory"] > 0 and "meet in the middle" in str(r)


def test_plan_agrees_with_solve_where_the_grouped_solver_answers():
    """Jooken's class: the plan names the grouped solver after the states engine's first updates, with its limits;
    the solve answered there. A forced strategy="grouped" on items without groups is refused by both alike."""
    w, v, c = generate.jooken(np.random.default_rng(3), 400, c=10**8, g=10, eps=1e-4, s=200)
    r, sol = _check(w, v, c, memory_limit=BIG_LIMIT)
    g = r.stage("grouped")
    assert sol.stats["strategy"] == "grouped" and r.stages.index(g) == 1
    assert g["groups"] == sol.stats["grouped"]["groups"] and g["light"] == sol.stats["grouped"]["light"]
    assert r.stages[0]["first"] == g["after"] == 1_000_000 and g["noise_cells"] > 0
    assert "grouped solver" in str(r) and sol.weight <= c
    forced = knapsack_gpu.plan_for(w, v, c, device="cpu", strategy="grouped")
    assert [s["stage"] for s in forced.stages] == ["grouped"] and forced.stages[0]["groups"] == g["groups"]
    u, x, cap = generate.uncorrelated(np.random.default_rng(3), 200, 1000)
    for run in (knapsack_gpu.solve, knapsack_gpu.plan_for):
        with pytest.raises(ValueError, match="strategy='grouped': no groups"):
            run(u, x, cap, device="cpu", strategy="grouped")
    # fractional values: the grouped solver's integers would truncate them, so a forced run is refused
    for run in (knapsack_gpu.solve, knapsack_gpu.plan_for):
        with pytest.raises(ValueError, match="strategy='grouped': the grouped solver takes whole-number values"):
            run(w, np.asarray(v) + 0.5, c, device="cpu", strategy="grouped")


def test_plan_agrees_with_solve_on_memory():
    """Where the plan ends in a certain MemoryError, the solve raises it with the same message; where no dense row
    fits, the states engine goes on without a budget and may still answer (it does here)."""
    w, v, c = generate.uncorrelated(np.random.default_rng(1), 300, 1000)
    held = 256 * len(w)
    for options in ({"memory_limit": held - 1}, {"memory_limit": held + 1000, "strategy": "dense"}):
        r = knapsack_gpu.plan_for(w, v, c, device="cpu", **options)
        assert r.strategy == "memory" and not r.fits and r.error
        with pytest.raises(MemoryError) as exc:
            knapsack_gpu.solve(w, v, c, device="cpu", **options)
        assert str(exc.value) == r.error
    # a limit between the per-item state and the dense plan: the states engine is the plan, without a budget
    r, sol = _check(w, v, c, memory_limit=held + 100_000)
    assert r.fits and r.strategy == "states" and [s["stage"] for s in r.stages][-1] == "memory"
    assert sol.stats["strategy"] == "states" and _answered_at(r, sol) == 0
    # C = 1e12, 3,000 items: no dense row could exist, the states engine has no budget and answers
    rng = np.random.default_rng(0)
    w, v = rng.integers(1, 10**9, 3000), rng.integers(1, 10**9, 3000)
    r, sol = _check(w, v, 10**12)
    assert r.stages[0]["budget"] is None and sol.stats["strategy"] == "states"


def test_a_canonical_plan_takes_only_the_states_engines_value(monkeypatch):
    """A canonical solve: the states engine (where the dense pass is long enough to pay for it) hands on only its
    value, in a room that leaves an unreduced dense pass its memory; the dense plan in input order answers."""
    import knapsack_gpu.plan as plan_mod

    w, v, c = generate.strongly_correlated(np.random.default_rng(2), 300, 100)
    r, sol = _check(w, v, c, canonical=True, memory_limit=BIG_LIMIT)
    assert [s["stage"] for s in r.stages] == ["pruned"] and not r.upper_estimate
    monkeypatch.setattr(plan_mod, "CANONICAL_STATES_SECONDS", 0.0)
    r, sol = _check(w, v, c, canonical=True, memory_limit=BIG_LIMIT)
    first = r.stages[0]
    assert first["value_only"] and first["memory"] < BIG_LIMIT - r.held and r.strategy.startswith("pruned-")
    assert "states found the optimum's value" in sol.stats["plan_reason"]


def test_the_plan_runs_no_search(monkeypatch):
    """No stage runs in a dry run: the states engine, its meet in the middle and the grouped solver raise if
    called, and the plans of every kind above still come out."""
    import knapsack_gpu.grouped as grouped
    from knapsack_gpu import states
    from knapsack_gpu.states import mitm

    here = threading.current_thread()

    def guard(real):
        def searched(*args, **kwargs):
            # Only this thread's calls count: a background warm (states.warm_in_background, started by an earlier
            # test in this worker) runs real searches of its own.
            if threading.current_thread() is here:
                raise AssertionError("the dry run ran a search")
            return real(*args, **kwargs)

        return searched

    for owner, name in ((states.Search, "__init__"), (states.Search, "run"), (states, "solve_items"),
                        (mitm, "whole"), (mitm, "best"), (grouped, "solve")):  # fmt: skip
        monkeypatch.setattr(owner, name, guard(getattr(owner, name)))
    cases = [
        generate.uncorrelated(np.random.default_rng(1), 300, 1000),
        generate.jooken(np.random.default_rng(3), 400, c=10**8, g=10, eps=1e-4, s=200),
        ([3, 4, 5, 9, 4], [3, 4, 4, 10, 4], 11),
        generate.FAMILIES["circle"](np.random.default_rng(0), 2000, 10**6),
    ]
    seen = set()
    for w, v, c in cases:
        for options in ({}, {"strategy": "grouped"}, {"canonical": True}, {"memory_limit": 300_000}):
            try:
                r = knapsack_gpu.plan_for(w, v, c, device="cpu", **options)
            except ValueError:  # no groups to force
                continue
            seen.update(s["stage"] for s in r.stages)
    assert {"states", "grouped", "meet-in-the-middle", "pruned", "memory"} <= seen


def test_the_cli_takes_memory_limit_as_solve_does(tmp_path, capsys):
    """`plan --memory-limit` parses as `solve --memory-limit` does and plans for the limit the solve runs under
    (the issue's 5MB: not the 2.4 MiB --device-memory 5MB gives, a share of it); exit 3 only where a solve raises
    MemoryError, with its message."""
    w, v, c = generate.FAMILIES["circle"](np.random.default_rng(0), 2000, 10**4)
    path = tmp_path / "inst.json"
    path.write_text(json.dumps({"weights": w.tolist(), "values": v.tolist(), "capacity": c}))
    assert cli.main(["plan", str(path), "--device", "cpu", "--memory-limit", "5MB", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert cli.main(["solve", str(path), "--device", "cpu", "--memory-limit", "5MB", "--json", "--no-progress"]) == 0
    solved = json.loads(capsys.readouterr().out)
    assert planned["memory_limit"] == solved["stats"]["memory_limit"] == 5 * 10**6
    assert planned["stages"][0]["memory"] == 5 * 10**6 - 256 * len(w) and planned["fits"]
    assert cli.main(["plan", str(path), "--device", "cpu", "--device-memory", "5MB", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["memory_limit"] == 2_500_000
    # below the per-item state: exit 3, and the solve's MemoryError message
    assert cli.main(["plan", str(path), "--device", "cpu", "--memory-limit", "100kB", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["fits"] is False and out["strategy"] == "memory"
    with pytest.raises(MemoryError) as exc:
        knapsack_gpu.solve(w, v, c, device="cpu", memory_limit=100_000)
    assert out["error"] == str(exc.value)
    assert cli.main(["plan", str(path), "--device", "cpu", "--memory-limit", "100kB"]) == 3
    assert "MemoryError" in capsys.readouterr().out
    for command in ("plan", "solve"):  # refused alike
        with pytest.raises(SystemExit) as exc:
            cli.main([command, str(path), "--memory-limit", "0"])
        assert exc.value.code == 2 and "a memory limit must be at least 1 byte" in capsys.readouterr().err


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
    _no_groups(monkeypatch)
    if kind != "states":
        _give_way_at_once(monkeypatch)
        family, seed, n, R = GIVE_WAY[kind]
    else:
        family, seed, n, R = "uncorrelated", 1, 300, 1000
    w, v, c = generate.FAMILIES[family](np.random.default_rng(seed), n, R)
    st = knapsack_gpu.solve(w, v, c, device="cpu").stats
    assert sorted(set(STATS_KEYS) - set(st)) == []
    assert st["plan_reason"], st["strategy"]
    doc = knapsack_gpu.Solution.__doc__
    assert all(f"``{key}``" in doc for key in STATS_KEYS)


@pytest.mark.parametrize("family", sorted(generate.FAMILIES))
def test_the_plans_summary_names_what_the_solve_reports(family):
    """Over generated instances of every class at 5, 40 and 300 items: the strategy the plan's summary names is
    ``Solution.stats["strategy"]`` wherever only its last stage answers; where an earlier stage may answer (it names
    when it gives way), the solve's strategy is that stage's, or the last's (issue 59: the dry run said "meet in the
    middle" where solve reported "states")."""
    for n in (5, 40, 300):
        w, v, c = generate.FAMILIES[family](np.random.default_rng(n), n, 1000)
        r, sol = _check(w, v, c, memory_limit=BIG_LIMIT)  # (a default limit moves with what is free)
        if sol is None:
            continue
        k = _answered_at(r, sol)
        if k == len(r.stages) - 1 and not r.upper_estimate:
            assert r.strategy == sol.stats["strategy"], (family, n, str(r))
        assert r.stages[k]["strategy"] == sol.stats["strategy"] or sol.stats["strategy"] in r.stages[k]["instead"]
    r = knapsack_gpu.plan_for([12, 7, 11, 8, 9], [24, 13, 23, 15, 16], 26)
    assert r.strategy == knapsack_gpu.solve([12, 7, 11, 8, 9], [24, 13, 23, 15, 16], 26).stats["strategy"] == "states"
    assert str(r).endswith("answers where the others give way: states")


def test_the_grouped_stage_waits_for_the_budget_the_states_stage_names(monkeypatch):
    """Issue 59: one plan said both "a first budget of 669767 state updates" and "after the states engine's first
    1000000 updates". Where the states engine's first budget is below the grouped solver's wait, both stages name the
    budget (the solve looks at the items for groups after it: GroupedStage.after)."""
    import knapsack_gpu.plan as plan_mod

    w, v, c = generate.jooken(np.random.default_rng(3), 400, c=10**8, g=10, eps=1e-4, s=200)
    monkeypatch.setattr(plan_mod, "STATES_MIN_UPDATES", 1000)
    monkeypatch.setattr(plan_mod, "STATES_FIRST_SHARE", 1e-9)
    r = knapsack_gpu.plan_for(w, v, c, device="cpu", memory_limit=BIG_LIMIT)
    first, g = r.stages[0], r.stage("grouped")
    assert first["budget"] < 1_000_000 and first["first"] == g["after"] == first["budget"]
    assert f"after the states engine's first {first['budget']} updates" in str(r)
