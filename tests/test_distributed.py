"""knapsack_gpu.distributed on CPU ranks: gloo process groups of 2 and 3 started with torch.multiprocessing (localhost).

Each world size is started once and runs every case (starting Python with torch costs seconds on a 2-core VM); the
tests then check each case's results. Oracle: the single-process solver. Feasibility is checked separately from the
value; every rank must return the same Solution. The bit-table path must also reproduce the single-process selection
(both take an item only on strict improvement).
"""

from __future__ import annotations

import os
import pickle
import re
import socket
import subprocess
import sys
import traceback
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
from conftest import HANG_S
from oracle import assert_feasible, assert_value

import knapsack_gpu
from knapsack_gpu.generate import FAMILIES

# Issue 24's instance, the one benchmarks/distributed_minimum.py times at and above its stated minimum.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import distributed_minimum as issue24  # noqa: E402

WORLDS = (2, 3)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, cases: list, out_dir: str, die_after: int | None):
    torch.set_num_threads(1)
    os.environ["KNAPSACK_GPU_DIST_POISON"] = "1"  # fresh buffers hold garbage that cannot go unnoticed
    import torch.distributed as dist

    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(seconds=HANG_S),
    )
    from knapsack_gpu.distributed import solve
    from knapsack_gpu.distributed.comm import Comm

    if die_after is not None and rank == world - 1:
        calls = {"n": 0}
        start = Comm.start

        def dying_start(self, sends, recvs):
            calls["n"] += 1
            if calls["n"] > die_after:
                os._exit(17)  # a rank crashing mid-solve, with no goodbye
            return start(self, sends, recvs)

        Comm.start = dying_start
    results = []
    for case in cases:
        w, v = case["weights"], case["values"]
        if case.get("perturb_rank") == rank:
            v = [list(row) for row in v] if case.get("batch") else list(v)
            if case.get("batch"):
                v[0][0] += 1
            else:
                v[0] += 1
        try:
            if case.get("batch"):  # solve_batch: the rows split over the ranks, every answer on every rank
                res = knapsack_gpu.solve_batch(np.asarray(w), np.asarray(v), case["capacity"], **case["kwargs"])
                got = {k: np.asarray(getattr(res, k)).tolist() for k in ("value", "selected", "weight")}
                results.append({**got, "stats": res.stats})
                continue
            sol = solve(w, v, case["capacity"], **case["kwargs"])
            results.append({"value": sol.value, "selected": sol.selected, "weight": sol.weight, "stats": sol.stats})
        except Exception as exc:
            results.append({"error": type(exc).__name__, "message": str(exc), "trace": traceback.format_exc()})
    with open(Path(out_dir) / f"rank{rank}.pkl", "wb") as f:
        pickle.dump(results, f)
    dist.destroy_process_group()


def run_world(world: int, cases: list, out_dir: Path, die_after: int | None = None):
    """Start ``world`` gloo ranks running ``cases``; return each rank's results (None for a rank that wrote none).

    The process group's timeout and the join are hang guards (HANG_S), not budgets: a rank that starts late on a busy
    machine is waited for."""
    ctx = mp.get_context("spawn")
    port = _free_port()
    procs = [ctx.Process(target=_worker, args=(r, world, port, cases, str(out_dir), die_after)) for r in range(world)]
    for p in procs:
        p.start()
    hung = []
    for p in procs:
        p.join(HANG_S)
        if p.is_alive():
            hung.append(p.pid)
            p.kill()
            p.join()
    assert not hung, f"ranks with pids {hung} were still running after {HANG_S} s: a hang"
    out = []
    for r in range(world):
        path = out_dir / f"rank{r}.pkl"
        out.append(pickle.loads(path.read_bytes()) if path.exists() else None)
    return out


# ---- the cases ------------------------------------------------------------------------------------------------------


def _case(cid, w, v, cap, **kwargs):
    return {"id": cid, "weights": list(map(int, w)), "values": np.asarray(v).tolist(), "capacity": int(cap), **kwargs}


def _hirschberg_limit(w, v, cap, world: int) -> int | None:
    """A per-rank limit that holds the Hirschberg plan but not the bit table (None when no such limit exists)."""
    from knapsack_gpu.distributed.recover import full_plans, plan_memory
    from knapsack_gpu.problem import make_instance
    from knapsack_gpu.reduce import reduce

    red = reduce(make_instance(w, v, cap), None, whole_profile=True)
    if red.n == 0 or int(red.weights.sum()) <= red.capacity:
        return None
    args = (red.capacity + 1, world, red.n, int(red.weights.max()), red.dtype)
    isz = 8 if red.dtype in (torch.int64, torch.float64) else 4
    bits, hirschberg = full_plans(*args)[1::2]
    limit = hirschberg.bytes(isz)
    return limit if plan_memory(limit, *args).strategy == "hirschberg" else None


