"""Compiles a new user waits for (issue 51): the interpreted kernels stand in for compiled ones the disk cache lacks,
a compile that runs says so once (with an estimate), the disk cache is looked up per entry point, `knapsack-gpu
compile` shows every job as it ends, and after it nothing compiles inside a solve."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_S

import knapsack_gpu
from knapsack_gpu import generate, jit, numba_jit, states
from knapsack_gpu.cli import main
from knapsack_gpu.generate import FAMILIES
from knapsack_gpu.states import Search, modes

README = "knapsack_gpu.solve([12, 7, 11, 8, 9], [24, 13, 23, 15, 16], 26)"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cold(monkeypatch):
    """Solves as in a fresh environment: numba's disk cache holds none of the entry points (as far as a search's
    choice of kernels goes), nothing is loaded, and the interpreted stand-in has all its work left."""
    monkeypatch.setattr(numba_jit, "_ready", set())
    monkeypatch.setattr(modes, "cached", lambda kind, names=numba_jit.SEARCH: False)
    monkeypatch.setattr(numba_jit, "_trial_left", numba_jit.TRIAL_UPDATES)


def _check(sol, w, v, c) -> None:
    """The selection is feasible and worth the value reported."""
    idx = np.asarray(sol.selected, dtype=np.int64)
    assert int(np.asarray(w, dtype=np.int64)[idx].sum()) <= c
    assert np.asarray(v)[idx].sum() == pytest.approx(sol.value, rel=1e-12, abs=0)


def test_the_interpreted_stand_in_answers_as_the_compiled_kernels(cold, monkeypatch):
    """Every family, 1 to 400 items, whole and float values: the same optimum (a tie may pick other items)."""
    instances = [(family, n, seed) for family in FAMILIES for n in (1, 2, 5, 12, 29, 45, 120, 400) for seed in range(2)]
    stand_ins = []
    for family, n, seed in instances:
        w, v, c = FAMILIES[family](np.random.default_rng(seed), n)
        sol = knapsack_gpu.solve(w, v, c, device="cpu")
        assert sol.stats["binding"] in ("python", None)  # (None: no search was needed)
        stand_ins.append(sol)
    assert sum(s.stats["binding"] == "python" for s in stand_ins) > len(instances) // 2
    monkeypatch.undo()
    numba_jit.end_trial()
    for (family, n, seed), stand_in in zip(instances, stand_ins, strict=True):
        w, v, c = FAMILIES[family](np.random.default_rng(seed), n)
        sol = knapsack_gpu.solve(w, v, c, device="cpu")
        assert sol.stats["binding"] in ("compiled", None)
        assert stand_in.value == sol.value, (family, n, seed)
        _check(stand_in, w, v, c)


def test_a_search_past_the_stand_ins_work_starts_again_compiled(cold, monkeypatch):
    w, v, c = generate.circle(np.random.default_rng(1), 300, 10_000)
    monkeypatch.setattr(numba_jit, "_trial_left", 1000)
    sol = knapsack_gpu.solve(w, v, c, device="cpu", strategy="states")
    assert sol.stats["binding"] == "compiled" and numba_jit.trial_left() <= 0
    ref = knapsack_gpu.solve(w, v, c, device="cpu", strategy="states")
    assert sol.value == ref.value and sol.selected == ref.selected
    assert sol.stats["state_updates"] == ref.stats["state_updates"]  # (the stand-in's work is not counted)


@pytest.mark.parametrize("trial", [3_000_000, 10_000_000])
def test_a_trial_too_short_for_the_next_step_ends_it(cold, monkeypatch, trial):
    """The trial's rest (or a slice) smaller than the search's next step: the search moves on (compiled here, where
    no background compile runs) rather than ask again, for ever, for a step it cannot take (both trials spun on this
    instance, as the default one did on circle n = 10,000)."""
    w, v, c = generate.circle(np.random.default_rng(3), 1000, 10**5)
    monkeypatch.setattr(numba_jit, "_trial_left", trial)
    done = []
    worker = threading.Thread(target=lambda: done.append(knapsack_gpu.solve(w, v, c, device="cpu")), daemon=True)
    worker.start()
    worker.join(HANG_S / 6)
    assert done, "the search spun on a trial too short for its next step"
    ref = knapsack_gpu.solve(w, v, c, device="cpu")
    assert done[0].stats["binding"] == "compiled" and done[0].value == ref.value
    _check(done[0], w, v, c)


def test_the_stand_in_goes_on_across_a_callers_budgets(cold):
    w, v, c = generate.circle(np.random.default_rng(2), 200, 10_000)
    p, w = np.asarray(v, dtype=np.int64), np.asarray(w, dtype=np.int64)
    s = Search(p, w, int(c))
    assert s.engine.B.name == "python"
    assert not s.run(100)  # within the caller's budget: still interpreted
    assert s.engine.B.name == "python" and s.stats.state_updates <= 100
    assert s.run(None) and s.engine.B.name == "python"
    ref = Search(p, w, int(c), binding="compiled")
    assert ref.run(None) and ref.result()[0] == s.result()[0]
    assert numba_jit.trial_left() < numba_jit.TRIAL_UPDATES  # (its work is charged)


def test_a_compile_says_so_once_and_a_warm_cache_says_nothing(tmp_path):
    """In a fresh cache, with the stand-in's work spent, the README's example compiles the meet in the middle: one
    notice on stderr (a default Python set-up shows the logger's warnings) with its estimate; the next process loads
    it and says nothing. The cache then holds that entry point for whole numbers, not a search's nor floats'."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    code = f"from knapsack_gpu import numba_jit; numba_jit.end_trial(); import knapsack_gpu; print({README}.value)"
    runs = [
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=HANG_S)
        for _ in range(2)
    ]
    assert [r.stdout.strip() for r in runs] == ["51", "51"], [r.stderr for r in runs]
    first, second = (r.stderr for r in runs)
    assert first.count("compiling") == 1, first
    assert "compiling meet_instance for int64 values (numba): about" in first and "knapsack-gpu compile" in first
    assert "compiling" not in second, second
    os.environ["NUMBA_CACHE_DIR"] = str(tmp_path)
    try:
        numba_jit.cache_changed()
        assert modes.cached("i", numba_jit.FEW)
        assert not modes.cached("f", numba_jit.FEW) and not modes.cached("i", numba_jit.SEARCH)
    finally:
        del os.environ["NUMBA_CACHE_DIR"]
        numba_jit.cache_changed()


