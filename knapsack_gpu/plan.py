"""Choose how to solve a reduced instance, from its bounds, its cost and the memory limit.

Strategies (``stats["plan"]``), cheapest first where they apply:
- ``closed``: the lower bound meets the upper bound; the incumbent is optimal, no DP at all.
- ``states``: the expanding core (:mod:`knapsack_gpu.states`), run by the solver before any of the plans below.
  Its size is not known up front: it runs under a work budget (first a share of a full dense pass's estimated
  time, then a share of the chosen dense plan's, then on while its projection says it ends within a cap) and the
  memory limit, and gives way to that dense plan with its incumbent when it outgrows either; where no dense row
  fits at all it is the only plan.
- ``pruned``: the dense DP in efficiency order over the capacity windows the bounds leave (items in input order for
  ``canonical``), recovered by a ragged bit table when it fits, else Hirschberg splits (:mod:`knapsack_gpu.recover`).
- ``dense``: every cell, optionally over the complement (what to leave out) when that profile is shorter.

The byte formulas every plan is checked against live here too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import bounds as bounds_mod
from . import env
from . import reduced as reduced_mod
from .arith import exact_sum
from .dense import windows
from .dense.passes.base import ForwardPass, Job
from .dtypes import fits, numpy_dtype
from .reduce import Reduced
from .reduced import Scale

STRATEGIES = ("auto", "closed", "grouped", "states", "pruned", "dense")
ENV_STRATEGY = "KNAPSACK_GPU_STRATEGY"

# Cost model, in seconds, for choosing between plans (one CPU thread; only ratios matter): a dense cell update per
# byte of its value (the passes are memory-bound: an int64 profile costs twice an int32 one), the per-item overhead
# of a dense pass, one state update of the states list, and the states list's per-item overhead (a dozen torch ops).
# Rough figures for one CPU thread (benchmarks/results/SUITE.md has the measured rates): 1-2e9 int32 cells/s, a state
# update 40-60 ns (numpy ops on the list), some 30 array ops per item of the states list.
# A CUDA device: an H200's measured copy bandwidth (4.3e12 B/s) over the three values a cell update moves.
CELL_BYTE_SECONDS = {"cpu": 0.25e-9, "cuda": 3 / 4.3e12}
ITEM_SECONDS = 5e-6
# One state update of the states engine (a candidate state through merge, dominance and fathoming): 7-16 ns
# measured on one CPU thread at 1e4-1e6 states (numpy ops on the list; multiple strongly correlated, circle and
# spanner classes at n=10,000).
STATE_SECONDS = 10e-9
# Before the dense plan is known the states engine may spend this share of a full dense pass's estimated time
# (at least STATES_MIN_UPDATES); then up to STATES_BUDGET_SHARE of the chosen dense plan's.
STATES_FIRST_SHARE = 0.01
STATES_MIN_UPDATES = 200_000
STATES_BUDGET_SHARE = 0.05
# Past that, it goes on (budgets doubling) while its projection says it ends within STATES_CAP_SHARE of the dense
# plan's time in all, and stops there: a list that keeps growing costs at most that share more than dense alone.
# Jooken n=1200, c=1e8, g=6: 1.7e9 updates (24 s) where dense takes 75 s; g=10: the projection passes the cap by 5% of
# the dense time (the list doubles every few items) and dense runs as before.
STATES_CAP_SHARE = 0.5
# A canonical solve runs the states engine (for its value only) where a full dense pass would take at least this
# long: below it the engine's fixed cost (~0.5 ms) is more than what its lower bound saves the pass (the partitioner's
# n = 100, C = 1e4: 0.97 ms without, 1.5 ms with; the seeds' n = 200, C = 1e7: 47 ms without, 1.4 ms with).
CANONICAL_STATES_SECONDS = 0.05
# A pruned pass must cut at least this share of the dense plan's cost to be preferred.
PRUNE_MIN_GAIN = 0.0
# One cell of the grouped solver's noise DP, its trace included (numba, one thread): 1.5-3 ns on this VM over the
# shipped Jooken instances that run one (5 ns on one of 9e6 cells). The planner holds the noise DPs to the time of the
# dense plan that would follow: on an H200 the dense plan of Jooken n = 1200, c = 1e8, g = 10 took 0.30 s where the
# noise DP (2.3e8 cells) and its trace took most of a 0.58 s planned solve.
NOISE_CELL_SECONDS = 2.5e-9


def min_bytes(p: ForwardPass, m: int, length: int) -> int:
    """The least working memory any dense plan needs: the pass's buffers, the kept half-profile and the split."""
    return p.workspace_bytes(length, False) + p.items_bytes(m) + length * p.itemsize + p.split_bytes(length)