def _stated_minimum(w, v, cap, world: int) -> int:
    """The per-rank bytes the planner's MemoryError states as the least it accepts, for this reduced instance."""
    from knapsack_gpu.distributed.recover import plan_memory
    from knapsack_gpu.problem import make_instance
    from knapsack_gpu.reduce import reduce

    red = reduce(make_instance(w, v, cap), None, whole_profile=True)
    with pytest.raises(MemoryError) as info:
        plan_memory(0, red.capacity + 1, world, red.n, int(red.weights.max()), red.dtype)
    return issue24.stated_minimum(str(info.value))


def build_cases(world: int) -> list[dict]:
    rng = np.random.default_rng(20240 + world)
    cases = []
    for name, gen in FAMILIES.items():
        w, v, cap = gen(rng, 40, R=100)
        cases.append(_case(f"{name}", w, v, cap, kwargs={}))
        # Too little memory for the bit table: Hirschberg splits (200 items: bits outweigh the kept half-profile).
        w, v, cap = gen(rng, 200, R=60)
        limit = _hirschberg_limit(w, v, cap, world)
        if limit is not None:
            cases.append(_case(f"{name}-hirschberg", w, v, cap, kwargs={"memory_limit": limit}, expect="hirschberg"))
    # Items heavier than a shard (C / world), and a capacity + 1 that the world size does not divide.
    w = rng.integers(300, 900, 14)
    v = rng.integers(1, 1000, 14)
    cap = 1000 if world == 3 else 1002
    cases.append(_case("heavy-items", w, v, cap, kwargs={}, expect="bits"))
    cases.append(_case("heavy-items-serial", w, v, cap, kwargs={"memory_limit": 4 * (cap + 1) * 9 // 10}, tight=True))
    # Many light items: grouped halos.
    w = rng.integers(1, 40, 300)
    v = w + rng.integers(0, 5, 300)
    cases.append(_case("light-groups", w, v, 3001, kwargs={}, expect="bits", groups=True))
    # Hirschberg whose small sub-problems run on one rank each.
    w = rng.integers(50, 500, 120)
    v = rng.integers(1, 10**6, 120)
    limit = _hirschberg_limit(w, v, 20_000, world)
    cases.append(_case("local-subproblems", w, v, 20_000, kwargs={"memory_limit": limit}, expect="hirschberg"))
    # A per-rank limit below one whole row: the single-process solver cannot run, the sharded plan can.
    n_tight = 12 if world == 2 else 40
    w = rng.integers(1, 300, n_tight)
    v = rng.integers(1, 300, n_tight)
    cap = int(w.sum()) // 3
    cases.append(_case("below-one-row", w, v, cap, kwargs={"memory_limit": 4 * (cap + 1) * 9 // 10}, tight=True))
    # The stated minimum solves, with a bounded number of messages (test_stated_minimum_exchanges_like_a_roomy_plan);
    # one byte less is refused, stating it.
    w, v, cap = issue24.instance(1)
    least = _stated_minimum(w, v, cap, world)
    cases.append(_case("issue24-roomy", w, v, cap, kwargs={}))
    cases.append(_case("issue24-minimum", w, v, cap, kwargs={"memory_limit": least}))
    cases.append(_case("issue24-below-minimum", w, v, cap, kwargs={"memory_limit": least - 1}, error="MemoryError"))
    # Edges.
    cases += [
        _case("capacity-0", [3, 1], [4, 5], 0, kwargs={}),
        _case("empty", [], [], 5, kwargs={}),
        _case("all-fit", [5, 5, 5], [1, 2, 3], 20, kwargs={}),
        _case("shorter-than-world", [1, 1, 1], [1, 2, 3], 1, kwargs={}),
        _case("zero-weights-and-values", [0, 2, 3, 0, 4], [5, 0, 4, 0, 6], 6, kwargs={}),
        _case("one-item", [3], [4], 5, kwargs={}),
        _case("int64-dtype", [3, 4, 5, 6], [30, 50, 60, 70], 11, kwargs={"dtype": torch.int64}),
    ]
    cases.append(_case("mismatched-ranks", [3, 4, 5], [30, 50, 60], 8, kwargs={}, perturb_rank=world - 1))
    cases += _batch_cases(rng)
    cases.append(_case("after-an-error", [3, 4, 5], [30, 50, 60], 8, kwargs={}, expect="bits"))
    return cases


def _batch_cases(rng) -> list[dict]:
    """solve_batch under the process group (issue 58.7): float rows as POMO draws them (a row count no world size
    divides), whole-number rows with hard ones the planner answers, the dense batch, and a batch one rank alone
    changes."""
    batch = {"batch": True}
    W, V = rng.random((37, 15)).astype(np.float32), rng.random((37, 15)).astype(np.float32)
    C = (W.sum(axis=1) / 2).tolist()
    cases = [{"id": "batch-floats", "weights": W.tolist(), "values": V.tolist(), "capacity": C, "kwargs": {}, **batch}]
    rows = [
        FAMILIES[f](rng, 120, R=10**4) for f in ("strongly", "uncorrelated", "subset-sum", "weakly", "inverse-strongly")
    ]
    # and weights near 2**55: totals past 2**53, which the first run leaves to the planner
    rows.append(((2**55 + np.arange(120) * 7919), 1000 + (np.arange(120) * 37) % 101, 2**57))
    W, V = np.stack([np.asarray(r[0]) for r in rows]), np.stack([np.asarray(r[1]) for r in rows])
    cases.append({"id": "batch-ints", "weights": W.tolist(), "values": V.tolist(), "capacity": [r[2] for r in rows],
                  "kwargs": {"device": "cpu"}, **batch})  # fmt: skip
    W, V = rng.integers(1, 30, (9, 8)), rng.integers(1, 30, (9, 8))
    dense = {"device": "cpu", "strategy": "dense"}
    cases.append({"id": "batch-dense", "weights": W.tolist(), "values": V.tolist(), "capacity": 60, "kwargs": dense,
                  **batch})  # fmt: skip
    cases.append({"id": "batch-mismatched", "weights": W.tolist(), "values": V.tolist(), "capacity": 60,
                  "kwargs": {}, "perturb_rank": 1, **batch})  # fmt: skip
    return cases


CASES = {world: build_cases(world) for world in WORLDS}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """world -> per-rank result lists, each world started once."""
    out = {}
    for world in WORLDS:
        ranks = run_world(world, CASES[world], tmp_path_factory.mktemp(f"world{world}"))
        assert all(r is not None for r in ranks), "a rank wrote no results"
        out[world] = ranks
    return out


def _params():
    for world in WORLDS:
        for i, case in enumerate(CASES[world]):
            if not case["id"].endswith("mismatched-ranks") and "error" not in case and not case.get("batch"):
                yield pytest.param(world, i, id=f"P{world}-{case['id']}")


@pytest.mark.parametrize("world, i", list(_params()))
def test_same_optimum_as_single_process(results, world, i):
    case = CASES[world][i]
    ranks = [r[i] for r in results[world]]
    first = ranks[0]
    assert "error" not in first, first.get("trace")
    for other in ranks[1:]:
        for key in ("value", "selected", "weight"):
            assert other[key] == first[key], f"ranks disagree on {key}"
        assert other["stats"] == first["stats"], "stats must be identical on every rank"
    w, v, cap = case["weights"], case["values"], case["capacity"]
    ref = knapsack_gpu.solve(w, v, cap, device="cpu", canonical=True)

    class Sol:  # what the oracle helpers read
        value, selected, weight = first["value"], first["selected"], first["weight"]

    assert_feasible(Sol, w, cap)
    assert_value(Sol, v, ref.value)
    st = first["stats"]
    assert st["world_size"] == world
    assert st["peak_bytes"] <= st["memory_limit"]
    assert len(st["bytes_sent"]) == len(st["bytes_received"]) == len(st["comm_wait_seconds"]) == world
    if "expect" in case:
        assert st["strategy"] == case["expect"]
    if st["strategy"] == "bits":
        assert first["selected"] == ref.selected, "the bit table takes items on strict improvement, as dp_knapsack"
    if case.get("tight"):
        row = st["profile_length"] * (8 if st["dtype"] in ("int64", "float64") else 4)
        assert st["memory_limit"] < row and st["peak_bytes"] < row
        with pytest.raises(MemoryError):  # no single-process dense plan fits (bounds may still close it)
            knapsack_gpu.solve(w, v, cap, device="cpu", memory_limit=st["memory_limit"], strategy="dense")
    if case.get("groups"):
        assert st["halo_recompute_cells"] > 0, "light items should have travelled in groups"
        assert max(st["messages"]) < len(w), "one halo message per group, not per item"


def _batch_params():
    for world in WORLDS:
        for i, case in enumerate(CASES[world]):
            if case.get("batch") and "perturb_rank" not in case:
                yield pytest.param(world, i, id=f"P{world}-{case['id']}")


@pytest.mark.parametrize("world, i", list(_batch_params()))
def test_a_batch_over_the_ranks_answers_every_row_on_every_rank(results, world, i):
    """Every rank returns every row's answer, the same on each, and the single process's optima; the stats count
    every rank's rows."""
    case = CASES[world][i]
    ranks = [r[i] for r in results[world]]
    assert all("error" not in r for r in ranks), ranks[0].get("trace")
    for other in ranks[1:]:
        assert {k: other[k] for k in ("value", "selected", "weight")} == {
            k: ranks[0][k] for k in ("value", "selected", "weight")}  # fmt: skip
    W, V = np.asarray(case["weights"]), np.asarray(case["values"])
    ref = knapsack_gpu.solve_batch(W, V, case["capacity"], device="cpu")
    assert ranks[0]["value"] == ref.value.tolist()
    st = ranks[0]["stats"]
    assert st["ranks"] == world and sum(st["engines"].values()) == len(case["weights"])
    sel = np.asarray(ranks[0]["selected"])
    caps = np.broadcast_to(np.asarray(case["capacity"], dtype=np.float64), (W.shape[0],))
    for b in range(W.shape[0]):
        assert W[b][sel[b]].astype(np.float64).sum() <= caps[b] + 1e-9
    if case["id"] == "batch-ints":
        assert st["engines"]["planner"] >= 1, "the row of weights near 2**55 needs the planner"
    if case["id"] == "batch-dense":
        assert st["engines"]["dense"] == len(case["weights"])


def test_heavy_items_exchange_only_what_they_read(results):
    """Items heavier than a shard: every rank still sends at most its shard per item, never the whole row."""
    for world in WORLDS:
        i = next(k for k, c in enumerate(CASES[world]) if c["id"] == "heavy-items")
        st = results[world][0][i]["stats"]
        per_item_cap = st["shard_length"] * 4
        assert max(st["bytes_sent"]) <= len(CASES[world][i]["weights"]) * per_item_cap + 1024
        i = next(k for k, c in enumerate(CASES[world]) if c["id"] == "heavy-items-serial")
        assert results[world][0][i]["stats"]["serial_items"] > 0


def test_small_subproblems_run_on_one_rank(results):
    for world in WORLDS:
        i = next(k for k, c in enumerate(CASES[world]) if c["id"] == "local-subproblems")
        st = results[world][0][i]["stats"]
        assert st["splits"] >= 1 and sum(st["local_subproblems"]) >= 2
        assert all(n > 0 for n in st["local_subproblems"]), "sub-problems should be dealt to every rank"


def test_ranks_with_different_problems_are_told(results):
    for world in WORLDS:
        i = next(k for k, c in enumerate(CASES[world]) if c["id"] == "mismatched-ranks")
        for r in results[world]:
            assert r[i]["error"] == "DistributedError"
            assert "different problems" in r[i]["message"]
        i = next(k for k, c in enumerate(CASES[world]) if c["id"] == "batch-mismatched")
        for r in results[world]:
            assert r[i]["error"] == "DistributedError" and "differs from rank 0's" in r[i]["message"]


def test_stated_minimum_exchanges_like_a_roomy_plan(results):
    """At the stated minimum a rank sends at most GROUP_DIVISOR messages per item where a roomy plan sends one (the
    smallest halo area is 1/GROUP_DIVISOR of a shard), not one per cell; a byte less is a MemoryError stating it."""
    from knapsack_gpu.distributed.shard import GROUP_DIVISOR

    for world in WORLDS:
        got = {c["id"]: results[world][0][i] for i, c in enumerate(CASES[world]) if c["id"].startswith("issue24")}
        roomy, least = got["issue24-roomy"]["stats"], got["issue24-minimum"]["stats"]
        assert least["memory_limit"] == _stated_minimum(*issue24.instance(1), world)
        assert least["serial_items"] > 0, "the minimum should be tight enough that items run rank by rank"
        assert max(least["messages"]) <= GROUP_DIVISOR * max(roomy["messages"]), (least["messages"], roomy["messages"])
        below = got["issue24-below-minimum"]
        assert below["error"] == "MemoryError"
        assert issue24.stated_minimum(below["message"]) == least["memory_limit"]


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("world", [1, 2, 3, 8])
@pytest.mark.parametrize("length", [1, 17, 1003, 107_258, 10**9 + 7])
def test_plans_from_the_stated_minimum_up_exchange_in_shares_of_a_shard(length, world, dtype):
    """Every limit from the stated minimum up plans within itself, with a halo area and a candidate chunk of at least
    1/GROUP_DIVISOR of a shard (or what a roomy plan uses, when less): a bounded number of messages and torch ops per
    item at any size. One byte below the minimum is refused, stating it."""
    from knapsack_gpu.distributed.recover import full_plans, plan_memory
    from knapsack_gpu.distributed.shard import GROUP_DIVISOR, ITEMSIZE

    isz = ITEMSIZE[dtype]
    for m in (1, 8, 25, 200):
        for max_weight in {1, max(1, length // (3 * world)), max(1, length - 1)}:
            args = (length, world, m, max_weight, dtype)
            roomy = full_plans(*args)[1]
            with pytest.raises(MemoryError) as info:
                plan_memory(0, *args)
            least = issue24.stated_minimum(str(info.value))
            with pytest.raises(MemoryError, match=f"needs at least {least} bytes"):
                plan_memory(least - 1, *args)
            share = -(-roomy.shard // GROUP_DIVISOR)
            for limit in (least, least + 1, least * 6 // 5, least * 2, roomy.bytes(isz)):
                plan = plan_memory(limit, *args)
                assert plan.bytes(isz) <= limit, (limit, plan)
                assert plan.halo >= min(roomy.halo, share), (limit, plan)
                assert plan.chunk >= min(roomy.chunk, share), (limit, plan)


def test_missing_process_group_is_a_clear_error():
    from knapsack_gpu.distributed import DistributedError, solve

    with pytest.raises(DistributedError, match="init_process_group"):
        solve([1, 2], [3, 4], 2)


def test_a_dying_rank_fails_the_others_without_hanging(tmp_path):
    w = list(range(1, 41))
    case = _case("doomed", w, [x + 3 for x in w], 300, kwargs={})
    ranks = run_world(2, [case], tmp_path, die_after=3)
    assert ranks[1] is None, "the last rank was meant to die"
    err = ranks[0][0]
    assert err.get("error") == "DistributedError", err
    assert "rank 0 of 2" in err["message"] and "died" in err["message"]
    # at once, from the dead peer's closed socket: not after the process group's timeout (a hang guard here)
    assert re.search(r"[Cc]onnection (reset|closed)", err["message"]), err["message"]


def test_torchrun_cli(tmp_path):
    from knapsack_gpu.formats import write_json

    rng = np.random.default_rng(5)
    w, v, cap = FAMILIES["weakly"](rng, 50, R=300)
    path = tmp_path / "inst.json"
    write_json(path, w, v, cap)
    env = dict(os.environ, OMP_NUM_THREADS="1", KNAPSACK_GPU_DIST_TIMEOUT=str(HANG_S))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(_free_port())]
    cmd += ["-m", "knapsack_gpu", "solve", str(path), "--json", "--device", "cpu"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_S, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, "only rank 0 prints"
    import json

    got = json.loads(lines[0])
    ref = knapsack_gpu.solve(w, v, cap, device="cpu")
    assert got["value"] == ref.value and got["selected"] == ref.selected
    assert got["stats"]["world_size"] == 2 and got["stats"]["backend"] == "gloo"


def test_cost_model_counts_what_the_ranks_did(results):
    """model.pass_cost replays the plan without running it: same cells, same halo bytes (control traffic aside)."""
    from knapsack_gpu.distributed.model import pass_cost
    from knapsack_gpu.distributed.shard import ShardJob
    from knapsack_gpu.problem import make_instance
    from knapsack_gpu.reduce import reduce

    for world in WORLDS:
        for cid in ("heavy-items", "light-groups", "uncorrelated", "flop-values"):
            i = next(k for k, c in enumerate(CASES[world]) if c["id"] == cid)
            case, st = CASES[world][i], results[world][0][i]["stats"]
            assert st["strategy"] == "bits" and st["overlap"]
            red = reduce(make_instance(case["weights"], case["values"], case["capacity"]), None, whole_profile=True)
            job = ShardJob(red.weights.tolist(), red.values.tolist(), red.capacity + 1, target=red.capacity)
            cost = pass_cost(job, world, 8 if st["dtype"] in ("int64", "float64") else 4)
            assert cost.total_cells() == st["cell_updates"]
            # Control traffic: the agreement all-reduce (3 int64), the backtrack's (item, capacity) from the rank above.
            control = [24 + (16 if r < world - 1 else 0) for r in range(world)]
            assert (cost.recv.sum(axis=0) + control).tolist() == st["bytes_received"]