def test_a_fresh_cache_answers_a_few_items_without_numba(tmp_path):
    """The README's example and the demo in a fresh cache: the interpreted kernels answer, numba is not even
    imported, and nothing is said."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    code = f"import sys, knapsack_gpu; s = {README}; print(s.value, s.stats['binding'], 'numba' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=HANG_S)
    assert r.stdout.split() == ["51", "python", "False"] and "compiling" not in r.stderr, r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "knapsack_gpu", "demo", "--no-progress", "--device", "cpu"],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert r.returncode == 0 and r.stdout.count("optimum") == 2 and "compiling" not in r.stderr, r.stderr
    assert not list(tmp_path.rglob("*.nbi"))  # (nothing compiled)


def test_the_cli_prints_the_notice_as_its_other_messages(capsys):
    from knapsack_gpu.cli import _Notices

    with _Notices():
        numba_jit.log.warning("compiling x (numba): about 3 s")
    assert capsys.readouterr().err == "knapsack-gpu: compiling x (numba): about 3 s\n"
    numba_jit.log.warning("after")  # (the handler is gone: pytest's own capture has it)
    assert "knapsack-gpu: after" not in capsys.readouterr().err


def test_the_notice_names_the_entry_point_and_its_values(monkeypatch, caplog):
    """What the compile listener says for a compile it is told of: the entry point, the values' dtype (from the
    parameter that holds them), an estimate; nothing for a callee, a quiet thread or a compile under a second."""

    class Fake:
        def __init__(self, fn):
            self.py_func = fn

    from knapsack_gpu.states.kernels import meet, search

    monkeypatch.setattr(numba_jit, "_told", set())
    monkeypatch.setattr(numba_jit, "machine_factor", lambda: 1.0)  # (the reference VM's figures; measured elsewhere)
    monkeypatch.setattr(numba_jit._local, "depth", 1, raising=False)
    with caplog.at_level("WARNING", logger="knapsack_gpu"):
        numba_jit._on_compile(Fake(search.first_run), ("array(float64, 1d, C)", "array(int64, 1d, C)"))
        numba_jit._on_compile(Fake(search.first_run), ("array(float64, 1d, C)", "array(int64, 1d, C)"))  # (once)
        numba_jit._on_compile(Fake(search.run), ["x"] * 2 + ["array(int64, 1d, C)"])
        numba_jit._on_compile(Fake(search.refresh), ["array(int64, 1d, C)"] * 2)  # (under a second)
        with numba_jit.quiet():
            numba_jit._on_compile(Fake(search.start), ["array(int64, 1d, C)"])
        monkeypatch.setattr(numba_jit._local, "depth", 2)
        numba_jit._on_compile(Fake(meet.meet), ["array(int64, 1d, C)"])  # (a callee)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2
    assert said[0].startswith("compiling first_run for float64 values (numba): about 33 s, once per environment")
    assert said[1] == "compiling run for int64 values (numba): about 11 s"


def test_every_entry_point_has_a_job_and_an_estimate():
    """... and the module that holds it (the states engine's: a module of knapsack_gpu.states.kernels)."""
    names = {name for name, _, _ in jit.JOBS}
    assert set(numba_jit.SEARCH + numba_jit.FEW) <= set(numba_jit.KERNELS)
    assert names - {"grouped"} <= set(numba_jit.KERNELS)
    for name, (module, *_) in numba_jit.KERNELS.items():
        if module != "grouped_kernels":
            assert modes._python_function(name).__module__ == f"knapsack_gpu.states.kernels.{module}", name
    for _, kind, after in jit.JOBS:
        assert all((a, kind) in {(n, k) for n, k, _ in jit.JOBS} for a in after)
    with pytest.raises(ValueError, match="no warm-up step"):
        states.warm_step("nothing", "i")


def test_compile_lists_every_job_as_it_ends(capsys):
    """`knapsack-gpu compile` in this process (--jobs 1: here the cache is warm, it loads them): a line per job,
    "[k/N] name (dtype) seconds", then the total."""
    assert main(["compile", "--jobs", "1"]) == 0
    out = capsys.readouterr()
    assert "compiled and cached" in out.out
    lines = [line for line in out.err.splitlines() if line.startswith("[")]
    assert len(lines) == len(jit.JOBS)
    for k, (line, (name, kind, _)) in enumerate(zip(lines, jit.JOBS, strict=True), 1):
        assert line.startswith(f"[{k}/{len(jit.JOBS)}] {jit.job_label(name, kind)} ") and line.endswith(" s")
    assert jit.ready("i") and jit.ready("f")
    from knapsack_gpu import grouped_kernels

    # every entry point grouped.py calls (helpers compile inside their callers), the noise DP's traces included
    kernels = [getattr(grouped_kernels, name) for name in dir(grouped_kernels) if not name.startswith("_")]
    kernels = [k for k in kernels if hasattr(k, "signatures")]
    assert len(kernels) == 6 and all(k.signatures for k in kernels)


def test_compile_in_worker_processes(tmp_path):
    """The workers' path, in a cache that holds everything already (the tree's, warmed by the test above or
    before): every job reported once, in an order that respects what each waits for."""
    got = []
    assert jit.compile_all(2, lambda done, total, name, kind, s: got.append((done, total, name, kind))) == 2
    assert [g[0] for g in got] == list(range(1, len(jit.JOBS) + 1))
    assert sorted(g[2:] for g in got) == sorted((n, k) for n, k, _ in jit.JOBS)
    order = [g[2:] for g in got]
    for name, kind, after in jit.JOBS:
        assert all(order.index((a, kind)) < order.index((name, kind)) for a in after)


def test_after_warm_nothing_compiles_inside_a_solve():
    """`knapsack-gpu compile`'s jobs cover every entry point a solve calls: kplib-like almost strongly correlated
    items (the surrogate's kernels), float values, a subset sum of 20 items, a few items, Jooken-like groups."""
    from numba.core import event

    from knapsack_gpu import grouped

    jit.warm()
    grouped.warm()
    seen = []

    class Record(event.Listener):
        def on_start(self, ev):
            fn = ev.data["dispatcher"].py_func
            if fn.__module__.startswith("knapsack_gpu"):
                seen.append(fn.__name__)

        def on_end(self, ev):
            pass

    rng = np.random.default_rng(4)
    cases = [FAMILIES[f](rng, n, R=10_000) for f in ("almost-strongly", "uncorrelated") for n in (1000, 10_000)]
    cases += [FAMILIES["float-values"](rng, 1000), FAMILIES["subset-sum"](rng, 20, R=10**6)]
    cases += [([12, 7, 11, 8, 9], [24, 13, 23, 15, 16], 26)]
    cases += [generate.jooken(rng, 400, 10**6, 6, 0.1, 0.001)]
    listener = Record()
    event.register("numba:compile", listener)
    try:
        for w, v, c in cases:
            knapsack_gpu.solve(w, v, c, device="cpu")
    finally:
        event.unregister("numba:compile", listener)
    assert seen == []


def test_the_disk_cache_is_found_where_numba_keeps_it(monkeypatch, tmp_path):
    jit.warm("i")
    monkeypatch.setattr(numba_jit, "_cached", {})
    assert modes.cached("i") and modes.cached("i", numba_jit.FEW)  # beside the source, after the warm-up above
    warmed = tuple(name for name, _ in states._warm_jobs("i"))  # what the background warm-up asks before it waits
    assert "grouped" not in warmed and modes.cached("i", warmed) and states._warm_cached("i")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    numba_jit.cache_changed()
    assert not modes.cached("i") and not modes.cached("i", warmed) and not states._warm_cached("i")  # empty, elsewhere
    monkeypatch.setenv(numba_jit.ENV, "0")
    numba_jit.cache_changed()
    assert modes.cached("i")  # nothing compiles: nothing to wait for


def test_an_edit_of_any_kernel_module_makes_every_entry_point_stale(tmp_path):
    """numba stamps a cache entry with its own source file, yet a cached caller holds its callees' code: the states
    engine's kernels, spread over the modules of states/kernels/, are stamped with all of them together, by the
    compiled binding and by the disk cache's lookup alike."""
    from knapsack_gpu.states import kernels

    B = modes.compiled()
    stamp = numba_jit.source_stamp(kernels.SOURCES)
    assert {B.run._cache._cache_file._source_stamp, B.merge_c._cache._cache_file._source_stamp} == {stamp}
    copies = []
    for source in kernels.SOURCES:
        copy = tmp_path / os.path.basename(source)
        copy.write_bytes(open(source, "rb").read())
        copies.append(str(copy))
    assert numba_jit.source_stamp(tuple(copies)) == stamp  # (names and contents, wherever the files are)
    edited = tmp_path / "merge.py"
    edited.write_bytes(edited.read_bytes() + b"\n")
    numba_jit._stamps.clear()
    assert numba_jit.source_stamp(tuple(copies)) != stamp


@pytest.mark.slow  # a compile into an empty cache in a process of its own: a minute or two
def test_a_search_past_its_trial_goes_on_while_a_process_of_its_own_compiles(tmp_path):
    """Issue 59: no solve waits on a compile it did not ask for. In a fresh environment a search past the
    interpreted trial starts `knapsack-gpu compile --background` and goes on interpreted (the right optimum, the
    notice saying so, no foreground compile); that process fills the cache, and the next process's search loads it."""
    import json
    import time

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from first_answer import background_compiles

    code = (
        "import json, numpy as np, knapsack_gpu\nfrom knapsack_gpu import generate\n"
        "w, v, c = generate.uncorrelated(np.random.default_rng(0), 3000, 10**5)\n"
        "s = knapsack_gpu.solve(w, v, c, device='cpu', strategy='states')\n"
        "print(json.dumps({'value': s.value, 'binding': s.stats['binding']}))"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "KNAPSACK_GPU_COMPILE_IN_BACKGROUND": "1",
           "KNAPSACK_GPU_TRIAL_UPDATES": "1000"}  # fmt: skip
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_S, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    w, v, c = generate.uncorrelated(np.random.default_rng(0), 3000, 10**5)
    assert got["value"] == knapsack_gpu.solve(w, v, c, device="cpu").value
    assert "a process of its own compiles them" in r.stderr and "compiling first_run" not in r.stderr
    t0 = time.monotonic()
    while background_compiles() and time.monotonic() - t0 < HANG_S:
        time.sleep(1)
    check = "from knapsack_gpu.states import modes\nprint(modes.cached('i'))"
    r = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=HANG_S, env=env)
    assert r.stdout.strip() == "True", r.stderr[-2000:]
