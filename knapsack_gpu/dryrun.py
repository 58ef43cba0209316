"""What a solve would do, without its dense pass: ``knapsack_gpu.plan_for`` and ``knapsack-gpu plan``.

A solve starts with the states engine under a work budget (a share of a full dense pass's estimated time on the
device), and where that does not finish, reduces the instance with what the engine found and runs a dense plan (after
letting the engine go on while its projection ends within a share of that plan's time); where no dense row fits the
memory, the states engine is the only plan, without a budget. The dry run takes the same decisions
(:func:`knapsack_gpu.solver._decide`): it runs the states engine's first budget on the CPU (cheap by construction:
a percent of the dense estimate), then reports the dense plan a solve would run, its dtype (reduced values where they
narrow it), backend, bytes for the bit-table plan and for the Hirschberg minimum against the share of the device's
memory a solve uses, and a time estimate at a stated cell rate. Nothing of the dense plan is allocated, and the device
need not be present.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch

from . import plan as plan_mod
from .backends import make_pass, resolve_backend, resolve_device
from .dense.passes.base import BitLayout
from .memory import CPU_SHARE, CUDA_SHARE, Meter, Workspace, available_bytes, format_bytes
from .plan import choose, fallbacks, fitting_backend, single_pass_bytes
from .problem import make_instance
from .reduce import reduce

# Copy bandwidth a pass streams at, bytes/s: an H200's measured device copy (../shared/ALGORITHMS.md), and what the
# numpy pass reaches per cell on this project's 2-core VM at C = 1e8 (9.5e8 int32 cells/s at 12 B a cell).
BANDWIDTH = {"cuda": 4.3e12, "cpu": 11.4e9}
# Itemsizes a cell moves: the kernels and the numpy pass read f(c) and f(c - w) and write f'(c); the torch pass also
# writes and reads back its candidate.
BYTES_PER_CELL = {"triton": 3, "numpy": 3, "torch": 5}
HIRSCHBERG_PASSES = 2.0  # cells of a Hirschberg recovery over the top pass's: a halving recursion (2x at most)


@dataclass
class PlanReport:
    """What a solve of the instance does on the device (see the module docstring).

    strategy: what answers: "grouped" (the grouped solver, run here: the items form groups of near-identical heavy
        items), "states" (the states engine, within its budget here), "closed" (the bounds meet),
        "pruned" / "dense" (a dense plan), "reduced" (nothing left after the reductions), "states-unfinished" (no
        dense row fits: the states engine is the only plan and had not finished within the dry run's updates) or
        "none" (no plan fits: a solve raises MemoryError).
    states: the states engine's first run: ``budget`` (None: unbounded), ``state_updates``, ``peak_states``,
        ``finished``, ``overflow`` (why it stopped short, or None), ``binding``; None where it does not run.
    recovery: "bits" or "hirschberg" for the dense plan (None: no dense plan runs, or none fits).
    """

    strategy: str
    recovery: str | None
    device: str
    backend: str | None
    dtype: str | None
    reduced_values: dict | None
    items: int
    profile_length: int
    cells: int  # the dense plan's top pass's cell updates
    bits_bytes: int  # working memory of the one-pass plan with a bit table
    hirschberg_bytes: int  # the least working memory of any dense plan (Hirschberg)
    memory_limit: int  # the share of the device memory a solve would use
    cell_rate: float
    seconds: float  # estimated dense time at cell_rate
    states: dict | None = field(default=None)
    fallback: str | None = None  # where the states engine answers: the plan that takes over had it given way
    grouped: dict | None = None  # where the grouped solver answers: what it did (Solution.stats["grouped"])

    @property
    def states_go_on(self) -> bool:
        """Where the states engine gave way to a dense plan: whether a solve lets it go on first (its projection
        ends within the plan's cap), so that it may still answer instead of that plan."""
        st = self.states
        if not st or st["cap"] is None:
            return False
        return st["then"] > st["state_updates"] or st["state_updates"] + st["projected"] <= st["cap"]

    @property
    def fits(self) -> bool:
        """Whether a solve answers (False only where it would raise MemoryError)."""
        return self.strategy != "none"

    def as_dict(self) -> dict:
        return {**asdict(self), "fits": self.fits, "states_go_on": self.states_go_on}

    def __str__(self) -> str:
        if self.strategy == "grouped":
            g = self.grouped
            return (
                f"grouped: {g['groups']} groups of near-identical heavy items and {g['light']} light items; the "
                f"grouped solver (on the CPU) answers here after {g['vectors']} count vectors, {g['completions']} "
                f"completed ({g['noise_dps']} by the noise DP), and a solve does the same"
            )
        lines = []
        st = self.states
        if st is not None:
            budget = "no budget (no dense row could exist)" if st["budget"] is None else f"a budget of {st['budget']}"
            head = f"states engine first ({st['binding']}), {budget} state updates: "
            if st["finished"]:
                head += f"finished in {st['state_updates']} updates (peak {st['peak_states']} states)"
            else:
                head += f"stopped after {st['state_updates']} updates ({st['overflow'] or 'its budget'})"
            lines.append(head)
        if self.strategy == "states":
            lines.append("  a solve answers with the states engine")
            if self.fallback in ("closed", "reduced") or self.fallback is None:
                return "\n".join(lines)
            lines.append("  had it given way, a solve would have run:")
        if self.strategy == "closed":
            lines.append("closed: the bounds meet, no DP is needed")
            return "\n".join(lines)
        if self.strategy == "reduced":
            lines.append("reduced: nothing is left after the reductions, no DP is needed")
            return "\n".join(lines)
        if st is not None and self.strategy in ("pruned", "dense") and st["cap"] is not None:
            if self.states_go_on:
                lines.append(
                    f"  it gave way; a solve lets it go on to {st['then']} updates (5% of the dense plan's time), "
                    f"and on while its projection ({st['projected']} more now) ends within {st['cap']} (half): "
                    "it may finish there, else a solve runs:"
                )
            else:
                lines.append(
                    f"  it gave way; its projection ({st['projected']} more) passes the {st['cap']} a solve allows "
                    "(half the dense plan's time): a solve runs:"
                )
        rv = self.reduced_values
        lines += [
            f"{self.fallback if self.strategy == 'states' else self.strategy} plan on {self.device} "
            f"({self.backend}): {self.items} items, profile {self.profile_length}"
            f" in {self.dtype}" + (f" (reduced values, P = {rv['P']}, Q = {rv['Q']})" if rv else ""),
            f"  bit table, one pass: {format_bytes(self.bits_bytes)}; Hirschberg minimum: "
            f"{format_bytes(self.hirschberg_bytes)}; memory limit {format_bytes(self.memory_limit)}",
            f"  top pass {self.cells:.3g} cells; at {self.cell_rate:.3g} cells/s about {self.seconds:.3g} s"
            + (" (with Hirschberg's recursion)" if self.recovery == "hirschberg" else ""),
        ]
        if self.strategy == "states-unfinished":
            lines.append(
                "  no dense plan fits: a solve runs the states engine without a budget; it had not finished here, "
                "its list fitting the memory so far (a solve may still run out of memory)"
            )
        elif self.strategy == "none":
            lines.append("  no plan fits: a solve raises MemoryError")
        elif self.recovery is not None:
            lines.append(f"  plan: {self.recovery}")
        else:
            lines.append("  no dense plan fits the memory")
        return "\n".join(lines)


def plan_for(
    weights,
    values,
    capacity,
    *,
    device: str | torch.device = "auto",
    device_memory: int | None = None,
    backend: str = "auto",
    cell_rate: float | None = None,
    strategy: str | None = None,
    dtype: torch.dtype | None = None,
) -> PlanReport:
    """What a solve would do (see the module docstring), without its dense pass.

    Args:
        weights, values, capacity: as for :func:`knapsack_gpu.solve`.
        device: the device to plan for: "auto" (the one a solve uses: CUDA where present, else the CPU), "cpu",
            "cuda" or "cuda:N" (it need not be present).
        device_memory: its memory in bytes (None: what it has free now, where it is present).
        backend: "auto" (triton on CUDA where its plan fits, else torch; numpy on the CPU), or one to force.
        cell_rate: cells/s for the estimate (default: the device's copy bandwidth over the bytes a cell moves).
        strategy, dtype: as for :func:`knapsack_gpu.solve` (a forced plan, an explicit dense dtype).

    Raises:
        ValueError: bad input, or device_memory missing for a device that is not present.
    """
    from . import solver

    inst = make_instance(weights, values, capacity)
    if str(device) == "auto":
        dev = resolve_device("auto")
    else:
        dev = torch.device(device)
        if dev.type not in ("cpu", "cuda"):
            raise ValueError(f"plan_for: device={device!r}; plan for 'auto', 'cpu' or 'cuda'")
    present = dev.type == "cpu" or torch.cuda.is_available()
    if device_memory is None:
        if not present:
            raise ValueError(
                f"plan_for: no CUDA device here to read the free memory of; pass device_memory (bytes) for the "
                f"{dev} to plan for, or plan for device='cpu'"
            )
        device_memory = available_bytes(dev)
    limit = int(device_memory * (CUDA_SHARE if dev.type == "cuda" else CPU_SHARE))
    meter = Meter(limit, dev)
    held = solver.held_bytes(inst.n, dev)
    empty = PlanReport("none", None, str(dev), None, None, None, 0, 0, 0, 0, 0, limit, 0.0, 0.0)
    if held > limit:
        return empty  # not even the per-item state fits
    meter.hold(held, "the per-item state")
    stats: dict = {}
    from .plan import resolve_strategy

    d = solver._decide(
        inst,
        dev,
        backend,
        meter,
        held,
        dtype,
        None,
        False,
        resolve_strategy(strategy),
        stats,
        dry=True,
        states_dev=torch.device("cpu"),
    )
    states = None
    if d.run is not None:
        rs = d.run.stats
        states = {
            "budget": d.budget,
            "state_updates": rs.state_updates,
            "peak_states": rs.peak_states,
            "finished": d.run.done,
            "overflow": None if d.run.overflow is None else str(d.run.overflow),
            "binding": rs.binding,
            # where it gave way to a dense plan: a solve lets it go on to ``then`` updates, and further while the
            # updates it would still do at its list's size (``projected``) end within ``cap``
            "then": None,
            "projected": None,
            "cap": None,
        }
        if d.choice is not None and d.choice.dense is not None and not d.run.done and d.run.overflow is None:
            states["then"] = plan_mod.states_budget(d.choice.dense)
            states["projected"] = d.run.search.projected_updates()
            states["cap"] = plan_mod.states_cap(d.choice.dense)
        d.run.release()
    strategy = {"memory": "none"}.get(d.outcome, d.outcome)
    report = PlanReport(strategy, None, str(dev), d.name, None, None, 0, 0, 0, 0, 0, limit, 0.0, 0.0, states)
    if d.outcome == "grouped":
        report.grouped = stats["grouped"]
        return report
    red, choice = d.red, d.choice
    if d.outcome == "states":  # the dense plan that would have taken over had the engine given way
        red = reduce(inst)
        report.backend = resolve_backend(backend, dev, red.dtype)
        choice = choose(red, "auto", False, dev.type) if red.n else None
        if choice is None or choice.strategy == "closed":
            report.fallback = "closed" if choice is not None else "reduced"
            return report
        report.fallback = choice.strategy
        report.backend, least = fitting_backend(choice.dense.job, dev, fallbacks(backend, report.backend), limit - held)
        d.name, d.dense_need = report.backend, least
    if red is None or not red.n or d.outcome in ("closed", "reduced"):
        return report
    job = solver._dense_job(red, "auto", False, dev.type) if choice is None else choice.dense.job
    p = make_pass(d.name, dev, job.dtype, Workspace(Meter(2**62, dev)), reduced=job.ramp is not None)
    bits = single_pass_bytes(p, job.m, job.length, BitLayout.of(job.schedule, job.length).nbytes)
    if choice is not None and d.dense_need <= limit - held:
        report.recovery = "bits" if bits <= limit - held else "hirschberg"
    itemsize = torch.empty((), dtype=job.dtype).element_size()
    rate = cell_rate or BANDWIDTH["cuda" if dev.type == "cuda" else "cpu"] / (BYTES_PER_CELL[d.name] * itemsize)
    cells = job.schedule.cells
    scale = None if choice is None else choice.dense.scale
    report.dtype = str(job.dtype).replace("torch.", "")
    report.reduced_values = scale.as_dict() if scale is not None else None
    report.items, report.profile_length, report.cells = job.m, job.length, cells
    report.bits_bytes, report.hirschberg_bytes = bits, d.dense_need
    report.cell_rate = rate
    report.seconds = cells / rate * (HIRSCHBERG_PASSES if report.recovery == "hirschberg" else 1.0)
    return report
