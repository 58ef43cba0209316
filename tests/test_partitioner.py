"""The torch.compile plug-in: a drop-in for dp_knapsack, the enable() context, the Pareto frontier."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import torch
from conftest import HANG_S

import knapsack_gpu.partitioner as kp
from knapsack_gpu.reference import brute_force

tk = pytest.importorskip("torch._functorch._activation_checkpointing.knapsack")

ISSUE_197871 = [
    ([25, 5, 22, 26], 72, [25, 2, 27, 28], 57),
    ([2, 19, 25, 2, 14, 3, 9, 7], 29, [47, 21, 12, 8, 12, 45, 24, 2], 128),
    ([8, 26, 10, 26], 69, [10, 12, 36, 17], None),
    ([1, 1, 1], 1, [1, 1, 1], 1),
]


def random_instance(rng, n, budget):
    """Quantized memories (exact at S = 10000), zero weights and zero runtimes, small integer runtimes: many ties."""
    q = rng.integers(0, max(2, 3 * budget // max(1, n)), n)
    q[rng.random(n) < 0.1] = 0
    runtimes = rng.integers(0, 12, n).astype(float)
    return q, (q / 10000).tolist(), runtimes.tolist(), budget / 10000


@pytest.mark.parametrize("q, budget, runtimes, optimum", ISSUE_197871)
def test_issue_197871_instances_never_over_budget(q, budget, runtimes, optimum):
    memory = [x / 10000 for x in q]
    value, saved, recomputable = kp.knapsack(memory, runtimes, budget / 10000)
    best, _ = brute_force(q, runtimes, budget)
    assert value == best and (optimum is None or value == optimum)
    assert sum(q[i] for i in saved) <= budget
    assert sorted(saved + recomputable) == list(range(len(q)))
    assert (value, saved, recomputable) == tk.dp_knapsack(memory, [float(r) for r in runtimes], budget / 10000)


def test_identical_to_dp_knapsack_with_ties_zero_weights_and_zero_runtimes():
    rng = np.random.default_rng(0)
    for trial in range(300):
        n = int(rng.integers(0, 40))
        q, memory, runtimes, max_memory = random_instance(rng, n, int(rng.integers(0, 400)))
        ours = kp.knapsack(memory, runtimes, max_memory)
        assert ours == tk.dp_knapsack(memory, runtimes, max_memory), trial
        assert sum(q[i] for i in ours[1]) <= round(max_memory * 10000)


def test_brute_force_optimal_and_feasible():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        memory = rng.uniform(0, 0.05, n).round(6).tolist()
        runtimes = rng.uniform(0, 10, n).tolist()
        max_memory = float(rng.uniform(0, 0.15))
        value, saved, _ = kp.knapsack(memory, runtimes, max_memory)
        q = [round(m * 10000) for m in memory]
        budget = round(max_memory * 10000)
        best, _ = brute_force(q, runtimes, budget)
        assert value == pytest.approx(best, rel=1e-12)
        assert sum(q[i] for i in saved) <= budget


def test_safe_rounding_keeps_the_float_budget():
    rng = np.random.default_rng(2)
    for _ in range(200):
        n = int(rng.integers(1, 15))
        memory = rng.uniform(0, 0.01, n).tolist()
        runtimes = rng.uniform(0, 10, n).tolist()
        max_memory = float(rng.uniform(0, 0.03))
        _, saved, _ = kp.knapsack(memory, runtimes, max_memory, rounding="safe")
        assert sum(Fraction(memory[i]) for i in saved) <= Fraction(max_memory)  # exactly, not just quantized


def test_flop_runtimes_summed_exactly():
    runtimes = [10**12 + 1, 10**12 + 2, 10**12 + 4, 3]
    value, saved, _ = kp.knapsack([0.001, 0.001, 0.001, 0.0005], runtimes, 0.0025)
    assert saved == [1, 2, 3]
    assert value == float(2 * 10**12 + 9)  # float32 (dp_knapsack) cannot tell 1e12+1 from 1e12+2


def test_empty_zero_weight_and_zero_runtime():
    assert kp.knapsack([], [], 0.3) == (0.0, [], [])
    value, saved, recomputable = kp.knapsack([0.0, 0.1, 0.0, 0.2], [4.0, 0.0, 0.0, 3.0], 0.0)
    assert saved == [0] and value == 4.0 and recomputable == [3, 2, 1]


@pytest.mark.parametrize(
    "args, error, match",
    [
        (([0.1, 0.2], [1.0], 0.3), ValueError, "memory has 2 entries but runtimes has 1"),
        (([0.1, float("nan")], [1.0, 2.0], 0.3), ValueError, r"memory\[1\] = nan"),
        (([0.1, -0.2], [1.0, 2.0], 0.3), ValueError, r"memory\[1\] = -0.2: memory must be >= 0"),
        (([0.1, 0.2], [1.0, float("inf")], 0.3), ValueError, r"runtimes\[1\] = inf"),
        (([0.1], [1.0], float("nan")), ValueError, "max_memory = nan"),
        (([0.1], ["a"], 0.3), TypeError, r"runtimes\[0\] = 'a' is not a number"),
    ],
)
def test_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        kp.knapsack(*args)
    with pytest.raises(ValueError, match="rounding='up'"):
        kp.knapsack([0.1], [1.0], 0.2, rounding="up")


def test_device_policy_keeps_small_instances_on_the_cpu():
    assert kp.choose_device(30, 10_000).type == "cpu"
    assert kp.choose_device(10**6, 10_000).type == ("cuda" if torch.cuda.is_initialized() else "cpu")


def test_cuda_failure_falls_back_to_cpu_with_a_warning(monkeypatch, caplog):
    real = kp.solve

    def flaky(w, v, cap, device, **kw):
        if torch.device(device).type == "cuda":
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(w, v, cap, device=device, **kw)

    monkeypatch.setattr(kp, "solve", flaky)
    monkeypatch.setattr(kp, "choose_device", lambda n, b, d: torch.device("cuda"))
    with caplog.at_level(logging.WARNING, logger="knapsack_gpu.partitioner"):
        assert kp.knapsack([0.1, 0.2], [3.0, 4.0], 0.2) == (4.0, [1], [0])
    assert "solving on the CPU instead" in caplog.text


def test_pareto_matches_dp_knapsack_at_every_budget_and_its_knee():
    rng = np.random.default_rng(3)
    q, memory, runtimes, _ = random_instance(rng, 50, 500)
    front = kp.pareto(memory, runtimes, scale=10000)  # re-exported from knapsack_gpu.pareto
    for b in range(0, int(q.sum()) + 1, 7):
        value, saved, _ = tk.dp_knapsack(memory, runtimes, b / 10000)
        assert front.runtime[b] == value
        assert front.selection(b / 10000) == saved
        assert front.used[b] <= b and front.runtime[front.used[b]] == front.runtime[b]
    budgets = [0.001 + i * (0.05 - 0.001) / 99 for i in range(100)]
    mem, rec = [], []
    for b in budgets:  # PyTorch's knee search: one dp_knapsack per budget
        _, saved, recomputable = tk.dp_knapsack(memory, runtimes, b)
        mem.append(sum(memory[i] for i in saved))
        rec.append(sum(runtimes[i] for i in recomputable))
    rn = [(r - min(rec)) / (max(rec) - min(rec)) for r in rec]
    mn = [(m - min(mem)) / (max(mem) - min(mem)) for m in mem]
    dist = [(a * a + b * b) ** 0.5 for a, b in zip(rn, mn, strict=True)]
    assert front.knee(max_budget=0.05) == budgets[dist.index(min(dist))]


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_plot_pareto(tmp_path, suffix):
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(4)
    _, memory, runtimes, _ = random_instance(rng, 30, 300)
    front = kp.pareto(memory, runtimes)
    out = tmp_path / f"front.{suffix}"
    kp.plot_pareto(front, str(out), knee=front.knee(max_budget=0.03))
    assert out.stat().st_size > 1000


MLP_SCRIPT = r"""
import json, logging, sys, torch
import knapsack_gpu.partitioner as kp
from torch._functorch import config
said = []
handler = logging.Handler(logging.INFO)
handler.emit = lambda record: said.append(record.getMessage())
logging.getLogger("knapsack_gpu").addHandler(handler)
logging.getLogger("knapsack_gpu").setLevel(logging.INFO)
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(64, 64), torch.nn.GELU())])
x = torch.randn(32, 64, requires_grad=True)
before = (config.activation_memory_budget, config.activation_memory_budget_solver,
          config.activation_memory_budget_runtime_estimator)
