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
import os
import sys
import time
from typing import Protocol

# Updates are forwarded at most this often (seconds); work in between is summed.
INTERVAL = 0.1
# A progress bar shows once a solve has run this long (seconds); KNAPSACK_GPU_PROGRESS_DELAY sets another (0: at once).
DELAY = 1.0
ENV_DELAY = "KNAPSACK_GPU_PROGRESS_DELAY"


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
    """A tqdm bar on stderr, shown once a solve has run ``delay`` seconds (default 1, or the environment variable
    KNAPSACK_GPU_PROGRESS_DELAY: seconds, 0 shows it at once): one bar, reset at each phase and labelled with it
    ("states", "dense pass", "Hirschberg"), with tqdm's rate, and its percentage and ETA where the phase has a total
    (the states engine has none: a count and a rate). ``close`` clears it from the terminal (a solve that never ran
    past ``delay`` drew nothing to clear); call it before printing what the solve found, as the CLI does.
    ``progress=True`` in :func:`knapsack_gpu.solve` makes one and closes it when the solve ends; without tqdm, a
    solve that runs past ``delay`` says once how to get it.

    The bar is drawn only from the moment the solve passes ``delay``, not per phase: tqdm's own ``delay`` restarts at
    every phase, and its ``reset`` draws at once while its ``close`` then believes nothing was drawn, which left a
    phase's bar at 0% on the terminal with the result printed onto it (issue 51)."""

    _told = False

    def __init__(self, delay: float | None = None, clock=time.monotonic):
        self.bar = None
        self.delay = progress_delay() if delay is None else float(delay)
        self.clock = clock
        self.began = None  # when the solve's first phase started
        self.total: int | None = None  # the phase open now: its total, unit and name, and its units done so far
        self.unit, self.phase, self.n = "", "", 0
        self._tqdm = False  # (tqdm's bar type, imported once the bar is to be drawn: 20 ms a fresh process)

    @property
    def tqdm(self):
        """tqdm's bar type (None without tqdm)."""
        if self._tqdm is False:
            try:
                from tqdm import tqdm
            except ImportError:
                self._tqdm = None
            else:
                self._tqdm = _bar_type(tqdm)
        return self._tqdm

    @tqdm.setter
    def tqdm(self, bar_type) -> None:
        self._tqdm = bar_type

    def start(self, total: int | None, unit: str, phase: str = "") -> None:
        if self.began is None:
            self.began = self.clock()
        self.total, self.unit, self.phase, self.n = total, unit, phase, 0
        if self.bar is None:
            self._show()
            return
        self.bar.unit = unit
        self.bar.set_description_str(phase, refresh=False)
        self.bar.bar_format = _bar_format(total)
        self.bar.total = total  # tqdm's reset(None) would keep the last phase's total
        self.bar.reset()

    def update(self, done: int) -> None:
        self.n += done
        if self.total is not None and self.n > self.total:  # Hirschberg ran past its estimate
            self.total = self.n
        if self.bar is None:
            self._show()
            return
        self.bar.total = self.total
        self.bar.update(done)

    def _show(self) -> None:
        """Draw the bar, at the phase's count so far, if the solve has run past ``delay``."""
        if self.began is None or self.clock() - self.began < self.delay:
            return
        if self.tqdm is None:
            if not TqdmProgress._told:  # a solve long enough to want a bar
                TqdmProgress._told = True
                print(
                    "knapsack-gpu: no progress bar without tqdm: pip install 'knapsack-gpu[progress]'",
                    file=sys.stderr,
                )
            return
        self.bar = self.tqdm(
            total=self.total,
            initial=self.n,
            unit=self.unit,
            desc=self.phase,
            unit_scale=True,
            bar_format=_bar_format(self.total),
            delay=0,  # drawn now: the solve's delay has passed (and close then clears what it drew)
            file=sys.stderr,
            dynamic_ncols=True,
            leave=False,
        )

    def close(self) -> None:
        """Clear the bar from the terminal, if it was drawn; a later phase would start a new one."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self.began = None


def progress_delay() -> float:
    """:class:`TqdmProgress`'s default delay: KNAPSACK_GPU_PROGRESS_DELAY (seconds, >= 0) where it is set, else
    DELAY."""
    text = os.environ.get(ENV_DELAY, "").strip()
    if not text:
        return DELAY
    try:
        delay = float(text)
    except ValueError:
        delay = -1.0
    if not delay >= 0 or delay == float("inf"):
        raise ValueError(f"{ENV_DELAY}={text!r}: the seconds a solve runs before its progress bar shows, a number >= 0")
    return delay


def _count(n, sizeof) -> str:
    """A count as the bar shows it: whole below a thousand ("0", "976"), SI-scaled above ("976k", "651M")."""
    return str(int(n)) if n < 1000 else sizeof(n)


def _bar_format(total: int | None) -> str:
    if total is None:  # a count and a rate
        return "{desc}: {count} {unit} [{elapsed}, {rate_fmt}]"
    return "{desc}: {percentage:3.0f}%|{bar}| {count}/{total_count} [{elapsed}<{remaining}, {rate_fmt}]"


def _bar_type(tqdm):
    """tqdm with the fields ``count`` and ``total_count`` (:func:`_count`) for its bar_format: tqdm's own scaled n
    reads "0.00" at 0 ("states: 0.00states")."""

    class Bar(tqdm):
        @property
        def format_dict(self):
            d = super().format_dict
            d["count"] = _count(d["n"], self.format_sizeof)
            d["total_count"] = "?" if d["total"] is None else _count(d["total"], self.format_sizeof)
            return d

    return Bar


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