def fallbacks(backend: str, name: str) -> list[str]:
    """The backends a dense plan may run on, in order: the resolved one, then, where "auto" resolved to the kernels,
    the torch pass, which holds one row and a chunk where the kernels ping-pong two rows (at C = 1e10 in int32,
    80 GB against 120 GB with the kept half-profile: the difference on one H200)."""
    return [name, "torch"] if backend == "auto" and name == "triton" else [name]


def fitting_backend(job: Job, dev, names: list[str], room: int) -> tuple[str, int]:
    """The first of ``names`` whose least dense working set for ``job`` fits ``room`` (else the first), and that
    working set in bytes."""
    from .backends import make_pass
    from .memory import Meter, Workspace

    needs = []
    for name in names:
        p = make_pass(name, dev, job.dtype, Workspace(Meter(2**62, dev)), reduced=job.ramp is not None)
        needs.append((name, min_bytes(p, job.m, job.length)))
        if needs[-1][1] <= room:
            return needs[-1]
    return needs[0]


def single_pass_bytes(p: ForwardPass, m: int, length: int, table_bytes: int) -> int:
    """Working memory of the single-pass plan: the pass's buffers, decision staging and the bit table."""
    return p.workspace_bytes(length, True) + p.items_bytes(m) + table_bytes


def resolve_strategy(strategy: str | None, canonical: bool = False) -> str:
    """The strategy a solve (or its dry run) runs: the argument, else $KNAPSACK_GPU_STRATEGY, else 'auto'; checked
    against STRATEGIES and against ``canonical`` (True or False), which only a dense plan can promise."""
    where = "strategy"
    if strategy is None:
        strategy, where = env.get(ENV_STRATEGY, "auto"), ENV_STRATEGY
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise ValueError(f"{where}={strategy!r}; choose one of {', '.join(repr(s) for s in STRATEGIES)}")
    if not isinstance(canonical, bool):
        raise TypeError(f"canonical must be True or False, got {canonical!r}")
    if canonical and strategy in ("states", "closed", "grouped"):
        raise ValueError(f"strategy={strategy!r} cannot promise dp_knapsack's selection; use canonical=False")
    return strategy


@dataclass
class Dense:
    """A dense plan: the job (items in processing order) and how its passes get windows."""

    job: Job
    positions: np.ndarray  # job item k is reduced item positions[k]
    windows: object  # recover.WindowFn or None
    threshold: float | None
    slack: float
    cells: int  # cell updates of the top-level pass
    scale: Scale | None = None  # reduced values (the job's are Q*v - P*w, its profile Q*f - P*c)
    device_type: str = "cpu"  # what the cost model prices its cells at

    @property
    def pruned(self) -> bool:
        return self.windows is not None

    @property
    def seconds(self) -> float:
        """The cost model's estimate of this plan's forward work."""
        return self.cells * _size(self.job.dtype) * CELL_BYTE_SECONDS[self.device_type] + self.job.m * ITEM_SECONDS