with kp.enable(memory_budget=0.5) as solver:
    out = torch.compile(model, backend="aot_eager")(x)
    out.sum().backward()
    grad = x.grad.clone()
after = (config.activation_memory_budget, config.activation_memory_budget_solver,
         config.activation_memory_budget_runtime_estimator)
x.grad = None
ref = model(x)
ref.sum().backward()
call = solver.last_call
asked = list(said)
torch._dynamo.reset()
del said[:]
with kp.enable(memory_budget=0.9) as roomy:  # every activation fits: the partitioner asks no knapsack
    torch.compile(model, backend="aot_eager")(x.detach().clone().requires_grad_()).sum().backward()
print(json.dumps({
    "said_when_asked": asked, "said_when_not": list(said), "roomy_calls": roomy.calls,
    "calls": solver.calls,
    "uuid": solver.uuid(),
    "estimator_uuid": solver.estimator.uuid(),
    "restored": before == after,
    "numerics": bool(torch.allclose(out, ref) and torch.allclose(grad, x.grad)),
    "memory": call and call["memory"], "max_memory": call and call["max_memory"],
    "saved": call and call["saved"], "runtimes": call and [float(r) for r in call["runtimes"]],
}))
"""


@pytest.fixture(scope="module")
def mlp_run():
    """The MLP compile in a process of its own (its uuid is compared with this process's: it must not depend on the
    process; a second child compared the same thing again)."""
    r = subprocess.run([sys.executable, "-c", MLP_SCRIPT], capture_output=True, text=True, timeout=HANG_S)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_enable_end_to_end_with_aot_eager(mlp_run):
    run = mlp_run
    assert run["calls"] >= 1, "the partitioner never called the solver"
    assert run["restored"] and run["numerics"]
    budget = round(run["max_memory"] * 10000)
    assert sum(round(run["memory"][i] * 10000) for i in run["saved"]) <= budget
    assert all(r > 1 for r in run["runtimes"]), "runtimes must be the FLOP estimates, not the no_dispatch fallback 1"


def test_a_compile_that_asks_no_knapsack_says_so_once(mlp_run):
    """Issue 59: a compile whose activations all fit the budget never reaches the solver; the plug-in logs that once
    for that compile (and why), and says nothing of the kind where it was asked."""
    unasked = [m for m in mlp_run["said_when_not"] if "without asking for a knapsack" in m]
    assert mlp_run["roomy_calls"] == 0 and len(unasked) == 1 and "fit the memory budget 0.9" in unasked[0]
    assert not any("without asking" in m for m in mlp_run["said_when_asked"])


def test_uuid_is_stable_across_processes_and_tracks_settings(mlp_run):
    assert mlp_run["uuid"]
    est_cls, solver_cls = kp.RecordingRuntimeEstimator, kp.KnapsackSolver
    a = solver_cls(est_cls("flops"))
    assert a.uuid() == mlp_run["uuid"]  # built here: another process, its own string hash seed
    assert solver_cls(est_cls("flops"), rounding="safe").uuid() != a.uuid()
    assert solver_cls(est_cls("testing")).uuid() != a.uuid()
    assert solver_cls(est_cls("flops"), device="cpu").uuid() != a.uuid()


def test_enable_validates_and_restores_on_error():
    from torch._functorch import config

    with pytest.raises(ValueError, match="memory_budget = 1.5"):
        with kp.enable(memory_budget=1.5):
            pass
    before = config.activation_memory_budget_solver
    with pytest.raises(RuntimeError, match="boom"):
        with kp.enable(memory_budget=0.3):
            assert config.activation_memory_budget == 0.3
            raise RuntimeError("boom")
    assert config.activation_memory_budget_solver == before and config.activation_memory_budget == 1.0


def test_enable_on_a_torch_without_custom_solvers_names_the_version_it_needs(monkeypatch):
    import torch._inductor.custom_graph_pass as cgp

    kp._classes.cache_clear()
    monkeypatch.delattr(cgp, "CustomKnapsackSolver")  # as in torch 2.10 and older
    try:
        with pytest.raises(ImportError, match=rf"torch >= 2\.11.*this is torch {re.escape(torch.__version__)}"):
            with kp.enable(memory_budget=0.5):
                pass
        assert kp.knapsack([0.5, 0.5], [1.0, 2.0], 0.5)[1] == [1]  # the drop-in needs no such class
    finally:
        monkeypatch.undo()
        kp._classes.cache_clear()


def test_importing_the_package_stays_cheap():
    """Beyond torch and numpy (which torch.compile users have loaded), importing knapsack_gpu loads only itself."""
    code = (
        "import json, sys, torch, numpy; before = set(sys.modules); import knapsack_gpu; "
        "print(json.dumps(sorted(m for m in set(sys.modules) - before if not m.startswith('knapsack_gpu'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout) == []


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'frontier'"):
        kp.frontier  # noqa: B018


@pytest.mark.parametrize("budget", [0.0, 1.0])
def test_a_budget_pytorch_settles_alone_is_said_to_call_no_solver(caplog, budget):
    """At 0 and 1 PyTorch's partitioner answers without a knapsack: the solver's calls stay 0, and enable() logs
    why, so that the missing solve lines are not a mystery."""
    with caplog.at_level(logging.INFO, logger="knapsack_gpu"):
        with kp.enable(memory_budget=budget) as solver:
            pass
    assert solver.calls == 0
    assert any("is not called" in r.getMessage() and str(budget) in r.getMessage() for r in caplog.records)
