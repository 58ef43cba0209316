"""Progress reporting: what a long solve tells a caller as the work happens (the CLI draws a bar from it).

A solve runs in phases, each announced by ``start``: the states engine (unit "states": candidate states built) and a
dense plan (unit "cells": DP cell updates). Within a phase ``update`` arrives as the work is done, at most every
INTERVAL seconds and at least every ~0.25 s while a pass runs (passes report per chunk of about a megabyte of
profile), so a rate and an ETA drawn from it hold.
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

    ``start(total, unit)`` opens a phase: ``total`` units of work planned (exact for a single bit-table pass, an
    estimate for Hirschberg, which may run a few more; the states engine's work budget, or None where it has
    none), ``unit`` "states" or "cells". ``update(done)`` adds ``done`` units to the phase.
    """

    def start(self, total: int | None, unit: str) -> None: ...

    def update(self, done: int) -> None: ...


class Reporter:
    """The solver's side: sums the work and forwards it to a :class:`Progress` at most every INTERVAL seconds."""

    def __init__(self, progress: Progress, clock=time.monotonic):
        self.progress, self.clock = progress, clock
        self.pending = 0
        self.last = clock()

    def start(self, total: int | None, unit: str) -> None:
        self.flush()
        self.progress.start(None if total is None else int(total), unit)

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
    """A tqdm bar on stderr, shown for solves that take over ``delay`` seconds: one bar, reset at each phase
    (states, then cells), with tqdm's rate and ETA. ``progress=True`` in :func:`knapsack_gpu.solve` makes one; without
    tqdm it says once how to get it and shows nothing."""

    _told = False

    def __init__(self, delay: float = 1.0):
        self.bar = None
        self.delay = delay
        try:
            from tqdm import tqdm
        except ImportError:
            self.tqdm = None
            if not TqdmProgress._told:
                TqdmProgress._told = True
                print(
                    "knapsack-gpu: no progress bar without tqdm: pip install 'knapsack-gpu[progress]'", file=sys.stderr
                )
        else:
            self.tqdm = tqdm

    def start(self, total: int | None, unit: str) -> None:
        if self.tqdm is None:
            return
        if self.bar is None:
            self.bar = self.tqdm(
                total=total,
                unit=unit,
                unit_scale=True,
                delay=self.delay,
                file=sys.stderr,
                dynamic_ncols=True,
                leave=False,
            )
        else:
            self.bar.unit = unit
            self.bar.reset(total=total)

    def update(self, done: int) -> None:
        if self.bar is None:
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
            f"progress must be None, True or an object with start(total, unit) and update(done) methods "
            f"(knapsack_gpu.progress.Progress); {progress!r} has no {' or '.join(missing)}"
        )
    for name, args in (("start", (0, "cells")), ("update", (0,))):
        try:
            inspect.signature(getattr(progress, name)).bind(*args)
        except TypeError:
            raise TypeError(
                f"progress.{name} must accept {name}({', '.join(('total', 'unit') if name == 'start' else ('done',))})"
                " (knapsack_gpu.progress.Progress: start(total, unit) opens a phase, update(done) adds work)"
            ) from None
        except ValueError:  # a builtin without a signature: let the call decide
            pass
    return Reporter(progress)
