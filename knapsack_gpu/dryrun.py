"""What a solve would do, stage by stage, without running any of it: ``knapsack_gpu.plan_for`` and
``knapsack-gpu plan``.

The dry run prints the plan a solve executes (:class:`knapsack_gpu.stages.Plan`, made by the same function with the
same memory limit): the states engine first with its work budget and its bound on its own memory (or a meet in the
middle in its place, where it takes the instance at once), the grouped solver where the items look grouped, the
states engine going on within a share of the dense plan's estimated time, and the stage that answers where the
others give way: the dense plan (pruned or dense, bit table or Hirschberg, its dtype after reduced values, backend,
the bytes of each recovery and a time estimate at a stated cell rate), the bounds or the reductions, the states
engine without a budget where no dense row fits, or a MemoryError. No search runs (neither the states engine nor the
grouped solver), nothing of the dense plan is allocated, and the device need not be present: it costs the
reductions and bounds, O(n log n). Where the states engine runs first, the real solve plans its dense stage from the
engine's incumbent, which fixes more items: the dense figures here are an upper estimate of that.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import devices, jit
from . import plan as plan_mod
from . import stages as stages_mod
from .backends import make_pass, resolve_backend, resolve_device
from .dense.passes.base import BitLayout
from .lazy import torch
from .memory import CPU_SHARE, CUDA_SHARE, Meter, Workspace, available_bytes, format_bytes
from .plan import single_pass_bytes
from .problem import make_instance
from .sizes import byte_count

# Copy bandwidth a pass streams at, bytes/s: an H200's measured device copy (../shared/ALGORITHMS.md), and what the
# numpy pass reaches per cell on this project's 2-core VM at C = 1e8 (9.5e8 int32 cells/s at 12 B a cell).
BANDWIDTH = {"cuda": 4.3e12, "cpu": 11.4e9}
# Itemsizes a cell moves: the kernels and the numpy pass read f(c) and f(c - w) and write f'(c); the torch pass also
# writes and reads back its candidate.
BYTES_PER_CELL = {"triton": 3, "numpy": 3, "torch": 5}
HIRSCHBERG_PASSES = 2.0  # cells of a Hirschberg recovery over the top pass's: a halving recursion (2x at most)


@dataclass
class PlanReport:
    """The plan a solve of the instance runs (see the module docstring), stage by stage.

    stages: the stages in the order a solve reaches them, each a dict with ``stage`` (its name: "meet-in-the-middle",
        "states" (the states engine's first run, or going on: ``goes_on``), "grouped", "reduced", "closed",
        "pruned", "dense" or "memory"), ``strategy`` (what ``Solution.stats["strategy"]`` says where it answers;
        None for "memory"), ``budget`` (state updates; None: none but memory), ``memory`` (bytes: the bound a
        search holds itself to, or what a dense plan needs), ``gives_way`` (the condition a solve evaluates, where
        the next stage follows) and ``hands_over`` (what the next stage gets), and figures of its own; a dense plan
        planned before the states engine's incumbent also ``instead``: the strategies the solve's own planning from
        that incumbent may take in its place.
    strategy: what ``Solution.stats["strategy"]`` says where every earlier stage gives way: the last stage's
        ``strategy`` ("states" for a meet in the middle, which the states engine runs; "pruned-bits", not "pruned").
    fits: False only where a solve raises MemoryError whatever its earlier stages find (``error``: its message).
    memory_limit: the limit a solve runs under (``memory_limit`` as solve takes it, or its default: a share of the
        device's free memory, or of ``device_memory``); held: the per-item state counted against it.
    recovery ... seconds: the dense plan's figures where one is planned (also where it does not fit): "bits" or
        "hirschberg" (None: it does not run), its backend, dtype (after reduced values), items, profile length, the
        top pass's cells, the bytes of the one-pass bit-table plan and of the least plan (Hirschberg), and the time at
        ``cell_rate``. upper_estimate: planned before the states engine's incumbent fixes items (the solve's dense
        stage is at most this).
    """

    strategy: str
    device: str
    memory_limit: int
    held: int
    stages: list = field(default_factory=list)
    fits: bool = True
    error: str | None = None
    recovery: str | None = None
    backend: str | None = None
    dtype: str | None = None
    reduced_values: dict | None = None
    items: int = 0
    profile_length: int = 0
    cells: int = 0  # the dense plan's top pass's cell updates
    bits_bytes: int = 0  # working memory of the one-pass plan with a bit table
    hirschberg_bytes: int = 0  # the least working memory of any dense plan (Hirschberg)
    cell_rate: float = 0.0
    seconds: float = 0.0  # estimated dense time at cell_rate
    upper_estimate: bool = False

    def as_dict(self) -> dict:
        return asdict(self)

    def stage(self, name: str) -> dict | None:
        """The first stage of this name, or None."""
        return next((s for s in self.stages if s["stage"] == name), None)

    def __str__(self) -> str:
        room = self.memory_limit - self.held
        lines = [
            f"plan on {self.device}: memory limit {format_bytes(self.memory_limit)} ({self.memory_limit} bytes); "
            f"the per-item state holds {format_bytes(self.held)}"
            + (f", {format_bytes(room)} left" if room >= 0 else ", more than the limit")
        ]
        for k, s in enumerate(self.stages, 1):
            lines.append(f"{k}. {_describe(s, self)}")
            if s.get("gives_way"):
                lines.append(
                    f"   gives way {s['gives_way']}"
                    + (f"; hands over {s['hands_over']}" if s.get("hands_over") else "")
                )
        lines.append(f"answers where the others give way: {self.strategy}" + ("" if self.fits else " (exit 3)"))
        return "\n".join(lines)


def _describe(s: dict, r: PlanReport) -> str:
    """One stage as a line."""
    name = s["stage"]
    if name == "meet-in-the-middle":
        return (
            f"meet in the middle over {s['items']} items at once ({s['why']}), two lists of up to "
            f"{s['half_list']} states within {format_bytes(s['memory'])}: "
            + (
                "its value goes to the dense plan"
                if s.get("value_only")
                else "it answers (as the states engine: strategy 'states', extras 'meet-in-the-middle')"
            )
        )
    if name == "states" and s.get("answers_at_set_up"):
        return "states engine: every item it would search fits (or none is left): its set-up answers"
    if name == "states" and s.get("unbounded_after"):
        return (
            f"states engine goes on without a budget (no dense plan fits), its list within {format_bytes(s['memory'])}"
        )
    if name == "states" and s.get("goes_on") == "dense":
        return (
            f"states engine goes on to {s['budget']} updates ({s['share']:.0%} of the dense plan's estimated time) "
            f"and, its budget doubling, on while its projection ends within {s['cap']} updates in all "
            f"({s['cap_share']:.0%}); where it did more work the dense stage is planned again from its incumbent"
        )
    if name == "states" and s.get("goes_on") == "budget":
        return f"states engine goes on to its first budget ({s['budget']} updates)"
    if name == "states":
        budget = "no budget (" + s["why_unbounded"] + ")" if s["budget"] is None else f"a first budget of {s['budget']}"
        text = (
            f"states engine ({s['binding']}) over {s['items']} items: {budget} state updates, its list within "
            f"{format_bytes(s['memory'])} (its own bound on its memory)"
        )
        if s.get("first") is not None:
            text += f"; the items are looked at for groups after its first {s['first']} updates"
        return text + ("; a canonical solve takes only its value" if s.get("value_only") else "")
    if name == "grouped":
        if s.get("forced"):
            return f"grouped solver (forced): {s['groups']} groups, {s['light']} light items"
        return (
            f"grouped solver: {s['groups']} groups of near-identical heavy items and {s['light']} light items, after "
            f"the states engine's first {s['after']} updates unless its projection ends within {s['projection']} "
            f"(then it goes on to twice that first); within {format_bytes(s['memory'])}, its noise DPs within "
            + ("its own limit" if s["noise_cells"] is None else f"{s['noise_cells']} cells (the dense plan's time)")
        )
    if name == "reduced":
        return "reduced: nothing is left after the reductions, no DP"
    if name == "closed":
        return "closed: the bounds meet, no DP"
    if name == "memory":
        return f"MemoryError: {s['error']}"
    rv = s["reduced_values"]
    text = (
        f"{name} plan ({s['strategy'] or 'does not fit'}) on {r.device} ({s['backend']}): {s['items']} items, profile "
        f"{s['profile_length']} in {s['dtype']}" + (f" (reduced values, P = {rv['P']}, Q = {rv['Q']})" if rv else "")
    )
    text += (
        f"\n   bit table, one pass: {format_bytes(s['bits_bytes'])}; Hirschberg minimum: "
        f"{format_bytes(s['hirschberg_bytes'])}; {format_bytes(r.memory_limit - r.held)} left by the limit"
        f"\n   top pass {s['cells']:.3g} cells; at {r.cell_rate:.3g} cells/s about {r.seconds:.3g} s"
        + (" (with Hirschberg's recursion)" if s["recovery"] == "hirschberg" else "")
    )
    if r.upper_estimate:
        text += (
            "\n   (planned before the states engine's incumbent fixes items: the solve plans it again from that, "
            "at most this, and may find the bounds closed or nothing left)"
        )
    return text


def plan_for(
    weights,
    values,
    capacity,
    *,
    device: str | torch.device = "auto",
    memory_limit: int | None = None,
    device_memory: int | str | None = None,
    backend: str = "auto",
    cell_rate: float | None = None,
    strategy: str | None = None,
    dtype: torch.dtype | None = None,
    canonical: bool = False,
) -> PlanReport:
    """The plan a solve would run (see the module docstring), without running any of it.

    Args:
        weights, values, capacity: as for :func:`knapsack_gpu.solve`.
        device: the device to plan for: "auto" (the one a solve uses: CUDA where present, else the CPU), "cpu",
            "cuda" or "cuda:N" (it need not be present).
        memory_limit: as for :func:`knapsack_gpu.solve`: bytes of working memory (the per-item state counted on the
            CPU); None: a solve's default, a share of what the device has free (of ``device_memory`` where given).
        device_memory: the device's memory (bytes, or a size: "141GB" = 141 * 10**9, "141GiB" = 141 * 2**30), for
            the default limit (None: what it has free now, where it is present; not needed with ``memory_limit``).
        backend: "auto" (triton on CUDA where its plan fits, else torch; numpy on the CPU), or one to force.
        cell_rate: cells/s for the estimate (default: the device's copy bandwidth over the bytes a cell moves).
        strategy, dtype, canonical: as for :func:`knapsack_gpu.solve`.

    Raises:
        TypeError, ValueError: bad input (as a solve raises them), or neither memory_limit nor device_memory for a
            device that is not present.
    """
    from .solver import check_limit

    inst = make_instance(weights, values, capacity, floats=True)
    if str(device) == "auto":
        dev = resolve_device("auto")
    else:
        dev = torch.device(device)
        if dev.type not in ("cpu", "cuda"):
            raise ValueError(f"plan_for: device={device!r}; plan for 'auto', 'cpu' or 'cuda'")
    limit = check_limit(memory_limit)
    device_memory = byte_count(device_memory, "device_memory")
    strategy = plan_mod.resolve_strategy(strategy, canonical)
    resolve_backend(backend, dev, torch.int64)  # a bad backend name fails as in a solve
    if limit is None:
        if device_memory is None:
            if dev.type != "cpu" and not torch.cuda.is_available():
                raise ValueError(
                    f"plan_for: no CUDA device here to read the free memory of; pass memory_limit or device_memory "
                    f"(bytes) for the {dev} to plan for, or plan for device='cpu'"
                )
            device_memory = available_bytes(dev)
        limit = int(device_memory * (CUDA_SHARE if dev.type == "cuda" else CPU_SHARE))
    plan = stages_mod.make(inst, dev, limit, strategy, dtype, canonical, backend)
    return _report(plan, cell_rate)


def _report(plan: stages_mod.Plan, cell_rate: float | None) -> PlanReport:
    """The plan's stages, its figures computed (the reductions and bounds; no search)."""
    inst, dev, st, g = plan.inst, plan.device, plan.states, plan.grouped
    r = PlanReport("memory", devices.name(dev), plan.limit, plan.held)
    if plan.room < 0:  # not even the per-item state fits
        _memory(r, plan, plan.dense())
        return r
    if g is not None and g.forced:
        groups, why = g.groups(inst)
        if groups is None:
            raise ValueError(f"strategy='grouped': {why}")
        r.stages.append(_grouped_stage(g, groups, plan, None, forced=True))
        r.strategy = "grouped"
        return r
    answered = False  # a stage that always answers has been listed (nothing after it runs)
    budget = None
    if st is not None:
        searched = _searched(plan)
        budget = st.budget(searched["items"], searched["bound"], inst.capacity, dev)
        # where the items look grouped, the grouped solver is tried after the states engine's first updates
        looks = g is not None and g.looks(inst)
        first = g.after(budget) if looks else None
        if searched["meet"] is not None:
            m = searched["meet"]
            r.stages.append(
                {
                    "stage": "meet-in-the-middle",
                    "strategy": "states",
                    "items": m,
                    "why": searched["meet_why"],
                    "half_list": searched["half_list"],
                    "memory": searched["meet_bytes"],
                    "budget": None,
                    "value_only": st.value_only,
                    "gives_way": None,
                    "hands_over": "its value (the dense plan's lower bound)" if st.value_only else None,
                }
            )
            answered = not st.value_only
        elif searched["set_up"]:
            r.stages.append({"stage": "states", "strategy": "states", "answers_at_set_up": True, "budget": 0,
                             "memory": 0, "gives_way": None, "hands_over": None})  # fmt: skip
            answered = not st.value_only
        else:
            r.stages.append(
                {
                    "stage": "states",
                    "strategy": "states",
                    "items": searched["items"],
                    "budget": budget,
                    "why_unbounded": "strategy 'states'" if st.unbounded else "no dense row could exist",
                    "first": first,
                    "memory": st.room,
                    "binding": "compiled" if jit.enabled() else "python",
                    "value_only": st.value_only,
                    "gives_way": (
                        "where its list outgrows its memory"
                        if budget is None
                        else f"where it has not finished within {first if first is not None else budget} updates, "
                        "or its list outgrows its memory"
                    ),
                    "hands_over": "its value" if st.value_only else "its incumbent (value, and selection where known)",
                }
            )
    dense = plan.dense()
    if not answered and g is not None and (looks if st is not None else g.looks(inst)):
        groups, _ = g.groups(inst)
        if groups is not None:
            r.stages.append(_grouped_stage(g, groups, plan, dense, budget=budget))
            if st is not None:
                r.stages.append({"stage": "states", "strategy": "states", "goes_on": "budget", "budget": budget,
                                 "memory": st.room, "gives_way": "where it has not finished within its budget",
                                 "hands_over": "its incumbent"})  # fmt: skip
    if answered:
        r.strategy = r.stages[-1]["strategy"]  # (a meet in the middle answers as the states engine: "states")
        return r
    r.upper_estimate = st is not None
    _dense_stages(r, plan, dense, cell_rate)
    return r


def _searched(plan: stages_mod.Plan) -> dict:
    """What the states engine's set-up finds (as :class:`knapsack_gpu.states.Search` does, from the same rules):
    the items it searches and their total value, whether the set-up answers (every item fits, or none is left), and
    whether a meet in the middle takes its place at once (:func:`knapsack_gpu.states.mitm.at_once`, within its
    memory)."""
    from .states import exact, mitm

    inst, st = plan.inst, plan.states
    p, w, c = inst.values, inst.weights, inst.capacity
    items, _free, TS, TW, _, _, big = exact.items_np(p, w, c, inst.integral)
    m = int(items.size)
    set_up = m == 0 or TW[0] <= c - TW[1]
    out = {"items": m, "bound": TS[0], "set_up": set_up, "meet": None, "meet_why": None, "meet_bytes": 0}
    if not (st.meet and inst.integral and inst.n <= mitm.MAX_ITEMS):
        return out
    room, compiled = Meter(st.room, plan.device), jit.enabled()
    if mitm.over_every_item(inst.n, c, room, compiled):
        meet, why = inst.n, f"at most {mitm.DIRECT_ITEMS} items"
    elif set_up or big or not mitm.over_open_items(p[items], w[items], c - TW[1], room, compiled):
        return out
    elif m <= mitm.DIRECT_ITEMS:
        meet, why = m, f"at most {mitm.DIRECT_ITEMS} items to search"
    else:
        meet, why = m, "efficiencies that (nearly) tie: the states list would outgrow two half lists"
    if set_up and meet == inst.n:  # (the one call over every item finds no search needed)
        return out
    per = mitm.BYTES_PER_STATE if compiled else mitm.BYTES_PER_STATE_NUMPY
    out.update(meet=meet, meet_why=why, half_list=mitm.half_size(meet), meet_bytes=(mitm.half_size(meet) + 2) * per)
    return out


def _grouped_stage(g, groups, plan: stages_mod.Plan, dense, forced: bool = False, budget: int | None = None) -> dict:
    """The grouped solver's stage: after the states engine's first ``budget`` updates where that is less than its
    own wait (as the solve runs it: :meth:`knapsack_gpu.stages.GroupedStage.after`)."""
    limits = g.limits(plan.room, groups)
    return {
        "stage": "grouped",
        "strategy": "grouped",
        "forced": forced,
        "groups": len(groups.members),
        "light": int(groups.light.size),
        "after": None if forced else g.after(budget),
        "projection": None if forced else g.projection(),
        "memory": plan.room,
        "budget": None,
        "limits": {
            "stage_sums": limits.stage_sums,
            "stage_formed": limits.stage_formed,
            "vectors": limits.vectors,
            "total_vectors": limits.total_vectors,
            "walk_steps": limits.walk_steps,
        },  # fmt: skip
        "noise_cells": None if dense is None else dense.noise_cells(),
        "gives_way": None if forced else "where it passes its work limits (a give-up)",
        "hands_over": None if forced else "nothing: the states engine goes on",
    }


def _dense_stages(r: PlanReport, plan: stages_mod.Plan, dense: stages_mod.DenseStage, cell_rate) -> None:
    """The dense stage's outcome as stages (the states engine's extension first where it has one)."""
    outcome, st = dense.outcome, plan.states
    if outcome in ("reduced", "closed"):
        r.stages.append({"stage": outcome, "strategy": outcome, "budget": None, "memory": 0, "gives_way": None,
                         "hands_over": None})  # fmt: skip
        r.strategy = outcome
        return
    figures = _dense_figures(r, plan, dense, cell_rate)
    if outcome == "states":  # no dense row fits: the states engine without a budget
        r.stages.append({"stage": "states", "strategy": "states", "unbounded_after": True, "budget": None,
                         "memory": st.room, "gives_way": "where its list outgrows its memory",
                         "hands_over": None})  # fmt: skip
        r.stages.append({**figures, "stage": "memory", "strategy": None, "error": str(plan.memory_error(dense))})
        r.strategy = "states"
        return
    if outcome == "memory":
        _memory(r, plan, dense, figures)
        return
    if dense.extends:
        then, cap = dense.extension()
        r.stages.append({"stage": "states", "strategy": "states", "goes_on": "dense", "budget": then, "cap": cap,
                         "share": plan_mod.STATES_BUDGET_SHARE, "cap_share": plan_mod.STATES_CAP_SHARE,
                         "memory": st.room, "gives_way": "where its projection passes the cap",
                         "hands_over": "its incumbent: the dense stage is planned again from it"})  # fmt: skip
    if r.upper_estimate:
        # the solve plans this stage again from the states engine's incumbent: a better lower bound may meet the
        # upper one or fix every item, and the choice between pruned and dense is made again on what is left
        other = "dense" if outcome == "pruned" else "pruned"
        figures["instead"] = ["closed", "reduced", f"{outcome}-hirschberg", f"{other}-bits", f"{other}-hirschberg"]
    r.stages.append(figures)
    r.strategy = figures.get("strategy") or outcome  # (a dense plan's recovery named: "pruned-bits")


def _memory(r: PlanReport, plan, dense, figures: dict | None = None) -> None:
    """A MemoryError ends the plan: certain (``fits`` False) unless a search before it may answer."""
    error = str(plan.memory_error(dense))
    if figures is None and dense.red.n:
        figures = _dense_figures(r, plan, dense, None)
    r.stages.append({**(figures or {}), "stage": "memory", "strategy": None, "budget": None,
                     "memory": plan.held + dense.need, "error": error, "gives_way": None,
                     "hands_over": None})  # fmt: skip
    r.strategy = "memory"
    st = plan.states
    # a states engine that may answer first: strategy "states" (its list may fit); else the MemoryError is certain
    r.fits = st is not None and not st.value_only and plan.room >= 0 and plan.strategy == "states"
    r.error = None if r.fits else error


def _dense_figures(r: PlanReport, plan, dense, cell_rate) -> dict:
    """The dense plan's figures (the plan that runs, or where none fits the one that would), also set on ``r``."""
    dev, red = plan.device, dense.red
    choice = dense.choice
    if choice is not None and choice.dense is not None:
        job, scale = choice.dense.job, choice.dense.scale
    else:
        job, scale = stages_mod.dense_job(red, plan.strategy, plan.canonical, devices.kind(dev)), None
    p = make_pass(dense.backend, dev, job.dtype, Workspace(Meter(2**62, dev)), reduced=job.ramp is not None)
    bits = single_pass_bytes(p, job.m, job.length, BitLayout.of(job.schedule, job.length).nbytes)
    recovery = None
    if choice is not None:
        recovery = "bits" if bits <= plan.room else "hirschberg"
    itemsize = torch.empty((), dtype=job.dtype).element_size()
    rate = cell_rate or BANDWIDTH["cuda" if dev.type == "cuda" else "cpu"] / (BYTES_PER_CELL[dense.backend] * itemsize)
    r.recovery, r.backend, r.dtype = recovery, dense.backend, str(job.dtype).replace("torch.", "")
    r.reduced_values = scale.as_dict() if scale is not None else None
    r.items, r.profile_length, r.cells = job.m, job.length, job.schedule.cells
    r.bits_bytes, r.hirschberg_bytes, r.cell_rate = bits, dense.need, rate
    r.seconds = r.cells / rate * (HIRSCHBERG_PASSES if recovery == "hirschberg" else 1.0)
    name = dense.outcome if dense.outcome in ("pruned", "dense") else ("dense" if job.window is None else "pruned")
    return {
        "stage": name,
        "strategy": f"{name}-{recovery}" if recovery else None,
        "recovery": recovery,
        "backend": dense.backend,
        "dtype": r.dtype,
        "reduced_values": r.reduced_values,
        "items": r.items,
        "profile_length": r.profile_length,
        "cells": r.cells,
        "bits_bytes": bits,
        "hirschberg_bytes": dense.need,
        "memory": bits if recovery == "bits" else dense.need,
        "seconds": r.seconds,
        "budget": None,
        "gives_way": None,
        "hands_over": None,
    }
