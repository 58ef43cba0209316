"""The dry run (knapsack_gpu.plan_for, ``knapsack-gpu plan``): the plan a device would run, its bytes and time, and
the solver's own choice of the one-row torch pass where the kernels' two rows do not fit."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import knapsack_gpu
from knapsack_gpu import cli

H200 = 141 * 10**9


def jooken_like(n: int = 1000, cap: int = 10**10, seed: int = 0):
    """Values within 300 of the weights, weights 1-10% of C: Jooken's c = 1e10 structure (f needs int64, h int32)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(cap // 100, cap // 10, n)
    return w, w + rng.integers(-300, 301, n), cap


def test_c_1e10_gets_a_hirschberg_plan_in_int32_within_80_percent_of_an_h200():
    w, v, cap = jooken_like()
    r = knapsack_gpu.plan_for(w, v, cap, device="cuda", device_memory=H200)
    assert r.fits and r.recovery == "hirschberg"
    assert r.dtype in ("int32", "int16") and r.reduced_values["P"] == 1 == r.reduced_values["Q"]
    assert r.hirschberg_bytes <= r.memory_limit == int(0.8 * H200)
    # int32 rows: the kernels' two rows and the kept half are 12 B a cell, over the limit; the torch pass's one row
    # and a chunk fit
    assert r.backend == "torch" and r.hirschberg_bytes < 9 * cap
    assert r.seconds == pytest.approx(r.cells / r.cell_rate * 2)
    assert "hirschberg" in str(r) and "int32" in str(r)


def test_too_little_memory_says_so_and_the_cli_exits_3(tmp_path, capsys):
    w, v, cap = jooken_like(n=200, cap=10**9)
    r = knapsack_gpu.plan_for(w, v, cap, device="cuda", device_memory=10**9)
    assert not r.fits and "MemoryError" in str(r)
    path = tmp_path / "inst.json"
    path.write_text(json.dumps({"weights": w.tolist(), "values": v.tolist(), "capacity": cap}))
    assert cli.main(["plan", str(path), "--device-memory", "1GB", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["fits"] is False and out["hirschberg_bytes"] > out["memory_limit"]
    assert cli.main(["plan", str(path), "--device-memory", "141GB"]) == 0
    assert "plan: " in capsys.readouterr().out


def test_cpu_plan_and_a_stated_cell_rate():
    w, v, cap = jooken_like(n=100, cap=10**7)
    r = knapsack_gpu.plan_for(w, v, cap, device="cpu", device_memory=16 * 2**30, cell_rate=1e9)
    assert r.backend == "numpy" and r.fits and r.cell_rate == 1e9
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", strategy=r.strategy)
    assert sol.stats["dtype"] == r.dtype  # the solve runs the plan the dry run names (same bounds, no states)


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
    dev = torch.device("cpu")
    need = {
        n: min_bytes(make_pass(n, dev, torch.int32, Workspace(Meter(2**40, dev))), 40, cap + 1)
        for n in ("triton", "torch")
    }
    assert need["torch"] < need["triton"]
    limit = solver.HOST_BYTES_PER_ITEM * 40 + (need["torch"] + need["triton"]) // 2
    sol = knapsack_gpu.solve(w, v, cap, device="cpu", memory_limit=limit, strategy="dense")
    assert sol.stats["backend"] == "torch" and sol.stats["peak_bytes"] <= limit
    from knapsack_gpu.reference import reference_dp

    assert sol.value == reference_dp(w.tolist(), v.tolist(), cap)[0]
