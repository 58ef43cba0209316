"""The expanding core: a states DP grown outward from the break item (Pisinger's minknap, 1997; combo, by Martello,
Pisinger and Toth, 1999), vectorised over the list of states.

States are (value, weight) sums of modifications of the break solution, sorted by weight with strictly increasing
value. The core [s, t] starts at the break item b and grows alternately: the next item right of it may be added
(the list merges with its copy shifted by +p, +w), the next item left of it removed (shifted by -p, -w). After each
step:
- dominance drops every state that a lighter (or equally heavy) one beats;
- every feasible state raises the incumbent z;
- the weak per-state bound fathoms: a state of weight W <= c survives iff (P - z - 1) w_t + (c - W) p_t >= 0 (t the
  next right item: nothing left to add is more efficient), one with W > c iff (P - z - 1) w_s + (c - W) p_s >= 0
  (s the next left item: nothing left to remove is less efficient); exact integer cross products;
- an item is tested against the break item's slope (Dembo-Hammer) before it enters, and dropped when flipping it
  cannot beat z.
The search ends when no state is left, when both sides are exhausted, or when z meets the upper bound.

While the list is short, several items enter at once: S states and k items make S * 2**k candidates in one sort,
which costs what one item costs in numpy calls. Each state carries the decisions of the last 64 core items as bits;
:mod:`.recover` rebuilds the selection from them (and solves a narrower core again when they do not reach back far
enough). When the list grows, :mod:`.extras` and :mod:`.relax` tighten the search as combo does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ..memory import format_bytes
from . import exact, extras, offsets
from .lists import NumpyOps
from .sides import Side, Units, find_break

# Batch while states * 2**items stays below BATCH_CELLS, up to MAX_BATCH items a step: a few numpy calls on a few
# thousand entries (8 and 8192 measured 10% faster than 6 and 4096 on n = 1,000 solves, the same at n = 10,000).
MAX_BATCH = 8
BATCH_CELLS = 8192
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
# Bytes per candidate state at the peak of one step: value, weight and decision bits of the merged candidates and
# of the kept list (48), the merge positions or sort order (16), the masks and the fathoming temporaries (24).
BYTES_PER_STATE = 96
# Float values: a state must beat the incumbent by this relative margin, against rounding in its float sums.
FLOAT_TOL = 1e-12
BIG = 2**62  # value or weight totals past this run in Python integers (object arrays)
# Decision bits per state: the last WINDOW core items (one int64; tests lower it to exercise the re-solve).
WINDOW = 64


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
    items, the ``extras`` that fired, ``resolves`` (narrower cores solved again to recover the selection). Sub-searches
    (a surrogate's solve, a recovery) add their core, states and updates, not their fixing."""

    core: int = 0
    peak_states: int = 0
    state_updates: int = 0
    fixed_in: int = 0
    fixed_out: int = 0
    bundled: int = 0
    extras: list[str] = field(default_factory=list)
    resolves: int = 0


@dataclass
class Incumbent:
    """The best solution found: its value, and either its items or the state it was read from (value P, weight W,
    decision bits V, the number of core items entered by then, and flips of items outside the core)."""

    value: int | float
    selection: np.ndarray | None = None
    state: tuple | None = None  # (P, W, V, entries)
    extra: tuple = ()  # ((item, sign), ...)


def _bit(slot: int) -> int:
    """The int64 value of bit ``slot``."""
    return -(2**63) if slot == 63 else 1 << slot


@cache
def _subsets(k: int) -> np.ndarray:
    """(2**k, k) 0/1 matrix: row r takes item j iff bit j of r is set."""
    return ((np.arange(1 << k)[:, None] >> np.arange(k)[None, :]) & 1).astype(np.int64)


