"""The public entry points: :func:`solve` and :func:`profile`.

problem (validate) -> the plan (:mod:`knapsack_gpu.stages`: the stages in order, each with its budget and memory) ->
its stages, executed here: the states engine (:mod:`knapsack_gpu.states`) under its work budget, the grouped solver
where the items look grouped, the dense stage (reduce: exact reductions, bounds, variable fixing from the states
engine's incumbent, dtype; then closed, pruned or dense) -> passes driven by recover (:mod:`knapsack_gpu.dense`: bit
table or Hirschberg) -> the selection, checked. Every budget, limit and choice comes from the plan; this module
evaluates only the conditions a stage gives way on (finished or not, the items' look, what the incumbent fixed).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import devices, jit, lazy, stages
from . import plan as plan_mod
from .arith import exact_sum
from .backends import make_pass, resolve_backend, resolve_device
from .dense.recover import Recovery
from .lazy import torch
from .memory import DeviceOutOfMemory, Meter, Workspace, default_limit
from .problem import Instance, make_instance
from .progress import Progress, Reporter, check_progress
from .reduce import Reduced, reduce
from .sizes import byte_count
from .states import Search, StatesOverflow, StatesStats, modes, placement


@dataclass(frozen=True, eq=False, init=False)
class Solution:
    """An optimal selection.

    Attributes:
        value: the optimum; an int when every value is a whole number (exact, even past int64 when no DP had to
            add it up), else a float.
        indices: ascending indices of the chosen items, a read-only int64 numpy array.
        selected: the same indices as a list of Python ints (made on first use: 5,000 of them take ~0.1 ms, more
            than some solves).
        weight: their total weight (<= capacity): an int, or a float where the weights were floats that are not
            all whole numbers (summed exactly at their scale, then correctly rounded).
        stats: how it was solved: ``strategy`` ("reduced": nothing left after the reductions, "closed": the bounds
            met, "grouped", "states", "pruned-bits", "pruned-hirschberg", "dense-bits", "dense-hirschberg"), ``device``,
            ``backend``, ``dtype``, ``reduced_values`` (the dense DP's {"P", "Q"} where it ran on Q v - P w, else
            None), ``reductions``, ``fixed`` ({"in", "out"} items fixed by Dembo-Hammer: by the
            states engine before they entered its core, or by the bounds of a dense plan), ``lower_bound`` /
            ``upper_bound`` (of the residual problem that reached the plan: after the reductions and fixing) and
            ``instance_lower_bound`` / ``instance_upper_bound`` (the same bounds on the whole instance's optimum),
            ``items`` and ``profile_length`` (what reached the DP), ``dp_seconds`` (the dense DP's own time),
            ``cell_updates`` against ``full_cells`` (n * (C + 1)), ``peak_states``, ``passes``, ``item_passes``,
            ``leaves``, ``depth``, ``launches`` (torch and triton backends: the device operations the dense DP issued,
            kernel launches, fills and copies, or torch ops), ``threads`` (numpy backend: the threads a dense pass
            split its items over), ``peak_bytes`` (working memory the solver counted, per-item host state included on
            the CPU), ``memory_limit``, ``plan_reason`` (why this plan), ``seconds``; of the states engine: ``core``
            (items and bundles that entered its core), ``state_updates``, ``bundled`` (items that entered in bundles
            of identical items), ``extras`` (of "offsets", "gcd", "divisibility", "surrogate", "pairing",
            "dominance", "meet-in-the-middle": those that changed something), ``resolves`` (narrower cores solved
            again to recover the selection) and ``binding`` (how its kernels ran: "compiled" by numba, "python" with
            numpy list operations, or "device" with torch list operations on CUDA); of the grouped solver
            (strategy "grouped", :mod:`knapsack_gpu.grouped`): ``grouped`` (its groups, light items, the DP's stage
            sizes, count vectors enumerated and completed, noise DPs and their cells; where it ran and gave way to
            another plan, {"gave_up": why}); ``weight_exponent``: float weights and the capacity were solved as
            whole numbers times 2**weight_exponent (exactly the same instance; 0 where they were whole). Every key
            is always present: None (or 0, or empty) where it does not apply.
    """

    value: int | float
    indices: np.ndarray
    weight: int
    stats: dict = field(default_factory=dict)

    def __init__(self, value: int | float, indices, weight: int, stats: dict | None = None) -> None:
        # a read-only int64 view: the solution is frozen, and the array it was made from stays the caller's
        indices = np.asarray(indices, dtype=np.int64).view()
        indices.setflags(write=False)  # (not .flags.writeable: the flags object costs ~0.4 us more)
        # (the fields straight into __dict__: a frozen dataclass's own __init__ sets each through
        # object.__setattr__, ~1 us of a small solve)
        self.__dict__.update(value=value, indices=indices, weight=weight, stats={} if stats is None else stats)

    def __reduce__(self):
        return Solution, (self.value, self.indices, self.weight, self.stats)  # through __init__: read-only again

    @cached_property
    def selected(self) -> list[int]:
        return self.indices.tolist()

    def __eq__(self, other) -> bool:
        """The same optimum, weight and items (stats aside)."""
        if not isinstance(other, Solution):
            return NotImplemented
        same = (self.value, self.weight) == (other.value, other.weight)
        return same and np.array_equal(self.indices, other.indices)

    __hash__ = None  # unhashable, as a solution holding a list was


def check_threads(threads: object, resolve: bool = True) -> int | None:
    """threads as a positive int (None: torch's intra-op thread count where torch is imported, else the cores this
    process may use; with ``resolve`` False, None stays None: only a dense pass asks); TypeError/ValueError naming it
    otherwise."""
    if threads is None:
        if not resolve:
            return None
        if not lazy.loaded():
            from .jit import cores

            return cores()
        threads = torch.get_num_threads()
        return threads if threads > 1 else 1
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be a positive integer or None, got {threads!r}")
    if threads < 1:
        raise ValueError(f"threads = {threads}: it must be at least 1")
    return int(threads)


def check_limit(memory_limit: object) -> int | None:
    """memory_limit in bytes (an int, or a size such as "8GB" or "512MiB": :func:`knapsack_gpu.sizes.byte_count`),
    or None; TypeError/ValueError naming it otherwise."""
    return byte_count(memory_limit, "memory_limit")


def total_value(inst: Instance, idx: np.ndarray) -> int | float:
    """The exact value of a selection: a Python int for whole numbers, a correctly rounded float otherwise."""
    v = inst.values[idx]
    if inst.integral:
        return exact_sum(v)
    try:
        total = math.fsum(v.tolist())
    except OverflowError:
        total = math.inf
    if not math.isfinite(total):
        raise ValueError("values: the selected values sum past the largest float64; scale them down")
    return total


def _dp_sum(red: Reduced, positions: list[int]) -> int:
    return exact_sum(red.values[np.asarray(positions, dtype=np.int64)])


def _check_result(red: Reduced, positions: list[int], dp_value, cover: bool) -> None:
    """Exact (integer) DP: the recovered items must reproduce the optimum, or we refuse to answer."""
    if not red.integral or red.dtype.is_floating_point:
        return
    got = _dp_sum(red, positions)
    expect = int(dp_value) + (exact_sum(red.values) if cover else 0)
    if got != expect:
        raise RuntimeError(f"internal error: recovered items are worth {got} but the DP optimum is {expect}")


# Every key of a solve's stats (Solution's docstring says what each means), with its value where it does not apply.
# A solve copies this and gives the keys marked here their own values (a 33-key dict literal took ~2 us, a copy
# ~0.2 us): "device", "full_cells", "memory_limit", and "reductions", "fixed" and "extras" (fresh, mutable).
_STATS = {
    "strategy": "reduced",
    "device": None,
    "backend": None,
    "dtype": None,
    "reduced_values": None,
    "reductions": (),
    "fixed": None,
    "lower_bound": None,
    "upper_bound": None,
    "instance_lower_bound": None,
    "instance_upper_bound": None,
    "items": 0,
    "profile_length": 0,
    "cell_updates": 0,
    "full_cells": 0,
    "peak_states": None,
    "passes": 0,
    "item_passes": 0,
    "leaves": 0,
    "depth": 0,
    "peak_bytes": 0,
    "memory_limit": 0,
    "plan_reason": None,
    "dp_seconds": None,
    "launches": None,
    "threads": None,
    "core": 0,
    "state_updates": 0,
    "bundled": 0,
    "extras": (),
    "resolves": 0,
    "binding": None,
    "grouped": None,
    "weight_exponent": 0,
}


def solve(
    weights,
    values,
    capacity,
    *,
    device: str | torch.device = "auto",
    backend: str = "auto",
    memory_limit: int | None = None,
    dtype: torch.dtype | None = None,
    progress: Progress | bool | None = None,
    canonical: bool = False,
    strategy: str | None = None,
    threads: int | None = None,
) -> Solution:
    """Solve a 0/1 knapsack exactly.

    Args:
        weights: 1-D numbers >= 0 (list, tuple, numpy array or dense torch tensor), shape (n,): whole numbers
            below 2**62, or finite floats of any dtype, solved exactly at the power of two that makes them whole
            (:mod:`knapsack_gpu.dyadic`; decimals such as 3.01 are binary fractions too: to mean hundredths, scale
            by 100 and round first).
        values: 1-D finite numbers >= 0, shape (n,); whole numbers must fit int64.
        capacity: a number >= 0: a whole number below 2**62, or a float (rounded down at the weights' scale).
        device: "auto" (CUDA if available, else CPU), "cpu", "cuda", "cuda:N" or a torch.device.
        backend: "auto", "numpy" (CPU), "torch" (any device) or "triton" (CUDA); see :mod:`knapsack_gpu.backends`.
        memory_limit: working memory allowed on the device: bytes, or a size as the CLI takes it ("8GB" = 8 * 10**9,
            "8GiB" = 8 * 2**30); None: a safe share of what is free there.
        dtype: dense DP arithmetic. None picks an exact one (int32/int64 for whole-number values, float64
            otherwise) and lets the states engine (exact int64 or Python integers, float64) try first; an explicit
            dtype asks for a dense plan in it (torch.float32 is honoured but may round).
        progress: None; True for a progress bar on stderr (tqdm, the ``progress`` extra) once a solve takes over a
            second; or a :class:`knapsack_gpu.progress.Progress`, told each phase's planned work (states, then
            cells) and the work as it is done, at least every ~0.25 s.
        canonical: return the selection torch's ``dp_knapsack`` returns (among optimal sets, the one that avoids
            later items first): items run in input order, without bundling, and the plan is a dense one with a bit
            table where it fits. The default returns an optimal set, whichever the fastest plan finds.
        strategy: force a plan: "closed", "grouped" (groups of near-identical items), "states" (the expanding core
            alone), "pruned", "dense" (or the
            environment variable KNAPSACK_GPU_STRATEGY); None or "auto": the grouped solver where the items form
            groups of near-identical heavy items (Jooken's class; it gives way where it finds none or reaches its
            work limits), then the states engine, under a work budget, then the plan :mod:`knapsack_gpu.plan`
            chooses.
        threads: CPU threads a dense pass of the numpy backend splits each long item over (None: torch's intra-op
            thread count, the cores the process may use unless ``torch.set_num_threads`` pinned it). The torch
            backend uses torch's own threads.

    Returns:
        A :class:`Solution`; ``stats["peak_bytes"] <= memory_limit``.

    Raises:
        TypeError, ValueError: bad input, naming the argument (and index); an optimum that may pass int64.
        MemoryError: not even the minimum working set of any plan fits the memory limit (the message gives the
            bytes each plan needs), or the device refused memory twice.
    """
    t0 = time.perf_counter()
    reporter = check_progress(progress)
    inst = make_instance(weights, values, capacity, floats=True)
    dev = resolve_device(device)
    limit = check_limit(memory_limit)
    strategy = plan_mod.resolve_strategy(strategy, canonical)
    states_backend = resolve_backend(backend, dev, None)  # a bad backend name fails before any work (int64 states)
    threads = check_threads(threads, resolve=False)  # (resolved where a dense pass runs: a small solve never asks)
    try:
        sol = _solve(inst, dev, backend, limit, dtype, reporter, canonical, strategy, threads, states_backend)
    finally:
        if reporter is not None:
            reporter.flush()
            close = getattr(reporter.progress, "close", None)
            if progress is True and close is not None:
                close()
    if inst.exponent:  # float weights, solved at their exact scale: the selection's weight as the caller's number
        sol.__dict__["weight"] = sol.weight / 2**inst.exponent  # (int / int: correctly rounded)
        sol.stats["weight_exponent"] = inst.exponent
    sol.stats["seconds"] = time.perf_counter() - t0
    return sol


def _solve(
    inst: Instance,
    dev,
    backend: str,
    limit,
    dtype,
    progress: Reporter | None,
    canonical: bool,
    strategy: str,
    threads: int | None = 1,
    states_backend: str | None = None,
) -> Solution:
    """solve() after validation: the plan (:func:`knapsack_gpu.stages.make`), executed stage by stage; every
    condition a stage gives way on is evaluated here, every figure it compares comes from the plan.
    ``states_backend``: the backend resolved for int64 on ``dev`` (None: resolved by the plan)."""
    plan = stages.make(inst, dev, limit, strategy, dtype, canonical, backend, states_backend)
    meter = Meter(plan.limit, dev)
    if plan.room < 0:
        raise plan.memory_error(plan.dense())
    meter.hold(plan.held, f"the per-item state of {inst.n} items")
    stats = _STATS.copy()
    stats["device"] = devices.name(dev)
    stats["full_cells"] = inst.n * (inst.capacity + 1)
    stats["memory_limit"] = meter.limit
    stats["reductions"], stats["fixed"], stats["extras"] = [], {"in": 0, "out": 0}, []
    g, st = plan.grouped, plan.states
    if g is not None and g.forced:
        return _finish(inst, _grouped(inst, g, meter, stats), stats, meter)

    run, budget, looks = None, None, False
    if st is not None:
        run = _StatesRun(inst, dev, st, Meter(st.room, dev) if st.value_only else meter, stats, progress, meter)
        budget = st.budget(run.items.size, run.bound, inst.capacity, dev)
        if g is not None:
            # the items are sampled for groups only once the states engine has had its first updates: it ends most
            # instances whose identical items only look like groups in milliseconds
            if run.run(g.after(budget)):
                return _states_answer(inst, run, budget, stats, meter)
            looks = g.looks(inst)
            left = run.search.projected_updates() if looks else 0  # a short way left: the states engine goes on
            if looks and left <= g.projection() and run.run(run.stats.state_updates + 2 * left):
                return _states_answer(inst, run, budget, stats, meter)
    elif g is not None:
        looks = g.looks(inst)
    if looks:
        found = _grouped(inst, g, meter, stats, lambda: plan.dense(run and run.incumbent()).noise_cells())
        if found is not None:
            if run is not None:
                run.release()
            return _finish(inst, found, stats, meter)
    if run is not None and run.run(budget) and not canonical:
        return _states_answer(inst, run, budget, stats, meter)

    dense = plan.dense(run and run.incumbent())
    red = dense.red
    _reduced_stats(stats, red, dense.backend)
    if dense.outcome == "states":  # no dense row fits: the states engine goes on without a budget
        if run.run(None):
            return _states_answer(inst, run, budget, stats, meter)
        dense.outcome = "memory"
    if dense.outcome == "memory":
        raise plan.memory_error(dense, run and run.overflow)
    if dense.extends and run.overflow is None and not run.done:
        # The states engine may go on up to a share of the dense plan's estimated time; what it finds by then
        # (a better incumbent, more items fixed) starts the dense plan, planned again.
        spent = run.stats.state_updates
        if run.run_within(dense.choice.dense) and not canonical:
            return _states_answer(inst, run, budget, stats, meter)
        if run.stats.state_updates > spent:
            dense = plan.dense(run.incumbent(), dense.backend)
            red = dense.red
            _reduced_stats(stats, red, dense.backend)
    selected = red.forced
    if dense.outcome == "reduced":  # the states engine (if it ran) gave way and the reductions left nothing
        stats["strategy"] = "reduced"
        stats["plan_reason"] = "nothing is left after the reductions (" + ", ".join(red.applied) + ")"
        return _finish(inst, selected, stats, meter)
    choice = dense.choice
    stats["plan_reason"] = choice.reason
    if run is not None:
        what = (
            "states found the optimum's value (dp_knapsack's selection takes a pass in input order)"
            if run.done
            else "states gave way"
        )
        stats["plan_reason"] = f"{what} after {run.stats.state_updates} updates; " + choice.reason
        run.release()  # the dense plan's memory is counted without the list the states engine left
    if choice.strategy == "closed":
        stats["strategy"] = "closed"
        selected = red.bounds.incumbent
    else:
        dp = _run_dense(choice.dense, red, dev, dense.backend, limit, meter, stats, progress, threads)
        selected = red.selection(dp)
    return _finish(inst, selected, stats, meter)


def _states_answer(inst: Instance, run: _StatesRun, budget: int | None, stats: dict, meter: Meter) -> Solution:
    """The states engine has the optimum."""
    met = "meet-in-the-middle" in run.stats.extras
    what = "a meet in the middle over its items" if met and run.search.engine is None else "the states engine"
    stats["plan_reason"] = f"{what} finished after {run.stats.state_updates} updates" + (
        "" if budget is None else f" (its first budget: {budget})"
    )
    return _finish(inst, run.selection(), stats, meter, run.search.totals)


def _grouped(
    inst: Instance,
    stage: stages.GroupedStage,
    meter: Meter,
    stats: dict,
    noise_budget: Callable[[], int | None] | None = None,
) -> np.ndarray | None:
    """The grouped stage (groups of near-identical heavy items plus light items, Jooken's class:
    :mod:`knapsack_gpu.grouped`): the grouped solver's selection within the plan's limits in what ``meter`` has left
    (the states engine's list is still held: it goes on where the grouped solver gives up), or None
    where the items show no such groups or it gives up (the other stages follow; where it ran and gave up,
    ``stats["grouped"]`` says why). A forced stage (strategy "grouped"): a ValueError instead of None.
    ``noise_budget``: asked before its first noise DP for the most cells the noise DPs may take (see
    :class:`grouped.Limits`)."""
    from . import grouped

    groups, why = stage.groups(inst)
    if groups is not None:
        gst = grouped.GroupedStats()
        try:
            limits = stage.limits(meter.limit - meter.current, groups, noise_budget)
            value, selected = grouped.solve(inst.weights, inst.values, inst.capacity, groups=groups, limits=limits,
                                            stats=gst)  # fmt: skip
        except grouped.GroupedGiveUp as exc:
            why = f"the grouped solver gave up: {exc}"
            stats["grouped"] = {"gave_up": str(exc)}
        else:
            meter.note_peak(grouped.peak_bytes(groups, gst))
            stats.update(
                strategy="grouped",
                backend=None,
                dtype="int64",
                plan_reason=f"{len(groups.members)} groups of near-identical heavy items, {groups.light.size} light "
                f"items: {gst.final_sums} base sums in the window, {gst.vectors} count vectors, {gst.completions} "
                f"completed ({gst.noise_dps} by the noise DP)",
                grouped={
                    "groups": len(groups.members),
                    "light": int(groups.light.size),
                    "stage_sizes": list(gst.stage_sizes),
                    "vectors": gst.vectors,
                    "completions": gst.completions,
                    "noise_dps": gst.noise_dps,
                    "noise_cells": gst.noise_cells,
                },
            )
            return np.asarray(selected, dtype=np.int64)
    if stage.forced:
        raise ValueError(f"strategy='grouped': {why}")
    return None


def solution(inst: Instance, selected: np.ndarray, stats: dict, totals: tuple | None = None) -> Solution:
    """The Solution of ascending indices ``selected``: its weight and value summed again from the instance (exact;
    ``totals``: (weight, value) as the states engine's first run summed them from the instance, where it did), the
    weight checked against the capacity."""
    weight, value = _sums(inst, selected) if totals is None else totals
    if weight > inst.capacity:
        raise RuntimeError(f"internal error: selection weighs {weight} > capacity {inst.capacity}")
    return Solution(value=value, indices=selected, weight=weight, stats=stats)


def _sums(inst: Instance, selected) -> tuple[int, int | float]:
    """(weight, value) of the items ``selected``, exact: one compiled pass where this process has the states engine's
    kernels loaded (it ended most solves) and both sums stay below 2**62, else numpy's gathers and sums."""
    fast = inst.integral and jit.ready("i") and isinstance(selected, np.ndarray) and selected.dtype == np.int64
    if fast and selected.flags.c_contiguous:
        weight, value, ok = modes.compiled().selection_sums(inst.weights, inst.values, selected)
        if ok:
            return int(weight), int(value)
    return exact_sum(inst.weights[selected]), total_value(inst, selected)


def _finish(inst: Instance, selected: np.ndarray, stats: dict, meter: Meter, totals: tuple | None = None) -> Solution:
    if meter.peak > stats["peak_bytes"]:
        stats["peak_bytes"] = meter.peak
    return solution(inst, selected, stats, totals)


def _reduced_stats(stats: dict, red: Reduced, backend: str) -> None:
    b = red.bounds
    stats.update(
        backend=backend,
        dtype=str(red.dtype).replace("torch.", ""),
        reductions=list(red.applied),
        fixed=dict(red.fixed),
        lower_bound=None if b is None else b.lower,
        upper_bound=None if b is None else b.upper,
        instance_lower_bound=None if b is None else b.lower + red.offset,
        instance_upper_bound=None if b is None else b.upper + red.offset,
        items=red.n,
        profile_length=red.capacity + 1 if red.n else 0,
    )


class _StatesRun:
    """The states stage (:class:`knapsack_gpu.stages.StatesStage`): the states engine over the items a DP needs
    (value > 0, 0 < weight <= capacity): zero-weight items are taken, and when everything fits no search is needed at
    all; where the stage allows it, a meet in the middle may take the search's place at once
    (:func:`.states.mitm.at_once`)."""

    def __init__(
        self,
        inst: Instance,
        dev,
        stage: stages.StatesStage,
        meter: Meter,
        stats: dict,
        progress: Reporter | None,
        solve_meter: Meter,
    ):
        self.inst_values = inst.values
        self.integral = inst.integral
        self.stats = StatesStats()
        self.overflow: StatesOverflow | None = None
        self.done = False  # the search has ended: its value is the optimum
        # a meter of its own (a canonical solve's: the stage's room): only its value is handed on, never its items,
        # and its peak is the solve's too
        self.value_only = meter is not solve_meter
        self.meter, self.solve_meter = meter, solve_meter
        self.out = stats
        self.backend = stage.backend
        self.progress = progress
        device, device_states = placement(dev, stage.backend)
        s = self.search = Search(
            inst.values,
            inst.weights,
            inst.capacity,
            device=device,
            device_states=device_states,
            meter=meter,
            stats=self.stats,
            progress=progress,
            # a canonical solve (the torch.compile drop-in) needs only the value: never wait for a compile
            binding="ready" if self.value_only else None,
            # every first budget is at least this: a search that ends within it ends here
            first_run=stage.first_run,
            # few items, or a subset sum of a few dozen: a meet in the middle at once (strategy="states" forces the
            # expanding core alone)
            meet=stage.meet,
        )
        self.free, self.items = s.free, s.items
        hits = (("zero-value", s.zero_value), ("heavy", s.heavy), ("zero-weight", s.free.size))
        self.applied = [name for name, hit in hits if hit]
        self.bound = s.total  # every state's value is at most this

    def run(self, budget: int | None) -> bool:
        """Search on up to ``budget`` state updates; True when the optimum is known. A memory overflow ends it."""
        if self.done or self.overflow is not None:
            return self.done
        if self.progress is not None:
            self.progress.start(None, "states", "states")  # its budget is a cap, not the work it will do
        try:
            done = self.search.run(budget)
        except StatesOverflow as exc:
            self.overflow, done = exc, False
        self.done = done
        if self.value_only:
            self.solve_meter.note_peak(self.meter.peak)
        st = self.stats
        if not self.value_only:  # a canonical solve's plan is the dense one that follows
            self.out["strategy"] = "states"
        self.out.update(
            backend=self.backend,
            dtype="int64" if self.integral else "float64",
            reductions=list(self.applied),
            fixed={"in": st.fixed_in, "out": st.fixed_out},
            core=st.core,
            peak_states=st.peak_states,
            state_updates=st.state_updates,
            bundled=st.bundled,
            extras=list(st.extras),
            resolves=st.resolves,
            binding=st.binding,
            items=int(self.items.size),
        )
        if done and self.search.proved is not None:
            upper = self.search.proved
            free = self.search.pf
            self.out.update(
                lower_bound=self.search.value - free,
                upper_bound=upper,
                instance_lower_bound=self.search.value + free,
                instance_upper_bound=upper + free,
            )
        return done

    def run_within(self, plan) -> bool:
        """Search on under the dense plan's states budget, then for as long as the projection says the search ends
        within its cap (:func:`knapsack_gpu.plan.states_extension`); True when the optimum is known."""
        budget = plan_mod.states_budget(plan)
        while not self.run(budget):
            if self.overflow is not None:
                return False
            spent, left = self.stats.state_updates, self.search.projected_updates()
            budget = plan_mod.states_extension(plan, budget, spent, left)
            if budget is None:
                return False
        return True

    def selection(self) -> np.ndarray:
        return self.search.result()[1]  # original indices, the zero-weight items included

    def release(self) -> None:
        """Drop the state list: the search will not go on."""
        if self.search.engine is not None:
            self.search.engine.release()

    def incumbent(self) -> tuple | None:
        """(value of the DP items, the whole selection's original indices or None) for the dense plan."""
        value, chosen = self.search.incumbent()
        value -= self.search.pf  # the DP part: zero-weight items aside
        if chosen is None or self.value_only:
            return value, None
        return value, chosen


def _run_dense(
    dense, red: Reduced, dev, name: str, limit, meter: Meter, stats: dict, progress, threads: int | None = 1
) -> list[int]:
    job = dense.job
    t0 = time.perf_counter()
    launches = 0
    for attempt in range(2):
        ws = Workspace(meter)
        p = make_pass(name, dev, job.dtype, ws, progress, reduced=job.ramp is not None)
        if name == "numpy":
            p.threads = check_threads(threads)  # each thread adds a chunk of candidates: where the least plan fits
            if plan_mod.min_bytes(p, job.m, job.length) > meter.limit - meter.current:
                p.threads = 1
        rec = Recovery(p, job, meter.limit, dense.windows, dense.threshold, dense.slack, dense.scale)
        try:
            chosen, dp_value = rec.run()
            break
        except DeviceOutOfMemory:
            # The device refused what the plan allowed (another process took memory, or the OS refuses under
            # ulimit / a cgroup): re-plan once within what it did give, which picks a smaller plan; then give up
            # with the MemoryError.
            if attempt or limit is not None:
                raise
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            meter.limit = meter.current
        finally:
            ws.clear()
            launches += p.launches
    positions = dense.positions[chosen].tolist()
    _check_result(red, positions, dp_value, job.cover)
    if job.cover:
        stats["reductions"].append("complement")
    r = rec.stats
    stats.update(
        strategy=f"{'pruned' if dense.pruned else 'dense'}-{r.strategy}",
        dtype=str(job.dtype).replace("torch.", ""),
        reduced_values=dense.scale.as_dict() if dense.scale is not None else None,
        cell_updates=r.cell_updates,
        passes=r.passes,
        item_passes=r.item_passes,
        leaves=r.leaves,
        depth=r.depth,
        memory_limit=meter.limit,
        profile_length=job.length,
        dp_seconds=time.perf_counter() - t0,
    )
    if name == "numpy":
        stats["threads"] = p._threads(job.length)  # 1 where no item is long enough to split
    else:
        stats["launches"] = launches  # device operations: what a GPU pays per launch, counted on any device
    return positions


def profile(
    weights,
    values,
    capacity,
    *,
    device: str | torch.device = "auto",
    dtype: torch.dtype | None = None,
    backend: str = "auto",
) -> torch.Tensor:
    """The best value for every capacity 0..capacity, from one forward pass (no pruning: every capacity counts).

    Args:
        weights, values, capacity: as for :func:`solve`.
        device, dtype, backend: as for :func:`solve`.

    Returns:
        A 1-D tensor of length capacity + 1 on the device, non-decreasing; int32/int64 for whole-number values,
        float64 otherwise (or ``dtype``).
    """
    inst = make_instance(weights, values, capacity)
    dev = resolve_device(device)
    red = reduce(inst, dtype, whole_profile=True)
    name = resolve_backend(backend, dev, red.dtype)
    offset = red.offset
    if red.n == 0:
        return torch.full((red.capacity + 1,), offset, dtype=red.dtype, device=dev).repeat_interleave(red.gcd)[
            : inst.capacity + 1
        ]
    meter = Meter(default_limit(dev), dev)
    ws = Workspace(meter)
    try:
        job = plan_mod.dense(red, complement=False, whole=True).job
        out = make_pass(name, dev, red.dtype, ws).run(job, None).clone()
    finally:
        ws.clear()
    if offset:
        out += offset
    if red.gcd > 1:
        out = out.repeat_interleave(red.gcd)[: inst.capacity + 1]
    return out
