"""Progress reporting: what a long solve tells a caller as the work happens (the CLI draws a bar from it).

A solve runs in phases, each announced by ``start``: "states" (the states engine; unit "states": candidate states
built; no total: its budget is only a cap, it usually ends far below it), "dense pass" (one pass with a bit table;
unit "cells": DP cell updates, an exact total) or "Hirschberg" (a dense plan's passes and their recursion; an
estimated total, which it may pass by a few percent). Within a phase ``update(done)`` adds ``done`` units, at most
every INTERVAL seconds and at least every ~0.25 s while a pass runs (passes report per chunk of about a megabyte of
profile), so a rate (and, where the total is exact or estimated, an ETA) drawn from it holds.
"""

from __future__ import annotations

import inspect
import sys
import time
from typing import Protocol

# Updates are forwarded at most this often (seconds); work in between is summed.
INTERVAL = 0.1


class Progress(Protocol):
    """Receives progress from :func:`knapsack_gpu.solve` (``progress=``).

    ``start(total, unit, phase)`` opens a phase: ``total`` units of work planned (exact for a single bit-table
    pass, an estimate for Hirschberg, which may run a few more; None for the states engine, whose budget is only a
    cap), ``unit`` "states" or "cells", ``phase`` "states", "dense pass" or "Hirschberg" (a receiver whose ``start``
    takes two arguments is called without it). ``update(done)`` adds ``done`` units to the phase: increments, not a
    running total.
    """

    def start(self, total: int | None, unit: str, phase: str) -> None: ...

    def update(self, done: int) -> None: ...


class Reporter:
    """The solver's side: sums the work and forwards it to a :class:`Progress` at most every INTERVAL seconds."""

    def __init__(self, progress: Progress, clock=time.monotonic, phases: bool = True):
        self.progress, self.clock = progress, clock
        self.phases = phases  # whether progress.start takes the phase's name
        self.pending = 0
        self.last = clock()

    def start(self, total: int | None, unit: str, phase: str) -> None:
        self.flush()
        total = None if total is None else int(total)
        if self.phases:
            self.progress.start(total, unit, phase)
        else:
            self.progress.start(total, unit)

    def add(self, done: int) -> None:
        self.pending += done
        now = self.clock()
        if now - self.last >= INTERVAL:
            self.progress.update(self.pending)
            self.pending, self.last = 0, now

    def flush(self) -> None:
        if self.pending:
            self.progress.update(self.pending)
            self.pending = 0
        self.last = self.clock()


class TqdmProgress:
    """A tqdm bar on stderr, shown for solves that take over ``delay`` seconds: one bar, reset at each phase and
    labelled with it ("states", "dense pass", "Hirschberg"), with tqdm's rate, and its percentage and ETA where the
    phase has a total (the states engine has none: a count and a rate). ``progress=True`` in
    :func:`knapsack_gpu.solve` makes one; without tqdm, a solve that runs past ``delay`` says once how to get it."""

    _told = False

    def __init__(self, delay: float = 1.0, clock=time.monotonic):
        self.bar = None
        self.delay, self.clock = delay, clock
        self.began = None
        try:
            from tqdm import tqdm
        except ImportError:
            self.tqdm = None
        else:
            self.tqdm = tqdm

    def start(self, total: int | None, unit: str, phase: str = "") -> None:
        if self.began is None:
            self.began = self.clock()
        if self.tqdm is None:
            return
        if self.bar is None:
            self.bar = self.tqdm(
                total=total,
                unit=unit,
                desc=phase,
                unit_scale=True,
                delay=self.delay,
                file=sys.stderr,
                dynamic_ncols=True,
                leave=False,
            )
        else:
            self.bar.unit = unit
            self.bar.set_description_str(phase, refresh=False)
            self.bar.reset(total=total)

    def update(self, done: int) -> None:
        if self.bar is None:
            if self.tqdm is None and not TqdmProgress._told and self.began is not None:
                if self.clock() - self.began > self.delay:  # a solve long enough to want a bar
                    TqdmProgress._told = True
                    print(
                        "knapsack-gpu: no progress bar without tqdm: pip install 'knapsack-gpu[progress]'",
                        file=sys.stderr,
                    )
            return
        if self.bar.total is not None and self.bar.n + done > self.bar.total:  # Hirschberg ran past its estimate
            self.bar.total = self.bar.n + done
        self.bar.update(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def check_progress(progress: object) -> Reporter | None:
    """The solver's reporter for ``progress`` (None, True for a :class:`TqdmProgress`, or an object with start and
    update); a TypeError naming what is missing now, not when the first pass calls it."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return Reporter(TqdmProgress())
    missing = [name for name in ("start", "update") if not callable(getattr(progress, name, None))]
    if missing:
        raise TypeError(
            f"progress must be None, True or an object with start(total, unit, phase) and update(done) methods "
            f"(knapsack_gpu.progress.Progress); {progress!r} has no {' or '.join(missing)}"
        )
    phases = _accepts(progress.start, (0, "cells", "dense pass"))
    for name, args in (("start", (0, "cells")), ("update", (0,))):
        if name == "start" and phases:
            continue
        if _accepts(getattr(progress, name), args) is False:
            raise TypeError(
                f"progress.{name} must accept "
                f"{name}({', '.join(('total', 'unit[, phase]') if name == 'start' else ('done',))}) "
                "(knapsack_gpu.progress.Progress: start opens a phase, update(done) adds work done since the last)"
            )
    return Reporter(progress, phases=phases is not False)


def _accepts(fn, args) -> bool | None:
    """Whether ``fn`` can be called with ``args`` (None: a builtin without a signature, let the call decide)."""
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        return False
    except ValueError:
        return None
    return True