class Engine:
    """One expanding-core search over items with 0 < w <= c, values > 0 and total weight > c.

    Args:
        p, w, c: values (int64 or float64), weights (int64), capacity.
        lower: only solutions worth more count (a value reached elsewhere, items unknown to this search).
        upper: a known upper bound: the search stops when z meets it.
        ops: list ops (:mod:`.lists`); meter: working-memory accounting; relax: may use the surrogate relaxation
            (off inside a surrogate's own solve); stats: shared with the sub-searches; depth: nesting level;
            progress: a :class:`knapsack_gpu.progress.Reporter` told the candidate states of every step.
    """

    def __init__(
        self, p, w, c, *, lower=None, upper=None, ops=None, meter=None, relax=True, stats=None, depth=0, progress=None
    ):
        self.integral = p.dtype.kind != "f"
        big = self.integral and (extras.total(p) >= BIG or extras.total(w) >= BIG)
        if big:
            p, w = p.astype(object), w.astype(object)
        self.p, self.w, self.c, self.n = p, w, int(c), int(p.size)
        self.host_ops = NumpyOps()
        self.device_ops = ops if ops is not None and ops.torch and not big else None
        self.ops = self.device_ops if self.device_ops is not None and self.device_ops.min_states <= 1 else self.host_ops
        self.meter = meter
        self.progress = progress
        self.relax = relax and self.integral
        self.stats = stats if stats is not None else StatesStats()
        self.depth = depth
        self.num = int if self.integral else float

        self.keys = exact.keys(p, w)
        brk = find_break(self.keys, p, w, self.c)
        self.brk = brk
        b = brk.b
        self.pb, self.wb = self.num(p[b]), int(w[b])
        if self.integral:
            self.d = exact.reduced_costs(p, w, self.pb, self.wb)
        else:
            self.d = p - (self.pb / self.wb) * w
        self.ub = self._lagrangian(self.c)
        if upper is not None:
            self.ub = min(self.ub, upper)
        self.fired: set[str] = set()  # extras that changed something
        if self.integral and not big:
            counted = offsets.offset_bound(p, w, self.c)
            if counted is not None and counted < self.ub:
                self.ub = counted
                self.fired.add("offsets")
        # The first incumbent: the break solution and the most valuable item after it that still fits.
        room = self.c - brk.wsum
        fit = brk.right[w[brk.right] <= room]
        sel, z = brk.left, brk.psum
        if fit.size:
            j = int(fit[np.argmax(p[fit])])
            sel, z = np.append(brk.left, j), z + self.num(p[j])
        self.inc = Incumbent(z, selection=sel)
        if lower is not None and lower >= z:
            self.inc = Incumbent(lower)  # a value known to be reachable, items unknown: only better ones count
        self.units = Units(p, w, self.d, self.num)
        self.left = Side(brk.left, self.keys, self.units, right=False)
        self.right = Side(brk.right, self.keys, self.units, right=True)
        self.exhausted = [False, False]  # left, right
        self.turn_left = True
        self.entries: list[tuple[int, int]] = []
        self.big = big
        self.wdtype = np.dtype(object) if big else np.dtype(np.int64)
        self.pdtype = np.dtype(object) if big else p.dtype
        self.W = self.ops.put(np.array([brk.wsum], dtype=self.wdtype))
        self.P = self.ops.put(np.array([brk.psum], dtype=self.pdtype))
        self.V = self.ops.put(np.zeros(1, dtype=np.int64))
        self.fired_once: set[str] = set()  # extras tried
        self.next_pairing = PAIRING_STATES
        self.budget: int | None = None  # state updates this run may reach (sub-searches get what is left)
        self._refresh()
        extras.divisibility(self, initial=True)

    # --- bounds ---------------------------------------------------------------------------------------------------

    def _lagrangian(self, c: int):
        """The LP bound at the break item's slope for capacity c: valid for any c (a Lagrangian bound)."""
        brk = self.brk
        if self.integral:
            return brk.psum + ((c - brk.wsum) * self.pb) // self.wb
        return brk.psum + (c - brk.wsum) * (self.pb / self.wb) * (1 + 1e-15) + 1e-300

    @property
    def z(self):
        return self.inc.value

    def _refresh(self) -> None:
        """z1 (what a state must reach to count) and the Dembo-Hammer gap after z or c changed."""
        z, brk = self.inc.value, self.brk
        if self.integral:
            self.z1 = z + 1
            self.gap = (brk.psum - self.z1) * self.wb + (self.c - brk.wsum) * self.pb
        else:
            self.z1 = z + max(FLOAT_TOL, 4e-16 * self.n) * max(1.0, abs(z))
            self.gap = self._lagrangian(self.c) - self.z1

    def improve(self, inc: Incumbent) -> None:
        if inc.value > self.inc.value:
            self.inc = inc
            self._refresh()

    def set_capacity(self, c: int) -> None:
        self.c = c
        self.ub = min(self.ub, self._lagrangian(c))
        self._refresh()

    # --- the search -----------------------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return int(self.W.shape[0])

    def run(self, budget: int | None = None) -> bool:
        """Search on; True when done (then the incumbent is optimal), False when the next step would take the
        state updates past ``budget`` (call again with a larger one to go on). Raises StatesOverflow when a step
        does not fit the memory limit."""
        self.budget = budget
        if not self.entries:
            if self.z >= self.ub:
                return self._done()
            self._step([(self.brk.b, 1)])
        while self.size and self.z < self.ub:
            k = self._batch()
            if budget is not None and self.stats.state_updates + (self.size << k) > budget:
                return False
            items = self._next_items(k)
            if not items:
                break
            self._step(items)
            if self.size > PAIRING_STATES:
                extras.fire(self)
        return self._done()

    def projected_updates(self) -> int:
        """The state updates the search would still do if the list kept its size: two candidates a state for every
        unit that can still enter the core at today's gap (the planner's guess whether the search will finish)."""
        if not self.size or self.z >= self.ub:
            return 0
        units = sum(int(side.remaining(self.gap).size) for side in (self.left, self.right))
        return 2 * self.size * units

    def _done(self) -> bool:
        if self.depth == 0:
            self.stats.fixed_in += self.left.fixed
            self.stats.fixed_out += self.right.fixed
            self.stats.bundled = sum(int(m.size) for m in self.units.members)
        self.left.fixed = self.right.fixed = 0
        return True

    def _batch(self) -> int:
        """How many items the next step takes: while the list is short, several (S * 2**k candidates)."""
        s, k = self.size, 1
        while k < min(MAX_BATCH, WINDOW) and s << (k + 1) <= BATCH_CELLS:
            k += 1
        return k

    def _next_items(self, k: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        while len(out) < k and not (self.exhausted[0] and self.exhausted[1]):
            left = self.turn_left
            self.turn_left = not left
            if self.exhausted[not left]:
                continue
            i = (self.left if left else self.right).take(self.gap)
            if i is None:
                self.exhausted[not left] = True
                continue
            out.append((i, -1 if left else 1))
        return out

    def _step(self, items: list[tuple[int, int]]) -> None:
        """Add the items to the core: merge, then dominance, incumbent and fathoming."""
        self._place()
        ops = self.ops
        W, P, V = self.W, self.P, self.V
        s = int(W.shape[0])
        k = len(items)
        ws, ps, bits = [], [], []
        for u, sign in items:
            bits.append(_bit(len(self.entries) % WINDOW))
            self.entries.append((u, sign))
            pi, wi = self.units.pw(u)
            ws.append(sign * wi)
            ps.append(sign * pi)
        self.stats.core += k
        m = s << k
        self._account(m)
        # every subset of the items: row r of SUBSETS takes item j iff bit j of r is set (distinct bits add up to
        # their OR, in int64 two's complement as well)
        take = _subsets(k) if not self.big else _subsets(k).astype(object)
        cw = take @ np.array(ws, dtype=self.wdtype)
        cp = take @ np.array(ps, dtype=self.pdtype)
        cv = _subsets(k) @ np.array(bits, dtype=np.int64)
        mask = int(cv[-1])
        # The list shifted by every subset of the items: 2**k runs, each sorted. numpy's stable argsort (timsort on
        # int64) merges presorted runs in linear time per level: 1.2 ns a state at 1e6 states, against 7 ns for a
        # searchsorted merge of two runs (measured on one EPYC thread); torch's stable sort on CUDA is a radix sort.
        NW = ops.outer_add(W, ops.put(cw))
        NP = ops.outer_add(P, ops.put(cp))
        NV = ops.outer_or(V & ~mask, ops.put(cv))
        o = ops.argsort(NW)
        mW, mP = ops.take(NW, o), ops.take(NP, o)
        num = self.num
        # extremes of the candidates (the list is sorted in both W and P): they bound the fathoming products
        self._span = (
            num(P[0]) + num(cp.min()),
            num(P[s - 1]) + num(cp.max()),
            int(W[0]) + int(cw.min()),
            int(W[s - 1]) + int(cw.max()),
        )
        self._prune(mW, mP, NV, o)

    def release(self) -> None:
        """Free the state list (the search cannot go on after this)."""
        self.W, self.P, self.V = self.W[:0], self.P[:0], self.V[:0]

    def _place(self) -> None:
        """Host numpy for short lists, the device's torch ops from ``device_ops.min_states`` states on."""
        dev = self.device_ops
        if dev is None:
            return
        want = dev if self.size >= dev.min_states else self.host_ops
        if want is not self.ops:
            W, P, V = (self.ops.host(a) for a in (self.W, self.P, self.V))
            self.W, self.P, self.V = (want.put(a) for a in (W, P, V))
            self.ops = want

    def _account(self, m: int) -> None:
        self.stats.state_updates += m
        if self.progress is not None:
            self.progress.add(m)
        if self.meter is not None:
            need = m * BYTES_PER_STATE
            room = self.meter.limit - self.meter.current
            if need > room:
                raise self._overflow(
                    f"the states list needs {need} bytes ({format_bytes(need)}) for {m} candidate states after "
                    f"{len(self.entries)} core items, over what memory_limit leaves ({format_bytes(room)})",
                    m,
                )
            self.meter.note_peak(need)

    def _overflow(self, message: str, m: int) -> StatesOverflow:
        from .recover import selection_or_none

        self._done()
        return StatesOverflow(message, m, m * BYTES_PER_STATE, self.z, selection_or_none(self, self.inc))

    def _prune(self, mW, mP, NV, o) -> None:
        """Dominance, incumbent and fathoming over the merged candidates (weights mW, values mP; decision bits NV
        before the merge order o, gathered only for the survivors)."""
        ops, c, num = self.ops, self.c, self.num
        m = int(mW.shape[0])
        cm = ops.cummax(mP)
        k = ops.index_le(mW, c)
        if k and num(cm[k - 1]) > self.z:
            j = ops.argmax(mP[:k])
            self.improve(Incumbent(num(mP[j]), state=(num(mP[j]), int(mW[j]), int(NV[o[j]]), len(self.entries))))
        keep = ops.bools(m)
        keep[0] = True
        ops.greater(mP[1:], cm[:-1], keep[1:])
        t = self.right.peek(self.gap)
        s = self.left.peek(self.gap)
        if k:
            if t is None:
                keep[:k] = False
            else:
                keep[:k] &= self._fathom(mP[:k], mW[:k], t)
        if k < m:
            if s is None:
                keep[k:] = False
            else:
                keep[k:] &= self._fathom(mP[k:], mW[k:], s)
        idx = ops.nonzero(keep)
        if idx.shape[0] > 1:
            wk = ops.take(mW, idx)
            last = ops.bools(int(idx.shape[0]))
            last[-1] = True
            last[:-1] = wk[1:] != wk[:-1]  # of equal weights, the last (most valuable) state survives
            idx = ops.take(idx, ops.nonzero(last))
        self.W, self.P, self.V = ops.take(mW, idx), ops.take(mP, idx), ops.take(NV, ops.take(o, idx))
        self.stats.peak_states = max(self.stats.peak_states, int(idx.shape[0]))

    def _fathom(self, P, W, item: int):
        """Mask of the states that can still beat z with the slope of ``item``: (P - z1) w_i + (c - W) p_i >= 0."""
        pi, wi = self.units.pw(item)
        if not self.integral:
            return (P - self.z1) + (self.c - W) * (pi / wi) >= 0
        z1, c = self.z1, self.c
        p0, p1, w0, w1 = self._span
        amax, bmax = max(abs(p0 - z1), abs(p1 - z1)), max(abs(c - w0), abs(c - w1))
        if self.big:
            return (P - z1) * wi + (c - W) * pi >= 0
        rhs = z1 * wi - c * pi
        if (
            max(abs(p0), abs(p1)) * wi < exact.SAFE_PRODUCT
            and max(abs(w0), abs(w1)) * pi < exact.SAFE_PRODUCT
            and abs(rhs) < exact.SAFE_PRODUCT
        ):
            return P * wi - W * pi >= rhs  # the same test in four passes instead of six
        if amax * wi < exact.SAFE_PRODUCT and bmax * pi < exact.SAFE_PRODUCT:
            return (P - z1) * wi + (c - W) * pi >= 0
        ops = self.ops
        a, b = ops.host(P) - z1, c - ops.host(W)
        return ops.put(exact.lin_ge0(a, wi, b, pi, amax, bmax))
