"""A plan without the solve: which dense plan an instance gets on a device of a given memory, its bytes and its time.

``knapsack_gpu.plan_for(weights, values, capacity, device="cuda", device_memory=141 * 2**30)`` (or ``knapsack-gpu
plan FILE --device-memory 141GB``) runs the reductions and bounds, then the planner's choice, and reports the plan's
dtype (reduced values where they narrow it), backend, bytes for the bit-table plan and for the Hirschberg minimum,
whether each fits the share of the memory a solve would use, and a time estimate at a stated cell rate. Nothing is
allocated: the device need not be present. The states engine does not run, so a solve may finish before the dense
plan does (its incumbent can also raise the floor of reduced values: the dry run's dtype is the widest a solve gets).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from .backends import make_pass, resolve_backend
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
    strategy: str  # "closed", "dense" or "pruned"
    recovery: str | None  # "bits", "hirschberg", or None: no plan fits
    device: str
    backend: str | None
    dtype: str | None
    reduced_values: dict | None
    items: int
    profile_length: int
    cells: int  # the top pass's cell updates
    bits_bytes: int  # working memory of the one-pass plan with a bit table
    hirschberg_bytes: int  # the least working memory of any dense plan (Hirschberg)
    memory_limit: int  # the share of the device memory a solve would use
    cell_rate: float
    seconds: float  # estimated dense time at cell_rate

    @property
    def fits(self) -> bool:
        return self.recovery is not None

    def as_dict(self) -> dict:
        return {**asdict(self), "fits": self.fits}

    def __str__(self) -> str:
        if self.strategy == "closed":
            return "closed: the bounds meet, no DP is needed"
        rv = self.reduced_values
        lines = [
            f"{self.strategy} plan on {self.device} ({self.backend}): {self.items} items, profile {self.profile_length}"
            f" in {self.dtype}" + (f" (reduced values, P = {rv['P']}, Q = {rv['Q']})" if rv else ""),
            f"  bit table, one pass: {format_bytes(self.bits_bytes)}; Hirschberg minimum: "
            f"{format_bytes(self.hirschberg_bytes)}; memory limit {format_bytes(self.memory_limit)}",
            f"  top pass {self.cells:.3g} cells; at {self.cell_rate:.3g} cells/s about {self.seconds:.3g} s"
            + (" (with Hirschberg's recursion)" if self.recovery == "hirschberg" else ""),
        ]
        lines.append(f"  plan: {self.recovery}" if self.fits else "  no dense plan fits: a solve raises MemoryError")
        return "\n".join(lines)


def plan_for(
    weights,
    values,
    capacity,
    *,
    device: str | torch.device = "cuda",
    device_memory: int | None = None,
    backend: str = "auto",
    cell_rate: float | None = None,
) -> PlanReport:
    """The dense plan a solve would run, without running it (see the module docstring).

    Args:
        weights, values, capacity: as for :func:`knapsack_gpu.solve`.
        device: the device to plan for ("cuda", "cpu"); it need not be present.
        device_memory: its memory in bytes (None: what it has free now, where it is present).
        backend: "auto" (triton on CUDA where its plan fits, else torch; numpy on the CPU), or one to force.
        cell_rate: cells/s for the estimate (default: the device's copy bandwidth over the bytes a cell moves).

    Raises:
        ValueError: bad input, or device_memory missing for a device that is not present.
    """
    inst = make_instance(weights, values, capacity)
    dev = torch.device(device)
    if device_memory is None:
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("plan_for: no CUDA device here; pass device_memory (bytes) for the device to plan for")
        device_memory = available_bytes(dev)
    limit = int(device_memory * (CUDA_SHARE if dev.type == "cuda" else CPU_SHARE))
    red = reduce(inst)
    choice = choose(red, "auto", False) if red.n else None
    if choice is None or choice.strategy == "closed":
        return PlanReport("closed", None, str(dev), None, None, None, 0, 0, 0, 0, 0, limit, 0.0, 0.0)
    job = choice.dense.job
    resolved = resolve_backend(backend, dev, red.dtype)  # as a solve resolves it (the plain dtype's backend)
    name, least = fitting_backend(job, dev, fallbacks(backend, resolved), limit)
    p = make_pass(name, dev, job.dtype, Workspace(Meter(2**62, dev)), reduced=job.ramp is not None)
    bits = single_pass_bytes(p, job.m, job.length, BitLayout.of(job.schedule, job.length).nbytes)
    recovery = "bits" if bits <= limit else ("hirschberg" if least <= limit else None)
    itemsize = torch.empty((), dtype=job.dtype).element_size()
    rate = cell_rate or BANDWIDTH["cuda" if dev.type == "cuda" else "cpu"] / (BYTES_PER_CELL[name] * itemsize)
    cells = job.schedule.cells
    seconds = cells / rate * (HIRSCHBERG_PASSES if recovery == "hirschberg" else 1.0)
    scale = choice.dense.scale
    return PlanReport(
        choice.strategy,
        recovery,
        str(dev),
        name,
        str(job.dtype).replace("torch.", ""),
        scale.as_dict() if scale is not None else None,
        job.m,
        job.length,
        cells,
        bits,
        least,
        limit,
        rate,
        seconds,
    )