def _threshold(red: Reduced) -> tuple[float, float]:
    """(the value the DP must reach, the slack float values get)."""
    b = red.bounds
    if red.integral:
        return b.lower, 0.0
    slack = bounds_mod.FLOAT_SLACK * max(1.0, abs(float(b.upper)))
    return float(b.lower) - slack, slack


def _window_fn(w: np.ndarray, v: np.ndarray, sorted_order: bool):
    """Windows for a pass over job items [a, b) of the sub-problem [lo, hi) (rest: [lo, a) and the items after)."""

    def fn(a: int, b: int, lo: int, hi: int, cap: int, reach: float):
        if sorted_order:
            return windows.sorted_windows(w[lo:hi], v[lo:hi], cap, reach, start=a - lo, stop=b - lo)
        rest = np.r_[lo:a, b:hi]
        return windows.slope_windows(w[a:b], v[a:b], cap, reach, extra=(w[rest], v[rest]))

    return fn


def pruned(red: Reduced, canonical: bool, device_type: str = "cpu") -> Dense:
    """The pruned dense plan: efficiency order (input order when canonical), windows from the bounds."""
    b = red.bounds
    positions = np.arange(red.n) if canonical else b.order
    w, v = red.weights[positions], red.values[positions]
    threshold, slack = _threshold(red)
    fn = _window_fn(w, v, sorted_order=not canonical)
    L = red.capacity + 1
    job, scale = _standard_job(red, w, v, L - 1, device_type)
    job.window = fn(0, red.n, 0, red.n, red.capacity, threshold)
    return Dense(job, positions, fn, threshold, slack, job.schedule.cells, scale, device_type)


def _standard_job(
    red: Reduced, w: np.ndarray, v: np.ndarray, target: int | None, device_type: str
) -> tuple[Job, Scale | None]:
    """A standard-mode job over these items, in reduced values where that takes a narrower dtype (on this device)."""
    L = red.capacity + 1
    choice = None
    if red.narrow:
        lower = red.bounds.lower if red.bounds is not None else 0
        narrowest = reduced_mod.NARROWEST[device_type]
        choice = reduced_mod.choose(w, v, red.capacity, lower, red.dtype, narrowest)
    if choice is None:
        return Job(w, v.astype(numpy_dtype(red.dtype)), L, False, red.dtype, target=target), None
    scale, dtype = choice
    r = reduced_mod.reduced_values(w, v, scale, dtype)
    return Job(w, r, L, False, dtype, target=target, ramp=scale.ramp), scale


def dense(red: Reduced, complement: bool = True, whole: bool = False, device_type: str = "cpu") -> Dense:
    """Every cell, items in input order; over the complement when its profile is shorter (and exact in a dtype).
    ``whole``: every capacity's value is wanted (a profile), not only the last."""
    w, values = red.weights, red.values
    cap = red.capacity
    dtype, cover, target = red.dtype, False, cap
    total = exact_sum(w)
    if complement and total - cap < cap:
        # The complement's sentinel for "cannot cover" and its split sums reach twice the value total.
        cover_bound = 2 * exact_sum(values) + 2 if red.integral else None
        import torch

        cover_dtype = dtype if fits(dtype, cover_bound) else (torch.int64 if fits(torch.int64, cover_bound) else None)
        if cover_dtype is not None and (total - cap + 1) * _size(cover_dtype) < (cap + 1) * _size(dtype):
            cover, target, dtype = True, total - cap, cover_dtype
    if not cover and not whole:
        job, scale = _standard_job(red, w, values, target, device_type)
        return Dense(job, np.arange(red.n), None, None, 0.0, job.schedule.cells, scale, device_type)
    vals = values.astype(numpy_dtype(dtype))
    sentinel = None
    if cover:
        vals = -vals
        sentinel = vals.dtype.type(-np.inf if vals.dtype.kind == "f" else -(exact_sum(values) + 1))
    job = Job(w, vals, target + 1, cover, dtype, sentinel, target=None if whole else target)
    return Dense(job, np.arange(red.n), None, None, 0.0, job.schedule.cells, None, device_type)


