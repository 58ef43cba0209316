"""What the states engine's modules share: its result types, the incumbent and the thresholds of the extras."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# When the extras fire (combo: M1 = 1000, M2 = 2000, M3 = 10000 states, once each): the gcd capacity reduction and
# the surrogate relaxation once the list passes these sizes; the pairing heuristic first at PAIRING_STATES, then
# again each time the list has grown PAIRING_GROWTH-fold (an O(n log S) search, cheap beside the steps it saves).
GCD_STATES = 1000
SURROGATE_STATES = 2000
# Dominance fixing (RECORD) only where the list still grows after the surrogate: on the classes it fires on (similar
# weights) the surrogate closes the search anyway, and the fixing's O(n log n) and Python heap cost 0.3-3 ms there.
DOMINANCE_STATES = 20000
PAIRING_STATES = 256
PAIRING_GROWTH = 4
# Bytes per candidate state at the peak of one step (the vectorised merge's temporaries: see .lists; the compiled
# binding's two rows of buffers need 48 and are counted by what they hold).
BYTES_PER_STATE = 96
BIG = 2**62  # value or weight totals past this run in Python integers (object arrays, the python binding)
# Decision bits per state: the last WINDOW core items (one int64; tests lower it to exercise the re-solve).
WINDOW = 64
# What a first run reports as fired, by bit: the bounds :func:`.kernels.arm` lowered the upper bound with, and the
# pairing where it raised z (see :func:`.kernels.first_run`).
ARMED = ((1, "offsets"), (2, "divisibility"), (4, "pairing"))


def unit_items(arrays: tuple, n: int, u: int) -> np.ndarray:
    """The items of unit ``u`` of an engine's ``arrays``: u itself for an item (u < n), a bundle's members else."""
    if u < n:
        return np.array([u])
    UMS, UML, MEMBERS = arrays[9], arrays[10], arrays[11]
    return MEMBERS[UMS[u] : UMS[u] + UML[u]]


class StatesOverflow(Exception):
    """The state list outgrew its memory or work budget.

    Attributes:
        states: the list size that did not fit; needed_bytes: what it needed.
        lower, selection: the best value found and, where known, its items (a lower bound for the next plan)."""

    def __init__(self, message: str, states: int, needed_bytes: int, lower=None, selection=None):
        super().__init__(message)
        self.states, self.needed_bytes = states, needed_bytes
        self.lower, self.selection = lower, selection


@dataclass
class StatesStats:
    """What the states engine did: ``core`` units (items or bundles) entered the core, ``peak_states``,
    ``state_updates`` (candidate states built), items the Dembo-Hammer test fixed before they entered (``fixed_in``:
    kept in the break solution, ``fixed_out``: left out), ``bundled`` items that entered in bundles of identical
    items, the ``extras`` that fired, ``resolves`` (narrower cores solved again to recover the selection), and the
    ``binding`` the kernels ran in ("compiled", "python" or "device"). Sub-searches (a surrogate's solve, a
    recovery) add their core, states and updates, not their fixing."""

    core: int = 0
    peak_states: int = 0
    state_updates: int = 0
    fixed_in: int = 0
    fixed_out: int = 0
    bundled: int = 0
    extras: list[str] = field(default_factory=list)
    resolves: int = 0
    binding: str | None = None

    def add_run(self, updates: int, core: int, peak: int) -> None:
        """A run's new state updates and core entries, and the list's peak."""
        self.state_updates += updates
        self.core += core
        if peak > self.peak_states:  # (not max(): ~0.2 us a call)
            self.peak_states = peak

    def add_fixing(self, fixed_in: int, fixed_out: int, bundled: int) -> None:
        """What a top-level search fixed and bundled (sub-searches' fixing is not counted)."""
        self.fixed_in += fixed_in
        self.fixed_out += fixed_out
        self.bundled = bundled


@dataclass
class Incumbent:
    """The best solution found: its value, either its items or the state it was read from (value P, weight W,
    decision bits V, the number of core items entered by then), and flips on top of those (units with their sign)."""

    value: int | float
    selection: np.ndarray | None = None
    state: tuple | None = None  # (P, W, V, entries)
    extra: tuple = ()  # ((item, sign), ...)
