"""The plan of a solve: its stages in order, each with its budget and memory, and what each hands to the next.

:func:`make` is a pure function of the instance, the device, the memory limit and the options: it runs no search.
A solve (:mod:`knapsack_gpu.solver`) executes the :class:`Plan` it returns; the dry run (:mod:`knapsack_gpu.dryrun`,
``knapsack-gpu plan``) prints it. The stages, in the order a solve reaches them:

1. ``states``: the states engine (:mod:`knapsack_gpu.states`) over the items a DP needs, within its memory (the limit
   less what the solve holds) and a first work budget (:func:`knapsack_gpu.plan.states_first_budget`; none where no
   dense row could exist, or for strategy "states"). Where few items are left, or their efficiencies (nearly) tie,
   a meet in the middle takes its place at once (:func:`knapsack_gpu.states.mitm.at_once`). It hands its incumbent
   (value, and selection where known) to what follows.
2. ``grouped``: where the items may form groups of near-identical heavy items (Jooken's class), the grouped solver,
   after the states engine's first :data:`GROUPED_AFTER` updates if that has not finished and its projection
   passes :data:`GROUPED_PROJECTION` (else it goes on to twice its projection first). Its noise DPs are held to the
   dense plan's estimated time. Where it finds no groups or gives up, the states engine goes on to its budget.
3. ``dense`` (:meth:`Plan.dense`): the reductions from the states engine's incumbent, then the plan
   :func:`knapsack_gpu.plan.choose` picks: closed, pruned or dense (a bit table or Hirschberg), or nothing left
   ("reduced"). Before a pruned or dense plan runs, the states engine goes on within a share of that plan's
   estimated time (:func:`knapsack_gpu.plan.states_extension`), and where it did more work the dense stage is
   planned again from its new incumbent. Where no dense row fits, the states engine goes on without a budget; where
   nothing fits, a solve raises MemoryError (:meth:`Plan.memory_error`).

The conditions under which a stage gives way ("not finished within B updates", "the items look grouped", "the
dense plan fits") are the executor's to evaluate at run time; the plan names them and every figure they compare.
Figures that cost O(n log n) (the reductions, the bounds, the groups) are computed when asked for: a solve that ends
in its states engine's first run never pays for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import devices
from . import plan as plan_mod
from .backends import make_pass, resolve_backend
from .lazy import torch
from .memory import Meter, Workspace, default_limit, format_bytes
from .problem import Instance
from .reduce import Reduced, reduce

# Host bytes per input item the solve may hold beyond its inputs: validated copies (16), reduction masks and index
# arrays (~40), bounds (order, reduced costs, prefix sums: ~48), a dense job's schedule (lo, hi, top, before: 32)
# and windows (16), and the temporaries of the vectorised steps. tests/test_memory.py measures the real peak.
HOST_BYTES_PER_ITEM = 256

# Where the items look grouped, the states engine's updates before the grouped solver is tried (~10 ms compiled),
# and the most updates it may then still project to go on (twice that, ~0.3 s) before the grouped solver: Jooken's
# c = 1e6 ones it ends in 0.002-0.08 s where its list stays short, the others the grouped solver ends in 0.01-1 s.
GROUPED_AFTER = 1_000_000
# The least room the states engine starts a search in: its first list of 2 states a row (the compiled binding's
# kernels.first_rows: 2 x 2 states of 24 bytes) and the python binding's first merge (4 candidates of 96 bytes).
STATES_START_BYTES = 4 * 96
GROUPED_PROJECTION = 30_000_000


def held_bytes(n: int, device) -> int:
    """The per-item state of ``n`` items that counts against a memory limit: host bytes, so on the CPU only (a CUDA
    limit is the device's memory)."""
    return HOST_BYTES_PER_ITEM * n if devices.kind(device) == "cpu" else 0


class StatesStage:
    """The states engine's stage.

    Attributes:
        room: bytes its list may take, its own bound on its memory: the limit less the per-item state (a canonical
            solve's: less an unreduced dense pass too, which must still fit after it).
        value_only: only its value is handed on (a canonical solve: the dense pass in input order gives the
            selection), never its items or its answer.
        meet: a meet in the middle over every item may take its place at once (strategy "states" forces the
            expanding core alone).
        unbounded: no work budget, only memory (strategy "states").
        backend: the backend its list operations resolve to (int64 on the device).
        first_run: the updates its set-up runs within (every first budget is at least this).
    """

    __slots__ = ("room", "value_only", "meet", "unbounded", "backend", "first_run")

    def __init__(self, room: int, value_only: bool, meet: bool, unbounded: bool, backend: str, first_run: int):
        self.room, self.value_only, self.meet = room, value_only, meet
        self.unbounded, self.backend, self.first_run = unbounded, backend, first_run

    def budget(self, items: int, bound, capacity: int, device) -> int | None:
        """Its first work budget in state updates over ``items`` searched items worth ``bound`` in all: a share of
        a full dense pass's estimated time on the device (:func:`knapsack_gpu.plan.states_first_budget`); None: no
        limit but memory."""
        if self.unbounded:
            return None
        return plan_mod.states_first_budget(items, capacity, bound, devices.kind(device))


class GroupedStage:
    """The grouped solver's stage (:mod:`knapsack_gpu.grouped`): ``forced`` (strategy "grouped": it is the plan,
    and a ValueError where it finds no groups), else tried where the items look grouped, after the states engine's
    first updates (:meth:`after`) unless its projection ends within :data:`GROUPED_PROJECTION`."""

    __slots__ = ("forced",)

    def __init__(self, forced: bool):
        self.forced = forced

    @staticmethod
    def after(budget: int | None) -> int:
        """The states engine's updates before the items are looked at for groups (its first budget where less)."""
        return GROUPED_AFTER if budget is None or budget > GROUPED_AFTER else budget  # (min(): ~0.2 us)

    @staticmethod
    def projection() -> int:
        """The most updates the states engine may project to go on before the grouped solver (it then runs to twice
        its projection first)."""
        return GROUPED_PROJECTION

    @staticmethod
    def looks(inst: Instance) -> bool:
        """A cheap sample of the items for groups (:func:`knapsack_gpu.grouped.looks_grouped`)."""
        from . import grouped  # imported only here: a canonical solve (the partitioner's) never pays for it

        return grouped.looks_grouped(inst.weights, inst.values, inst.capacity)

    def groups(self, inst: Instance):
        """(the groups the grouped solver would take, None) or (None, why it does not run)."""
        from . import grouped, jit

        w, v, cap = inst.weights, inst.values, inst.capacity
        if not jit.enabled():
            return None, "the grouped solver needs numba"
        if not inst.integral:
            return None, "the grouped solver takes whole-number values only"
        if (self.forced and not grouped.looks_grouped(w, v, cap)) or (groups := grouped.detect(w, v, cap)) is None:
            return None, "no groups of near-identical heavy items"
        return groups, None

    @staticmethod
    def limits(room: int, groups, noise_budget=None):
        """Its work limits within ``room`` bytes (:func:`knapsack_gpu.grouped.planner_limits`); ``noise_budget``:
        asked before its first noise DP for the cells the noise DPs may take (:meth:`DenseStage.noise_cells`)."""
        from . import grouped

        return grouped.planner_limits(room, groups, noise_budget)


_GROUPED_AUTO, _GROUPED_FORCED = GroupedStage(False), GroupedStage(True)


@dataclass(eq=False)
class DenseStage:
    """What follows the states engine (or runs alone): the reductions and the plan a solve runs on what is left.

    outcome: "reduced" (nothing is left after the reductions), "closed" (the bounds meet), "pruned" / "dense" (a
        dense DP: ``choice.dense``), "states" (no dense row fits: the states engine goes on without a budget, and a
        MemoryError follows where its list outgrows the memory) or "memory" (a solve raises MemoryError).
    red: the reduced instance; backend: the dense backend; need: the least working memory of its dense plan
        (bytes, per-item state aside; 0 where nothing is left); room: what the limit leaves for it.
    choice: the closed or dense plan (None for the other outcomes).
    incumbent: planned from the states engine's incumbent (False: before it, an upper estimate of the dense plan
        where the states engine runs first).
    extends: the states engine goes on first, within a share of the dense plan's estimated time
        (:meth:`extension`).
    """

    outcome: str
    red: Reduced
    backend: str
    need: int
    room: int
    choice: plan_mod.Choice | None
    incumbent: bool
    extends: bool

    @property
    def fits(self) -> bool:
        return self.need <= self.room

    def noise_cells(self) -> int | None:
        """The most cells the grouped solver's noise DPs may take: the dense plan's estimated time
        (:func:`knapsack_gpu.plan.grouped_noise_cells`); 0 where the reductions or the bounds solve it; None where
        no dense plan fits (its own limit stands)."""
        if not self.red.n:
            return 0
        if not self.fits:
            return None
        dense = self.choice.dense
        return plan_mod.grouped_noise_cells(dense.seconds) if dense is not None else 0  # no dense: bounds met

    def extension(self) -> tuple[int, int]:
        """(the updates the states engine may reach before the dense plan, the most it may go on to while its
        projection ends within them): :func:`knapsack_gpu.plan.states_budget` and :func:`~knapsack_gpu.plan.states_cap`
        of the dense plan."""
        return plan_mod.states_budget(self.choice.dense), plan_mod.states_cap(self.choice.dense)


class Plan:
    """A solve's stages in order (see the module docstring): made by :func:`make`, executed by
    :func:`knapsack_gpu.solver.solve`, printed by :func:`knapsack_gpu.dryrun.plan_for`.

    Attributes:
        inst: the validated instance; device: where the dense plan runs.
        limit: the memory limit in bytes (the caller's, or a share of what the device has free); held: the per-item
            state counted against it; room: what is left (negative where the per-item state alone passes it: a
            solve raises MemoryError at once).
        strategy, dtype, canonical, backend: the solve's options (strategy resolved).
        states: the states engine's stage (None: it does not run: a dtype or a strategy that excludes it, or a
            canonical solve whose dense pass is too short to pay for it or leaves it no room).
        grouped: the grouped solver's stage (None: not tried: a dtype, a canonical selection, fractional values or a
            strategy other than "auto" or "grouped").
    """

    __slots__ = ("inst", "device", "limit", "held", "room", "strategy", "dtype", "canonical", "backend", "states",
                 "grouped")  # fmt: skip

    def __init__(self, inst, device, limit, held, strategy, dtype, canonical, backend, states, grouped):
        self.inst, self.device, self.limit, self.held, self.room = inst, device, limit, held, limit - held
        self.strategy, self.dtype, self.canonical, self.backend = strategy, dtype, canonical, backend
        self.states, self.grouped = states, grouped

    def dense(self, incumbent=None, backend: str | None = None) -> DenseStage:
        """The dense stage: the reductions (with the states engine's ``incumbent``, (value, selection or None),
        where it ran) and the plan for what is left, within :attr:`room`. ``backend``: keep this dense backend (a
        solve planning again after the states engine went on keeps the one it first chose)."""
        inst, dev, strategy, canonical = self.inst, self.device, self.strategy, self.canonical
        red = reduce(inst, self.dtype, canonical=canonical, fixing=strategy != "dense", incumbent=incumbent)
        room, need = self.room, 0
        name = backend
        if name is None:
            name = resolve_backend(self.backend, dev, red.dtype)
            if red.n:
                job = dense_job(red, strategy, canonical, devices.kind(dev))
                name, need = plan_mod.fitting_backend(job, dev, plan_mod.fallbacks(self.backend, name), room)
        ran = self.states is not None
        stage = DenseStage("reduced", red, name, need, room, None, incumbent is not None, False)
        if not red.n:
            return stage
        if ran and not canonical and need > room:  # no dense row fits: the states engine is the plan
            stage.outcome = "states"
        elif (ran and strategy == "states") or need > room:
            stage.outcome = "memory"
        else:
            stage.choice = plan_mod.choose(red, strategy, canonical, devices.kind(dev))
            stage.outcome = stage.choice.strategy
            stage.extends = ran and stage.choice.dense is not None
        return stage

    def memory_error(self, dense: DenseStage, overflow=None) -> MemoryError:
        """The MemoryError for a limit that holds no plan: the memory_limit that would hold the dense plan (per-item
        state included: a limit of that many bytes works, one byte less does not), and what the states engine reached
        where it ran (``overflow``: its StatesOverflow; its own need is only known once it has run)."""
        red, held, n, strategy = dense.red, self.held, self.inst.n, self.strategy
        need = held + (dense.need if red.n else 0)
        parts = []
        if overflow is not None:
            parts.append(f"{overflow} (the states engine's peak is not known before it runs)")
        elif self.states is not None and self.room < STATES_START_BYTES and red.n:
            # The cheapest plan first: the states engine's list grows only as the search needs it (its peak is
            # known once it runs), so the least limit it can start within is what a caller should try before any
            # dense plan's.
            least = held + STATES_START_BYTES
            parts.append(
                f"the cheapest plan, the states engine, starts within memory_limit >= {least} bytes "
                f"({format_bytes(least)}: {held} of per-item state for {n} items and its first list; how far its list "
                "grows is known only as it runs)"
            )
        if need == held:
            parts.append(f"the per-item state of {n} items needs memory_limit >= {need} bytes ({format_bytes(need)})")
        elif strategy != "states":
            parts.append(
                f"a dense plan needs memory_limit >= {need} bytes ({format_bytes(need)}: {held} of per-item state for "
                f"{n} items on {self.device}, the rest for profile length {red.capacity + 1} in "
                f"{str(red.dtype).replace('torch.', '')})"
            )
        else:
            parts.append(f"a dense plan (strategy='auto' or 'pruned') would need memory_limit >= {need} bytes")
        return MemoryError(f"{'; '.join(parts)}; memory_limit is {self.limit} ({format_bytes(self.limit)})")


def make(
    inst: Instance,
    device: torch.device,
    limit: int | None,
    strategy: str,
    dtype: torch.dtype | None,
    canonical: bool,
    backend: str,
    states_backend: str | None = None,
) -> Plan:
    """The plan of a solve (see the module docstring): no search, no reduction (the dense stage is planned by
    :meth:`Plan.dense` when asked for).

    Args:
        inst: a validated instance; device: a resolved torch.device (it need not be present for a dry run).
        limit: the memory limit in bytes (validated), or None: a share of what the device has free.
        strategy: resolved ("auto", "closed", "grouped", "states", "pruned", "dense"); dtype, canonical, backend: as
            for :func:`knapsack_gpu.solve`.
        states_backend: the backend resolved for int64 on ``device`` where the caller has it (None: resolved here).
    """
    if limit is None:
        limit = default_limit(device)
    held = held_bytes(inst.n, device)
    if strategy == "grouped":
        return Plan(inst, device, limit, held, strategy, dtype, canonical, backend, None, _GROUPED_FORCED)
    states = None
    if strategy in ("auto", "states") and dtype is None:
        room = limit - held
        if canonical:  # (see _canonical_room)
            room = _canonical_room(inst, device, backend, room)
        if room is not None:
            if states_backend is None:
                states_backend = resolve_backend(backend, device, None)  # (None: the states engine's int64)
            meet, first = strategy != "states", plan_mod.STATES_MIN_UPDATES
            states = StatesStage(room, canonical, meet, not meet, states_backend, first)
    grouped = None
    if strategy == "auto" and dtype is None and not canonical and inst.integral:
        grouped = _GROUPED_AUTO
    return Plan(inst, device, limit, held, strategy, dtype, canonical, backend, states, grouped)


def _canonical_room(inst: Instance, device, backend: str, room: int) -> int | None:
    """The room a canonical solve's states engine runs in (None: it does not run). Its dense pass must still follow,
    so the engine only gets the room that even an unreduced dense plan would leave (None where that is none, or where
    that pass is too short for the engine to pay): its value then never decides whether the dense plan fits, and a
    MemoryError's ``memory_limit >= N`` stays exact."""
    if not plan_mod.canonical_states(inst.n, inst.capacity):
        return None
    name = resolve_backend(backend, device, torch.int64)
    p = make_pass(name, device, torch.int64, Workspace(Meter(2**62, device)))
    room -= plan_mod.min_bytes(p, inst.n, inst.capacity + 1)
    return room if room > 0 else None


def dense_job(red: Reduced, strategy: str, canonical: bool, device_type: str = "cpu"):
    """The top-level job of the dense plan that would run (for its memory: the choice between plans comes later)."""
    if strategy == "dense" or red.bounds is None:
        return plan_mod.dense(red, device_type=device_type).job
    return plan_mod.pruned(red, canonical, device_type).job