def _size(dtype) -> int:
    return np.dtype(numpy_dtype(dtype)).itemsize


def states_first_budget(items: int, capacity: int, value_bound: int | float, device_type: str = "cpu"):
    """State updates the states engine may spend before the dense plans are looked at: a share of a full dense
    pass's estimated time on the device over the ``items`` it searches (worth ``value_bound`` in all); None (no limit
    but memory) where no dense row could exist."""
    itemsize = 4 if value_bound < 2**31 else 8
    if (capacity + 1) * itemsize > 2**40:  # a terabyte row: no device holds it, the states engine is the plan
        return None
    seconds = items * (capacity + 1) * itemsize * CELL_BYTE_SECONDS[device_type]
    budget = int(STATES_FIRST_SHARE * seconds / STATE_SECONDS)
    return budget if budget > STATES_MIN_UPDATES else STATES_MIN_UPDATES


def grouped_noise_cells(dense_seconds: float) -> int:
    """The most cells the grouped solver's noise DPs may take where the dense plan would take ``dense_seconds``."""
    return int(dense_seconds / NOISE_CELL_SECONDS)


def canonical_states(n: int, capacity: int) -> bool:
    """Whether a canonical solve of n items should look for the states engine's value first."""
    return n * (capacity + 1) * 8 * CELL_BYTE_SECONDS["cpu"] >= CANONICAL_STATES_SECONDS


def states_budget(plan: Dense) -> int:
    """State updates the states engine may reach in all before it gives way to ``plan``."""
    return max(STATES_MIN_UPDATES, int(STATES_BUDGET_SHARE * plan.seconds / STATE_SECONDS))


def states_cap(plan: Dense) -> int:
    """The most state updates the states engine may reach in all before ``plan`` runs."""
    return int(STATES_CAP_SHARE * plan.seconds / STATE_SECONDS)


def states_extension(plan: Dense, budget: int, spent: int, projected: int) -> int | None:
    """The next budget of a states engine that stopped at ``budget`` having spent ``spent`` state updates, with
    ``projected`` more to go (:meth:`knapsack_gpu.states.Search.projected_updates`); None: give way to ``plan``."""
    cap = states_cap(plan)
    if spent + projected > cap or budget >= cap:
        return None
    return min(cap, 2 * budget)


@dataclass
class Choice:
    """The plan for one reduced instance: closed (no DP), or a dense plan."""

    strategy: str
    dense: Dense | None
    reason: str


def choose(red: Reduced, strategy: str, canonical: bool, device_type: str = "cpu") -> Choice:
    """Pick a plan.

    Args:
        red: the reduced instance (with bounds unless the caller turned them off).
        strategy: "auto" or a forced strategy ("states" has run before: its fallback is chosen as for "auto").
        canonical: dp_knapsack's selection is wanted: dense plans in input order only.
    """
    b = red.bounds
    known = b is not None and b.incumbent is not None  # the incumbent's items are known (not only its value)
    if strategy == "closed" or (
        strategy in ("auto", "states") and b is not None and b.closed and known and not canonical
    ):
        if b is None or not b.closed or not known:
            raise ValueError("strategy='closed' needs bounds that meet: this instance's do not")
        return Choice("closed", None, f"lower bound {b.lower} meets upper bound {b.upper}")
    if strategy == "dense" or b is None:
        return Choice("dense", dense(red, device_type=device_type), "forced" if strategy == "dense" else "no bounds")
    plan = pruned(red, canonical, device_type)
    if strategy == "pruned":
        return Choice("pruned", plan, "forced")
    full = dense(red, device_type=device_type)
    best = full if full.seconds * (1 - PRUNE_MIN_GAIN) < plan.seconds else plan
    return Choice("pruned" if best.pruned else "dense", best, f"{best.cells} of {full.cells} cells")
